//! Kafka broker and Java client logs → [`GroupEvent`]s.
//!
//! Takes: `server.log` (Kafka 0.9 → 4.x, Scala and Java group coordinators,
//! KIP-848 consumer groups), Java client logs (`[Consumer clientId=…,
//! groupId=…]` lines), and `kafka-request.log` "Completed request:" JSON
//! lines, in any of the layouts real deployments wrap around log4j's (see
//! `layout.rs`); plain files, multi-member `.gz`, directories of rotated files,
//! or stdin (see [`read_log_path`]). Gives: the same [`GroupEvent`]s the capture path
//! produces (`EventKind::Broker` / `EventKind::Client`), each with its time
//! (converted from the log's zone, [`LogOptions::zone`]), group, member,
//! generation, client or broker, and file:line evidence; a [`LogSummary`];
//! and [`Diagnostics`] for coordinator lines no pattern knows, times DST makes
//! ambiguous and group lines without a time.
//!
//! Does not interpret events (that is the `group` stage's job) and does not
//! sort them across files (that is the `timeline` stage's).

mod broker;
mod client;
mod csv;
mod files;
mod foreign;
mod layout;
mod parsed;
/// A substring searcher built once ([`parsed`]), for readers of log text elsewhere.
pub(crate) use parsed::finder;
mod reader;
mod request_log;
pub mod synth;

use crate::event::Source;
use std::io::{self, BufRead};
use std::path::PathBuf;

use serde::Serialize;

use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::error::{Error, Result};
use crate::event::GroupEvent;
use crate::time::LogZone;

pub use files::read_log_path;
pub use foreign::{foreign_log, Foreign};

/// How to read logs.
#[derive(Clone, Debug, Default)]
pub struct LogOptions {
    /// The zone the logs' wall-clock times are in (`--log-tz`, default UTC).
    pub zone: LogZone,
}

/// What reading one or more logs saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LogSummary {
    /// Lines read (continuation lines included).
    pub lines: u64,
    /// Lines recognised as group lines (events and known housekeeping).
    pub group_lines: u64,
    /// Coordinator or membership lines no pattern matched.
    pub unknown_group_lines: u64,
    /// Bytes read (after decompression).
    pub bytes: u64,
}

impl LogSummary {
    /// Adds another input's counts.
    pub fn add(&mut self, other: LogSummary) {
        self.lines += other.lines;
        self.group_lines += other.group_lines;
        self.unknown_group_lines += other.unknown_group_lines;
        self.bytes += other.bytes;
    }
}

/// Longest line kept; the rest of a longer line is skipped so that a file
/// without newlines cannot exhaust memory.
const MAX_LINE: usize = 4 << 20;

/// Whether the first bytes of an input look like a Kafka log (any layout) or
/// a gzip stream (rotated logs; kgtrace reads no gzipped captures).
pub fn looks_like_log(first_bytes: &[u8]) -> bool {
    if first_bytes.starts_with(&[0x1f, 0x8b]) {
        return true;
    }
    if first_bytes.contains(&0) {
        return false;
    }
    let mut lines = first_bytes.split(|&b| b == b'\n');
    if lines
        .next()
        .is_some_and(|l| csv::CsvExport::from_header(l.strip_suffix(b"\r").unwrap_or(l)).is_some())
    {
        return true;
    }
    first_bytes.split(|&b| b == b'\n').take(500).any(|line| {
        layout::starts_entry(line)
            || layout::structured_line(line).is_some_and(|l| layout::starts_entry(l.as_bytes()))
    })
}

/// Reads one log from `reader`; `source` names it in evidence and
/// diagnostics. Events are appended to `out` in line order.
///
/// A read error before the first line is fatal; after it, the lines read so
/// far are kept and the cut is a [`DiagnosticKind::TruncatedLog`].
pub fn read_log<R: BufRead>(
    reader: R,
    source: Source,
    opts: &LogOptions,
    diags: &mut Diagnostics,
    out: &mut Vec<GroupEvent>,
) -> Result<LogSummary> {
    read_log_streaming(reader, source, opts, diags, out, &mut |_| {})
}

