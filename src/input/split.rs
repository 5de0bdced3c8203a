//! One large plain log read in parts, a core each, joined as if read in
//! one pass.
//!
//! Takes: an uncompressed log file of at least two [`MIN_PART`]s (named on
//! its own or found in a directory) and the
//! cores it may use. Gives: the [`LogRead`] one pass over it gives (events
//! in line order with their line numbers, diagnostics, summary, NULs), or
//! `None` when it is read in one pass instead.
//!
//! Why: a broker's `server.log` is mostly replica-fetcher, log-segment and
//! controller lines; one core reading a 1 GB one spends its time in the
//! kernel's copy and the searches that skip those lines, not in the group
//! lines, and that work splits by bytes.
//!
//! Where a file is cut: after the first newline past each part's share of
//! the file whose next line opens an entry ([`logs::opens_entry`]): a
//! multi-line entry never runs across a cut, and a part starts as a reader
//! continued after the file's first line. What else a reader holds from
//! line to line is what [`logs::PartEnd::carries_state`] tells (a client's
//! rejoin reason waiting for its join, a CSV export's columns); when a part
//! but the last ends holding it, the file is read again in one pass. The
//! lines of a later part are numbered from 1 and moved down by the lines
//! before it once those are known; a part cut short by a read error ends
//! the file there, as one pass would. Every part reads the one file handle
//! the caller opened, by positional reads ([`Stretch`]): a log renamed by
//! its rotation between two opens would have given two files.

use crate::event::Source;
use std::fs::File;
use std::io::{self, BufReader, Read};

use super::{log_options, LogRead, NulSkipping, SeenEvents, LOG_BUFFER};
use crate::diagnostic::Diagnostics;
use crate::error::Result;
use crate::event::{GroupEvent, Location};
use crate::logs::{self, LogSummary, PartEnd};
use crate::options::ReadOptions;
use crate::progress::Bar;

/// The least bytes a part is given: below this, a second core's start-up
/// and the second file handle cost more than they save.
const MIN_PART: u64 = 64 << 20;

