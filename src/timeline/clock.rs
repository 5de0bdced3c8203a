//! Lining a log's clock up with the captures', as the events flow.
//!
//! Takes: group events one at a time, each said to come from a capture or
//! from a log, in the order the readers find them. Gives: per log file the
//! milliseconds to add to its times (log + offset = capture), as soon as a
//! pair is seen, and fixed once it has [`CLOCK_PAIRS`] pairs.
//!
//! Log times are written by the broker's or client's clock, captures by the
//! capturing host's. The coordinator logs "Stabilized group G generation N"
//! when it completes the join phase and sends the generation's JoinGroup
//! answers (`GroupCoordinator.onCompleteJoin`, Kafka 0.9–3.x;
//! `GroupMetadataManager.completeClassicGroupJoin`, 3.7+), so a log line
//! and the first answer carrying the same group and generation are the
//! same moment on two clocks. A client's "Successfully joined group with
//! generation N" (`AbstractCoordinator`) is logged as it reads that answer.
//!
//! The offset is the median of a log's pairs, fixed once [`CLOCK_PAIRS`]
//! of its lines have found their answer, so a stream can decide early and
//! apply it to every line after. `rebalances` and `watch` run this same
//! estimator. The batch run feeds every capture event before the logs', so
//! it takes a log's first pairs in line order; `watch` takes them as its
//! inputs arrive, and a log's lines that came before their answers are
//! paired (and its events moved) as the answers arrive. The two agree
//! while a log has at most [`CLOCK_PAIRS`] pairs; past that, on the pairs
//! that found their answer first. (With several captures the batch run
//! takes their answers in the order the captures were named, `watch` as
//! they arrive: where the captures see the same generations, their first
//! answers can differ.)

use crate::event::Source;
use std::collections::{BTreeMap, VecDeque};

use crate::event::{BrokerLine, ClientLine, EventKind, GroupEvent, Id};
use crate::fast_hash::FastMap;
use crate::time::Timestamp;

/// Pairs of a log after which its offset is fixed (their median). A
/// handful of rebalances agree on a clock offset to the millisecond; more
/// would delay a live run's decision without changing it.
pub const CLOCK_PAIRS: usize = 32;

/// A log line and an answer further apart than this are not the same
/// event: generations repeat (a group deleted and made again).
const PAIR_WITHIN_MS: f64 = 3_600_000.0;

/// (group, generation) keys of capture answers remembered at once; the
/// oldest is forgotten past it (a run of days names more).
const MAX_WIRE_KEYS: usize = 1 << 16;

/// Log lines waiting for a capture answer, per log; the oldest unmatched
/// is forgotten past it (a log whose groups the capture never saw).
const MAX_WAITING: usize = 1 << 12;

/// A (group, generation) pair.
type Key = (Id, i32);

/// The streaming estimator.
#[derive(Debug, Default)]
pub struct ClockLine {
    /// Remembers every capture answer (a batch run, whose events are all
    /// held anyway): forgetting the oldest would change which lines pair.
    unbounded: bool,
    /// Per group, the generation of its last successful JoinGroup answer.
    last_generation: FastMap<Id, i32>,
    /// The first answer of each run of one generation, per key.
    first_answers: FastMap<Key, Vec<Timestamp>>,
    /// Keys of `first_answers`, oldest first (to forget the oldest).
    wire_order: VecDeque<Key>,
    /// Per log file.
    logs: BTreeMap<Source, LogClock>,
}

/// One log's pairs.
#[derive(Debug, Default)]
struct LogClock {
    /// Its Stabilized / joined lines, in line order, each with its
    /// difference to the nearest capture answer (milliseconds) once one is
    /// seen. Emptied once the offset is fixed.
    marks: Vec<Mark>,
    /// The current estimate.
    offset: Option<f64>,
    /// Whether [`CLOCK_PAIRS`] pairs gave it: it no longer changes.
    fixed: bool,
}

#[derive(Debug)]
struct Mark {
    key: Key,
    ts: Timestamp,
    diff: Option<f64>,
}

impl ClockLine {
    /// An estimator that forgets the oldest answers past
    /// [`MAX_WIRE_KEYS`] (a live run of days): [`ClockLine::default`].
    pub fn bounded() -> ClockLine {
        ClockLine::default()
    }

    /// An estimator that remembers every answer (a batch run).
    pub fn unbounded() -> ClockLine {
        ClockLine {
            unbounded: true,
            ..ClockLine::default()
        }
    }

