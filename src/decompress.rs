//! Compressed inputs read as streams, never inflated into memory.
//!
//! Takes: a reader whose first bytes have been looked at. Gives: a reader
//! of the decompressed bytes (gzip, multi-member as `tcpdump -z gzip` and
//! logrotate write them; zstd), which ends early, with [`Inflated::bombed`]
//! set, once the output passes [`MAX_RATIO`] times the compressed bytes read
//! after the first [`RATIO_GRACE`] bytes out (a decompression bomb). flate2
//! and ruzstd are confined to this module.

use std::cell::Cell;
use std::io::{self, Read};
use std::rc::Rc;

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
    bombed: Rc<Cell<bool>>,
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
            bombed: Rc::new(Cell::new(false)),
        })
    }

    /// A handle that tells, after reading, whether the ratio limit cut the
    /// stream.
    pub fn bomb_flag(&self) -> Rc<Cell<bool>> {
        self.bombed.clone()
    }
}

impl Read for Inflated<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.bombed.get() {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        self.out += n as u64;
        if self.out > RATIO_GRACE && self.out > MAX_RATIO.saturating_mul(self.compressed.get()) {
            self.bombed.set(true);
            return Ok(0);
        }
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
        assert!(flag.get());
        assert!(n < 200 << 20 && n >= RATIO_GRACE, "{n}");
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
