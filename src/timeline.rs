//! One time line out of every input.
//!
//! Takes: group events from captures and from logs. Gives: [`Timeline`],
//! the events in a deterministic time order, with each log's clock lined up
//! with the captures when the two describe the same rebalances. Log times
//! are written by the broker's or client's clock, captures by the capturing
//! host's; a JoinGroup answer carrying generation N leaves the broker when
//! it logs "Stabilized group ... generation N", so matched pairs give the
//! offset ([`ClockLine`]: the median of a log's first pairs, the estimator
//! `watch` runs as its events flow). The offset applied is reported per log
//! file.

use crate::event::Source;
use std::collections::BTreeMap;

mod clock;
pub(crate) mod heartbeats;

pub use clock::{ClockLine, CLOCK_PAIRS};
pub use heartbeats::{Folded, HeartbeatFold};

use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::event::{GroupEvent, Location};
use crate::time::Timestamp;

/// Events in time order, and the clock offsets applied.
#[derive(Debug, Default)]
pub struct Timeline {
    /// Every event, sorted by (time, captures before logs, source, position).
    pub events: Vec<GroupEvent>,
    /// Per log file: milliseconds added to its times (log + offset = capture).
    pub clock_offsets: BTreeMap<Source, f64>,
}

/// Merges capture and log events; lines logs up with captures when both
/// describe the same rebalances.
pub fn merge(captured: Vec<GroupEvent>, mut logged: Vec<GroupEvent>) -> Timeline {
    let offsets = estimate_offsets(&captured, &logged);
    for ev in &mut logged {
        if let Some(ms) = offsets.get(&ev.evidence.source) {
            ev.ts = ev.ts.offset_by((ms * 1e6) as i64);
        }
    }
    // Append the smaller to the larger: a log-only or capture-only run
    // then moves its events instead of copying them all.
    let (mut events, mut rest) = if captured.len() >= logged.len() {
        (captured, logged)
    } else {
        (logged, captured)
    };
    events.append(&mut rest);
    sort_in_order(&mut events);
    Timeline {
        events,
        clock_offsets: offsets,
    }
}

/// Sorts `events` by [`order_key`], stably, without moving whole events
/// around: their indexes (4 bytes each) are sorted by the key of the event
/// each names, then each event is moved once to its place. A stable sort
/// of the events themselves moved each ~220-byte event many times and took
/// a scratch buffer of half of them; sorting a copy of every key (40 bytes
/// each) was the run's peak memory on a long capture. The events of one
/// capture come nearly in order (each exchange's events when its answer
/// came), which a stable sort's run detection makes cheap.
fn sort_in_order(events: &mut [GroupEvent]) {
    let Ok(n) = u32::try_from(events.len()) else {
        // Past 4 G events (nearly a terabyte of them): the events moved.
        return events.sort_by(in_order);
    };
    let mut from: Vec<u32> = (0..n).collect();
    from.sort_by(|a, b| in_order(&events[*a as usize], &events[*b as usize]));
    put_in_order(events, from);
}

/// [`order_key`]'s order, the sources compared by text only when two
/// events at the same time come from different ones.
fn in_order(a: &GroupEvent, b: &GroupEvent) -> std::cmp::Ordering {
    let (ka, kb) = (order_key(a), order_key(b));
    ka.0.cmp(&kb.0).then(ka.1.cmp(&kb.1)).then_with(|| {
        let same = Source::ptr_eq(&a.evidence.source, &b.evidence.source);
        let sources = if same {
            std::cmp::Ordering::Equal
        } else {
            ka.2.cmp(kb.2)
        };
        sources.then(ka.3.cmp(&kb.3))
    })
}

/// Moves each item once to its place: place `i` takes the item now at
/// `from[i]` (`from` is a permutation of `0..items.len()`). Sorting small
/// keys and then this costs no scratch copy of the items, where a stable
/// sort of large items moves each many times and borrows room for half of
/// them.
///
/// Places are `u32` (half the room of `usize`): callers hold fewer than
/// 2^32 items (a time line that long would be a terabyte of events).
pub(crate) fn put_in_order<T>(items: &mut [T], mut from: Vec<u32>) {
    debug_assert_eq!(items.len(), from.len());
    // Follow each cycle once.
    for start in 0..from.len() {
        let mut at = start;
        loop {
            let next = from[at] as usize;
            from[at] = at as u32;
            if next == start || next == at {
                break;
            }
            items.swap(at, next);
            at = next;
        }
    }
}

/// The time line's order: time, captures before logs, source, position.
pub fn order_key(ev: &GroupEvent) -> (Timestamp, u8, &str, u64) {
    let (rank, pos) = match ev.evidence.at {
        Location::Frame { frame } => (0, frame),
        Location::Line { line } => (1, line),
    };
    (ev.ts, rank, &ev.evidence.source, pos)
}