/// [`read_log`] that hands on events as they are read: `on_events` is
/// called with `out` after every line that added events (it may drain
/// them), so `kgtrace watch` sees a line's events before the next line is
/// read.
pub fn read_log_streaming<R: BufRead>(
    reader: R,
    source: Source,
    opts: &LogOptions,
    diags: &mut Diagnostics,
    out: &mut Vec<GroupEvent>,
    on_events: &mut dyn FnMut(&mut Vec<GroupEvent>),
) -> Result<LogSummary> {
    let mut lines = reader::LineReader::new(source, &opts.zone);
    read_lines(reader, &mut lines, diags, out, on_events)?;
    Ok(lines.summary)
}

/// How one part of a log ended ([`read_log_part`]).
#[derive(Clone, Copy, Debug)]
pub struct PartEnd {
    /// What the part's lines were.
    pub summary: LogSummary,
    /// Whether the reader ended holding something the next part's lines
    /// would have used (a client's "Request joining group due to" reason
    /// not yet given to its join, a CSV export's columns): the next part,
    /// read apart from a fresh reader, would then differ from one pass.
    pub carries_state: bool,
    /// Whether reading stopped at an error before the part's end (a
    /// [`DiagnosticKind::TruncatedLog`]): one pass would stop there too.
    pub cut: bool,
}

/// [`read_log`] of one part of a log, so that the parts of one large file
/// can be read on several cores: `first` says whether the part starts the
/// file. A later part must start at a line that [`opens_entry`] (no
/// multi-line entry, and so nothing else a reader holds between lines but
/// what [`PartEnd::carries_state`] tells, runs across that line), and its
/// lines are numbered from 1: the caller shifts its events' and
/// diagnostics' line numbers ([`shift_line_at`]) by the lines before it.
pub fn read_log_part<R: BufRead>(
    reader: R,
    source: Source,
    opts: &LogOptions,
    first: bool,
    diags: &mut Diagnostics,
    out: &mut Vec<GroupEvent>,
) -> Result<PartEnd> {
    let mut lines = reader::LineReader::new(source, &opts.zone);
    if !first {
        lines.continue_after_first_line();
    }
    let cut = read_lines(reader, &mut lines, diags, out, &mut |_| {})?;
    Ok(PartEnd {
        summary: lines.summary,
        carries_state: lines.carries_state(),
        cut,
    })
}

/// Whether one pass over a log, reaching `line` (its bytes as in the
/// file, newline excluded), would start a new entry there with nothing of
/// the lines before it pending: where a log may be cut into parts for
/// [`read_log_part`]. A line with a NUL byte is never such a line (the
/// reader drops NULs, so its bytes are not what the reader would see).
pub fn opens_entry(line: &[u8]) -> bool {
    !line.contains(&0) && reader::opens_entry(line)
}

/// The position diagnostics give a log line: `line N`.
pub(crate) fn line_at(no: u64) -> String {
    format!("line {no}")
}

/// `at` (a diagnostic's position) moved `by` lines down when it is a
/// [`line_at`] position; `None` when it is not one.
pub fn shift_line_at(at: &str, by: u64) -> Option<String> {
    let no: u64 = at.strip_prefix("line ")?.parse().ok()?;
    Some(line_at(no + by))
}

/// Reads every line of `reader` into `lines`; true when a read error cut
/// the input short (after its first line: before it, the error is returned).
fn read_lines<R: BufRead>(
    mut reader: R,
    lines: &mut reader::LineReader<'_>,
    diags: &mut Diagnostics,
    out: &mut Vec<GroupEvent>,
    on_events: &mut dyn FnMut(&mut Vec<GroupEvent>),
) -> Result<bool> {
    let mut buf = Vec::with_capacity(1024);
    let mut no = 0u64;
    let mut cut = false;
    loop {
        let (skipped, bytes) = skip_quiet_lines(&mut reader, lines);
        no += skipped;
        lines.skipped(skipped);
        lines.summary.bytes += bytes as u64;
        match read_line_capped(&mut reader, &mut buf, MAX_LINE) {
            Ok(0) => break,
            Ok(consumed) => {
                no += 1;
                lines.summary.bytes += consumed as u64;
                lines.line(no, &buf, diags, out);
                if !out.is_empty() {
                    on_events(out);
                }
            }
            Err(e) if no == 0 => {
                return Err(Error::Read {
                    path: PathBuf::from(lines.source()),
                    source: e,
                })
            }
            Err(e) => {
                diags.add(
                    DiagnosticKind::TruncatedLog,
                    lines.source(),
                    line_at(no + 1),
                    e.to_string(),
                );
                cut = true;
                break;
            }
        }
    }
    lines.finish(diags, out);
    if !out.is_empty() {
        on_events(out);
    }
    Ok(cut)
}

