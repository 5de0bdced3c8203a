//! Reads every input into group events.
//!
//! Takes: the paths the user gave (captures, logs, directories, `-`; files,
//! pipes, FIFOs and `/dev/stdin` alike). Gives: [`Collected`]: events from
//! captures and from logs (kept apart for clock alignment), `decode` rows
//! when asked, one [`InputSummary`] per input (what it was read as, events,
//! records not understood), and all diagnostics.
//!
//! Every input is read once: its first bytes are peeked into a buffer (as
//! many reads as it takes to decide) that the reader then continues from.
//! What an input is comes from those bytes, never from its name: a pcap
//! named `.txt`, a gzip or zstd capture (`tcpdump -z gzip`), a log. A
//! directory is walked recursively without following a link loop twice
//! (device + inode); FIFOs, sockets and devices inside it are skipped, and a
//! bad entry is a diagnostic, never the end of the run. The captures of one
//! directory are one rotation set (`tcpdump -C/-G/-W`): read as one capture
//! in the order of their first packets, so connections continue across
//! files. The same file given twice is read once. `--input-type` forces
//! what an input is read as.

use crate::event::Source;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::capture;
use crate::decompress::{Compression, Inflated};
use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::error::{Error, Result};
use crate::event::{DataEvent, GroupEvent};
use crate::kafka::{ClosedConnection, Exchange, KafkaConfig, KafkaDecoder};
use crate::logs::{self, LogOptions};
use crate::normalize;
use crate::options::{InputType, ReadOptions};
use crate::report::{ExchangeRow, InputSummary};
use crate::tcp::{Reassembler, TcpConfig};
use crate::time::Timestamp;

mod parallel;
mod pipeline;
mod rows;
mod sample;
mod split;

pub use rows::{EventWindow, RowWindow};
pub use sample::{EventSample, SAMPLE_CAP};

use pipeline::Handed;

/// Per-direction cap on out-of-order TCP bytes held while waiting for a hole.
const MAX_BUFFERED_PER_DIRECTION: usize = 8 * 1024 * 1024;
/// Connections tracked at once.
const MAX_CONNECTIONS: usize = 200_000;
/// Largest group-API frame buffered whole.
const MAX_FRAME_LEN: usize = 16 * 1024 * 1024;
/// Bytes peeked to decide what an input is (fewer when they already tell).
const PEEK: usize = 64 * 1024;
/// Bytes of a capture read to find its first packet's time (ordering a
/// rotation set).
const FIRST_PACKET_WINDOW: u64 = 1 << 20;
/// Directory entries visited in one walk.
const MAX_WALK_ENTRIES: usize = 100_000;

/// Events as a reader hands them on, in the order it found them (the
/// streaming API: [`Collected::tap`]).
#[derive(Debug)]
pub enum Flow {
    /// Group events from a capture (in exchange completion order).
    Captured(Vec<GroupEvent>),
    /// Group events from a log (in line order).
    Logged(Vec<GroupEvent>),
    /// Data-path events from a capture.
    Data(Vec<DataEvent>),
}

/// Where a streaming run's events go instead of [`Collected`]'s vectors.
pub struct Tap(pub Box<dyn FnMut(Flow) + Send>);

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tap")
    }
}

/// What reading every input produced.
#[derive(Debug, Default)]
pub struct Collected {
    /// Events from captures.
    pub captured: Vec<GroupEvent>,
    /// Events from logs.
    pub logged: Vec<GroupEvent>,
    /// Data-path events from captures (Fetch, ListOffsets, topic ids),
    /// folded in the order their exchanges completed into what the stops
    /// stage looks up, as they are read (the events themselves are not
    /// kept: on a busy capture they grew with its length).
    pub data: crate::stops::ClientFolder,
    /// Exchanges as `decode` rows (only when asked, and not handed on
    /// through `rows_out`).
    pub exchanges: Vec<ExchangeRow>,
    /// `decode`'s rows handed on in request order while the capture is
    /// read, instead of gathered into `exchanges` ([`RowWindow`]).
    pub rows_out: Option<RowWindow>,
    /// One input's group events handed on in the time line's order
    /// while it is read, instead of gathered into `captured` or `logged`
    /// ([`EventWindow`]): used when the input named is one capture file, a
    /// directory of captures with no log events or one log (it then sets
    /// `events_not_kept`), else left alone.
    pub events_out: Option<EventWindow>,
    /// Group events and the data path counted, not kept (`captured`,
    /// `logged` and `data` stay empty, or the events go to `events_out`):
    /// `decode` and `timeline` written while read need neither, and
    /// keeping them grew with the capture.
    pub events_not_kept: bool,
    /// The data path is folded into `data` even while the group events go
    /// to `events_out`: `rebalances` of one capture folds its events as
    /// they come ([`crate::timeline::HeartbeatFold`]) and its stops need
    /// the data path.
    pub data_beside_window: bool,
    /// Heartbeats folded away by input ([`crate::timeline::Folded`]):
    /// counted in what each input held.
    pub events_folded: Vec<(Source, u64)>,
    /// Every OffsetCommit, when some were folded away with the heartbeats:
    /// the stops stage reads them here, not in `captured`.
    pub commits: Option<crate::stops::CommitBook>,
    /// Group events made while `events_not_kept`.
    pub events_seen: u64,
    /// Copies of those events, up to a cap, when the run writes `decode`'s
    /// or the time line's rows as it reads: for its check of inputs whose
    /// events made no rebalance ([`EventSample`]).
    pub sample: Option<EventSample>,
    /// One summary per input.
    pub inputs: Vec<InputSummary>,
    /// Every anomaly.
    pub diagnostics: Diagnostics,
    /// Last exchange id handed out, so ids stay unique over all captures.
    pub last_exchange_id: u64,
    /// Bytes of decoded Kafka lists kept so far, against
    /// [`crate::kafka::MAX_KEPT_PER_RUN`] over all captures.
    pub kept_bytes: usize,
    /// Streaming (`kgtrace watch`): every event is handed to the tap as
    /// soon as its reader has it (a capture after each packet, a log after
    /// each line) and `captured`, `logged` and `data` stay empty. Batch
    /// runs leave it `None` and the same readers append to the vectors:
    /// both paths share every reader, only the destination differs.
    pub tap: Option<Tap>,
    /// Each capture is read on the calling thread alone, its stages one
    /// after the other (a test compares this with the stages on threads
    /// of their own, [`pipeline`]).
    pub one_thread: bool,
    /// Cores a large plain log may be read on, in parts ([`split`]): the
    /// machine's shared by the inputs read at once; 0 or 1 reads it in one
    /// pass.
    pub log_cores: usize,
    /// A log read while this is set ends there, as at its end: a streaming
    /// run that takes no more events (`rebalances --stream` gone back to
    /// the batch run, which reads the inputs again, or its output closed)
    /// stops its readers instead of leaving them to read every file to the
    /// end on the cores the rest of the run needs; a log whose time line
    /// is written as read stops once nobody takes its rows.
    pub stop: Option<Arc<AtomicBool>>,
}

impl Collected {
    /// Counts `events` (from logs when `logged`) that are let go, not
    /// kept ([`Self::events_not_kept`]), and keeps their sample.
    fn count_not_kept(&mut self, events: &[GroupEvent], logged: bool) {
        self.events_seen += events.len() as u64;
        if let Some(sample) = &mut self.sample {
            sample.keep(events, logged);
        }
    }

    /// Hands `flow` on: to the tap when streaming, else onto the vectors.
    fn deliver(&mut self, flow: Flow) {
        if let Some(tap) = &mut self.tap {
            return (tap.0)(flow);
        }
        if self.events_not_kept {
            if let Flow::Captured(v) | Flow::Logged(v) = &flow {
                self.count_not_kept(v, matches!(flow, Flow::Logged(_)));
            }
            return;
        }
        match flow {
            Flow::Captured(mut v) => move_all(&mut self.captured, &mut v),
            // Moving the first input's events in costs nothing; extending
            // an empty vector would copy them all (a 1 GB log holds
            // millions).
            Flow::Logged(v) if self.logged.is_empty() => self.logged = v,
            Flow::Logged(v) => self.logged.extend(v),
            Flow::Data(v) => v.iter().for_each(|d| self.data.fold(d)),
        }
    }

    /// Whether `events_out` is the time line's window (`timeline` written
    /// as read), not the fold's, which holds each group apart.
    fn time_line_window(&self) -> bool {
        self.events_out.as_ref().is_some_and(|w| !w.is_by_group())
    }

    /// Whether events are handed on as they are read.
    fn streaming(&self) -> bool {
        self.tap.is_some()
    }

    /// A window's flag for the input's reader: set once nobody takes the
    /// rows written as read (`| head`), and the rest of the capture or log
    /// is not read.
    fn rows_gone(&self) -> Option<Arc<AtomicBool>> {
        match (&self.rows_out, &self.events_out) {
            (Some(rows), _) => Some(rows.gone()),
            (None, Some(events)) if self.events_not_kept => Some(events.gone()),
            _ => None,
        }
    }

    /// Whether the Kafka stage should say, with each batch it hands on,
    /// how far rows may go ([`rows::Mark`]).
    fn wants_marks(&self) -> bool {
        self.rows_out.is_some() || (self.events_not_kept && self.events_out.is_some())
    }

    /// Whether those marks should tell the requests apart by group: only
    /// the events go out, to a window that holds groups apart.
    fn wants_group_marks(&self) -> bool {
        self.rows_out.is_none()
            && self.events_not_kept
            && self
                .events_out
                .as_ref()
                .is_some_and(EventWindow::is_by_group)
    }
}

/// What an input was recognised as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Capture,
    Log,
    /// Neither: binary data no reader knows.
    Unknown,
}

/// An input opened and recognised, its peeked bytes still to be read.
struct Opened<'a> {
    reader: Box<dyn BufRead + 'a>,
    kind: Kind,
    compression: Option<Compression>,
    /// The first decompressed bytes, for messages.
    head: Vec<u8>,
    bomb: Option<Arc<AtomicBool>>,
}

impl Opened<'_> {
    fn read_as(&self) -> String {
        let kind = match self.kind {
            Kind::Capture => "capture",
            Kind::Log => "log",
            Kind::Unknown => "unknown",
        };
        match self.compression {
            Some(c) => format!("{} {kind}", c.name()),
            None => kind.to_string(),
        }
    }
}

/// Files already read: by device and inode, and by content.
#[derive(Default)]
struct Seen {
    /// (device, inode) of every file and directory met.
    ids: HashSet<(u64, u64)>,
    /// Regular files read, by length and a hash of their first and last
    /// 64 KiB ([`fingerprint`]).
    contents: HashMap<(u64, u64), Vec<PathBuf>>,
}