#[cfg(test)]
thread_local! {
    /// A smaller [`MIN_PART`] for tests on this thread, so that small files
    /// take the path a large one takes.
    pub(super) static TEST_MIN_PART: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
    /// Files read in parts on this thread.
    pub(super) static TEST_READ_IN_PARTS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// [`MIN_PART`] (or a test's).
pub(super) fn min_part() -> u64 {
    #[cfg(test)]
    if let Some(n) = TEST_MIN_PART.with(std::cell::Cell::get) {
        return n;
    }
    MIN_PART
}

/// The most parts one file is cut into.
const MAX_PARTS: usize = 8;

/// How far past a part's share a cut is looked for (a line this long
/// without a newline is not a log's).
const CUT_WINDOW: usize = 1 << 20;

/// Reads the log open as `file` (`len` bytes when planned) in up to
/// `cores` parts; `None` when it is too small, no cut was found, or a part
/// ended holding what the next one needed: the caller then reads it in one
/// pass.
pub(super) fn read_in_parts(
    file: &File,
    len: u64,
    cores: usize,
    source: &Source,
    opts: &ReadOptions,
    bar: &Bar,
) -> Option<LogRead> {
    let parts = cores.min(MAX_PARTS).min((len / min_part()) as usize);
    if parts < 2 {
        return None;
    }
    let starts = cuts(file, len, parts).ok()?;
    if starts.len() < 2 {
        return None;
    }
    let read = read_cut(file, &starts, source, opts, bar);
    #[cfg(test)]
    if read.is_some() {
        TEST_READ_IN_PARTS.with(|n| n.set(n.get() + 1));
    }
    read
}

/// Reads `file` in parts starting at `starts` (0 first), each on a thread
/// of its own, and joins them ([`join`]).
fn read_cut(
    file: &File,
    starts: &[u64],
    source: &Source,
    opts: &ReadOptions,
    bar: &Bar,
) -> Option<LogRead> {
    let read = std::thread::scope(|scope| {
        let handles: Vec<_> = starts
            .iter()
            .enumerate()
            .map(|(i, &start)| {
                // The last part reads to the end, as one pass would: a log
                // still being written may have grown since it was planned.
                let take = starts.get(i + 1).map(|next| next - start);
                scope.spawn(move || read_part(file, start, take, i == 0, source, opts, bar))
            })
            .collect();
        // A part's reader that panicked is a bug to show, as one pass
        // would show it, not a reason to read again.
        let parts: Vec<_> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect();
        parts
    });
    join(read)
}

/// Where each part starts: 0, then for each later part the start of the
/// first line opening an entry past its share of the file.
fn cuts(file: &File, len: u64, parts: usize) -> io::Result<Vec<u64>> {
    let mut starts = vec![0];
    let mut window = vec![0; CUT_WINDOW];
    for k in 1..parts {
        let share = len / parts as u64 * k as u64;
        let from = share.max(starts[starts.len() - 1] + 1);
        let n = super::read_full(&mut Stretch::new(file, from, None), &mut window)?;
        if let Some(at) = cut_in(&window[..n]) {
            starts.push(from + at as u64);
        }
    }
    Ok(starts)
}

/// The offset in `window` of the first line start (after a newline) whose
/// line, complete in the window, opens an entry.
fn cut_in(window: &[u8]) -> Option<usize> {
    let mut at = memchr::memchr(b'\n', window)? + 1;
    while at < window.len() {
        let end = at + memchr::memchr(b'\n', &window[at..])?;
        if logs::opens_entry(&window[at..end]) {
            return Some(at);
        }
        at = end + 1;
    }
    None
}

/// What one part's reading gave.
struct Part {
    events: Vec<GroupEvent>,
    diagnostics: Diagnostics,
    end: Result<PartEnd>,
    /// Bytes the part was given (`None`: to the end of the file).
    expected: Option<u64>,
    nul_bytes: u64,
    nul_runs: u64,
}

fn read_part(
    file: &File,
    start: u64,
    take: Option<u64>,
    first: bool,
    source: &Source,
    opts: &ReadOptions,
    bar: &Bar,
) -> Part {
    let mut nuls = NulSkipping::new(bar.wrap_part(Stretch::new(file, start, take)));
    let (mut diagnostics, mut events) = (Diagnostics::default(), Vec::new());
    let end = logs::read_log_part(
        BufReader::with_capacity(LOG_BUFFER, &mut nuls),
        source.clone(),
        &log_options(opts),
        first,
        &mut diagnostics,
        &mut events,
    );
    Part {
        events,
        diagnostics,
        end,
        expected: take,
        nul_bytes: nuls.skipped,
        nul_runs: nuls.runs,
    }
}

/// `len` bytes of a file from `at` (or to its end), read by positional
/// reads: readers of one handle on several threads share no cursor.
pub(super) struct Stretch<'a> {
    file: &'a File,
    at: u64,
    end: u64,
}

impl<'a> Stretch<'a> {
    pub(super) fn new(file: &'a File, at: u64, len: Option<u64>) -> Stretch<'a> {
        let end = len.map_or(u64::MAX, |n| at.saturating_add(n));
        Stretch { file, at, end }
    }
}

impl Read for Stretch<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let room = usize::try_from(self.end - self.at).map_or(buf.len(), |r| r.min(buf.len()));
        if room == 0 {
            return Ok(0);
        }
        let n = read_at(self.file, &mut buf[..room], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, at)
}

/// Windows' positional read also moves the handle's cursor: the caller
/// rewinds it before reading the file in one pass.
#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, at)
}

/// The parts joined in order, line numbers moved down by the lines before
/// each; `None` when a part but the last ended holding what the next one
/// needed, or a later part failed before its first line (one pass would
/// have read on).
fn join(parts: Vec<Part>) -> Option<LogRead> {
    let mut joined = LogRead {
        events: Vec::new(),
        seen: SeenEvents::default(),
        nul_bytes: 0,
        nul_runs: 0,
        result: Ok(LogSummary::default()),
        diagnostics: Diagnostics::default(),
    };
    let count = parts.len();
    let mut summary = LogSummary::default();
    for (i, part) in parts.into_iter().enumerate() {
        let end = match part.end {
            Ok(end) => end,
            Err(e) if i == 0 => {
                joined.diagnostics = part.diagnostics;
                joined.result = Err(e);
                return Some(joined);
            }
            Err(_) => return None,
        };
        let before = summary.lines;
        let mut events = part.events;
        let mut diagnostics = part.diagnostics;
        if before > 0 {
            move_lines(&mut events, &mut diagnostics, before);
        }
        if joined.events.is_empty() {
            joined.events = events;
        } else {
            joined.events.append(&mut events);
        }
        joined.diagnostics.merge(diagnostics);
        joined.nul_bytes += part.nul_bytes;
        joined.nul_runs += part.nul_runs;
        summary.add(end.summary);
        let short = part
            .expected
            .is_some_and(|n| end.summary.bytes + part.nul_bytes < n);
        if end.cut || short {
            // One pass stops where this part stopped.
            break;
        }
        if end.carries_state && i + 1 < count {
            return None;
        }
    }
    joined.seen.count(&joined.events);
    joined.result = Ok(summary);
    Some(joined)
}

