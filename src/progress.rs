//! A progress bar on stderr for long inputs.
//!
//! Takes: a reader and the input's size. Gives: the same reader, counting
//! bytes into an indicatif bar when stderr is a terminal, the input is over
//! [`THRESHOLD`] bytes and the user did not ask for `--quiet`. indicatif is
//! confined to this module; stdout stays clean for reports.

use std::io::{self, IsTerminal, Read};

use indicatif::{ProgressBar, ProgressStyle};

/// Inputs smaller than this read too fast to need a bar.
pub const THRESHOLD: u64 = 50 * 1024 * 1024;

/// Wraps `reader` in a progress bar when it is worth showing.
pub fn wrap<'a, R: Read + Send + 'a>(
    reader: R,
    len: Option<u64>,
    label: &str,
    quiet: bool,
) -> Box<dyn Read + Send + 'a> {
    match len {
        Some(len) if !quiet && len >= THRESHOLD && io::stderr().is_terminal() => {
            let bar = ProgressBar::new(len);
            let style = ProgressStyle::with_template(
                "{msg} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_message(label.to_string());
            Box::new(Counted { inner: reader, bar })
        }
        _ => Box::new(reader),
    }
}

struct Counted<R> {
    inner: R,
    bar: ProgressBar,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bar.inc(n as u64);
        if n == 0 {
            self.bar.finish_and_clear();
        }
        Ok(n)
    }
}