impl Seen {
    /// False when `meta`'s file was read before.
    fn first_time(&mut self, meta: &std::fs::Metadata) -> bool {
        match identity(meta) {
            Some(id) => self.ids.insert(id),
            None => true,
        }
    }

    /// The file read before whose bytes are exactly `path`'s (a copy under
    /// another name), if any; otherwise remembers `path`. The fingerprint
    /// picks candidates, a byte-for-byte comparison decides.
    fn same_content(&mut self, path: &Path, meta: &std::fs::Metadata) -> Option<PathBuf> {
        if !meta.is_file() || meta.len() == 0 {
            return None;
        }
        let key = (meta.len(), fingerprint(path).ok()?);
        let earlier = self.contents.entry(key).or_default();
        if let Some(same) = earlier
            .iter()
            .find(|e| same_bytes(e, path).unwrap_or(false))
        {
            return Some(same.clone());
        }
        earlier.push(path.to_path_buf());
        None
    }
}

/// Bytes hashed at each end of a file to pick duplicate candidates.
const FINGERPRINT_BYTES: u64 = 64 * 1024;

/// A hash of a file's first and last [`FINGERPRINT_BYTES`].
fn fingerprint(path: &Path) -> io::Result<u64> {
    use std::hash::{Hash, Hasher};
    use std::io::{Seek, SeekFrom};
    let mut f = File::open(path)?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut buf = Vec::new();
    (&mut f).take(FINGERPRINT_BYTES).read_to_end(&mut buf)?;
    let len = f.metadata()?.len();
    if len > FINGERPRINT_BYTES {
        f.seek(SeekFrom::Start(
            len.saturating_sub(FINGERPRINT_BYTES).max(FINGERPRINT_BYTES),
        ))?;
        f.take(FINGERPRINT_BYTES).read_to_end(&mut buf)?;
    }
    buf.hash(&mut h);
    Ok(h.finish())
}

