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
//! vectors), a bounded channel carries each packet's or line's events to
//! this thread, and [`engine::Engine`] keeps per group a bounded window of
//! them and rebuilds a group when something that may change a round
//! arrives (at most every [`TICK`], so a completed record is out well
//! within a second). [`line`] writes what the engine tells.

pub mod engine;
pub mod follow;
pub mod line;
mod signal;

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::error::{Error, Result};
use crate::input::{Collected, Flow, Tap};
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

/// What a reader thread sends.
enum Message {
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
    let (tx, rx) = sync_channel::<Message>(CHANNEL);
    let mut readers = 0;
    let (followed, read): (Vec<PathBuf>, Vec<PathBuf>) = opts
        .inputs
        .iter()
        .cloned()
        .partition(|p| follow && p.as_os_str() != "-");
    if !read.is_empty() {
        readers += 1;
        spawn_reader(read, opts, tx.clone(), None);
    }
    for path in followed {
        readers += 1;
        spawn_reader(vec![path], opts, tx.clone(), Some(stop.clone()));
    }
    drop(tx);
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

/// Reads `paths` on a thread of its own (each followed when `follow`
/// holds the stop flag), sending events as they are read.
fn spawn_reader(
    paths: Vec<PathBuf>,
    opts: &Options,
    tx: SyncSender<Message>,
    follow: Option<Arc<AtomicBool>>,
) {
    let read = opts.read.clone();
    let quiet = true;
    std::thread::spawn(move || {
        let flows = tx.clone();
        let mut collected = Collected {
            tap: Some(Tap(Box::new(move |flow| {
                // The engine gone (a stop) is the end of this reader too.
                let _ = flows.send(Message::Flow(flow));
            }))),
            ..Collected::default()
        };
        let result = match follow {
            None => crate::input::read_inputs_into(&paths, &read, false, quiet, &mut collected),
            Some(stop) => read_followed(&paths[0], &read, stop, &mut collected),
        };
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