/// Per log file, the offset that lines it up with the captures
/// ([`ClockLine`], fed as a stream would be: every capture event first).
fn estimate_offsets(captured: &[GroupEvent], logged: &[GroupEvent]) -> BTreeMap<Source, f64> {
    if captured.is_empty() || logged.is_empty() {
        return BTreeMap::new();
    }
    let mut clock = ClockLine::unbounded();
    for ev in captured {
        clock.captured(ev);
    }
    for ev in logged {
        clock.logged(ev);
    }
    clock.offsets()
}

/// A log's clock this far off the capture's is more likely a wrong
/// `--log-tz` than a drifting clock: said as a diagnostic.
pub fn warn_far_clocks(offsets: &BTreeMap<Source, f64>, diags: &mut Diagnostics) {
    for (source, ms) in offsets {
        if ms.abs() >= 300_000.0 {
            diags.add(
                DiagnosticKind::Reconstruction,
                source,
                "clock",
                format!(
                    "this log's clock is {:.1} min off the capture's: is --log-tz right?",
                    ms / 60_000.0
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::EventKind;

    #[test]
    fn put_in_order_moves_every_item_to_its_place() {
        // Cycles of lengths 1, 2 and 4: from[i] names the item place i takes.
        let mut items = vec!['a', 'b', 'c', 'd', 'e', 'f', 'g'];
        put_in_order(&mut items, vec![0, 2, 1, 4, 5, 6, 3]);
        assert_eq!(items, vec!['a', 'c', 'b', 'e', 'f', 'g', 'd']);
        let mut none: Vec<u8> = Vec::new();
        put_in_order(&mut none, Vec::new());
        assert!(none.is_empty());
    }

    /// A capture's answer and a log's Stabilized line of group `g`.
    fn answer(ts_ms: i64, gen: i32) -> GroupEvent {
        clock::tests::answer(ts_ms, "g", gen)
    }

    fn stabilized(ts_ms: i64, gen: i32) -> GroupEvent {
        clock::tests::stabilized(ts_ms, "g", gen, "server.log")
    }

    #[test]
    fn a_log_two_hours_behind_is_moved_onto_the_capture_clock() {
        let two_h = 7_200_000;
        let t = merge(
            vec![answer(10_000 + two_h, 5), answer(50_000 + two_h, 6)],
            vec![stabilized(9_990, 5), stabilized(49_990, 6)],
        );
        assert_eq!(
            t.clock_offsets.values().next().copied(),
            None,
            "pairs over an hour apart are not matched"
        );
        let t = merge(
            vec![answer(10_000, 5), answer(50_000, 6)],
            vec![stabilized(9_000, 5), stabilized(49_000, 6)],
        );
        assert_eq!(t.clock_offsets.get("server.log").copied(), Some(1000.0));
        assert_eq!(
            t.events[0].ts, t.events[1].ts,
            "the log line now sits at the answer's time"
        );
    }

    #[test]
    fn the_order_is_a_stable_sort_by_time_kind_of_input_source_and_position() {
        // Few distinct times, positions and sources, so that every tie
        // occurs; two sources share a name but not its allocation.
        let sources: [Source; 3] = [
            Source::from("b.pcap"),
            Source::from("a.log"),
            Source::from("b.pcap"),
        ];
        let mut rng = crate::logs::synth::Rng(7);
        let mut events: Vec<GroupEvent> = (0..2000)
            .map(|i| {
                let r = rng.next() as usize;
                let at = if r.is_multiple_of(2) {
                    Location::Frame {
                        frame: (r % 5) as u64,
                    }
                } else {
                    Location::Line {
                        line: (r % 5) as u64,
                    }
                };
                let mut e = clock::tests::ev(
                    (r % 7) as i64,
                    "g",
                    i,
                    EventKind::ConnectionClosed { reset: false },
                    at,
                    "",
                );
                e.evidence.source = sources[r % 3].clone();
                e
            })
            .collect();
        let mut want = events.clone();
        want.sort_by(|a, b| order_key(a).cmp(&order_key(b)));
        sort_in_order(&mut events);
        let gens = |v: &[GroupEvent]| v.iter().map(|e| e.generation_id).collect::<Vec<_>>();
        assert_eq!(gens(&events), gens(&want));
    }

    #[test]
    fn equal_times_put_captures_before_logs() {
        let t = merge(vec![answer(10, 1)], vec![stabilized(10, 9)]);
        assert!(matches!(t.events[0].evidence.at, Location::Frame { .. }));
    }
}
