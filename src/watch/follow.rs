//! Following a growing file, as `tail -F` does.
//!
//! Takes: a path. Gives: a [`Read`] of its bytes that, at the end of the
//! file, waits for more instead of ending: it reopens the path when the
//! file there is another one (a rotation: rename, then a new file; checked
//! by device and inode) and reads again from the start when the file got
//! shorter than what was read (a copytruncate). It ends only when the stop
//! flag is raised.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often the end of a quiet file is looked at again.
const POLL: Duration = Duration::from_millis(100);

/// A followed file.
pub struct Follow {
    path: PathBuf,
    file: Option<File>,
    id: Option<(u64, u64)>,
    pos: u64,
    stop: Arc<AtomicBool>,
    /// Rotations and truncations seen.
    pub reopened: u64,
}

impl Follow {
    /// Follows `path` (which must exist now) until `stop` is raised.
    pub fn open(path: PathBuf, stop: Arc<AtomicBool>) -> io::Result<Follow> {
        let file = File::open(&path)?;
        let id = crate::input::identity(&file.metadata()?);
        Ok(Follow {
            path,
            file: Some(file),
            id,
            pos: 0,
            stop,
            reopened: 0,
        })
    }

    /// At the end of the file: switches to a new file at the path, or back
    /// to the start of a truncated one. Whether it did.
    fn rotated(&mut self) -> io::Result<bool> {
        let Ok(meta) = std::fs::metadata(&self.path) else {
            // Renamed away and not yet created again.
            return Ok(false);
        };
        if crate::input::identity(&meta) != self.id {
            let file = File::open(&self.path)?;
            self.id = crate::input::identity(&file.metadata()?);
            self.file = Some(file);
            self.pos = 0;
            self.reopened += 1;
            return Ok(true);
        }
        if meta.len() < self.pos {
            if let Some(f) = &mut self.file {
                f.seek(SeekFrom::Start(0))?;
            }
            self.pos = 0;
            self.reopened += 1;
            return Ok(true);
        }
        Ok(false)
    }
}

impl Read for Follow {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let n = match &mut self.file {
                Some(f) => f.read(buf)?,
                None => 0,
            };
            if n > 0 {
                self.pos += n as u64;
                return Ok(n);
            }
            if self.stop.load(Ordering::Relaxed) {
                return Ok(0);
            }
            if !self.rotated()? {
                std::thread::sleep(POLL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read_some(f: &mut Follow, want: usize) -> Vec<u8> {
        let mut got = Vec::new();
        let mut buf = [0u8; 64];
        while got.len() < want {
            let n = f.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        got
    }

    #[test]
    fn appended_bytes_then_a_rotated_file_are_read_in_turn() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log");
        std::fs::write(&path, b"one\n").unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let mut f = Follow::open(path.clone(), stop.clone()).unwrap();
        assert_eq!(read_some(&mut f, 4), b"one\n");
        let mut w = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        w.write_all(b"two\n").unwrap();
        assert_eq!(read_some(&mut f, 4), b"two\n");
        std::fs::rename(&path, dir.path().join("server.log.1")).unwrap();
        std::fs::write(&path, b"three\n").unwrap();
        assert_eq!(read_some(&mut f, 6), b"three\n");
        assert_eq!(f.reopened, 1);
        stop.store(true, Ordering::Relaxed);
        assert_eq!(f.read(&mut [0u8; 8]).unwrap(), 0, "a stop ends the file");
    }

    #[test]
    fn a_truncated_file_is_read_again_from_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log");
        std::fs::write(&path, b"a long first line\n").unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let mut f = Follow::open(path.clone(), stop).unwrap();
        assert_eq!(read_some(&mut f, 18), b"a long first line\n");
        // copytruncate: same inode, shorter.
        let w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        w.set_len(0).unwrap();
        drop(w);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"new\n")
            .unwrap();
        assert_eq!(read_some(&mut f, 4), b"new\n");
    }
}
