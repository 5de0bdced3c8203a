//! Compressed inputs read as streams, never inflated into memory.
//!
//! Takes: a reader whose first bytes have been looked at. Gives: a reader
//! of the decompressed bytes (gzip, multi-member as `tcpdump -z gzip` and
//! logrotate write them; zstd), which ends early, with [`Inflated::bombed`]
//! set, once the output passes [`MAX_RATIO`] times the compressed bytes read
//! after the first [`RATIO_GRACE`] bytes out (a decompression bomb). flate2
//! (on its zlib-rs backend) and ruzstd are confined to this module.
//! [`Inflated::spawn`] decompresses on a thread of its own, handing the
//! bytes over in buffers through a bounded channel, so that inflating and
//! parsing run on two cores.

use std::cell::Cell;
use std::io::{self, BufRead, Read};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use flate2::read::MultiGzDecoder;

/// Most bytes out per compressed byte in. gzip itself cannot pass 1032:1;
/// real captures and logs stay under 50:1.
pub const MAX_RATIO: u64 = 250;
/// Output below this is never cut, whatever its ratio (a small file of
/// repeated lines compresses very well).
pub const RATIO_GRACE: u64 = 64 << 20;

/// A compression format recognised by its magic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// gzip (`1f 8b`), possibly several members.
    Gzip,
    /// zstd (`28 b5 2f fd`).
    Zstd,
}

impl Compression {
    /// The format `head` starts with, if any.
    pub fn of(head: &[u8]) -> Option<Compression> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Compression::Zstd)
        } else {
            None
        }
    }

    /// Its name in messages (`gzip`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }
}

/// Counts the compressed bytes read.
struct Counting<R> {
    inner: R,
    read: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// The decompressed stream, cut at the ratio limit.
pub struct Inflated<'a> {
    inner: Box<dyn Read + 'a>,
    compressed: Rc<Cell<u64>>,
    out: u64,
    bombed: Arc<AtomicBool>,
}

impl<'a> Inflated<'a> {
    /// Decompresses `reader` as `kind`.
    pub fn new<R: Read + 'a>(reader: R, kind: Compression) -> io::Result<Inflated<'a>> {
        let compressed = Rc::new(Cell::new(0));
        let counting = Counting {
            inner: reader,
            read: compressed.clone(),
        };
        let inner: Box<dyn Read + 'a> = match kind {
            Compression::Gzip => Box::new(MultiGzDecoder::new(counting)),
            Compression::Zstd => Box::new(
                ruzstd::decoding::StreamingDecoder::new(counting)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?,
            ),
        };
        Ok(Inflated {
            inner,
            compressed,
            out: 0,
            bombed: Arc::new(AtomicBool::new(false)),
        })
    }

    /// A handle that tells, after reading, whether the ratio limit cut the
    /// stream.
    pub fn bomb_flag(&self) -> Arc<AtomicBool> {
        self.bombed.clone()
    }
}

impl Inflated<'static> {
    /// Decompresses `reader` as `kind` on a thread of its own; the
    /// returned reader gives the same bytes (and the same errors, a bad
    /// zstd header included, at its first read) as [`Inflated::new`]'s.
    pub fn spawn<R: Read + Send + 'static>(reader: R, kind: Compression) -> Piped {
        let (full_tx, full_rx) = mpsc::sync_channel(PIPED_BUFFERS);
        let (empty_tx, empty_rx) = mpsc::channel();
        let bombed = Arc::new(AtomicBool::new(false));
        let flag = bombed.clone();
        let thread = std::thread::Builder::new()
            .name("kgtrace-inflate".into())
            .spawn(move || match Inflated::new(reader, kind) {
                Ok(mut inflated) => {
                    inflated.bombed = flag;
                    pump(&mut inflated, &full_tx, &empty_rx);
                }
                Err(e) => {
                    let _ = full_tx.send(Err(e));
                }
            });
        let (thread, failed) = match thread {
            Ok(t) => (Some(t), None),
            Err(e) => (None, Some(e)),
        };
        Piped {
            full: full_rx,
            empty: empty_tx,
            current: Vec::new(),
            pos: 0,
            thread,
            failed,
            bombed,
        }
    }
}

impl Read for Inflated<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.bombed.load(Ordering::Acquire) {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        let before = self.out;
        self.out += n as u64;
        if self.out > RATIO_GRACE && self.out > MAX_RATIO.saturating_mul(self.compressed.get()) {
            self.bombed.store(true, Ordering::Release);
            // The first RATIO_GRACE bytes are never cut, whatever the size
            // of the read that crossed the limit.
            return Ok(RATIO_GRACE.saturating_sub(before).min(n as u64) as usize);
        }
        Ok(n)
    }
}

/// Buffers in flight between the inflating thread and the reader.
const PIPED_BUFFERS: usize = 4;
/// Bytes per buffer handed over.
const PIPED_BUFFER_LEN: usize = 1 << 20;

