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

/// One input's bar (or none, when not worth showing): one reader counts
/// into it and ends it ([`Bar::wrap`]), or the readers of the input's parts
/// share it ([`Bar::wrap_part`] each) and their caller ends it
/// ([`Bar::finish`]).
#[derive(Clone)]
pub struct Bar(Option<ProgressBar>);

impl Bar {
    /// The bar of an input of `len` bytes named `label`.
    pub fn new(len: Option<u64>, label: &str, quiet: bool) -> Bar {
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
                Bar(Some(bar))
            }
            _ => Bar(None),
        }
    }

    /// `reader`, counting what it reads into the bar, which ends with it.
    pub fn wrap<'a, R: Read + Send + 'a>(&self, reader: R) -> Box<dyn Read + Send + 'a> {
        self.counted(reader, true)
    }

    /// [`Bar::wrap`] for one part of the input: its end does not end the
    /// bar ([`Bar::finish`] does, once every part was read).
    pub fn wrap_part<'a, R: Read + Send + 'a>(&self, reader: R) -> Box<dyn Read + Send + 'a> {
        self.counted(reader, false)
    }

    /// Back to nothing read: the parts' bytes counted, the input is read
    /// again in one pass.
    pub fn restart(&self) {
        if let Some(bar) = &self.0 {
            bar.set_position(0);
        }
    }

    /// Takes the bar off the terminal.
    pub fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }

    fn counted<'a, R: Read + Send + 'a>(&self, reader: R, ends: bool) -> Box<dyn Read + Send + 'a> {
        match &self.0 {
            Some(bar) => Box::new(Counted {
                inner: reader,
                bar: bar.clone(),
                ends,
            }),
            None => Box::new(reader),
        }
    }
}

struct Counted<R> {
    inner: R,
    bar: ProgressBar,
    /// Whether this reader's end is the input's.
    ends: bool,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bar.inc(n as u64);
        if n == 0 && self.ends {
            self.bar.finish_and_clear();
        }
        Ok(n)
    }
}