/// Whether two files hold the same bytes (compared in 64 KiB pieces).
fn same_bytes(a: &Path, b: &Path) -> io::Result<bool> {
    let (mut a, mut b) = (
        io::BufReader::new(File::open(a)?),
        io::BufReader::new(File::open(b)?),
    );
    let (mut x, mut y) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let n = read_full(&mut a, &mut x)?;
        let m = read_full(&mut b, &mut y)?;
        if n != m || x[..n] != y[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// Fills `buf` as far as the reader goes; the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// A file's device and inode (the same file under any name), where the
/// platform has them: directory walks and `watch --follow` use it.
#[cfg(unix)]
pub(crate) fn identity(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
pub(crate) fn identity(_: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// Reads every input: each one named is a unit ([`Unit`]: a file, a
/// directory, stdin), several read at once on separate cores, joined in the
/// order named as reading them one after the other would (see
/// [`parallel`]).
pub fn read_inputs(
    paths: &[PathBuf],
    opts: &ReadOptions,
    keep_exchanges: bool,
    quiet: bool,
) -> Result<Collected> {
    read_inputs_apart(paths, opts, keep_exchanges, quiet, true, (None, None))
}

/// [`read_inputs`] for `decode`, its rows sent to `rows` in request order
/// while the inputs are read ([`RowWindow`]) instead of gathered: what is
/// returned holds no rows, and `rows`' receiver sees its end once reading
/// is over. Only for inputs that make one unit (one capture, one rotation
/// set, stdin): the rows of inputs read apart would need merging. The
/// group events and the data path are counted, not kept
/// ([`Collected::events_not_kept`]); inputs that are not one unit are read
/// as [`read_inputs`] reads them, rows and events gathered.
pub fn read_inputs_sending_rows(
    paths: &[PathBuf],
    opts: &ReadOptions,
    quiet: bool,
    rows: RowWindow,
) -> Result<Collected> {
    read_inputs_apart(paths, opts, true, quiet, true, (Some(rows), None))
}

/// [`read_inputs`] for `timeline`: when the input named is one capture
/// file, a rotation set or one log, its group events are sent to `events`
/// in the time line's order while it is read ([`EventWindow`]; a log in
/// one pass, [`rows::Mark::of_log`]) and not kept (what is returned then
/// has `events_not_kept`, and holds no events); any other input is read as
/// [`read_inputs`] reads it, and `events` sees nothing.
pub fn read_inputs_sending_events(
    paths: &[PathBuf],
    opts: &ReadOptions,
    quiet: bool,
    events: EventWindow,
) -> Result<Collected> {
    read_inputs_apart(paths, opts, false, quiet, true, (None, Some(events)))
}

/// Logs merged as they are read at most: each has a thread of its own.
pub const MAX_LOGS_MERGED: usize = 32;

/// Whether every input in `paths` is a log file (plain or compressed,
/// named as a file; at most [`MAX_LOGS_MERGED`] of them): then their time
/// lines can be merged as they are read ([`read_logs_sending_events`]), no
/// capture's clock being there to line them up with.
pub fn all_log_files(paths: &[PathBuf], opts: &ReadOptions) -> bool {
    paths.len() <= MAX_LOGS_MERGED && paths.iter().all(|p| is_log_file(p, opts))
}

/// [`read_inputs`] for `timeline` of several log files ([`all_log_files`]):
/// each read on a thread of its own, in one pass, its group events sent
/// in the time line's order to its own window (`windows`, one per path in
/// the order named) and not kept; what is returned joins the inputs in the
/// order named (the same file named twice is read once: its window gets
/// nothing). Memory follows the windows, not the logs.
pub fn read_logs_sending_events(
    paths: &[PathBuf],
    opts: &ReadOptions,
    quiet: bool,
    windows: Vec<EventWindow>,
) -> Result<Collected> {
    let mut seen = Seen::default();
    let units = paths
        .iter()
        .map(|p| plan(p, &mut seen))
        .collect::<Result<Vec<_>>>()?;
    let read: Vec<Result<Collected>> = std::thread::scope(|scope| {
        let threads: Vec<_> = units
            .iter()
            .zip(windows)
            .zip(paths)
            .map(|((unit, window), path)| {
                std::thread::Builder::new()
                    .name("kgtrace-log".into())
                    .spawn_scoped(scope, move || {
                        let mut out = Collected {
                            events_out: Some(window),
                            sample: Some(EventSample::default()),
                            ..Collected::default()
                        };
                        let read = read_unit(unit, opts, false, quiet, &mut out);
                        if let Some(window) = out.events_out.take() {
                            window.finish(&mut out.diagnostics);
                        }
                        read.map(|()| out)
                    })
                    .map_err(|e| read_error(path, e))
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t?.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut out = Collected {
        events_not_kept: true,
        sample: Some(EventSample::default()),
        ..Collected::default()
    };
    for unit in read {
        parallel::join(&mut out, unit?);
    }
    Ok(out)
}

/// [`read_inputs_sending_events`] for `rebalances`: the data path is
/// folded as [`read_inputs`] folds it, so that what is returned, with the
/// events sent (folded and kept by the receiver), is what [`read_inputs`]
/// returns.
pub fn read_inputs_folding_events(
    paths: &[PathBuf],
    opts: &ReadOptions,
    quiet: bool,
    events: EventWindow,
) -> Result<Collected> {
    read_units_apart(paths, opts, false, quiet, true, (None, Some(events)), true)
}

/// [`read_inputs`] one input after the other into `out`, whose
/// [`Collected::tap`] (if any) receives the events as they are read
/// (`kgtrace watch`: a tap is one destination, so no threads here).
pub fn read_inputs_into(
    paths: &[PathBuf],
    opts: &ReadOptions,
    keep_exchanges: bool,
    quiet: bool,
    out: &mut Collected,
) -> Result<()> {
    let mut seen = Seen::default();
    for path in paths {
        let unit = plan(path, &mut seen)?;
        read_unit(&unit, opts, keep_exchanges, quiet, out)?;
    }
    Ok(())
}

/// [`read_inputs`]; `apart` false reads one input after the other, each on
/// this thread alone.
fn read_inputs_apart(
    paths: &[PathBuf],
    opts: &ReadOptions,
    keep_exchanges: bool,
    quiet: bool,
    apart: bool,
    windows: (Option<RowWindow>, Option<EventWindow>),
) -> Result<Collected> {
    read_units_apart(paths, opts, keep_exchanges, quiet, apart, windows, false)
}

/// [`read_inputs_apart`]; `data_beside` folds the data path while the
/// events go to their window ([`Collected::data_beside_window`]).
fn read_units_apart(
    paths: &[PathBuf],
    opts: &ReadOptions,
    keep_exchanges: bool,
    quiet: bool,
    apart: bool,
    (rows, events): (Option<RowWindow>, Option<EventWindow>),
    data_beside: bool,
) -> Result<Collected> {
    let mut seen = Seen::default();
    let mut units = Vec::new();
    let mut failed = None;
    for path in paths {
        match plan(path, &mut seen) {
            Ok(unit) => units.push(unit),
            // What comes after an input that stops the run is never read.
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    let one_thread = !apart;
    let sampled = (rows.is_some() || events.is_some()) && !data_beside;
    let apart = apart && !units.iter().any(|u| matches!(u, Unit::Stdin(_)));
    // A large log alone on the machine is read on every core (its parts);
    // several inputs read at once share them.
    let log_cores = if apart {
        std::thread::available_parallelism().map_or(1, usize::from) / units.len().max(1)
    } else {
        1
    };
    // Rows sent as they are read come from one unit: several read apart
    // would each send theirs, unmerged.
    let windows = std::sync::Mutex::new((
        rows.filter(|_| units.len() == 1),
        events.filter(|_| units.len() == 1),
    ));
    let out = parallel::read_units(&units, apart, |unit, out| {
        out.one_thread = one_thread;
        out.log_cores = log_cores;
        let mut held = windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (out.rows_out, out.events_out) = (held.0.take(), held.1.take());
        drop(held);
        out.events_not_kept = out.rows_out.is_some();
        out.data_beside_window = data_beside;
        // Rows written as read keep no event: up to 20,000 of each input
        // are kept for the check the batch run makes (the fold of
        // `rebalances` keeps its events and rebuilds them).
        if sampled {
            out.sample.get_or_insert_with(EventSample::default);
        }
        let read = read_unit(unit, opts, keep_exchanges, quiet, out);
        if let Some(window) = out.rows_out.take() {
            window.finish(&mut out.diagnostics);
        }
        if let Some(window) = out.events_out.take() {
            window.finish(&mut out.diagnostics);
        }
        read
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// An input the user named, told apart before anything is read (its
/// kind, a directory's files, whether it was named before): what
/// `kgtrace watch` hands each reading thread.
pub struct Planned(Unit);

/// Tells every input in `paths` apart, as a batch run does before reading
/// (the same file or content named twice is read once); an input that
/// cannot be opened or listed stops the run here, before any is read.
pub fn plan_inputs(paths: &[PathBuf]) -> Result<Vec<Planned>> {
    let mut seen = Seen::default();
    paths
        .iter()
        .map(|p| plan(p, &mut seen).map(Planned))
        .collect()
}

impl Planned {
    /// Whether it is read as it comes rather than to an end at hand:
    /// standard input, a FIFO or a device (`<(tcpdump …)`).
    pub fn is_live(&self) -> bool {
        matches!(self.0, Unit::Stdin(_) | Unit::File(_, None))
    }

    /// The path as named (empty for an input named twice).
    pub fn path(&self) -> &Path {
        match &self.0 {
            Unit::Stdin(p)
            | Unit::File(p, _)
            | Unit::Directory(p, _, _)
            | Unit::DirectoryFile(p) => p,
            Unit::Skipped(_) => Path::new(""),
        }
    }

    /// What can be read apart and merged: a directory's files that are
    /// not captures each alone, and its captures together (one capture
    /// run: a connection may go on from one file to the next), after them
    /// as the directory reads them. A directory of more than
    /// [`MAX_PARTS`] such files (a long rotation set, whose files follow
    /// each other in time: nothing to merge) and any other input stay
    /// whole.
    pub fn parts(self, opts: &ReadOptions) -> Vec<Planned> {
        let Unit::Directory(dir, files, diags) = self.0 else {
            return vec![self];
        };
        let (captures, others): (Vec<PathBuf>, Vec<PathBuf>) =
            files.into_iter().partition(|f| is_capture(f, opts));
        if others.len() > MAX_PARTS {
            let files = others.into_iter().chain(captures).collect();
            return vec![Planned(Unit::Directory(dir, files, diags))];
        }
        let mut parts: Vec<Planned> = others
            .into_iter()
            .map(|f| Planned(Unit::DirectoryFile(f)))
            .collect();
        parts.push(Planned(Unit::Directory(dir, captures, diags)));
        parts
    }

    /// Whether it is a log file, or a directory of log files alone (at
    /// least one): read to an end at hand, with no capture.
    pub fn is_logs_only(&self, opts: &ReadOptions) -> bool {
        match &self.0 {
            Unit::File(path, Some(_)) => is_log_file(path, opts),
            Unit::Directory(_, files, _) => {
                !files.is_empty() && files.iter().all(|f| is_log_file(f, opts))
            }
            _ => false,
        }
    }

    /// Reads it into `out` (events to `out`'s tap when it has one).
    pub fn read(&self, opts: &ReadOptions, quiet: bool, out: &mut Collected) -> Result<()> {
        read_unit(&self.0, opts, false, quiet, out)
    }
}

impl Flow {
    /// Its earliest event time (none for an empty flow): where it goes in
    /// a merge of inputs in time order.
    pub fn earliest(&self) -> Option<crate::time::Timestamp> {
        match self {
            Flow::Captured(evs) | Flow::Logged(evs) => evs.iter().map(|e| e.ts).min(),
            Flow::Data(evs) => evs.iter().map(|e| e.ts).min(),
        }
    }
}

/// A directory's files read apart by [`Planned::parts`] at most (a thread
/// each).
pub const MAX_PARTS: usize = 64;

/// Whether `path` is a regular file that opens as a log (compressed or
/// not): not standard input, a FIFO, a directory or a capture; unreadable:
/// no (its reading says why).
fn is_log_file(path: &Path, opts: &ReadOptions) -> bool {
    path.as_os_str() != "-"
        && std::fs::metadata(path).is_ok_and(|m| m.is_file())
        && File::open(path)
            .and_then(|f| open(f, opts.input_type))
            .is_ok_and(|o| matches!(o.kind, Kind::Log))
}

/// Whether `path` opens as a capture (unreadable: no; its reading says why).
fn is_capture(path: &Path, opts: &ReadOptions) -> bool {
    File::open(path)
        .and_then(|f| open(f, opts.input_type))
        .is_ok_and(|o| matches!(o.kind, Kind::Capture))
}

/// Reads one input from any reader as a path would be read (detection,
/// decompression, capture or log): the whole pipeline on arbitrary bytes,
/// for the fuzz targets and tests.
pub fn read_stream<R: Read>(reader: R, name: &str, opts: &ReadOptions) -> Result<Collected> {
    let mut out = Collected::default();
    read_stream_into(reader, name, opts, &mut out)?;
    Ok(out)
}

/// [`read_stream`] into `out` (a followed file, for `kgtrace watch`).
pub fn read_stream_into<R: Read>(
    reader: R,
    name: &str,
    opts: &ReadOptions,
    out: &mut Collected,
) -> Result<()> {
    let path = Path::new(name);
    let opened = open(reader, opts.input_type).map_err(|e| read_error(path, e))?;
    read_opened(opened, path, opts, false, out, true)
}

fn read_error(path: &Path, source: io::Error) -> Error {
    Error::Read {
        path: path.to_path_buf(),
        source,
    }
}

/// One input the user named, told apart before anything is read.
enum Unit {
    /// `-`.
    Stdin(PathBuf),
    /// A file (or a FIFO, a device) and its length when it is a file.
    File(PathBuf, Option<u64>),
    /// A directory and its files (see [`walk`]), with what the walk skipped.
    Directory(PathBuf, Vec<PathBuf>, Diagnostics),
    /// Read before (the same file or content): only a diagnostic.
    Skipped(Diagnostics),
    /// A file of a directory that is not a capture, read apart from the
    /// rest of it (`watch` merges a directory's logs, [`Planned::parts`]):
    /// as the directory reads it, skipped with a diagnostic when unknown.
    DirectoryFile(PathBuf),
}

/// Tells what `path` is; errors here stop the run (exit 2).
fn plan(path: &Path, seen: &mut Seen) -> Result<Unit> {
    let name = path.to_string_lossy().to_string();
    if name == "-" {
        return Ok(Unit::Stdin(path.to_path_buf()));
    }
    let meta = std::fs::metadata(path).map_err(|e| read_error(path, e))?;
    let mut diags = Diagnostics::default();
    if !seen.first_time(&meta) {
        diags.add(
            DiagnosticKind::SkippedInput,
            &name,
            "input",
            "given twice (same file): read once",
        );
        return Ok(Unit::Skipped(diags));
    }
    if let Some(same) = seen.same_content(path, &meta) {
        diags.add(
            DiagnosticKind::SkippedInput,
            &name,
            "input",
            format!("the same content as {}: read once", same.display()),
        );
        return Ok(Unit::Skipped(diags));
    }
    if meta.is_dir() {
        let files = walk(path, seen, &mut diags);
        return Ok(Unit::Directory(path.to_path_buf(), files, diags));
    }
    Ok(Unit::File(
        path.to_path_buf(),
        meta.is_file().then_some(meta.len()),
    ))
}

/// Reads one unit into `out`: errors here stop the run (exit 2).
fn read_unit(
    unit: &Unit,
    opts: &ReadOptions,
    keep: bool,
    quiet: bool,
    out: &mut Collected,
) -> Result<()> {
    match unit {
        Unit::Stdin(path) => {
            let opened =
                open_threaded(io::stdin(), opts.input_type).map_err(|e| read_error(path, e))?;
            read_opened(opened, path, opts, keep, out, true)
        }
        Unit::Skipped(diags) => {
            out.diagnostics.merge(diags.clone());
            Ok(())
        }
        Unit::Directory(dir, files, diags) => {
            out.diagnostics.merge(diags.clone());
            read_directory(dir, files, opts, keep, out)
        }
        Unit::DirectoryFile(path) => {
            read_directory(path, std::slice::from_ref(path), opts, keep, out)
        }
        Unit::File(path, len) => {
            let file = File::open(path).map_err(|e| read_error(path, e))?;
            let name = path.to_string_lossy();
            let bar = crate::progress::Bar::new(*len, &name, quiet);
            // A log named alone whose events go to the time line's window
            // as read is read in one pass, in order (a part's events could
            // go only once every part before it had).
            let windowed = out.time_line_window();
            if let Some(len) = len.filter(|_| !windowed) {
                if read_log_in_parts(&file, path, len, opts, &bar, out)
                    .map_err(|e| read_error(path, e))?
                {
                    return Ok(());
                }
            }
            let reader = bar.wrap(file);
            let opened = open_threaded(reader, opts.input_type).map_err(|e| read_error(path, e))?;
            read_opened(opened, path, opts, keep, out, true)
        }
    }
}

/// Reads `file` (a regular file of `len` bytes, opened at `path`) as
/// [`split`] does when it is a plain log it can cut into parts and `out`
/// gives it cores, and says whether it did; if not, nothing was added to
/// `out` and `file` is at its start again for the one pass that reads it.
fn read_log_in_parts(
    file: &File,
    path: &Path,
    len: u64,
    opts: &ReadOptions,
    bar: &crate::progress::Bar,
    out: &mut Collected,
) -> io::Result<bool> {
    if out.log_cores < 2 || out.streaming() || len < 2 * split::min_part() {
        return Ok(false);
    }
    let source: Source = Source::from(path.to_string_lossy().as_ref());
    let plain_log = |head: &[u8]| {
        Compression::of(head).is_none() && classify(head, opts.input_type) == Kind::Log
    };
    let parts = peek(&mut split::Stretch::new(file, 0, None))
        .ok()
        .filter(|head| plain_log(head))
        .and_then(|head| {
            let read = split::read_in_parts(file, len, out.log_cores, &source, opts, bar)?;
            Some((head, read))
        });
    let Some((head, read)) = parts else {
        // Only Windows' positional reads move the handle's cursor.
        let mut file = file;
        file.rewind()?;
        bar.restart();
        return Ok(false);
    };
    bar.finish();
    finish_log(
        read,
        &source,
        "log".to_string(),
        logs::foreign_log(&head),
        out,
    );
    Ok(true)
}

/// Reads one recognised input; `top` makes an unknown one an error rather
/// than a skipped entry.
fn read_opened(
    opened: Opened<'_>,
    path: &Path,
    opts: &ReadOptions,
    keep: bool,
    out: &mut Collected,
    top: bool,
) -> Result<()> {
    let source: Source = Source::from(path.to_string_lossy().as_ref());
    match opened.kind {
        Kind::Unknown if top => Err(unknown_input(path, &opened.head)),
        Kind::Unknown => {
            out.diagnostics.add(
                DiagnosticKind::SkippedInput,
                &source,
                "input",
                format!("skipped: {}", looks_like(&opened.head)),
            );
            Ok(())
        }
        Kind::Log => {
            // One log named alone, for the time line written as read: its
            // events go in the time line's order as they come.
            if top && out.time_line_window() {
                out.events_not_kept = true;
                // Once nobody takes the rows (`| head`), the rest is not
                // read.
                if out.stop.is_none() {
                    out.stop = out.rows_gone();
                }
            }
            read_log(opened, source, opts, out);
            Ok(())
        }
        Kind::Capture => {
            let read_as = opened.read_as();
            let bomb = opened.bomb.clone();
            // One capture file named alone: its events can go in the time
            // line's order as they come (a capture found beside logs is
            // merged with them at the end).
            if top && out.events_out.is_some() {
                out.events_not_kept = true;
            }
            let reader = rows::Stoppable {
                inner: opened.reader,
                gone: out.rows_gone(),
            };
            let mut run = CaptureRun::new(opts, keep, out, source.clone());
            let result = run.feed(reader, &source, read_as, out);
            note_bomb(bomb.as_deref(), &source, out);
            run.finish(out);
            result
        }
    }
}

/// Peeks at `raw` (as many reads as it takes) and recognises it, looking
/// through one layer of gzip or zstd (decompressed on this thread).
fn open<'a, R: Read + 'a>(raw: R, forced: Option<InputType>) -> io::Result<Opened<'a>> {
    open_with(raw, forced, |compressed, kind| {
        let inflated = Inflated::new(compressed, kind)?;
        let bomb = inflated.bomb_flag();
        Ok((Box::new(BufReader::with_capacity(1 << 20, inflated)), bomb))
    })
}

/// [`open`], decompressing on a thread of its own (see
/// [`Inflated::spawn`]): a file or stdin, whose reader can move there.
fn open_threaded<R: Read + Send + 'static>(
    raw: R,
    forced: Option<InputType>,
) -> io::Result<Opened<'static>> {
    open_with(raw, forced, |compressed, kind| {
        let piped = Inflated::spawn(compressed, kind);
        let bomb = piped.bomb_flag();
        Ok((Box::new(piped), bomb))
    })
}

/// A decompressed stream and its bomb flag.
type Decompressed<'a> = (Box<dyn BufRead + 'a>, Arc<AtomicBool>);

/// The read buffer of a log: small enough to stay in the CPU's cache. A
/// log is read a buffer at a time and each buffer is searched once, so what
/// costs is copying it (the kernel's copy into it, then the NUL filter's);
/// measured on the 1 GB realistic log (benches/throughput/dense.rs `realog`), 1 MB
/// buffers spent a quarter of the run in the kernel's copy alone.
const LOG_BUFFER: usize = 64 << 10;

/// A plain input's read buffer: a log's is [`LOG_BUFFER`]; a capture's is
/// 64 KiB, below the pcap reader's own 1 MiB buffer (capture/pcap.rs
/// `INITIAL_BUFFER`), whose refills then read past it straight from the
/// file (1 MiB here measured no different, and held a MiB more).
fn read_buffer(kind: Kind) -> usize {
    match kind {
        Kind::Log => LOG_BUFFER,
        _ => 64 << 10,
    }
}

fn open_with<'a, R: Read + 'a>(
    raw: R,
    forced: Option<InputType>,
    inflate: impl FnOnce(io::Chain<Cursor<Vec<u8>>, R>, Compression) -> io::Result<Decompressed<'a>>,
) -> io::Result<Opened<'a>> {
    let mut raw = raw;
    let head = peek(&mut raw)?;
    let Some(compression) = Compression::of(&head) else {
        let kind = classify(&head, forced);
        let reader = Box::new(BufReader::with_capacity(
            read_buffer(kind),
            Cursor::new(head.clone()).chain(raw),
        ));
        return Ok(Opened {
            reader,
            kind,
            compression: None,
            head,
            bomb: None,
        });
    };
    let (mut inflated, bomb) = inflate(Cursor::new(head).chain(raw), compression)?;
    let inner = peek(&mut inflated)?;
    let kind = classify(&inner, forced);
    // Already buffered: the decompressor's own buffers, read in place.
    let reader = Box::new(Cursor::new(inner.clone()).chain(inflated));
    Ok(Opened {
        reader,
        kind,
        compression: Some(compression),
        head: inner,
        bomb: Some(bomb),
    })
}

/// Reads up to [`PEEK`] bytes, stopping early once they tell what the
/// input is; a pipe that delivers a byte at a time is waited for.
fn peek<R: Read>(r: &mut R) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(PEEK);
    let mut chunk = [0u8; 8192];
    while head.len() < PEEK {
        let want = (PEEK - head.len()).min(chunk.len());
        let n = match r.read(&mut chunk[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if head.is_empty() => return Err(e),
            Err(_) => break,
        };
        head.extend_from_slice(&chunk[..n]);
        if decided(&head) {
            break;
        }
    }
    Ok(head)
}

/// Whether `head` already says what the input is.
fn decided(head: &[u8]) -> bool {
    if head.len() >= 4 && (capture::is_capture_magic(head) || Compression::of(head).is_some()) {
        return true;
    }
    let Some(last_newline) = memchr::memrchr(b'\n', head) else {
        return false;
    };
    logs::looks_like_log(&without_nuls(&head[..last_newline + 1]))
}

fn without_nuls(head: &[u8]) -> Vec<u8> {
    head.iter().copied().filter(|&b| b != 0).collect()
}

fn classify(head: &[u8], forced: Option<InputType>) -> Kind {
    match forced {
        Some(InputType::Capture) => Kind::Capture,
        Some(InputType::Log) => Kind::Log,
        None if capture::is_capture_magic(head) => Kind::Capture,
        None if head.is_empty() || is_text(head) => Kind::Log,
        None => Kind::Unknown,
    }
}

/// Text (possibly with NUL runs from a copytruncate or a crash): what the
/// log reader is given; the log reader itself says whether any line was a
/// Kafka line.
fn is_text(head: &[u8]) -> bool {
    let text = without_nuls(head);
    if logs::looks_like_log(&text) {
        return true;
    }
    let valid = match std::str::from_utf8(&text) {
        Ok(_) => true,
        // A multi-byte character cut at the end of the peek.
        Err(e) => e.error_len().is_none(),
    };
    valid
        && !text
            .iter()
            .any(|&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x1b | 0x0c))
}

/// Neither a capture nor a log: name the file and show its first bytes.
fn unknown_input(path: &Path, head: &[u8]) -> Error {
    Error::UnknownInput {
        path: path.to_path_buf(),
        magic: hex(head),
    }
}

fn hex(head: &[u8]) -> String {
    head.iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What an unreadable input looked like, for its warning.
fn looks_like(head: &[u8]) -> String {
    if head.is_empty() {
        return "an empty file".into();
    }
    if head.starts_with(&[0, 0, 0, 0]) && head.len() >= 61 {
        return format!(
            "binary data, perhaps a Kafka data segment (starts with {})",
            hex(head)
        );
    }
    format!(
        "binary data, not a pcap, pcapng or Kafka log (starts with {})",
        hex(head)
    )
}

fn note_bomb(bomb: Option<&AtomicBool>, source: &str, out: &mut Collected) {
    if bomb.is_some_and(|b| b.load(Ordering::Acquire)) {
        out.diagnostics.add(
            DiagnosticKind::SkippedInput,
            source,
            "input",
            format!(
                "decompression stopped: more than {}:1 after {} MiB (a decompression bomb?); what came before was read",
                crate::decompress::MAX_RATIO,
                crate::decompress::RATIO_GRACE >> 20
            ),
        );
    }
}

/// A reader that ends (reads 0 bytes) once `stop` is set
/// ([`Collected::stop`]).
struct UntilStopped<R> {
    inner: R,
    stop: Option<Arc<AtomicBool>>,
}

impl<R: Read> Read for UntilStopped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            return Ok(0);
        }
        self.inner.read(buf)
    }
}

/// Removes NUL bytes (a copytruncate's or a crash's hole in a log),
/// counting them.
struct NulSkipping<R> {
    inner: R,
    skipped: u64,
    runs: u64,
    in_run: bool,
}

impl<R> NulSkipping<R> {
    fn new(inner: R) -> NulSkipping<R> {
        NulSkipping {
            inner,
            skipped: 0,
            runs: 0,
            in_run: false,
        }
    }
}

impl<R: Read> Read for NulSkipping<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let n = self.inner.read(buf)?;
            if n == 0 {
                return Ok(0);
            }
            // Nearly every chunk of a log has no NUL: one memchr pass, not a
            // byte-by-byte copy (which was half of a 1 GB log's read time).
            let Some(first) = memchr::memchr(0, &buf[..n]) else {
                self.in_run = false;
                return Ok(n);
            };
            if first > 0 {
                self.in_run = false;
            }
            let mut kept = first;
            for i in first..n {
                let b = buf[i];
                if b == 0 {
                    self.skipped += 1;
                    self.runs += u64::from(!self.in_run);
                    self.in_run = true;
                } else {
                    self.in_run = false;
                    buf[kept] = b;
                    kept += 1;
                }
            }
            if kept > 0 {
                return Ok(kept);
            }
        }
    }
}

fn read_log(opened: Opened<'_>, source: Source, opts: &ReadOptions, out: &mut Collected) {
    let read_as = opened.read_as();
    let foreign = logs::foreign_log(&opened.head);
    let bomb = opened.bomb.clone();
    let reader = UntilStopped {
        inner: opened.reader,
        stop: out.stop.clone(),
    };
    let mut nuls = NulSkipping::new(reader);
    let mut events = Vec::new();
    let mut seen = SeenEvents::default();
    let streaming = out.streaming();
    let windowed = to_window(out);
    let mut latest = None;
    // Whether the log runs forward in time, told by its first events: a
    // log export listed newest first (Kibana's default) is gathered whole
    // and sorted at its end, as the batch run does, not written backwards
    // batch by batch.
    let mut forward: Option<bool> = None;
    let mut diagnostics = std::mem::take(&mut out.diagnostics);
    let result = logs::read_log_streaming(
        BufReader::with_capacity(LOG_BUFFER, &mut nuls),
        source.clone(),
        &log_options(opts),
        &mut diagnostics,
        &mut events,
        &mut |evs| {
            if streaming {
                seen.count(evs);
                out.deliver(Flow::Logged(std::mem::take(evs)));
            } else if windowed && evs.len() >= LOG_EVENTS_AT_ONCE {
                let runs_forward = *forward.get_or_insert_with(|| runs_forward(evs));
                if runs_forward {
                    seen.count(evs);
                    to_window_in_order(evs, &mut latest, out);
                }
            }
        },
    );
    out.diagnostics = diagnostics;
    seen.count(&events);
    if windowed {
        to_window_in_order(&mut events, &mut latest, out);
    }
    note_bomb(bomb.as_deref(), &source, out);
    let read = LogRead {
        events,
        diagnostics: Diagnostics::default(),
        seen,
        nul_bytes: nuls.skipped,
        nul_runs: nuls.runs,
        result,
    };
    finish_log(read, &source, read_as, foreign, out);
}

/// A log's events handed to the time line's window at once, at least (a
/// hand-over per line would look for rows to let go at every line).
const LOG_EVENTS_AT_ONCE: usize = 1024;

/// Whether a log whose first events are `events` runs forward in time: no
/// more of its steps from one event to the next go back than forward. A
/// log written as it happened does (a few lines of several threads come a
/// little out of order); an export listed newest first does not.
fn runs_forward(events: &[GroupEvent]) -> bool {
    let (mut forward, mut back) = (0usize, 0usize);
    for pair in events.windows(2) {
        match pair[1].ts.cmp(&pair[0].ts) {
            std::cmp::Ordering::Greater => forward += 1,
            std::cmp::Ordering::Less => back += 1,
            std::cmp::Ordering::Equal => {}
        }
    }
    back <= forward
}

/// Whether a log's events go to `out`'s window as they are read, in the
/// time line's order ([`EventWindow`], `timeline` of one log written as
/// read), not kept.
fn to_window(out: &Collected) -> bool {
    out.events_not_kept && out.rows_out.is_none() && out.time_line_window()
}

/// Hands a log's `events` (emptying the list) to `out`'s window: a line
/// still to come may carry a time up to [`rows::LOG_WINDOW_NS`] before the
/// latest so far, `latest` ([`rows::Mark::of_log`]).
fn to_window_in_order(
    events: &mut Vec<GroupEvent>,
    latest: &mut Option<crate::time::Timestamp>,
    out: &mut Collected,
) {
    *latest = events.iter().map(|e| e.ts).chain(*latest).max();
    let Some(at) = *latest else {
        return;
    };
    out.count_not_kept(events, true);
    if let Some(window) = &mut out.events_out {
        window.reading_a_log();
        window.take(events, rows::Mark::of_log(at));
    }
}

/// One log read through (in one pass or in parts, [`split`]).
struct LogRead {
    events: Vec<GroupEvent>,
    /// What reading found, when not added to the run's as it was read
    /// (the parts' own, joined).
    diagnostics: Diagnostics,
    seen: SeenEvents,
    nul_bytes: u64,
    nul_runs: u64,
    result: Result<logs::LogSummary>,
}

/// Says what reading a log found (NULs skipped, a read error, a warning
/// when it gave no event), adds its summary and hands its events on.
fn finish_log(
    read: LogRead,
    source: &Source,
    read_as: String,
    foreign: Option<logs::Foreign>,
    out: &mut Collected,
) {
    let LogRead {
        events,
        diagnostics,
        seen,
        nul_bytes,
        nul_runs,
        result,
    } = read;
    out.diagnostics.merge(diagnostics);
    if nul_bytes > 0 {
        out.diagnostics.add(
            DiagnosticKind::SkippedInput,
            source,
            "input",
            format!("{nul_bytes} NUL bytes in {nul_runs} runs skipped (a copytruncate or a crash)"),
        );
    }
    let summary = match result {
        Ok(s) => s,
        Err(e) => {
            out.diagnostics
                .add(DiagnosticKind::SkippedInput, source, "input", e.to_string());
            logs::LogSummary::default()
        }
    };
    let warning = (seen.events == 0).then(|| {
        if summary.lines == 0 {
            "an empty input: nothing read".to_string()
        } else if let Some(f) = foreign {
            format!("{} ({} lines read)", f.looked_like(), summary.lines)
        } else if summary.unknown_group_lines > 0 {
            format!(
                "a log of {} lines, {} of them group lines no pattern knows, no group event",
                summary.lines, summary.unknown_group_lines
            )
        } else {
            format!(
                "text with no Kafka group lines ({} lines read)",
                summary.lines
            )
        }
    });
    if let Some(w) = &warning {
        out.diagnostics
            .add(DiagnosticKind::SkippedInput, source, "input", w.clone());
    }
    out.inputs.push(InputSummary {
        path: source.to_string(),
        kind: "log".into(),
        read_as,
        records: summary.lines,
        not_understood: summary.unknown_group_lines,
        bytes: summary.bytes,
        events: seen.events,
        first_ts: seen.first_ts,
        last_ts: seen.last_ts,
        clock_offset_ms: None,
        warning,
    });
    out.deliver(Flow::Logged(events));
}

/// What a log's events were, counted as they pass.
#[derive(Default)]
struct SeenEvents {
    events: u64,
    first_ts: Option<crate::time::Timestamp>,
    last_ts: Option<crate::time::Timestamp>,
}

impl SeenEvents {
    fn count(&mut self, evs: &[GroupEvent]) {
        self.events += evs.len() as u64;
        for e in evs {
            self.first_ts = Some(self.first_ts.map_or(e.ts, |t| t.min(e.ts)));
            self.last_ts = Some(self.last_ts.map_or(e.ts, |t| t.max(e.ts)));
        }
    }
}

fn log_options(opts: &ReadOptions) -> LogOptions {
    LogOptions {
        zone: opts.log_zone.clone(),
    }
}

/// A directory's files ([`walk`]): each recognised by content; its
/// captures read as one rotation set, its logs one by one.
fn read_directory(
    dir: &Path,
    files: &[PathBuf],
    opts: &ReadOptions,
    keep: bool,
    out: &mut Collected,
) -> Result<()> {
    let mut captures = Vec::new();
    let no_bar = crate::progress::Bar::new(None, "", true);
    for path in files.iter().cloned() {
        // A directory is one input: its large plain logs may take every
        // core it was given, one after the other (`None`: read in parts).
        let opened = File::open(&path).and_then(|file| {
            let len = file
                .metadata()
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len());
            if let Some(len) = len {
                if read_log_in_parts(&file, &path, len, opts, &no_bar, out)? {
                    return Ok(None);
                }
            }
            open_threaded(file, opts.input_type).map(Some)
        });
        let opened = match opened {
            Ok(Some(o)) => o,
            Ok(None) => continue,
            Err(e) => {
                skip(out, &path, format!("cannot read: {e}"));
                continue;
            }
        };
        match opened.kind {
            Kind::Capture => {
                drop(opened);
                let first = first_packet_time(&path);
                captures.push((first, path));
            }
            _ => read_opened(opened, &path, opts, keep, out, false)?,
        }
    }
    captures.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| natural(&a.1, &b.1)));
    if captures.is_empty() {
        return Ok(());
    }
    let source: Source = Source::from(dir.to_string_lossy().as_ref());
    // A rotation set with no log beside it: its events (all named after
    // the directory) can go in the time line's order as they come.
    if out.events_out.is_some() && out.logged.is_empty() {
        out.events_not_kept = true;
    }
    let mut run = CaptureRun::new(opts, keep, out, source);
    for (_, path) in &captures {
        let name: Source = Source::from(path.to_string_lossy().as_ref());
        let opened = match File::open(path).and_then(|f| open_threaded(f, opts.input_type)) {
            Ok(o) => o,
            Err(e) => {
                skip(out, path, format!("cannot read: {e}"));
                continue;
            }
        };
        let read_as = opened.read_as();
        let bomb = opened.bomb.clone();
        let reader = rows::Stoppable {
            inner: opened.reader,
            gone: out.rows_gone(),
        };
        if let Err(e) = run.feed(reader, &name, read_as, out) {
            skip(out, path, e.to_string());
        }
        note_bomb(bomb.as_deref(), &name, out);
    }
    run.finish(out);
    Ok(())
}