/// The inflating thread's loop: fills buffers (reusing those the reader
/// gave back) and sends them until the end, an error, or a reader that
/// went away.
fn pump(
    inflated: &mut impl Read,
    full: &SyncSender<io::Result<Vec<u8>>>,
    empty: &Receiver<Vec<u8>>,
) {
    loop {
        let mut buf = empty.try_recv().unwrap_or_default();
        buf.resize(PIPED_BUFFER_LEN, 0);
        let mut n = 0;
        let end = loop {
            match inflated.read(&mut buf[n..]) {
                Ok(0) => break Ok(true),
                Ok(k) => {
                    n += k;
                    if n == buf.len() {
                        break Ok(false);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        buf.truncate(n);
        if n > 0 && full.send(Ok(buf)).is_err() {
            return;
        }
        match end {
            Ok(false) => {}
            Ok(true) => return,
            Err(e) => {
                let _ = full.send(Err(e));
                return;
            }
        }
    }
}

/// The reading end of [`Inflated::spawn`].
pub struct Piped {
    full: Receiver<io::Result<Vec<u8>>>,
    empty: Sender<Vec<u8>>,
    current: Vec<u8>,
    pos: usize,
    thread: Option<JoinHandle<()>>,
    /// The thread could not be started: said at the first read.
    failed: Option<io::Error>,
    bombed: Arc<AtomicBool>,
}

impl Piped {
    /// A handle that tells, after reading, whether the ratio limit cut the
    /// stream.
    pub fn bomb_flag(&self) -> Arc<AtomicBool> {
        self.bombed.clone()
    }

    /// The next buffer; `false` at the end.
    fn next_buffer(&mut self) -> io::Result<bool> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        match self.full.recv() {
            Ok(Ok(buf)) => {
                let used = std::mem::replace(&mut self.current, buf);
                let _ = self.empty.send(used);
                self.pos = 0;
                Ok(true)
            }
            Ok(Err(e)) => Err(e),
            // The thread ended: at the end of the stream, or by a panic.
            Err(_) => match self.thread.take().map(JoinHandle::join) {
                Some(Err(_)) => Err(io::Error::other("decompression failed")),
                _ => Ok(false),
            },
        }
    }
}

impl BufRead for Piped {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos >= self.current.len() {
            if !self.next_buffer()? {
                return Ok(&[]);
            }
        }
        Ok(&self.current[self.pos..])
    }

    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.current.len());
    }
}

impl Read for Piped {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn reads_every_gzip_member() {
        let mut bytes = gzip(b"one\n");
        bytes.extend(gzip(b"two\n"));
        let mut out = String::new();
        Inflated::new(&bytes[..], Compression::Gzip)
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, "one\ntwo\n");
    }

    #[test]
    fn a_gzip_bomb_is_cut_at_the_ratio_limit_without_holding_it() {
        // 200 MiB of zeros compress to ~200 KiB (about 1000:1).
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..200 {
            enc.write_all(&zeros).unwrap();
        }
        let bomb = enc.finish().unwrap();
        let mut inflated = Inflated::new(&bomb[..], Compression::Gzip).unwrap();
        let flag = inflated.bomb_flag();
        let n = io::copy(&mut inflated, &mut io::sink()).unwrap();
        assert!(flag.load(Ordering::Acquire));
        assert!((RATIO_GRACE..200 << 20).contains(&n), "{n}");
        // The same on a thread of its own.
        drop(inflated);
        let mut piped = Inflated::spawn(io::Cursor::new(bomb), Compression::Gzip);
        let flag = piped.bomb_flag();
        let m = io::copy(&mut piped, &mut io::sink()).unwrap();
        assert!(flag.load(Ordering::Acquire));
        assert_eq!(m, n);
    }

    #[test]
    fn a_thread_of_its_own_gives_the_same_bytes_and_errors() {
        let data: Vec<u8> = (0..3_000_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let mut bytes = gzip(&data[..5_000_000]);
        bytes.extend(gzip(&data[5_000_000..]));
        let mut out = Vec::new();
        Inflated::spawn(io::Cursor::new(bytes), Compression::Gzip)
            .read_to_end(&mut out)
            .unwrap();
        assert!(out == data, "{} bytes out of {}", out.len(), data.len());
        let bad = vec![0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff, 0xff, 0xff];
        let inline = Inflated::new(&bad[..], Compression::Zstd).err().unwrap();
        let piped = Inflated::spawn(io::Cursor::new(bad), Compression::Zstd)
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        assert_eq!(piped.to_string(), inline.to_string());
    }

    #[test]
    fn recognises_gzip_and_zstd_magic() {
        assert_eq!(Compression::of(&[0x1f, 0x8b, 8]), Some(Compression::Gzip));
        assert_eq!(
            Compression::of(&[0x28, 0xb5, 0x2f, 0xfd, 0]),
            Some(Compression::Zstd)
        );
        assert_eq!(Compression::of(b"[2024"), None);
    }
}
