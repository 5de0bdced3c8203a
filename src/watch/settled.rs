//! `rebalances` of logs, each record written once it is final.
//!
//! Takes: the options of a `rebalances --stream` run whose inputs are log
//! files or directories of them ([`applies`]) in a format that writes one
//! record per row. Gives: its records, in the order `rebalances` sorts them
//! (start, then group), each handed to the writer once no record still to
//! come can sort before it; then the inputs' accounting and the
//! diagnostics. Asked for, not the default: the engine's windows carry a
//! group across a silence longer than them only what its next rounds are
//! judged from, not its whole history ([`applies`]).
//!
//! The batch run keeps every event of every group to the end, then every
//! record, then sorts them: a rebalance-dense gigabyte of `server.log`
//! held 2.5 GB. Here the events go through the streaming engine of
//! `watch` ([`Engine`]: per group a bounded window, the very `group` and
//! `stops` code the batch run calls, rebuilt as the stream goes), each
//! record leaves the engine when it is final (its hindsight past: nothing
//! later changes it), and waits here only until every record that may
//! still start before it is final too. Memory follows the windows and the
//! last half hour of records, not the file (and the records handed to a
//! writer on another thread and not yet written: `kgtrace::run` hands
//! them on up to 64 at a time, at most 16 batches ahead).
//!
//! Captures stay with the batch run: a capture read alone already folds
//! its heartbeats as it is read, its Fetch traffic is held for the stops
//! stage either way, and the engine rebuilding a capture's windows costs
//! more than one rebuild at the end; with a capture beside them, logs are
//! lined up with its clock from every pair the inputs hold (a record final
//! here could still move).

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::error::Result;
use crate::options::{Command, Options};
use crate::render::{Format, View};
use crate::report::{InputSummary, Rebalance};
use crate::time::Timestamp;

use super::engine::{Bounds, Engine, Settled};
use super::Message;
use crate::input::Flow;

/// Event time between two rebuilds of the windows: their retention, so
/// that a round is rebuilt whole before its events leave the window (a
/// window holds up to twice it between two rebuilds) and each event is
/// rebuilt about twice (once in the batch run, which holds every event).
const EVERY_NS: i64 = super::engine::RETAIN_NS;

/// Whether `opts` is a `rebalances` run this path writes: asked for
/// (`--stream`), one record per row (`ndjson`, `csv`), every input a log
/// file or a directory of log files alone (a capture, standard input or a
/// FIFO goes the batch way), and no time bound relative to the first event (known only at the
/// end). Counted (`-c`) stays with the batch run: it reads one large log on
/// both cores, which here read it on one (the realistic 1 GB log counted in
/// 0.28-0.29 s batch, 0.45-0.53 s here).
///
/// Asked for, not chosen: the engine's windows hold 15 minutes of a
/// group, and across a longer silence (a stable group logs nothing for
/// hours) only what its next rounds are judged from (the round before
/// them and what followed it, its members' joins, the starts of a storm's
/// rounds). A group that comes back with a member id it used before, or
/// with KIP-848 epochs that went back, can be told otherwise than by the
/// batch run, which holds every line.
pub fn applies(opts: &Options) -> bool {
    opts.stream
        && matches!(opts.command, Command::Analyse)
        && opts.view == View::Rebalances
        && !opts.count
        && matches!(opts.format, Format::Ndjson | Format::Csv)
        && !opts.inputs.is_empty()
        && !opts.filter.bounds_need_first_event()
        && crate::input::plan_inputs(&opts.inputs)
            .is_ok_and(|planned| planned.iter().all(|p| p.is_logs_only(&opts.read)))
}

/// What the run read, for the report without records.
pub struct Read {
    /// One summary per input, in the order named.
    pub inputs: Vec<InputSummary>,
    /// Every anomaly, each input's in the order named.
    pub diagnostics: Diagnostics,
    /// Records handed on before the inputs ended.
    pub before_end: u64,
    /// A log's lines went back in time past what the engine can still
    /// place: reading stopped there, and [`finish_from_batch`] must write
    /// the rest from the batch run.
    pub went_back: Option<WentBack>,
}

/// Where a log's lines went back, and what was written before.
pub struct WentBack {
    /// The input and line of the first event older than the engine can
    /// place, and how far before the newest event read it is (ns).
    source: String,
    line: Option<u64>,
    by_ns: i64,
    /// The records written so far.
    written: Written,
}

/// Lines may come this much before the newest line read (several threads
/// logging, brokers' logs merged) without harm: a record leaves the engine
/// only once its hindsight past the newest line is over. Beyond it a
/// record already final may have needed the line.
const BACK_NS: i64 = super::engine::HINDSIGHT_NS;

/// What [`run`] hands its writer.
pub enum Handed {
    /// The next record in start order.
    Record(Box<Rebalance>),
    /// Every record written so far was final when handed on, and no other
    /// is final yet: a writer that holds records back to write several
    /// at once writes them now.
    CaughtUp,
}