fn skip(out: &mut Collected, path: &Path, why: String) {
    out.diagnostics.add(
        DiagnosticKind::SkippedInput,
        &path.to_string_lossy(),
        "input",
        why,
    );
}

/// The regular files under `dir`, each once, in name order; what is not a
/// regular file is skipped with a diagnostic.
fn walk(dir: &Path, seen: &mut Seen, diags: &mut Diagnostics) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    let mut visited = 0usize;
    let say = |diags: &mut Diagnostics, p: &Path, why: String| {
        diags.add(
            DiagnosticKind::SkippedInput,
            &p.to_string_lossy(),
            "input",
            why,
        )
    };
    while let Some(d) = dirs.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) => {
                say(diags, &d, format!("cannot read directory: {e}"));
                continue;
            }
        };
        let mut here: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        here.sort_by(|a, b| natural(a, b));
        for path in here {
            visited += 1;
            if visited > MAX_WALK_ENTRIES {
                say(
                    diags,
                    dir,
                    format!("more than {MAX_WALK_ENTRIES} entries: the rest skipped"),
                );
                return files;
            }
            let meta = match std::fs::metadata(&path) {
                Ok(m) => m,
                Err(e) => {
                    say(diags, &path, format!("skipped: {e} (a dangling link?)"));
                    continue;
                }
            };
            let first = seen.first_time(&meta);
            if meta.is_dir() {
                if first {
                    dirs.push(path);
                } else {
                    say(
                        diags,
                        &path,
                        "skipped: a directory already read (a link loop?)".into(),
                    );
                }
            } else if !meta.is_file() {
                say(diags, &path, format!("skipped: {}", file_type(&meta)));
            } else if !first {
                say(diags, &path, "skipped: the same file already read".into());
            } else if let Some(same) = seen.same_content(&path, &meta) {
                let why = format!("skipped: the same content as {}", same.display());
                say(diags, &path, why);
            } else {
                files.push(path);
            }
        }
    }
    if files.is_empty() && visited <= MAX_WALK_ENTRIES {
        let why = if visited == 0 {
            "an empty directory: nothing read".to_string()
        } else {
            let entries = if visited == 1 { "entry" } else { "entries" };
            format!("a directory with no file to read in it ({visited} {entries})")
        };
        say(diags, dir, why);
    }
    files
}