    /// Takes a capture's event; true if some log's offset changed (a log
    /// read earlier got its pair).
    pub fn captured(&mut self, ev: &GroupEvent) -> bool {
        if !matches!(ev.kind, EventKind::JoinGroupResponse { error: None, .. }) {
            return false;
        }
        let (Some(group), Some(generation)) = (ev.group.as_ref(), ev.generation_id) else {
            return false;
        };
        // The broker logs "Stabilized" when it sends the generation's
        // first JoinGroup answers; later answers of the same generation (a
        // request parked for seconds) are not that moment. Generations
        // can repeat, so the first answer of each run of one generation.
        if self.last_generation.insert(group.clone(), generation) == Some(generation) {
            return false;
        }
        if !self.unbounded && self.last_generation.len() > MAX_WIRE_KEYS {
            // Past this many groups a live run starts again: an answer of
            // a group forgotten here counts as a first one.
            self.last_generation.clear();
        }
        let key = (group.clone(), generation);
        let answers = self.first_answers.entry(key.clone()).or_default();
        if answers.is_empty() {
            self.wire_order.push_back(key.clone());
        }
        answers.push(ev.ts);
        if !self.unbounded && self.wire_order.len() > MAX_WIRE_KEYS {
            if let Some(old) = self.wire_order.pop_front() {
                self.first_answers.remove(&old);
            }
        }
        let Some(answers) = self.first_answers.get(&key) else {
            return false;
        };
        let mut changed = false;
        for log in self.logs.values_mut().filter(|l| !l.fixed) {
            let mut touched = false;
            for m in log.marks.iter_mut().filter(|m| m.key == key) {
                m.diff = nearest(answers, m.ts);
                touched = true;
            }
            changed |= touched && log.estimate();
        }
        changed
    }

    /// Takes a log's event; true if its log's offset changed.
    pub fn logged(&mut self, ev: &GroupEvent) -> bool {
        let Some(key) = log_mark(ev) else {
            return false;
        };
        let log = self.logs.entry(ev.evidence.source.clone()).or_default();
        if log.fixed {
            return false;
        }
        let diff = self.first_answers.get(&key).and_then(|a| nearest(a, ev.ts));
        if log.marks.len() >= MAX_WAITING {
            if let Some(i) = log.marks.iter().position(|m| m.diff.is_none()) {
                log.marks.remove(i);
            }
        }
        log.marks.push(Mark {
            key,
            ts: ev.ts,
            diff,
        });
        diff.is_some() && log.estimate()
    }

    /// The offset of `source` now (milliseconds), if estimated.
    pub fn offset(&self, source: &str) -> Option<f64> {
        self.logs.get(source).and_then(|l| l.offset)
    }

    /// Every estimated offset, by log file.
    pub fn offsets(&self) -> BTreeMap<Source, f64> {
        self.logs
            .iter()
            .filter_map(|(s, l)| Some((s.clone(), l.offset?)))
            .collect()
    }
}

impl LogClock {
    /// Re-estimates from the first [`CLOCK_PAIRS`] pairs; true if the
    /// offset changed.
    fn estimate(&mut self) -> bool {
        let mut d: Vec<f64> = self
            .marks
            .iter()
            .filter_map(|m| m.diff)
            .take(CLOCK_PAIRS)
            .collect();
        if d.is_empty() {
            return false;
        }
        if d.len() == CLOCK_PAIRS {
            self.fixed = true;
            self.marks = Vec::new();
        }
        d.sort_by(f64::total_cmp);
        let offset = Some(d[d.len() / 2]);
        std::mem::replace(&mut self.offset, offset) != offset
    }
}

/// The (group, generation) of a log line that marks a generation's
/// JoinGroup answers.
fn log_mark(ev: &GroupEvent) -> Option<Key> {
    let generation = match &ev.kind {
        EventKind::Broker(BrokerLine::Stabilized { generation, .. }) => {
            ev.generation_id.unwrap_or(*generation)
        }
        EventKind::Client(ClientLine::Joined { .. }) => ev.generation_id?,
        _ => return None,
    };
    Some((ev.group.clone()?, generation))
}