/// Reads `opts.inputs` through the engine and hands each record to
/// `write` in start order, until `write` says stop.
pub fn run(opts: &Options, mut write: impl FnMut(Handed) -> bool) -> Result<Read> {
    let stop = Arc::new(AtomicBool::new(false));
    let (rx, mut readers) =
        super::start_readers_at(opts, false, stop.clone(), super::Pace::Gathered)?;
    let mut engine = Engine::new(crate::filter::Filter::default(), Bounds::default());
    engine.keep_settled();
    engine.without_captures();
    let mut waiting = InStartOrder::default();
    let mut read: Vec<(Diagnostics, Vec<InputSummary>)> = Vec::new();
    let mut rebuilt_at: Option<Timestamp> = None;
    let mut going_on = true;
    while readers > 0 && going_on {
        let Ok(message) = rx.recv() else { break };
        match message {
            Message::Flow(flow) => {
                if let Some(back) = went_back(&flow, engine.newest()) {
                    // Nothing more is written from the stream: the batch
                    // run writes the rest. The readers read on to their
                    // inputs' ends, their sends failing (a log reader has
                    // no stop: a cost of this rare case only).
                    stop.store(true, std::sync::atomic::Ordering::SeqCst);
                    drop(rx);
                    let mut done = in_order_named(read, opts, waiting.written);
                    done.went_back = Some(WentBack {
                        written: std::mem::take(&mut waiting.done),
                        ..back
                    });
                    return Ok(done);
                }
                engine.take(flow)
            }
            Message::Done(result) => {
                readers -= 1;
                read.push(result?);
                continue;
            }
        }
        let newest = engine.newest();
        if rebuilt_at.is_none_or(|at| newest.0.saturating_sub(at.0) >= EVERY_NS) {
            rebuilt_at = Some(newest);
            engine.evaluate(true);
            waiting.add(engine.take_settled());
            going_on = waiting.release(engine.unsettled_from(), &mut write);
        }
    }
    if !going_on {
        // The writer failed (the run ends with its error): the readers'
        // sends fail from here on.
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        drop(rx);
        return Ok(in_order_named(read, opts, waiting.written));
    }
    let before_end = waiting.written;
    waiting.add(engine.finish_settling());
    waiting.release(Timestamp(i64::MAX), &mut write);
    let mut done = in_order_named(read, opts, before_end);
    waiting.finish(&mut done.diagnostics);
    crate::no_rebalance::warn(
        &mut done.inputs,
        &engine.sources,
        |g| engine.rebalanced.contains(g),
        &mut done.diagnostics,
    );
    Ok(done)
}

/// The readers' accounting, in the order the inputs were named (they end
/// in any order): as the batch run joins them.
fn in_order_named(
    read: Vec<(Diagnostics, Vec<InputSummary>)>,
    opts: &Options,
    before_end: u64,
) -> Read {
    // An input named, or a file of a directory named (its files in name
    // order, as the directory's walk reads them).
    let place = |inputs: &[InputSummary]| {
        let first = inputs.first().map(|i| Path::new(&i.path));
        let named = first.and_then(|f| opts.inputs.iter().position(|p| f.starts_with(p)));
        (named.unwrap_or(usize::MAX), first.map(Path::to_path_buf))
    };
    let mut read = read;
    read.sort_by_key(|(_, inputs)| place(inputs));
    let mut out = Read {
        inputs: Vec::new(),
        diagnostics: Diagnostics::default(),
        before_end,
        went_back: None,
    };
    for (d, inputs) in read {
        out.diagnostics.merge(d);
        out.inputs.extend(inputs);
    }
    out
}

/// Final records waiting for every earlier one, keyed as `rebalances`
/// sorts them: start, then group, then the group's own order.
#[derive(Default)]
struct InStartOrder {
    waiting: BTreeMap<(Timestamp, String, u32), Box<Rebalance>>,
    /// Records handed on so far.
    written: u64,
    /// How many final records came after a record handed on though they
    /// sort before it (none while the engine's bound holds: each is written
    /// when it comes, and said).
    late: u64,
    first_late: Option<(Timestamp, String)>,
    /// Every record handed on (the last one whole), for a batch run
    /// finishing a log that went back ([`WentBack`]).
    done: Written,
}

impl InStartOrder {
    fn add(&mut self, settled: Vec<Settled>) {
        for s in settled {
            let key = (s.record.started_at, s.record.group.clone(), s.nth);
            if self.done.last.as_ref().is_some_and(|last| key < *last) {
                self.late += 1;
                self.first_late
                    .get_or_insert((s.record.started_at, s.record.group.clone()));
            }
            self.waiting.insert(key, s.record);
        }
    }

    /// Says how many records were written out of their order, if any.
    fn finish(&self, diags: &mut Diagnostics) {
        let Some((ts, group)) = &self.first_late else {
            return;
        };
        let detail = format!(
            "{} rebalances were written after rebalances that started later (first: group {group}'s at {ts}): \
             they became final after those were written; `--format json` lists every one in order",
            self.late
        );
        diags.add(DiagnosticKind::RowOrder, "rows", "order", detail);
    }