fn file_type(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO (it could block the run)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    let _ = meta;
    "not a regular file"
}

/// Name order with digit runs compared as numbers (`k.pcap2` < `k.pcap10`).
fn natural(a: &Path, b: &Path) -> std::cmp::Ordering {
    fn key(p: &Path) -> Vec<(String, u128)> {
        let s = p.to_string_lossy();
        let mut out = Vec::new();
        let mut text = String::new();
        let mut digits = String::new();
        for c in s.chars() {
            if c.is_ascii_digit() {
                digits.push(c);
            } else {
                if !digits.is_empty() {
                    out.push((
                        std::mem::take(&mut text),
                        digits.parse().unwrap_or(u128::MAX),
                    ));
                    digits.clear();
                }
                text.push(c);
            }
        }
        if !digits.is_empty() {
            out.push((
                std::mem::take(&mut text),
                digits.parse().unwrap_or(u128::MAX),
            ));
        }
        out.push((text, 0));
        out
    }
    key(a).cmp(&key(b))
}

/// The time of a capture file's first packet, from its first MiB.
fn first_packet_time(path: &Path) -> Option<crate::time::Timestamp> {
    let opened = File::open(path).ok().and_then(|f| open(f, None).ok())?;
    let mut diags = Diagnostics::default();
    capture::read_capture(
        opened.reader.take(FIRST_PACKET_WINDOW),
        &path.to_string_lossy(),
        &mut diags,
        |_| {},
    )
    .ok()?
    .first_ts
}

