//! kgtrace run as a library, in this process: what `kgtrace::run` writes
//! (the rows a view writes as they are made) beside what rendering the
//! batch run's whole report writes, to compare the two.

use kgtrace::options::Options;
use kgtrace::render::{RenderOptions, View};
use kgtrace::report::Report;

/// What a run gave: the bytes written, the rows matched, the diagnostics.
#[derive(Debug, PartialEq)]
pub struct Written {
    pub out: String,
    pub matched: u64,
    pub diagnostics: String,
}

impl Written {
    /// How `self` differs from `want`, if it does: the rows matched by
    /// each, the first line that differs, whether the diagnostics agree.
    pub fn difference(&self, want: &Written) -> Option<String> {
        if self == want {
            return None;
        }
        let line = self
            .out
            .lines()
            .zip(want.out.lines())
            .position(|(a, b)| a != b);
        Some(format!(
            "{} rows against {} (first differing line {line:?}); diagnostics equal: {}",
            self.matched,
            want.matched,
            self.diagnostics == want.diagnostics
        ))
    }
}

/// Through `kgtrace::run`, as the binary runs it; and the report it gives
/// back.
pub fn through_run(opts: &Options) -> (Written, Box<Report>) {
    let mut out = Vec::new();
    let outcome = kgtrace::run(opts, &RenderOptions::default(), &mut out).expect("runs");
    let written = Written {
        out: String::from_utf8(out).expect("utf-8"),
        matched: outcome.matched,
        diagnostics: format!("{:?}", outcome.diagnostics),
    };
    (written, outcome.report.expect("a report"))
}

/// Through `kgtrace::analyse` (every row gathered in the report), `view`
/// of it rendered whole.
pub fn rendered_whole(opts: &Options, view: View) -> Written {
    let (report, matched, diagnostics) = kgtrace::analyse(opts).expect("analyses");
    let mut out = Vec::new();
    let render = RenderOptions::default();
    kgtrace::render::render(&report, view, opts.format, &render, &mut out).expect("renders");
    Written {
        out: String::from_utf8(out).expect("utf-8"),
        matched,
        diagnostics: format!("{diagnostics:?}"),
    }
}