    /// Hands on, in order, every record that starts before `before`;
    /// false once `write` said stop. Ends with [`Handed::CaughtUp`] when
    /// it handed anything on.
    fn release(&mut self, before: Timestamp, write: &mut impl FnMut(Handed) -> bool) -> bool {
        let written = self.written;
        while let Some(entry) = self.waiting.first_entry() {
            if entry.key().0 >= before {
                break;
            }
            self.written += 1;
            let (key, record) = entry.remove_entry();
            self.done.add(key);
            if !write(Handed::Record(record)) {
                return false;
            }
        }
        self.written == written || write(Handed::CaughtUp)
    }
}

/// The records written, by a fingerprint of where each sorts (8 bytes
/// each: a gigabyte of rebalance-dense log writes half a million).
#[derive(Default)]
struct Written {
    hasher: crate::fast_hash::FastState,
    keys: crate::fast_hash::FastSet<u64>,
    last: Option<(Timestamp, String, u32)>,
}

impl Written {
    fn add(&mut self, key: (Timestamp, String, u32)) {
        self.keys.insert(self.hasher.hash_one(&key));
        self.last = Some(key);
    }

    fn has(&self, key: &(Timestamp, String, u32)) -> bool {
        self.keys.contains(&self.hasher.hash_one(key))
    }
}

/// Where `flow` holds a line older than the engine can place (more than
/// [`BACK_NS`] before `newest`).
fn went_back(flow: &Flow, newest: Timestamp) -> Option<WentBack> {
    let Flow::Logged(evs) = flow else {
        return None;
    };
    let bound = newest.offset_by(-BACK_NS);
    let ev = evs.iter().find(|e| newest.0 > 0 && e.ts < bound)?;
    Some(WentBack {
        source: ev.evidence.source.to_string(),
        line: match ev.evidence.at {
            crate::event::Location::Line { line } => Some(line),
            crate::event::Location::Frame { .. } => None,
        },
        by_ns: newest.0.saturating_sub(ev.ts.0),
        written: Written::default(),
    })
}

/// Finishes a run whose log went back ([`WentBack`]): hands on, in the
/// batch run's order, every record of `batch` (the batch run's records of
/// the whole input, filtered) not written yet, and says what happened.
pub fn finish_from_batch(
    back: WentBack,
    batch: &[Box<Rebalance>],
    diags: &mut Diagnostics,
    mut write: impl FnMut(&Rebalance) -> bool,
) {
    let mut late = 0u64;
    let mut previous: Option<(Timestamp, &str)> = None;
    let mut nth = 0u32;
    for r in batch {
        let same = previous == Some((r.started_at, r.group.as_str()));
        nth = if same { nth + 1 } else { 0 };
        previous = Some((r.started_at, r.group.as_str()));
        let key = (r.started_at, r.group.clone(), nth);
        if back.written.has(&key) {
            continue;
        }
        late += u64::from(back.written.last.as_ref().is_some_and(|last| key < *last));
        if !write(r) {
            break;
        }
    }
    if back.written.keys.is_empty() {
        // Nothing was written from the stream: the rows are the batch run's.
        return;
    }
    let line = back.line.map_or(String::new(), |l| format!(" line {l}"));
    let detail = format!(
        "{}{line} comes {:.1} min before lines read earlier: the {} rebalances written before it were judged \
         without the lines after it (the whole input may tell some of them otherwise); the rest were rebuilt \
         from the whole input and written after them, {late} of them out of start order; `--format json` \
         sorts the whole input first",
        back.source,
        back.by_ns as f64 / 60e9,
        back.written.keys.len(),
    );
    diags.add(DiagnosticKind::RowOrder, "rows", "order", detail);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settled(group: &str, start_s: i64) -> Settled {
        Settled {
            record: Box::new(Rebalance {
                group: group.to_string(),
                started_at: Timestamp(start_s * 1_000_000_000),
                ..Rebalance::default()
            }),
            nth: 0,
        }
    }

    /// What `release` handed on: each record's group and start, `None`
    /// for each [`Handed::CaughtUp`].
    fn released(waiting: &mut InStartOrder, before_s: i64) -> Vec<Option<(String, i64)>> {
        let mut handed = Vec::new();
        let going_on = waiting.release(Timestamp(before_s * 1_000_000_000), &mut |h| {
            handed.push(match h {
                Handed::Record(r) => Some((r.group.clone(), r.started_at.0 / 1_000_000_000)),
                Handed::CaughtUp => None,
            });
            true
        });
        assert!(going_on);
        handed
    }

    #[test]
    fn a_release_hands_records_in_start_order_then_says_it_caught_up() {
        let mut waiting = InStartOrder::default();
        waiting.add(vec![
            settled("b", 20),
            settled("a", 20),
            settled("c", 10),
            settled("d", 40),
        ]);
        let some = |g: &str, s: i64| Some((g.to_string(), s));
        assert_eq!(
            released(&mut waiting, 30),
            vec![some("c", 10), some("a", 20), some("b", 20), None]
        );
        // Nothing final before 35: nothing handed, not even a catch-up.
        assert_eq!(released(&mut waiting, 35), vec![]);
        assert_eq!(released(&mut waiting, 50), vec![some("d", 40), None]);
        assert_eq!(waiting.written, 4);
    }
}