/// The capture pipeline: segments → streams → exchanges → events, for one
/// capture or one rotation set fed file after file. Exchanges are drained
/// as they complete so memory follows live connections, not the capture's
/// size.
struct CaptureRun {
    reassembler: Reassembler,
    decoder: KafkaDecoder,
    diags: [Diagnostics; 3],
    sink: ExchangeSink,
    ports: String,
    /// Packets the snap length cut, over the run's files.
    cut: SnapCut,
    /// The index in [`Collected::inputs`] of the run's first file: the
    /// summaries before it are other inputs' (read in order into the same
    /// [`Collected`], or not: the same whether inputs are read apart).
    first_input: usize,
}

/// What the capture's snap length cut, for one note per run.
#[derive(Default)]
struct SnapCut {
    /// The first file with cut packets.
    source: Option<Source>,
    packets: u64,
    snap_len: Option<u32>,
}

impl CaptureRun {
    fn new(opts: &ReadOptions, keep: bool, out: &Collected, source: Source) -> Self {
        let tcp_config = TcpConfig {
            kafka_ports: opts.ports.clone(),
            max_buffered_per_direction: MAX_BUFFERED_PER_DIRECTION,
            max_connections: MAX_CONNECTIONS,
        };
        let kafka_config = KafkaConfig {
            ports: opts.ports.clone(),
            detect_ports: true,
            max_frame_len: MAX_FRAME_LEN,
        };
        let reassembler = Reassembler::new(tcp_config, source.clone());
        let mut decoder = KafkaDecoder::new(kafka_config, source.clone());
        decoder.continue_exchange_ids(out.last_exchange_id);
        decoder.continue_kept_bytes(out.kept_bytes);
        CaptureRun {
            reassembler,
            decoder,
            diags: Default::default(),
            cut: SnapCut::default(),
            first_input: out.inputs.len(),
            ports: opts
                .ports
                .iter()
                .map(u16::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            sink: ExchangeSink {
                source,
                keep,
                fold_data: !out.events_not_kept || out.data_beside_window,
                events: Vec::new(),
                count: 0,
                data: Vec::new(),
                clients: Default::default(),
                rows: Vec::new(),
                pending: Vec::new(),
                marker: rows::Marker::new(out.wants_group_marks()),
            },
        }
    }

    /// Reads one capture file into the run and accounts for it.
    fn feed<R: Read>(
        &mut self,
        reader: R,
        source: &Source,
        read_as: String,
        out: &mut Collected,
    ) -> Result<()> {
        let before = self.sink.count;
        let summary = if out.streaming() || out.one_thread || !pipeline::worthwhile() {
            self.read_in_place(reader, source, out)
        } else {
            self.read_on_threads(reader, source, out)
        }?;
        self.sink.drain(&mut self.decoder);
        if out.streaming() {
            self.sink.hand_on(out);
        }
        if summary.cut_packets > 0 {
            let cut = &mut self.cut;
            cut.source.get_or_insert_with(|| source.clone());
            cut.packets += summary.cut_packets;
            cut.snap_len = cut.snap_len.max(summary.snap_len);
        }
        out.inputs.push(InputSummary {
            path: source.to_string(),
            kind: "capture".into(),
            read_as,
            records: summary.frames,
            not_understood: summary.frames.saturating_sub(summary.tcp_segments),
            bytes: summary.bytes,
            events: self.sink.count - before,
            first_ts: summary.first_ts,
            last_ts: summary.last_ts,
            clock_offset_ms: None,
            warning: None,
        });
        Ok(())
    }

    /// Reads one capture file with every stage on this thread. Streaming
    /// hands each packet's events on at once (a live reader waits for
    /// nothing); batch drains every [`DRAIN_AT`] exchanges.
    fn read_in_place<R: Read>(
        &mut self,
        reader: R,
        source: &Source,
        out: &mut Collected,
    ) -> Result<capture::CaptureSummary> {
        let CaptureRun {
            reassembler,
            decoder,
            diags: [d_capture, d_tcp, d_kafka],
            sink,
            ..
        } = self;
        let streaming = out.streaming();
        capture::read_capture(reader, source, d_capture, |segment| {
            reassembler.push(&segment, d_tcp, &mut |ev| {
                decoder.on_stream_event(&ev, d_kafka, &mut sink.pending)
            });
            if streaming {
                sink.drain(decoder);
                sink.hand_on(out);
            } else {
                sink.drain_some(decoder, segment.ts, out);
            }
        })
    }

    /// Reads one capture file in batch: packets and TCP on this thread, the
    /// Kafka stage on a second, normalizing and folding on a third, each
    /// taking the stage before's output in the same order, and draining at
    /// the same packets, as [`Self::read_in_place`].
    fn read_on_threads<R: Read>(
        &mut self,
        reader: R,
        source: &Source,
        out: &mut Collected,
    ) -> Result<capture::CaptureSummary> {
        let CaptureRun {
            reassembler,
            decoder,
            diags: [d_capture, d_tcp, d_kafka],
            sink,
            ..
        } = self;
        // What an earlier file of a rotation set left undrained (it ended
        // in an error) counts first, as in place.
        let mut pending = std::mem::take(&mut sink.pending);
        let marks = out.wants_marks();
        let group_marks = out.wants_group_marks();
        let normalize = |mut drained: Drained| {
            sink.absorb(drained.closed, &mut drained.exchanges);
            if let Some(mark) = drained.mark {
                sink.hand_on_rows(mark, out);
            }
            sink.hand_on_data(out);
        };
        let read = pipeline::beside("kgtrace-normalize", normalize, |hand_over| {
            let packets_and_tcp = |emit: &mut dyn FnMut(Handed<'_>)| {
                capture::read_capture(reader, source, d_capture, |segment| {
                    reassembler.push(&segment, d_tcp, &mut |ev| emit(Handed::Stream(ev)));
                    emit(Handed::PacketDone);
                })
            };
            let mut latest = None;
            let mut marker = rows::Marker::new(group_marks);
            let kafka = |handed: Handed<'_>| match handed {
                Handed::Stream(ev) => {
                    latest = Some(ev.ts());
                    decoder.on_stream_event(&ev, d_kafka, &mut pending);
                }
                Handed::PacketDone if pending.len() >= DRAIN_AT => hand_over.send(Drained {
                    closed: decoder.take_closed(),
                    exchanges: take_keeping_room(&mut pending),
                    mark: marks.then(|| marker.mark(decoder, latest)),
                }),
                Handed::PacketDone => {}
            };
            pipeline::run("kgtrace-kafka", packets_and_tcp, kafka)
        });
        sink.pending.append(&mut pending);
        read
    }

    /// Closes every connection, counts the last events to the last file, and
    /// warns about inputs that gave no event.
    fn finish(mut self, out: &mut Collected) {
        let CaptureRun {
            reassembler,
            decoder,
            diags,
            sink,
            cut,
            ..
        } = &mut self;
        let [_, d_tcp, d_kafka] = diags;
        let before = sink.count;
        reassembler.finish(d_tcp, &mut |ev| {
            decoder.on_stream_event(&ev, d_kafka, &mut sink.pending)
        });
        decoder.finish(d_kafka, &mut sink.pending);
        sink.drain(decoder);
        note_snap_length(cut, decoder.cut_frames(), d_kafka);
        let late = sink.count - before;
        out.last_exchange_id = decoder.last_exchange_id();
        out.kept_bytes = decoder.kept_bytes();
        for d in std::mem::take(diags) {
            out.diagnostics.merge(d);
        }
        let ports = std::mem::take(&mut self.ports);
        let first_of_run = self.first_input.min(out.inputs.len());
        // The run's last file, if any of its files was read: a run whose
        // every file failed has no summary to count them to.
        if let Some(last) = out.inputs[first_of_run..].last_mut() {
            last.events += late;
        }
        for input in &mut out.inputs[first_of_run..] {
            if input.kind == "capture" && input.events == 0 && input.warning.is_none() {
                let w = format!(
                    "a capture of {} packets with no Kafka group traffic (ports {ports}; try --port)",
                    input.records
                );
                out.diagnostics.add(
                    DiagnosticKind::SkippedInput,
                    &input.path,
                    "input",
                    w.clone(),
                );
                input.warning = Some(w);
            }
        }
        if out.wants_marks() {
            // The input ended: everything held goes.
            self.sink.hand_on_rows(rows::Mark::default(), out);
            for window in out.rows_out.iter_mut() {
                window.flush();
            }
            for window in out.events_out.iter_mut() {
                window.flush();
            }
        }
        self.sink.hand_on(out);
        move_all(&mut out.exchanges, &mut self.sink.rows);
    }
}

/// What `v` holds, leaving it empty with as much room as it had: the next
/// batch of exchanges fills it without growing it from nothing (each
/// growth moved every exchange so far: about 4 % of the instructions on a
/// group-traffic-dense capture).
fn take_keeping_room<T>(v: &mut Vec<T>) -> Vec<T> {
    let room = v.capacity();
    std::mem::replace(v, Vec::with_capacity(room))
}

/// Moves `from`'s items to the end of `to`. The first capture's vector is
/// taken whole: appending would copy every event into a second buffer
/// while the first, grown by doubling, still held its capacity (on a long
/// capture, a peak of three times the events' size).
fn move_all<T>(to: &mut Vec<T>, from: &mut Vec<T>) {
    if to.is_empty() {
        std::mem::swap(to, from);
        // Kept to the end of the run: without the doubling's spare half.
        to.shrink_to_fit();
    } else {
        to.append(from);
    }
}

/// One note per capture (or rotation set) whose snap length cut packets:
/// how many, at what length, how many Kafka messages were decoded only in
/// part, and how to capture whole packets next time.
fn note_snap_length(cut: &SnapCut, cut_frames: u64, diags: &mut Diagnostics) {
    let Some(source) = &cut.source else { return };
    let snap = cut.snap_len.map_or("a small snap length".to_string(), |n| {
        format!("a snap length of {n} bytes")
    });
    let detail = format!(
        "{} packets were cut by {snap}; {cut_frames} Kafka messages were decoded only as far \
         as their captured bytes go (marked truncated: what was cut is unknown, not empty); \
         capture with `tcpdump -s 0` to keep whole packets",
        cut.packets
    );
    diags.add(DiagnosticKind::SnapLength, source, "whole capture", detail);
}

/// Batch reading drains the decoder once this many exchanges are pending.
const DRAIN_AT: usize = 256;

