//! `kgtrace watch`: rebalances told as they happen, for live use.
//!
//! Takes: the inputs (`-` for a pipe such as `tcpdump -U -w - | kgtrace
//! watch -`; with `--follow`, files followed as `tail -F` follows them),
//! the filter and the format. Gives: a line when a rebalance starts, its
//! record when it completes (flushed at once: a pipe reader waits for
//! nothing), a revised record when hindsight changes one, the rounds still
//! open when the input ends, and a summary at the end of the input or on
//! Ctrl-C (SIGINT, SIGTERM).
//!
//! The streaming path: reader threads run the same readers as every other
//! subcommand ([`crate::input`], with a [`crate::input::Tap`] instead of
//! vectors), one thread per input, a bounded channel carries each
//! packet's or line's events to this thread (several files merged in time
//! order on the way, `merge.rs`), and [`engine::Engine`] keeps per group a
//! bounded window of them and rebuilds a group when something that may
//! change a round arrives (at most every [`TICK`], so a completed record is
//! out well within a second). [`line`] writes what the engine tells.

pub mod engine;
pub mod follow;
pub mod line;
mod merge;
pub mod settled;
mod signal;

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::error::{Error, Result};
use crate::input::{Collected, Flow, Planned, Tap};
use crate::options::Options;
use crate::render::Format;
use crate::report::InputSummary;
use crate::Outcome;

use engine::{Bounds, Engine};

/// Longest wait between two evaluations of the groups that changed.
pub const TICK: Duration = Duration::from_millis(200);

/// Messages in flight from the readers: a reader ahead of the engine waits
/// (memory stays bounded when the input comes faster than it is judged).
const CHANNEL: usize = 256;

/// What the reader threads send.
#[derive(Debug)]
pub enum Message {
    /// Events of one packet or line (or a batch of them).
    Flow(Flow),
    /// A reader ended (its diagnostics and its inputs' accounting, or the
    /// error that stopped it).
    Done(Result<(Diagnostics, Vec<InputSummary>)>),
}

/// Runs `watch` until the inputs end (or, following, until Ctrl-C).
pub fn run(opts: &Options, follow: bool, out: &mut dyn Write) -> Result<Outcome> {
    run_with(opts, follow, Bounds::default(), signal::stop_flag(), out)
}