/// Consumes the whole lines at the front of `reader`'s buffer that `lines`
/// would reject at its prefilter anyway, without copying them; returns how
/// many lines and bytes. A read error is left for [`read_line_capped`].
fn skip_quiet_lines<R: BufRead>(reader: &mut R, lines: &reader::LineReader<'_>) -> (u64, usize) {
    if !lines.may_skip() {
        return (0, 0);
    }
    let Ok(avail) = reader.fill_buf() else {
        return (0, 0);
    };
    let n = reader::quiet_prefix(avail);
    let count = memchr::memchr_iter(b'\n', &avail[..n]).count() as u64;
    reader.consume(n);
    (count, n)
}

/// Reads one line (newline included) into `buf`, keeping at most `cap`
/// bytes of it; returns the bytes consumed (0 at end of input).
fn read_line_capped<R: BufRead>(r: &mut R, buf: &mut Vec<u8>, cap: usize) -> io::Result<usize> {
    buf.clear();
    let mut total = 0;
    loop {
        let avail = match r.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(total);
        }
        let (n, done) = match memchr::memchr(b'\n', avail) {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        let room = cap.saturating_sub(buf.len());
        buf.extend_from_slice(&avail[..n.min(room)]);
        r.consume(n);
        total += n;
        if done {
            return Ok(total);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    #[test]
    fn recognises_logs_of_every_layout_and_rejects_binary() {
        assert!(looks_like_log(b"[2024-01-01 00:00:00,000] INFO Kafka version: 3.8.1 (org.apache.kafka.common.utils.AppInfoParser)\n"));
        assert!(looks_like_log(b"INFO - 2024-11-11 09:36:08,447 - org.apache.kafka.common.utils.AppInfoParser:124 - Kafka version: 3.8.1\n"));
        assert!(looks_like_log(
            b"kafka_1  | [2019-07-23 09:12:56,387] INFO x\n"
        ));
        assert!(looks_like_log(&[0x1f, 0x8b, 8, 0]));
        assert!(!looks_like_log(&[0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0]));
        assert!(!looks_like_log(&[0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0, 0, 0]));
        assert!(!looks_like_log(b"just some text\nwith no log lines\n"));
    }

    #[test]
    fn a_generated_multi_version_multi_broker_log_reads_without_unknown_lines() {
        let mut text = Vec::new();
        let stats = synth::write_synthetic_log(&mut text, 2 << 20, 7).unwrap();
        let (mut diags, mut out) = (Diagnostics::default(), Vec::new());
        let summary = read_log(
            Cursor::new(&text),
            crate::event::Source::from("synth"),
            &LogOptions::default(),
            &mut diags,
            &mut out,
        )
        .unwrap();
        assert_eq!(summary.lines, stats.lines);
        assert_eq!(out.len() as u64, stats.events);
        assert_eq!(summary.group_lines, stats.events + stats.known);
        assert_eq!((summary.unknown_group_lines, diags.total()), (0, 0));
        let brokers: std::collections::BTreeSet<_> =
            out.iter().filter_map(|e| e.client.broker.clone()).collect();
        assert!(brokers.len() >= 5, "{brokers:?}");
        assert!(out.windows(2).all(|w| w[0].evidence.at != w[1].evidence.at));
    }

    #[test]
    fn overlong_lines_are_capped_not_buffered_whole() {
        let mut data = vec![b'x'; 100];
        data.push(b'\n');
        data.extend_from_slice(b"tail\n");
        let mut r = Cursor::new(data);
        let mut buf = Vec::new();
        assert_eq!(read_line_capped(&mut r, &mut buf, 10).unwrap(), 101);
        assert_eq!(buf.len(), 10);
        assert_eq!(read_line_capped(&mut r, &mut buf, 10).unwrap(), 5);
        assert_eq!(buf, b"tail\n");
        assert_eq!(read_line_capped(&mut r, &mut buf, 10).unwrap(), 0);
    }

    #[test]
    fn mangled_logs_never_panic() {
        let mut text = Vec::new();
        synth::write_synthetic_log(&mut text, 256 << 10, 3).unwrap();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..40 {
            let mut bytes = text.clone();
            for _ in 0..2000 {
                let at = next() as usize % bytes.len();
                bytes[at] = match round % 4 {
                    0 => next() as u8,
                    1 => {
                        let set = b"[]()|:- \n\t'\"0123456789";
                        set[next() as usize % set.len()]
                    }
                    2 => 0xff,
                    _ => b'\n',
                };
            }
            bytes.truncate(next() as usize % bytes.len());
            let (mut diags, mut out) = (Diagnostics::default(), Vec::new());
            let opts = LogOptions {
                zone: LogZone::parse("Europe/Berlin").unwrap(),
            };
            read_log(
                Cursor::new(&bytes),
                crate::event::Source::from("x"),
                &opts,
                &mut diags,
                &mut out,
            )
            .unwrap();
        }
    }

    /// Every line through the line reader one by one, none skipped in bulk
    /// (how `read_log` read before `skip_quiet_lines`).
    fn read_line_by_line(text: &[u8]) -> (Vec<GroupEvent>, LogSummary, String) {
        let opts = LogOptions::default();
        let mut lines = reader::LineReader::new(crate::event::Source::from("x"), &opts.zone);
        let (mut diags, mut out) = (Diagnostics::default(), Vec::new());
        for (i, raw) in text.split_inclusive(|&b| b == b'\n').enumerate() {
            lines.summary.bytes += raw.len() as u64;
            lines.line(i as u64 + 1, raw, &mut diags, &mut out);
        }
        lines.finish(&mut diags, &mut out);
        (out, lines.summary, format!("{diags:?}"))
    }

    fn read_buffered(text: &[u8], capacity: usize) -> (Vec<GroupEvent>, LogSummary, String) {
        let (mut diags, mut out) = (Diagnostics::default(), Vec::new());
        let reader = io::BufReader::with_capacity(capacity, Cursor::new(text));
        let opts = LogOptions::default();
        let summary = read_log(
            reader,
            crate::event::Source::from("x"),
            &opts,
            &mut diags,
            &mut out,
        )
        .unwrap();
        (out, summary, format!("{diags:?}"))
    }

    #[test]
    fn skipping_quiet_lines_in_bulk_changes_no_event_count_or_diagnostic() {
        let mut text = Vec::new();
        synth::write_synthetic_log(&mut text, 1 << 20, 11).unwrap();
        // A client entry whose continuation lines hold no "roup", an
        // unknown coordinator line, and a last line without a newline.
        text.extend_from_slice(
            b"[2024-03-01 10:00:00,000] INFO [Consumer clientId=c-1, groupId=g] Updating assignment with\n\
              \tAssigned partitions:                       [t-0]\n\
              \tCurrent owned partitions:                  []\n\
              [2024-03-01 10:00:01,000] INFO [GroupCoordinator 1]: Something new about group g (kafka.coordinator.group.GroupCoordinator)\n\
              [2024-03-01 10:00:02,000] INFO [GroupCoordinator 1]: Stabilized group g generation 4 (__consumer_offsets-1) with 1 members",
        );
        let expected = read_line_by_line(&text);
        assert!(expected.0.len() > 100 && expected.1.unknown_group_lines > 0);
        for capacity in [16, 200, 4096, 1 << 20] {
            assert!(
                read_buffered(&text, capacity) == expected,
                "capacity {capacity}"
            );
        }
        // Mangled copies: newlines moved, bytes broken.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for round in 0..6 {
            let mut bytes = text.clone();
            for _ in 0..500 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let at = state as usize % bytes.len();
                bytes[at] = if round % 2 == 0 { b'\n' } else { state as u8 };
            }
            let expected = read_line_by_line(&bytes);
            for capacity in [64, 8192] {
                assert!(read_buffered(&bytes, capacity) == expected, "round {round}");
            }
        }
    }

    /// Run by hand over a directory of real logs:
    /// `KGTRACE_LOG_DIR=… cargo test --lib real_logs -- --ignored --nocapture`.
    #[test]
    #[ignore = "reads real logs from $KGTRACE_LOG_DIR"]
    fn real_logs_have_no_unknown_group_lines() {
        let Ok(dir) = std::env::var("KGTRACE_LOG_DIR") else {
            return;
        };
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for path in paths
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "log"))
        {
            let (mut diags, mut out) = (Diagnostics::default(), Vec::new());
            let summary =
                read_log_path(path, &LogOptions::default(), &mut diags, &mut out).unwrap();
            println!(
                "{}: {} lines, {} group lines, {} events, {} unknown",
                path.display(),
                summary.lines,
                summary.group_lines,
                out.len(),
                summary.unknown_group_lines
            );
            assert_eq!(summary.unknown_group_lines, 0, "{diags:?}");
        }
    }
}