/// What the Kafka stage finished between two drains, in the order
/// [`ExchangeSink::absorb`] takes it.
struct Drained {
    closed: Vec<ClosedConnection>,
    exchanges: Vec<Exchange>,
    /// How far rows (or events) written as read may go
    /// ([`Collected::wants_marks`]).
    mark: Option<rows::Mark>,
}

struct ExchangeSink {
    source: Source,
    keep: bool,
    /// Whether data-path events are made: not when nothing will fold
    /// them ([`Collected::events_not_kept`]).
    fold_data: bool,
    events: Vec<GroupEvent>,
    /// Events made so far (handed on or not).
    count: u64,
    data: Vec<DataEvent>,
    clients: normalize::ClientCache,
    rows: Vec<ExchangeRow>,
    pending: Vec<Exchange>,
    /// The rows' marks when read in place.
    marker: rows::Marker,
}

impl ExchangeSink {
    /// Hands the events made so far on to `out`.
    fn hand_on(&mut self, out: &mut Collected) {
        if !self.events.is_empty() {
            out.deliver(Flow::Captured(std::mem::take(&mut self.events)));
        }
        self.hand_on_data(out);
    }

    /// Hands the data-path events made so far on to `out`; when `out`
    /// keeps no events, counts the group events made so far instead and
    /// lets both go (their vectors keep their room for the next batch).
    fn hand_on_data(&mut self, out: &mut Collected) {
        if out.events_not_kept {
            out.count_not_kept(&self.events, false);
            self.events.clear();
            if !out.data_beside_window {
                self.data.clear();
                return;
            }
        }
        if self.data.is_empty() {
        } else if out.streaming() {
            out.deliver(Flow::Data(std::mem::take(&mut self.data)));
        } else {
            // Folded in place: the vector keeps its room for the next batch.
            self.data.drain(..).for_each(|d| out.data.fold(&d));
        }
    }

    /// Batch reading, after each packet (of time `latest`): drains once
    /// [`DRAIN_AT`] exchanges are pending, and folds their data-path events
    /// now, not at the end of the input.
    fn drain_some(&mut self, decoder: &mut KafkaDecoder, latest: Timestamp, out: &mut Collected) {
        if self.pending.len() >= DRAIN_AT {
            self.drain(decoder);
            if out.wants_marks() {
                let mark = self.marker.mark(decoder, Some(latest));
                self.hand_on_rows(mark, out);
            }
            self.hand_on_data(out);
        }
    }

    /// Hands the rows made so far to [`Collected::rows_out`], and the
    /// events to [`Collected::events_out`] when it takes them, each of
    /// which writes those `mark` allows.
    fn hand_on_rows(&mut self, mark: rows::Mark, out: &mut Collected) {
        if let Some(window) = &mut out.rows_out {
            window.take(&mut self.rows, mark.clone());
        }
        if out.events_not_kept && out.events_out.is_some() {
            out.count_not_kept(&self.events, false);
            if let Some(window) = &mut out.events_out {
                window.take(&mut self.events, mark);
            }
        }
    }

    /// Normalizes what the decoder has finished.
    fn drain(&mut self, decoder: &mut KafkaDecoder) {
        let mut pending = std::mem::take(&mut self.pending);
        self.absorb(decoder.take_closed(), &mut pending);
        // Its room is kept for the next batch.
        self.pending = pending;
    }

    /// Normalizes closed connections, then exchanges (emptying
    /// `exchanges`), into events, data-path events and decode rows.
    fn absorb(&mut self, closed: Vec<ClosedConnection>, exchanges: &mut Vec<Exchange>) {
        let before = self.events.len();
        for closed in closed {
            self.events
                .push(normalize::events_from_close(&closed, &self.source));
        }
        for mut ex in exchanges.drain(..) {
            if self.keep {
                self.rows.push(row_of(&ex));
            }
            self.events.extend(normalize::events_from_exchange(
                &mut ex,
                &self.source,
                &mut self.clients,
            ));
            if self.fold_data {
                normalize::data_events_from_exchange(
                    &mut ex,
                    &self.source,
                    &mut self.clients,
                    &mut self.data,
                );
            }
        }
        self.count += (self.events.len() - before) as u64;
    }
}