/// [`run`] with the engine's bounds and the stop flag given (tests).
pub fn run_with(
    opts: &Options,
    follow: bool,
    bounds: Bounds,
    stop: Arc<AtomicBool>,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let format = match opts.format {
        Format::Table => line::Style::Text,
        Format::Ndjson => line::Style::Ndjson,
        other => {
            return Err(Error::InvalidOption {
                flag: "--format",
                value: format!("{other:?}").to_lowercase(),
                hint: "watch writes one line per record: table or ndjson".into(),
            })
        }
    };
    let (rx, mut readers) = start_readers(opts, follow, stop.clone())?;
    let mut engine = Engine::new(opts.filter.clone(), bounds);
    let mut diagnostics = Diagnostics::default();
    let mut inputs = Vec::new();
    let mut last = Instant::now();
    let mut stopped = false;
    while readers > 0 {
        if stop.load(Ordering::SeqCst) {
            stopped = true;
            break;
        }
        match rx.recv_timeout(TICK / 2) {
            Ok(Message::Flow(flow)) => engine.take(flow),
            Ok(Message::Done(result)) => {
                readers -= 1;
                let (d, read) = result?;
                diagnostics.merge(d);
                inputs.extend(read);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if last.elapsed() >= TICK && engine.has_work() {
            line::write_all(&engine.evaluate(false), format, out)?;
            last = Instant::now();
        }
    }
    let told = engine.finish();
    line::write_all(&told, format, out)?;
    let counts = engine.counts;
    let offsets = engine.clock_offsets();
    line::write_summary(&counts, &offsets, stopped, format, out)?;
    crate::timeline::warn_far_clocks(&offsets, &mut diagnostics);
    let matched = counts.completed + counts.unfinished;
    // As the batch run does: an input whose groups made no round is said.
    crate::no_rebalance::warn(
        &mut inputs,
        &engine.sources,
        |g| engine.rebalanced.contains(g),
        &mut diagnostics,
    );
    if let Some(w) = engine.unmatched.warning().filter(|_| matched == 0) {
        diagnostics.add(DiagnosticKind::NothingMatched, "filters", "selection", w);
    }
    Ok(Outcome {
        matched,
        diagnostics,
        report: None,
    })
}

/// Starts the reader threads of `opts.inputs` (each followed when
/// `follow`, until `stop`): the channel their events come on, in the order
/// the engine is to take them, and how many ends ([`Message::Done`]) to
/// expect. Files read to their end are merged in time order when there
/// are several (`merge.rs`); a pipe and followed files are live, their
/// events handed on as they come. An input that cannot be opened stops the
/// run before any is read.
pub fn start_readers(
    opts: &Options,
    follow: bool,
    stop: Arc<AtomicBool>,
) -> Result<(Receiver<Message>, usize)> {
    start_readers_at(opts, follow, stop, Pace::Live)
}

/// How a reader hands a log's events on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Each line's events as they are read (`watch`: a record out within a
    /// second).
    Live,
    /// [`GATHERED`] events at a time, when one file alone is read to its
    /// end (`rebalances` of a log, [`settled`]): a message per group line
    /// cost a tenth of a log's run in thread wake-ups. Files merged in time
    /// order keep line-sized flows (the merge orders flows, not events).
    Gathered,
}

/// Events a [`Pace::Gathered`] reader hands on at once.
const GATHERED: usize = 512;

/// [`start_readers`] at `pace`.
pub(crate) fn start_readers_at(
    opts: &Options,
    follow: bool,
    stop: Arc<AtomicBool>,
    pace: Pace,
) -> Result<(Receiver<Message>, usize)> {
    let (tx, rx) = sync_channel::<Message>(CHANNEL);
    let mut readers = 0;
    let (followed, read): (Vec<PathBuf>, Vec<PathBuf>) = opts
        .inputs
        .iter()
        .cloned()
        .partition(|p| follow && p.as_os_str() != "-");
    let (piped, files): (Vec<Planned>, Vec<Planned>) = crate::input::plan_inputs(&read)?
        .into_iter()
        .partition(Planned::is_live);
    // A directory's logs are merged too (several brokers' logs gathered
    // in one place), its captures read together as one run.
    let files: Vec<Planned> = files
        .into_iter()
        .flat_map(|p| p.parts(&opts.read))
        .collect();
    for unit in piped {
        readers += 1;
        spawn_reader(Reading::Planned(unit), opts, tx.clone(), Pace::Live, &stop);
    }
    readers += files.len();
    if files.len() == 1 {
        files
            .into_iter()
            .for_each(|unit| spawn_reader(Reading::Planned(unit), opts, tx.clone(), pace, &stop));
    } else if files.len() > 1 {
        let each: Vec<(PathBuf, Receiver<Message>)> = files
            .into_iter()
            .map(|unit| {
                let (one, from_one) = sync_channel::<Message>(CHANNEL);
                let path = unit.path().to_path_buf();
                spawn_reader(Reading::Planned(unit), opts, one, Pace::Live, &stop);
                (path, from_one)
            })
            .collect();
        let to_engine = tx.clone();
        std::thread::spawn(move || merge::in_time_order(each, to_engine));
    }
    for path in followed {
        readers += 1;
        spawn_reader(
            Reading::Followed(path, stop.clone()),
            opts,
            tx.clone(),
            Pace::Live,
            &stop,
        );
    }
    Ok((rx, readers))
}

/// What a reader thread reads.
enum Reading {
    /// An input read to its end (a pipe: as it comes).
    Planned(Planned),
    /// A file followed as `tail -F` follows it, until the stop flag.
    Followed(PathBuf, Arc<AtomicBool>),
}

/// Reads one input on a thread of its own, sending events as they are
/// read, then its end.
fn spawn_reader(
    reading: Reading,
    opts: &Options,
    tx: SyncSender<Message>,
    pace: Pace,
    stop: &Arc<AtomicBool>,
) {
    let stop = stop.clone();
    let read = opts.read.clone();
    let quiet = true;
    std::thread::spawn(move || {
        let flows = tx.clone();
        let mut gathered: Vec<crate::event::GroupEvent> = Vec::new();
        let mut collected = Collected {
            tap: Some(Tap(Box::new(move |flow| {
                // The engine gone: the sends fail, and the stop flag set
                // with it ends the log being read (`Collected::stop`).
                let send = |flow| {
                    let _ = flows.send(Message::Flow(flow));
                };
                match flow {
                    Flow::Logged(evs) if pace == Pace::Gathered && !evs.is_empty() => {
                        gathered.extend(evs);
                        if gathered.len() >= GATHERED {
                            send(Flow::Logged(std::mem::take(&mut gathered)));
                        }
                    }
                    // Anything else (an empty flow: the end) sends what was
                    // gathered first.
                    flow => {
                        if !gathered.is_empty() {
                            send(Flow::Logged(std::mem::take(&mut gathered)));
                        }
                        send(flow);
                    }
                }
            }))),
            stop: Some(stop),
            ..Collected::default()
        };
        let result = match reading {
            Reading::Planned(unit) => unit.read(&read, quiet, &mut collected),
            Reading::Followed(path, stop) => read_followed(&path, &read, stop, &mut collected),
        };
        if let Some(Tap(tap)) = collected.tap.as_mut().filter(|_| pace == Pace::Gathered) {
            tap(Flow::Logged(Vec::new()));
        }
        let _ = tx.send(Message::Done(
            result.map(|()| (collected.diagnostics, collected.inputs)),
        ));
    });
}

fn read_followed(
    path: &std::path::Path,
    read: &crate::options::ReadOptions,
    stop: Arc<AtomicBool>,
    collected: &mut Collected,
) -> Result<()> {
    let file = follow::Follow::open(path.to_path_buf(), stop).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    crate::input::read_stream_into(file, &path.to_string_lossy(), read, collected)
}