/// Moves a later part's line numbers down by the `before` lines before it.
fn move_lines(events: &mut [GroupEvent], diagnostics: &mut Diagnostics, before: u64) {
    for ev in events {
        if let Location::Line { line } = &mut ev.evidence.at {
            *line += before;
        }
    }
    for d in &mut diagnostics.examples {
        if let Some(at) = logs::shift_line_at(&d.at, before) {
            d.at = at;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::Path;

    use super::*;
    use crate::input::{finish_log, read_unit, Collected, Unit};

    /// A generated log with what a reader holds between lines around its
    /// cuts: multi-line entries (stack traces), coordinator lines no
    /// pattern knows, a group line without a time, NUL runs, and a client's
    /// "Request joining group due to" long before its "(Re-)joining group".
    fn log_file() -> (tempfile::NamedTempFile, Vec<u8>) {
        let mut text = Vec::new();
        logs::synth::write_synthetic_log(&mut text, 300 << 10, 5).unwrap();
        let (a, b) = (text.len() / 3, 2 * text.len() / 3);
        let odd = b"[2024-03-01 01:00:00,000] INFO [GroupCoordinator 1]: Frobnicated group g-odd generation 3 (kafka.coordinator.group.GroupCoordinator)\n\
[2024-03-01 01:00:00,001] INFO [GroupCoordinator 1]: Stabilized group g-odd \0\0\0generation 4 (__consumer_offsets-1) with 2 members (kafka.coordinator.group.GroupCoordinator)\n\
INFO [GroupCoordinator 1]: Stabilized group g-notime generation 4 (__consumer_offsets-1) with 2 members (kafka.coordinator.group.GroupCoordinator)\n";
        let asks = b"INFO - 2024-03-01 01:00:01,000 - org.apache.kafka.clients.consumer.internals.ConsumerCoordinator:1 - [Consumer clientId=c-9, groupId=g-9] Request joining group due to: rebalance failed due to 'The group member needs to have a valid member id before actually entering a consumer group.' (MemberIdRequiredException)\n";
        let joins = b"INFO - 2024-03-01 01:00:02,000 - org.apache.kafka.clients.consumer.internals.ConsumerCoordinator:1 - [Consumer clientId=c-9, groupId=g-9] (Re-)joining group\n";
        let mut out = Vec::new();
        let mut asked = None;
        for (i, line) in text.split_inclusive(|&b| b == b'\n').enumerate() {
            let at = out.len();
            out.extend_from_slice(line);
            if at < a && out.len() >= a {
                out.extend_from_slice(odd);
                out.extend_from_slice(asks);
                asked = Some(i);
            }
            if asked.is_some_and(|asked| i == asked + 20) {
                out.extend_from_slice(joins);
            }
            if at < b && out.len() >= b {
                out.extend_from_slice(odd);
            }
            if i == 7 {
                out.extend_from_slice(b"\0\0\0\0");
            }
        }
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(&out).unwrap();
        (file, out)
    }

    /// What one input's reading added to a run, as text to compare.
    fn seen(out: &Collected) -> String {
        format!(
            "{:?}\n{:?}\n{}",
            out.logged,
            out.diagnostics,
            serde_json::to_string(&out.inputs).unwrap()
        )
    }

    fn one_pass(path: &Path) -> Collected {
        let mut out = Collected::default();
        let unit = Unit::File(path.to_path_buf(), None);
        read_unit(&unit, &ReadOptions::default(), false, true, &mut out).unwrap();
        out
    }

    fn in_parts(path: &Path, starts: &[u64]) -> Option<Collected> {
        in_parts_of(&File::open(path).unwrap(), path, starts)
    }

    /// [`in_parts`] of a file already open (named `path` when opened).
    fn in_parts_of(file: &File, path: &Path, starts: &[u64]) -> Option<Collected> {
        let source: Source = Source::from(path.to_string_lossy().as_ref());
        let bar = Bar::new(None, "", true);
        let read = read_cut(file, starts, &source, &ReadOptions::default(), &bar)?;
        let mut out = Collected::default();
        finish_log(read, &source, "log".into(), None, &mut out);
        Some(out)
    }

    /// Line starts of `text` whose line opens an entry, as the cuts pick.
    fn entry_starts(text: &[u8]) -> Vec<u64> {
        let mut starts = Vec::new();
        let mut at = 0;
        for line in text.split_inclusive(|&b| b == b'\n') {
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            if at > 0 && logs::opens_entry(body) {
                starts.push(at as u64);
            }
            at += line.len();
        }
        starts
    }

    #[test]
    fn a_log_read_in_parts_gives_what_one_pass_gives_wherever_it_is_cut() {
        let (file, text) = log_file();
        let whole = seen(&one_pass(file.path()));
        assert!(whole.contains("UnknownLogLine") && whole.contains("BadLogTimestamp"));
        assert!(whole.contains("10 NUL bytes in 3 runs"));
        let starts = entry_starts(&text);
        let (mut joined, mut refused) = (0, 0);
        for (i, &cut) in starts.iter().enumerate().step_by(7) {
            let later = starts[(i + starts.len() / 3).min(starts.len() - 1)];
            let cuts: Vec<u64> = [0, cut, later]
                .into_iter()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            match in_parts(file.path(), &cuts) {
                Some(out) => {
                    joined += 1;
                    assert_eq!(seen(&out), whole, "cut at {cuts:?}");
                }
                None => refused += 1,
            }
        }
        assert!(joined > 100, "{joined} joined, {refused} read in one pass");
        // Only a cut between the client's reason and its join (20 lines
        // apart) is refused.
        assert!(
            (1..=6).contains(&refused),
            "{refused} of {}",
            joined + refused
        );
    }

    #[test]
    fn a_cut_between_a_clients_rejoin_reason_and_its_join_reads_the_log_in_one_pass() {
        let (file, text) = log_file();
        let asks = memchr::memmem::find(&text, b"Request joining group due to").unwrap();
        let joins = memchr::memmem::find(&text, b"(Re-)joining group\n").unwrap();
        let between = entry_starts(&text)
            .into_iter()
            .find(|&s| s as usize > asks && (s as usize) < joins)
            .unwrap();
        assert!(in_parts(file.path(), &[0, between]).is_none());
        let after = entry_starts(&text)
            .into_iter()
            .find(|&s| s as usize > joins)
            .unwrap();
        assert_eq!(
            seen(&in_parts(file.path(), &[0, after]).unwrap()),
            seen(&one_pass(file.path()))
        );
    }

    #[test]
    fn the_parts_read_the_file_that_was_opened_when_rotation_renames_it_away() {
        let (file, text) = log_file();
        let whole = seen(&one_pass(file.path()));
        let opened = File::open(file.path()).unwrap();
        // logrotate (without copytruncate) renames the log, and the broker
        // starts a new one under its name.
        let rotated = tempfile::tempdir().unwrap();
        std::fs::rename(file.path(), rotated.path().join("server.log.1")).unwrap();
        std::fs::write(file.path(), b"[2024-03-01 09:00:00,000] INFO new file\n").unwrap();
        let starts = entry_starts(&text);
        let cuts = [0, starts[starts.len() / 4], starts[3 * starts.len() / 4]];
        let parts = in_parts_of(&opened, file.path(), &cuts).unwrap();
        assert!(seen(&parts) == whole);
    }

    #[test]
    fn cuts_fall_after_a_newline_at_a_line_that_opens_an_entry() {
        let (file, text) = log_file();
        let starts = cuts(file.as_file(), text.len() as u64, 6).unwrap();
        assert_eq!(starts.len(), 6, "{starts:?}");
        assert_eq!(starts[0], 0);
        for w in starts.windows(2) {
            assert!(w[0] < w[1]);
        }
        for &s in &starts[1..] {
            let s = s as usize;
            assert_eq!(text[s - 1], b'\n');
            let end = s + memchr::memchr(b'\n', &text[s..]).unwrap();
            assert!(logs::opens_entry(&text[s..end]));
        }
        // A stack trace's lines are passed over.
        assert_eq!(
            cut_in(b"x\n\tat a.b(C.java:1)\n\tat d\n[2024-03-01 00:00:00,000] INFO y\n"),
            Some(26)
        );
        assert_eq!(cut_in(b"no newline at all"), None);
        assert_eq!(cut_in(b"x\n[2024-03-01 00:00:00,000] INFO y but cut"), None);
    }
}