fn row_of(ex: &Exchange) -> ExchangeRow {
    ExchangeRow {
        ts: ex.ts,
        api_key: ex.api_key,
        api: ex.api,
        api_version: ex.api_version,
        correlation_id: ex.correlation_id,
        client_id: ex.client_id.clone(),
        connection: ex.connection.clone(),
        request_frame: ex.request_frame,
        response_frame: ex.response_frame,
        latency_ms: ex.latency_ms,
        group_id: ex.group_id.clone(),
        member_id: ex.member_id.clone(),
        generation_id: ex.generation_id,
        error_code: ex.error_code,
        error: ex.error,
        client_software: ex.client_software.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_runs_forward_unless_most_of_its_steps_go_back() {
        let at = |secs: &[i64]| -> Vec<GroupEvent> {
            secs.iter()
                .map(|s| GroupEvent {
                    ts: crate::time::Timestamp(s * 1_000_000_000),
                    group: None,
                    member_id: None,
                    group_instance_id: None,
                    generation_id: None,
                    client: Arc::default(),
                    kind: crate::event::EventKind::Broker(crate::event::BrokerLine::GroupDead),
                    evidence: crate::event::Evidence {
                        source: Source::from("s.log"),
                        at: crate::event::Location::Line { line: 1 },
                    },
                    truncated: false,
                })
                .collect()
        };
        // The first line a little late (several threads): forward, though
        // the last is before the first.
        assert!(runs_forward(&at(&[5, 1, 2, 3, 4])));
        assert!(runs_forward(&at(&[1, 1, 1])));
        assert!(runs_forward(&at(&[])));
        // Newest first.
        assert!(!runs_forward(&at(&[9, 8, 8, 7, 3])));
    }

    #[test]
    fn a_taken_batch_leaves_its_room_behind() {
        let mut v: Vec<u32> = Vec::with_capacity(300);
        v.extend(0..260);
        let room = v.capacity();
        let taken = take_keeping_room(&mut v);
        assert_eq!(taken, (0..260).collect::<Vec<_>>());
        assert!(v.is_empty());
        assert!(v.capacity() >= room);
    }

    /// What reading `path` (a file or a directory) added to a run, as
    /// text to compare, with `cores` for a large log.
    fn read_with_cores(path: &Path, cores: usize) -> String {
        let unit = plan(path, &mut Seen::default()).unwrap();
        let mut out = Collected {
            log_cores: cores,
            ..Collected::default()
        };
        read_unit(&unit, &ReadOptions::default(), false, true, &mut out).unwrap();
        format!(
            "{:?}\n{:?}\n{}",
            out.logged,
            out.diagnostics,
            serde_json::to_string(&out.inputs).unwrap()
        )
    }

    #[test]
    fn a_log_streamed_to_a_run_that_stopped_taking_events_is_read_no_further() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log");
        let mut text = Vec::new();
        logs::synth::write_synthetic_log(&mut text, 4 << 20, 5).unwrap();
        std::fs::write(&path, text).unwrap();
        let unit = plan(&path, &mut Seen::default()).unwrap();
        // Events handed on, with the flag set after the first (as a
        // streaming run sets it when it no longer takes them) or never.
        let read = |stop_after_first: bool| {
            let stop = Arc::new(AtomicBool::new(false));
            let taken = Arc::new(std::sync::atomic::AtomicU64::new(0));
            let (flag, count) = (stop.clone(), taken.clone());
            let mut out = Collected {
                tap: Some(Tap(Box::new(move |flow| {
                    if let Flow::Logged(evs) = flow {
                        count.fetch_add(evs.len() as u64, Ordering::Relaxed);
                        flag.store(stop_after_first, Ordering::Relaxed);
                    }
                }))),
                stop: Some(stop),
                ..Collected::default()
            };
            read_unit(&unit, &ReadOptions::default(), false, true, &mut out).unwrap();
            taken.load(Ordering::Relaxed)
        };
        let (all, stopped) = (read(false), read(true));
        assert!(all > 5_000, "{all}");
        // The rest of the buffer already read, then nothing.
        assert!(stopped * 20 < all, "{stopped} of {all}");
    }

    #[test]
    fn large_logs_named_alone_or_found_in_a_directory_are_read_in_parts_as_one_pass_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes, seed) in [("server.log", 400 << 10, 3), ("server.log.1", 300 << 10, 4)] {
            let mut text = Vec::new();
            logs::synth::write_synthetic_log(&mut text, bytes, seed).unwrap();
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        // Parts of at least 64 KiB: both files are large enough to cut.
        split::TEST_MIN_PART.with(|m| m.set(Some(64 << 10)));
        let parts_read = || split::TEST_READ_IN_PARTS.with(std::cell::Cell::get);
        for (path, files) in [
            (dir.path().to_path_buf(), 2),
            (dir.path().join("server.log"), 1),
        ] {
            let before = parts_read();
            let in_parts = read_with_cores(&path, 3);
            assert_eq!(parts_read() - before, files, "{}", path.display());
            let one_pass = read_with_cores(&path, 1);
            assert_eq!(parts_read() - before, files);
            assert!(in_parts == one_pass, "{}", path.display());
            assert!(in_parts.contains("server.log.1") == (files == 2));
        }
        split::TEST_MIN_PART.with(|m| m.set(None));
    }

    #[test]
    fn every_fixture_log_read_in_up_to_eight_parts_gives_what_one_pass_gives() {
        // Parts of at least 1 KiB: every lab log is cut, most into eight
        // (broker, client and request logs of real Apache Kafka brokers and
        // clients, each cut wherever a line opens an entry).
        split::TEST_MIN_PART.with(|m| m.set(Some(1 << 10)));
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut logs = 0;
        let before = split::TEST_READ_IN_PARTS.with(std::cell::Cell::get);
        for dir in ["kafka", "lab"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if !path.to_string_lossy().contains(".log") {
                    continue;
                }
                logs += 1;
                assert!(
                    read_with_cores(&path, 8) == read_with_cores(&path, 1),
                    "{}",
                    path.display()
                );
            }
        }
        let in_parts = split::TEST_READ_IN_PARTS.with(std::cell::Cell::get) - before;
        split::TEST_MIN_PART.with(|m| m.set(None));
        assert!(
            logs >= 20 && in_parts >= logs - 2,
            "{in_parts} of {logs} logs read in parts"
        );
    }

    #[test]
    fn peek_waits_for_a_pipe_that_gives_one_byte_at_a_time() {
        struct Trickle(Vec<u8>, usize);
        impl Read for Trickle {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.1 >= self.0.len() || buf.is_empty() {
                    return Ok(0);
                }
                buf[0] = self.0[self.1];
                self.1 += 1;
                Ok(1)
            }
        }
        use crate::capture::synth::{Link, PcapOptions, PcapWriter};
        let mut w = PcapWriter::new(Vec::new(), Link::Ethernet, PcapOptions::default()).unwrap();
        w.write_frame(crate::time::Timestamp(1), &[0u8; 60])
            .unwrap();
        let pcap = w.into_inner();
        let opened = open(Trickle(pcap.clone(), 0), None).unwrap();
        assert_eq!(opened.kind, Kind::Capture);
        let mut all = Vec::new();
        let mut reader = opened.reader;
        reader.read_to_end(&mut all).unwrap();
        assert_eq!(all, pcap, "every byte read once, none lost");
    }

    #[test]
    fn nul_runs_are_skipped_and_counted() {
        let mut r = NulSkipping {
            inner: &b"ab\0\0\0cd\0e"[..],
            skipped: 0,
            runs: 0,
            in_run: false,
        };
        let mut s = String::new();
        r.read_to_string(&mut s).unwrap();
        assert_eq!((s.as_str(), r.skipped, r.runs), ("abcde", 4, 2));
    }

    #[test]
    fn a_nul_run_across_reads_counts_once_and_chunks_without_nul_pass_whole() {
        /// Gives its bytes `step` at a time, as a pipe may.
        struct Chunks<'a>(&'a [u8], usize);
        impl Read for Chunks<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.1.min(self.0.len()).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let input = b"line one\n\0\0\0\0\0\0line two\0\nthree\n";
        for step in 1..=input.len() {
            let mut r = NulSkipping {
                inner: Chunks(input, step),
                skipped: 0,
                runs: 0,
                in_run: false,
            };
            let mut s = String::new();
            r.read_to_string(&mut s).unwrap();
            assert_eq!(
                (s.as_str(), r.skipped, r.runs),
                ("line one\nline two\nthree\n", 7, 2),
                "{step} bytes at a time"
            );
        }
    }

    /// A window's reading on the stages' threads and on one, with room for
    /// every row and for 10 (the earliest then go before a request
    /// answered later).
    const WINDOW_CASES: [(bool, usize); 4] = [
        (true, rows::MAX_HELD),
        (false, rows::MAX_HELD),
        (true, 10),
        (false, 10),
    ];

    #[test]
    fn decode_rows_sent_while_read_are_the_sorted_rows_and_a_full_window_says_so() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/lab/kp_ten_members.pcap");
        let paths = [path];
        let opts = ReadOptions::default();
        let text = |rows: &[ExchangeRow]| -> Vec<String> {
            rows.iter()
                .map(|r| serde_json::to_string(r).unwrap())
                .collect()
        };
        let mut gathered = read_inputs(&paths, &opts, true, true).unwrap().exchanges;
        crate::assemble::in_request_order(&mut gathered);
        let sorted = text(&gathered);
        // More than DRAIN_AT exchanges: rows go while the capture is read.
        assert!(sorted.len() > 4 * DRAIN_AT);
        for (apart, max_held) in WINDOW_CASES {
            let (send, receive) = std::sync::mpsc::sync_channel(1 << 16);
            let window =
                RowWindow::new(send, std::sync::mpsc::channel().1).holding_at_most(max_held);
            let read =
                read_inputs_apart(&paths, &opts, true, true, apart, (Some(window), None)).unwrap();
            assert!(read.exchanges.is_empty(), "no row gathered");
            let events: u64 = read.inputs.iter().map(|i| i.events).sum();
            assert!(
                read.captured.is_empty() && read.data.is_empty() && read.events_seen == events,
                "events counted ({events}), not kept"
            );
            let sent: Vec<ExchangeRow> = receive.try_iter().flatten().collect();
            let late = read.diagnostics.count(DiagnosticKind::RowOrder);
            let case = format!("apart {apart}, at most {max_held} held");
            if max_held == rows::MAX_HELD {
                assert!(text(&sent) == sorted, "{case}: the sorted rows");
                assert_eq!(late, 0, "{case}");
            } else {
                assert!(text(&sent) != sorted, "{case}: some rows after later ones");
                let mut again = sent.clone();
                crate::assemble::in_request_order(&mut again);
                assert!(text(&again) == sorted, "{case}: the same rows, none lost");
                assert_eq!(late, 1, "{case}: one diagnostic counting them");
            }
        }
    }

    #[test]
    fn one_capture_file_or_logs_events_sent_while_read_are_the_sorted_time_line_and_a_directory_with_logs_is_kept(
    ) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let opts = ReadOptions::default();
        let text = |events: &[GroupEvent]| -> Vec<String> {
            events
                .iter()
                .map(|e| serde_json::to_string(&crate::describe::timeline_entry(e)).unwrap())
                .collect()
        };
        let capture = [root.join("lab/kp_ten_members.pcap")];
        let gathered = read_inputs(&capture, &opts, false, true).unwrap();
        let events: u64 = gathered.inputs.iter().map(|i| i.events).sum();
        let sorted = text(&crate::timeline::merge(gathered.captured, gathered.logged).events);
        assert!(sorted.len() > 4 * DRAIN_AT);
        for (apart, max_held) in WINDOW_CASES {
            let (send, receive) = std::sync::mpsc::sync_channel(1 << 16);
            let window =
                EventWindow::new(send, std::sync::mpsc::channel().1).holding_at_most(max_held);
            let read = read_inputs_apart(&capture, &opts, false, true, apart, (None, Some(window)))
                .unwrap();
            let case = format!("apart {apart}, at most {max_held} held");
            assert!(read.events_not_kept && read.captured.is_empty(), "{case}");
            assert_eq!(read.events_seen, events, "{case}: every event counted");
            let sent: Vec<GroupEvent> = receive.try_iter().flatten().collect();
            let late = read.diagnostics.count(DiagnosticKind::RowOrder);
            if max_held == rows::MAX_HELD {
                assert!(text(&sent) == sorted, "{case}: the sorted time line");
                assert_eq!(late, 0, "{case}");
            } else {
                assert!(
                    text(&sent) != sorted,
                    "{case}: some events after later ones"
                );
                let mut again = sent.clone();
                again.sort_by(|a, b| {
                    crate::timeline::order_key(a).cmp(&crate::timeline::order_key(b))
                });
                assert!(text(&again) == sorted, "{case}: the same events, none lost");
                assert_eq!(late, 1, "{case}: one diagnostic counting them");
            }
        }
        // What `input` sends while read, its sorted time line, and what
        // the read returns.
        let sent_and_sorted = |input: &[PathBuf]| {
            let gathered = read_inputs(input, &opts, false, true).unwrap();
            let sorted = text(&crate::timeline::merge(gathered.captured, gathered.logged).events);
            let (send, receive) = std::sync::mpsc::sync_channel(1 << 16);
            let window = EventWindow::new(send, std::sync::mpsc::channel().1);
            let read =
                read_inputs_apart(input, &opts, false, true, true, (None, Some(window))).unwrap();
            let sent: Vec<GroupEvent> = receive.try_iter().flatten().collect();
            (text(&sent), sorted, read)
        };
        // A directory of captures alone (a rotation set) goes the same way.
        let (sent, sorted, read) = sent_and_sorted(&[root.join("lab")]);
        assert!(read.events_not_kept && sent == sorted, "a rotation set");
        // A log named alone goes the same way, in one pass.
        let (sent, sorted, read) =
            sent_and_sorted(&[root.join("kafka/ak4_java_killed.server.log")]);
        assert!(!sorted.is_empty());
        assert!(read.events_not_kept && sent == sorted, "a log");
        assert!(read.logged.is_empty(), "a log");
        // A directory of logs and captures (their clocks are lined up at
        // the end): the events are kept and none is sent.
        let mixed = root.join("kafka");
        let (send, receive) = std::sync::mpsc::sync_channel(1 << 16);
        let window = EventWindow::new(send, std::sync::mpsc::channel().1);
        let read = read_inputs_apart(
            std::slice::from_ref(&mixed),
            &opts,
            false,
            true,
            true,
            (None, Some(window)),
        )
        .unwrap();
        assert!(!read.events_not_kept);
        assert!(!read.captured.is_empty() && !read.logged.is_empty());
        assert_eq!(receive.try_iter().count(), 0);
    }

    #[test]
    fn inputs_read_apart_and_each_on_threads_give_what_reading_them_in_order_gives() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let paths: Vec<PathBuf> = [
            "lab/ck_killed.pcap",
            "kafka/ak4_java_killed.server.log",
            "kafka/ak4_java_killed.pcap",
            "lab/ck_killed.pcap",
            "lab/kp_clean_leave.pcap",
            // Larger than a batch handed between threads, and past
            // DRAIN_AT exchanges.
            "lab/kp_ten_members.pcap",
            "kafka/ak39_ck_fifty.pcap",
        ]
        .iter()
        .map(|p| root.join(p))
        .collect();
        // Rotation sets whose first file ends in an error (a gzip member
        // cut short) with exchanges not yet drained, which count first in
        // the next file, on threads as in place; in the second, the next
        // file repeats an input and is skipped, so no file of the set is
        // read whole (its last events belong to no other input's count).
        let whole = std::fs::read(root.join("kafka/ak39_ck_fifty.pcap")).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &whole).unwrap();
        let gz = gz.finish().unwrap();
        // (Cut at different lengths: the same bytes would be skipped as a
        // repeated input.)
        let sets: Vec<tempfile::TempDir> = [
            ("lab/ck_static_expired.pcap", gz.len() / 2),
            ("lab/kp_ten_members.pcap", gz.len() / 3),
        ]
        .iter()
        .map(|&(next, cut)| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("k.pcap.gz"), &gz[..cut]).unwrap();
            std::fs::copy(root.join(next), dir.path().join("k.pcap1")).unwrap();
            dir
        })
        .collect();
        let mut paths = paths;
        paths.extend(sets.iter().map(|d| d.path().to_path_buf()));
        let read = |apart| {
            let mut c = read_inputs_apart(
                &paths,
                &ReadOptions::default(),
                true,
                true,
                apart,
                (None, None),
            )
            .unwrap();
            assert!(c.last_exchange_id > 0 && !c.captured.is_empty() && !c.data.is_empty());
            // The folded data path is made of hash maps: compared in order.
            let data = std::mem::take(&mut c.data).finish().in_order();
            (c.one_thread, c.log_cores) = (false, 0);
            format!("{c:?} {data}")
        };
        assert!(read(true) == read(false));
    }

    #[test]
    fn rotation_names_sort_by_number() {
        let mut v: Vec<PathBuf> = ["k.pcap10", "k.pcap2", "k.pcap", "k.pcap1"]
            .iter()
            .map(PathBuf::from)
            .collect();
        v.sort_by(|a, b| natural(a, b));
        let got: Vec<_> = v.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        assert_eq!(got, ["k.pcap", "k.pcap1", "k.pcap2", "k.pcap10"]);
    }
}