/// Milliseconds from `ts` to the nearest of `answers`, within
/// [`PAIR_WITHIN_MS`].
fn nearest(answers: &[Timestamp], ts: Timestamp) -> Option<f64> {
    answers
        .iter()
        .map(|w| w.millis_since(ts))
        .min_by(|a, b| a.abs().total_cmp(&b.abs()))
        .filter(|d| d.abs() <= PAIR_WITHIN_MS)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::event::{ClientRef, Evidence, Location};

    /// An event of `group` at `ts_ms` milliseconds.
    pub(crate) fn ev(
        ts_ms: i64,
        group: &str,
        gen: i32,
        kind: EventKind,
        at: Location,
        source: &str,
    ) -> GroupEvent {
        GroupEvent {
            ts: Timestamp(ts_ms * 1_000_000),
            group: Some(group.into()),
            member_id: None,
            group_instance_id: None,
            generation_id: Some(gen),
            client: ClientRef::default().into(),
            kind,
            truncated: false,
            evidence: Evidence {
                source: crate::event::Source::from(source),
                at,
            },
        }
    }

    /// A capture's successful JoinGroup answer.
    pub(crate) fn answer(ts_ms: i64, group: &str, gen: i32) -> GroupEvent {
        let kind = EventKind::JoinGroupResponse {
            exchange: 1,
            error: None,
            protocol_name: None,
            leader: Default::default(),
            members: Box::default(),
            parked_ms: None,
        };
        ev(
            ts_ms,
            group,
            gen,
            kind,
            Location::Frame { frame: 1 },
            "a.pcap",
        )
    }

    /// A broker log's Stabilized line.
    pub(crate) fn stabilized(ts_ms: i64, group: &str, gen: i32, source: &str) -> GroupEvent {
        let kind = EventKind::Broker(BrokerLine::Stabilized {
            generation: gen,
            members: None,
            protocol: None,
            leader: None,
        });
        ev(ts_ms, group, gen, kind, Location::Line { line: 1 }, source)
    }

    /// Pairs (group g<i>, generation 1) whose differences are `diffs`.
    fn feed(clock: &mut ClockLine, diffs: &[f64], capture_first: bool) {
        let answers: Vec<GroupEvent> = (0..diffs.len())
            .map(|i| answer(1_000_000 + i as i64 * 10_000, &format!("g{i}"), 1))
            .collect();
        let lines: Vec<GroupEvent> = diffs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let at = 1_000_000 + i as i64 * 10_000 - *d as i64;
                stabilized(at, &format!("g{i}"), 1, "server.log")
            })
            .collect();
        if capture_first {
            answers.iter().for_each(|a| {
                clock.captured(a);
            });
            lines.iter().for_each(|l| {
                clock.logged(l);
            });
        } else {
            lines.iter().for_each(|l| {
                clock.logged(l);
            });
            answers.iter().for_each(|a| {
                clock.captured(a);
            });
        }
    }

    #[test]
    fn the_offset_is_the_median_pair_whichever_input_comes_first() {
        for capture_first in [true, false] {
            let mut clock = ClockLine::default();
            feed(&mut clock, &[5.0, 900.0, 7.0, -3.0, 6.0], capture_first);
            assert_eq!(clock.offset("server.log"), Some(6.0), "{capture_first}");
        }
    }

    #[test]
    fn the_offset_is_fixed_by_the_first_pairs_of_the_log() {
        let mut diffs = vec![40.0; CLOCK_PAIRS];
        diffs.extend([-500.0; CLOCK_PAIRS * 2]);
        let mut clock = ClockLine::default();
        feed(&mut clock, &diffs, true);
        assert_eq!(
            clock.offset("server.log"),
            Some(40.0),
            "the first pairs decide, though most say -500"
        );
        // Two of the 40s first: the first pairs now mostly say -500.
        let mut clock = ClockLine::default();
        feed(&mut clock, &diffs[CLOCK_PAIRS - 2..], true);
        assert_eq!(clock.offset("server.log"), Some(-500.0));
    }

    #[test]
    fn only_the_first_answer_of_a_generation_pairs() {
        let mut clock = ClockLine::default();
        assert!(!clock.logged(&stabilized(4_990, "g", 3, "s.log")));
        assert!(clock.captured(&answer(1_010, "g", 3)), "the pair came");
        // A parked request answered later in the same generation is nearer
        // the line, but it is not the moment the line was logged.
        assert!(!clock.captured(&answer(5_000, "g", 3)));
        assert_eq!(clock.offset("s.log"), Some(-3_980.0));
    }

    #[test]
    fn an_answer_pairing_many_waiting_lines_at_once_counts_only_the_first_pairs() {
        // Every member's client log says it joined the generation: one
        // answer pairs all of them. The first 20 lines are 0 ms off, the
        // next 20 (later, slower lines) 1 s.
        let mut clock = ClockLine::default();
        for i in 0..40 {
            let at = if i < 20 { 10_000 } else { 9_000 };
            clock.logged(&stabilized(at, "g", 1, "client.log"));
        }
        assert!(clock.captured(&answer(10_000, "g", 1)));
        assert_eq!(clock.offset("client.log"), Some(0.0));
    }

    #[test]
    fn lines_over_an_hour_from_every_answer_make_no_pair() {
        let mut clock = ClockLine::default();
        clock.captured(&answer(7_300_000, "g", 1));
        assert!(!clock.logged(&stabilized(10_000, "g", 1, "s.log")));
        assert_eq!(clock.offsets(), BTreeMap::new());
    }

    #[test]
    fn each_log_has_its_own_offset() {
        let mut clock = ClockLine::default();
        clock.captured(&answer(10_000, "g", 1));
        clock.logged(&stabilized(9_000, "g", 1, "b1.log"));
        clock.logged(&stabilized(12_000, "g", 1, "b2.log"));
        assert_eq!(clock.offset("b1.log"), Some(1_000.0));
        assert_eq!(clock.offset("b2.log"), Some(-2_000.0));
    }

    #[test]
    fn waiting_lines_are_bounded() {
        let mut clock = ClockLine::default();
        for i in 0..(MAX_WAITING as i64 + 50) {
            clock.logged(&stabilized(i, "never", i as i32, "s.log"));
        }
        assert_eq!(clock.logs["s.log"].marks.len(), MAX_WAITING);
    }
}
