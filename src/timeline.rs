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
//! file. For views that need no event once the groups are rebuilt, the
//! ordered events are then handed out group by group ([`by_group`]).

use crate::event::Source;
use std::collections::{BTreeMap, VecDeque};

mod clock;
pub(crate) mod heartbeats;

pub use clock::{ClockLine, CLOCK_PAIRS};
pub use heartbeats::{Folded, HeartbeatFold};

use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::event::{GroupEvent, Id, Location};
use crate::fast_hash::FastMap;
use crate::time::Timestamp;

/// Events in time order, and the clock offsets applied.
#[derive(Debug, Default)]
pub struct Timeline {
    /// Every event, sorted by (time, captures before logs, source, position).
    pub events: Vec<GroupEvent>,
    /// Per log file: milliseconds added to its times (log + offset = capture).
    pub clock_offsets: BTreeMap<Source, f64>,
    /// What [`Self::take_events`] took: the first and last event's times
    /// and how many there were.
    taken: Option<(Timestamp, Timestamp, usize)>,
}

impl Timeline {
    /// The events, taken out (to be handed on group by group and let go,
    /// [`by_group`]); the time line keeps their span and count.
    pub fn take_events(&mut self) -> Vec<GroupEvent> {
        if let (Some(first), Some(last)) = (self.events.first(), self.events.last()) {
            self.taken = Some((first.ts, last.ts, self.events.len()));
        }
        std::mem::take(&mut self.events)
    }

    /// The first event's time.
    pub fn first_ts(&self) -> Option<Timestamp> {
        match self.events.first() {
            Some(e) => Some(e.ts),
            None => self.taken.map(|t| t.0),
        }
    }

    /// The last event's time.
    pub fn last_ts(&self) -> Option<Timestamp> {
        match self.events.last() {
            Some(e) => Some(e.ts),
            None => self.taken.map(|t| t.1),
        }
    }

    /// How many events it holds, or held before they were taken.
    pub fn len(&self) -> usize {
        self.taken.map_or(self.events.len(), |t| t.2)
    }

    /// Whether it holds no event and none was taken.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Each group's events in time-line order, the groups in name order, out of
/// `events` (in time-line order): moved, not copied. Each group's list is
/// made to its size first and `events` gives its room back as it empties
/// (taken from its end), so the events are never held twice. Events that
/// name no group go to `groupless`, in reverse order.
///
/// Each event's group is looked up once (its number kept beside it), and
/// each list is filled from its back ([`VecDeque::push_front`]) so that it
/// ends in order where it was made: taking the events from the end and
/// reversing each list afterwards moved every event once more.
pub fn by_group(
    mut events: Vec<GroupEvent>,
    mut groupless: impl FnMut(GroupEvent),
) -> Vec<(Id, Vec<GroupEvent>)> {
    let mut numbers: FastMap<Id, u32> = FastMap::default();
    let mut counts: Vec<(Id, usize)> = Vec::new();
    let of: Vec<u32> = events
        .iter()
        .map(|e| {
            let Some(g) = e.group.as_ref() else {
                return NO_GROUP;
            };
            let n = match numbers.get(g) {
                Some(n) => *n,
                None => {
                    // Fewer than 2^32 - 1 groups: each has an event here.
                    let n = counts.len() as u32;
                    numbers.insert(g.clone(), n);
                    counts.push((g.clone(), 0));
                    n
                }
            };
            counts[n as usize].1 += 1;
            n
        })
        .collect();
    drop(numbers);
    let mut lists: Vec<(Id, VecDeque<GroupEvent>)> = counts
        .into_iter()
        .map(|(g, n)| (g, VecDeque::with_capacity(n)))
        .collect();
    for n in of.into_iter().rev() {
        let Some(ev) = pop_giving_room_back(&mut events) else {
            break;
        };
        match lists.get_mut(n as usize) {
            Some((_, list)) => list.push_front(ev),
            None => groupless(ev),
        }
    }
    // Made to its size and filled from the back, a list starts where its
    // room does: the conversion moves nothing.
    let mut out: Vec<(Id, Vec<GroupEvent>)> = lists
        .into_iter()
        .map(|(g, list)| (g, Vec::from(list)))
        .collect();
    out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    out
}

/// [`by_group`]'s number for an event that names no group.
const NO_GROUP: u32 = u32::MAX;

/// Below this much room, [`pop_giving_room_back`] keeps it.
const GIVE_BACK_FROM: usize = 4096;

/// `items`' last item, taken out; once an eighth of its room is unused it
/// is given back (a vector emptied from its end while what it held is
/// moved elsewhere never holds more than an eighth twice).
pub(crate) fn pop_giving_room_back<T>(items: &mut Vec<T>) -> Option<T> {
    let item = items.pop()?;
    if items.len() < items.capacity() - items.capacity() / 8 && items.capacity() > GIVE_BACK_FROM {
        items.shrink_to_fit();
    }
    Some(item)
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
        taken: None,
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
pub(crate) fn in_order(a: &GroupEvent, b: &GroupEvent) -> std::cmp::Ordering {
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

    #[test]
    fn a_vector_emptied_from_its_end_never_keeps_more_than_an_eighth_of_its_room_unused() {
        let mut items: Vec<u64> = (0..20_000).collect();
        let mut last = 20_000;
        while let Some(i) = pop_giving_room_back(&mut items) {
            assert_eq!(i, last - 1, "taken from the end");
            last = i;
            let room = items.capacity();
            assert!(
                room <= GIVE_BACK_FROM || items.len() >= room - room / 8,
                "{} items in room for {room}",
                items.len()
            );
        }
        assert_eq!(last, 0);
        assert!(items.capacity() <= GIVE_BACK_FROM);
    }

    #[test]
    fn events_by_group_keep_their_order_in_groups_by_name_and_the_span_stays() {
        // More than GIVE_BACK_FROM, so the list gives its room back on the way.
        let mut events = Vec::new();
        for i in 0..5000i64 {
            let mut ev = clock::tests::answer(i, ["b", "a", "c"][(i % 3) as usize], i as i32);
            if i % 1000 == 7 {
                ev.group = None;
            }
            events.push(ev);
        }
        let mut t = Timeline {
            events,
            ..Timeline::default()
        };
        let mut groupless = Vec::new();
        let groups = by_group(t.take_events(), |ev| groupless.push(ev.generation_id));
        assert!(t.events.is_empty());
        assert_eq!(
            (t.first_ts(), t.last_ts(), t.len()),
            (Some(Timestamp(0)), Some(Timestamp(4_999_000_000)), 5000)
        );
        let names: Vec<&str> = groups.iter().map(|(g, _)| &**g).collect();
        assert_eq!(names, ["a", "b", "c"]);
        for (g, list) in &groups {
            assert!(list.iter().all(|e| e.group.as_deref() == Some(&**g)));
            assert!(
                list.windows(2).all(|w| w[0].ts < w[1].ts),
                "{g} out of order"
            );
            assert_eq!(list.len(), list.capacity(), "{g}: made to its size");
        }
        assert_eq!(groups.iter().map(|(_, l)| l.len()).sum::<usize>(), 4995);
        groupless.sort();
        assert_eq!(groupless, [7, 1007, 2007, 3007, 4007].map(Some));
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
