//! A stable member's plain heartbeats and commits, folded as the time
//! line flows.
//!
//! Takes: group events, each group's in the time line's order (one
//! capture's, from [`crate::input::EventWindow`]). Gives: [`Folded`], the same events in
//! the same order less the middle of every run of plain heartbeats and of
//! every run of plain commits, and how many were dropped per input. The
//! rule itself ([`role`], [`Runs`]) is also what `kgtrace watch` folds its
//! windows' heartbeats and commits by (`watch::engine`, `Window::thin`),
//! the events staying in place there.
//!
//! On a busy coordinator most group traffic is heartbeats answered without
//! error (half the events of the benchmark's dense capture) and commits
//! answered without error (a quarter): each says only "this member, of this
//! generation, was alive then" (a commit also says what it committed, which
//! the stops stage reads from its own book, below). What the rebuilding
//! reads from them is a member's first and latest sign of life at the
//! moment something else happens in its group:
//! - `group::classic` (`Classic::apply`): the member book's `first_seen`
//!   and `last_seen` (the newest time: a maximum), a client's last time,
//!   generation and whether its member id is known (the newest values),
//!   the members learnt before the first round (a set), and a confirmed
//!   member (a set); the state "Stable" at the first one; the group's
//!   first and last event time;
//! - `stops` (`GroupIndex::build`): each member's request times, looked up
//!   only as "the last request at or before" a round's start, a KIP-848
//!   move or a static member's rejoin, all of them times of other events
//!   of the same group (`partition::last_request_before`). Its commits
//!   (a partition's last commit is looked up at any time: the new owner's
//!   first Fetch) come from [`crate::stops::CommitBook`], which the caller
//!   feeds every event before the fold sees it.
//!
//! None of those reads happens at a plain heartbeat or commit (they only
//! write), and each write is a newest value, a first value or a set. So
//! between two events of a group that are not plain heartbeats or commits,
//! a member's heartbeats of one generation on one connection can be cut
//! to the first and the last, and so can its commits (a run of each, side
//! by side), without changing what any read sees: the rebuilt records are
//! those of every event. Everything else is kept: a heartbeat answered
//! with an error (REBALANCE_IN_PROGRESS starts a round:
//! GroupCoordinator.scala `handleHeartbeat`), a commit answered with an
//! error at the top or for any partition, one never answered, one cut by
//! the snap length, a commit of no member or generation (a simple
//! consumer's), and every event of another kind (KIP-848 members'
//! ConsumerGroupHeartbeats carry epochs and assignments: never folded).
//!
//! Each group's events must come in the time line's order (every rule
//! here is within one group; groups may interleave in any order): a late
//! event would fold against what it should have ended.
//! [`crate::input::EventWindow`], holding groups apart, gives that order
//! unless it let events go early (past its cap, or times going back
//! between a directory's files), which it counts (`row_order`): the caller
//! then reads the input again without the fold (`kgtrace::analyse`). The
//! fold keeps the events in the order given; the time line sorts them.
//! `watch`, whose capture events come in the order their exchanges
//! complete, folds only what is half a minute old.

use crate::event::Source;
use std::collections::hash_map::Entry;
use std::collections::VecDeque;
use std::sync::Arc;

use crate::event::{ClientRef, EventKind, GroupEvent, Id};
use crate::fast_hash::FastMap;

/// The events kept, in order, and what was folded away.
#[derive(Debug, Default)]
pub struct Folded {
    /// Every event but the folded heartbeats, in the order given.
    pub events: Vec<GroupEvent>,
    /// Heartbeat requests and answers dropped, by input (their counts
    /// still belong in what each input held).
    pub dropped: Vec<(Source, u64)>,
}

/// Folds events one at a time ([`HeartbeatFold::push`]).
#[derive(Debug, Default)]
pub struct HeartbeatFold {
    /// Kept events, and beside them the place each had in the order
    /// given: a run's last heartbeat is held back until the run ends, so
    /// it is kept after events that came later.
    kept: Pieces,
    places: Vec<u64>,
    next: u64,
    /// Open runs by group; each holds its newest exchange back.
    runs: FastMap<Id, Runs<(u64, GroupEvent)>>,
    dropped: FastMap<Source, u64>,
    /// Whether `kept` is still in the order given.
    in_order: bool,
}

/// One group's open runs, by member and what the run is of: the rule of
/// the module documentation, over whatever stands for an event (`H`: the
/// event itself where the fold holds it back, a key where the event stays
/// in place: `kgtrace watch`'s windows).
#[derive(Debug)]
pub(crate) struct Runs<H> {
    runs: FastMap<(Id, Beat), Run<H>>,
}

impl<H> Default for Runs<H> {
    fn default() -> Self {
        Runs {
            runs: FastMap::default(),
        }
    }
}

/// One member's heartbeats (or commits) since the last event of its group
/// that was not a plain heartbeat or commit. Its first exchange was kept;
/// `last` is the newest.
#[derive(Debug)]
pub(crate) struct Run<H> {
    generation: i32,
    client: Arc<ClientRef>,
    source: Source,
    group_instance_id: Option<Id>,
    last: Option<Held<H>>,
}

/// A run's newest request and, once it came, its answer.
#[derive(Debug)]
pub(crate) struct Held<H> {
    exchange: u64,
    /// The request.
    pub request: H,
    /// Its answer, without error.
    pub answer: Option<H>,
}

impl<H> Runs<H> {
    /// The run a plain request of `ev`'s member continues, or (`Err`) it
    /// begins one or names no member: it then stays where it is (a run's
    /// first exchange is kept), and so does the newest exchange of the run
    /// it ended (another connection, generation, static id or input).
    pub(crate) fn run_of(
        &mut self,
        ev: &GroupEvent,
        beat: Beat,
    ) -> Result<&mut Run<H>, Option<Held<H>>> {
        let Some(member) = ev.member_id.clone() else {
            return Err(None);
        };
        // One lookup per request: this runs for every plain heartbeat and
        // commit of a capture.
        let new_run = || Run {
            generation: ev.generation_id.unwrap_or(-1),
            client: ev.client.clone(),
            source: ev.evidence.source.clone(),
            group_instance_id: ev.group_instance_id.clone(),
            last: None,
        };
        match self.runs.entry((member, beat)) {
            Entry::Occupied(run) if run.get().continues(ev) => Ok(run.into_mut()),
            Entry::Occupied(mut run) => Err(std::mem::replace(run.get_mut(), new_run()).last),
            Entry::Vacant(slot) => {
                slot.insert(new_run());
                Err(None)
            }
        }
    }

    /// An answer without error of `member`: the run's newest request's
    /// (kept with it), else `answer` is handed back (it stays: the answer
    /// of a run's first request, or of one kept).
    pub(crate) fn answer(
        &mut self,
        member: Option<Id>,
        beat: Beat,
        exchange: u64,
        answer: H,
    ) -> Option<H> {
        let held = member
            .and_then(|m| self.runs.get_mut(&(m, beat)))
            .and_then(|run| run.last.as_mut())
            .filter(|h| h.exchange == exchange && h.answer.is_none());
        match held {
            Some(h) => {
                h.answer = Some(answer);
                None
            }
            None => Some(answer),
        }
    }

    /// Every run ended: each run's newest exchange stays.
    pub(crate) fn end(self) -> impl Iterator<Item = Held<H>> {
        self.runs.into_values().filter_map(|run| run.last)
    }
}

/// What an event is to the fold.
pub(crate) enum Role {
    /// A heartbeat or commit request that may be folded.
    Request { exchange: u64, beat: Beat },
    /// An answer to one, without error.
    Answer { exchange: u64, beat: Beat },
    /// Writes only what a run's ends already write: a commit of no member
    /// or generation (kept, not folded).
    Plain,
    /// Anything else naming the group: ends its runs.
    Ends,
}

/// What a run is of: a member's heartbeats and its commits run side by
/// side, neither ending the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Beat {
    Heartbeat,
    Commit,
}

/// What `ev` is to the fold.
pub(crate) fn role(ev: &GroupEvent) -> Role {
    if ev.truncated {
        return Role::Ends;
    }
    let member = ev.member_id.as_deref().is_some_and(|m| !m.is_empty());
    let generation = ev.generation_id.is_some_and(|g| g >= 0);
    match &ev.kind {
        EventKind::HeartbeatRequest { exchange } if member && generation => Role::Request {
            exchange: *exchange,
            beat: Beat::Heartbeat,
        },
        EventKind::HeartbeatResponse {
            exchange,
            error: None,
        } if member => Role::Answer {
            exchange: *exchange,
            beat: Beat::Heartbeat,
        },
        EventKind::OffsetCommitRequest { exchange, .. } if member && generation => Role::Request {
            exchange: *exchange,
            beat: Beat::Commit,
        },
        EventKind::OffsetCommitResponse {
            exchange,
            error: None,
            partitions,
        } if member && partitions.is_empty() => Role::Answer {
            exchange: *exchange,
            beat: Beat::Commit,
        },
        EventKind::OffsetCommitRequest { .. }
        | EventKind::OffsetCommitResponse { error: None, .. } => Role::Plain,
        _ => Role::Ends,
    }
}

impl HeartbeatFold {
    /// An empty fold.
    pub fn new() -> HeartbeatFold {
        HeartbeatFold {
            in_order: true,
            ..HeartbeatFold::default()
        }
    }

    /// Takes the next event in the time line's order.
    pub fn push(&mut self, ev: GroupEvent) {
        let at = self.next;
        self.next += 1;
        let Some(group) = ev.group.clone() else {
            return self.keep(at, ev);
        };
        match role(&ev) {
            Role::Request { exchange, beat } => self.request(group, beat, exchange, at, ev),
            Role::Answer { exchange, beat } => self.answer(&group, beat, exchange, at, ev),
            Role::Plain => self.keep(at, ev),
            Role::Ends => {
                self.end_runs(&group);
                self.keep(at, ev);
            }
        }
    }

    /// Every run ended, the events in the order given.
    pub fn finish(mut self) -> Folded {
        let groups: Vec<Id> = self.runs.keys().cloned().collect();
        for g in groups {
            self.end_runs(&g);
        }
        let mut kept = std::mem::take(&mut self.kept).joined();
        if !self.in_order {
            // Held heartbeats went in late: back to the order given, by
            // sorting 4-byte indexes, not moving the events about (each
            // held one is near its place, which a stable sort's run
            // detection makes cheap).
            kept = in_places(kept, std::mem::take(&mut self.places));
        }
        let mut dropped: Vec<(Source, u64)> = self.dropped.into_iter().collect();
        dropped.sort();
        Folded {
            events: kept,
            dropped,
        }
    }

    fn keep(&mut self, at: u64, ev: GroupEvent) {
        if self.places.last().is_some_and(|last| *last > at) {
            self.in_order = false;
        }
        self.kept.push(ev);
        self.places.push(at);
    }

    fn request(&mut self, group: Id, beat: Beat, exchange: u64, at: u64, ev: GroupEvent) {
        let runs = self.runs.entry(group).or_default();
        let (before, folded) = match runs.run_of(&ev, beat) {
            Ok(run) => run.push(exchange, (at, ev)),
            Err(ended) => {
                self.put_back(ended);
                return self.keep(at, ev);
            }
        };
        match before {
            Some(h) if folded => *self.dropped.entry(h.request.1.evidence.source).or_default() += 2,
            unanswered => self.put_back(unanswered),
        }
    }

    fn answer(&mut self, group: &Id, beat: Beat, exchange: u64, at: u64, ev: GroupEvent) {
        let Some(runs) = self.runs.get_mut(group) else {
            return self.keep(at, ev);
        };
        let member = ev.member_id.clone();
        if let Some(back) = runs.answer(member, beat, exchange, (at, ev)) {
            // The answer of a run's first heartbeat, or of one kept.
            self.keep(back.0, back.1);
        }
    }

    /// Ends `group`'s runs: each run's held heartbeat is kept.
    fn end_runs(&mut self, group: &Id) {
        let Some(runs) = self.runs.remove(group) else {
            return;
        };
        for held in runs.end() {
            self.put_back(Some(held));
        }
    }

    fn put_back(&mut self, held: Option<Held<(u64, GroupEvent)>>) {
        let Some(h) = held else { return };
        self.keep(h.request.0, h.request.1);
        if let Some((at, ev)) = h.answer {
            self.keep(at, ev);
        }
    }
}

impl<H> Run<H> {
    /// The run's request of `exchange` (standing as `request`) is its
    /// newest now. Gives the exchange it took the place of, and whether
    /// that one goes: a whole exchange between the run's first and this
    /// request (what it says, the run's ends say too); else it stays
    /// (never answered, so far).
    pub(crate) fn push(&mut self, exchange: u64, request: H) -> (Option<Held<H>>, bool) {
        let before = self.last.replace(Held {
            exchange,
            request,
            answer: None,
        });
        let folded = before.as_ref().is_some_and(|h| h.answer.is_some());
        (before, folded)
    }

    /// Whether `ev`, a heartbeat of the run's member, says what the run's
    /// heartbeats say: the same generation, connection, static id and
    /// input.
    fn continues(&self, ev: &GroupEvent) -> bool {
        ev.generation_id == Some(self.generation)
            && Arc::ptr_eq(&ev.client, &self.client)
            && Source::ptr_eq(&ev.evidence.source, &self.source)
            && ev.group_instance_id == self.group_instance_id
    }
}

/// `kept` put back in the order `places` gives.
fn in_places(mut kept: Vec<GroupEvent>, places: Vec<u64>) -> Vec<GroupEvent> {
    match u32::try_from(places.len()) {
        Ok(n) => {
            let mut from: Vec<u32> = (0..n).collect();
            from.sort_by_key(|i| places[*i as usize]);
            super::put_in_order(&mut kept, from);
            kept
        }
        // Past 4 G events: paired and sorted whole.
        Err(_) => {
            let mut pairs: Vec<(u64, GroupEvent)> = places.into_iter().zip(kept).collect();
            pairs.sort_by_key(|(at, _)| *at);
            pairs.into_iter().map(|(_, ev)| ev).collect()
        }
    }
}

/// Events kept, in pieces of at most [`PIECE`], joined once at the end.
///
/// One vector grown by doubling copies all it holds at each step, and
/// for the length of the copy holds it twice: on a 2 GB capture that was
/// a step of 128 MB. In pieces, nothing is copied while reading. The join
/// fills room made for all of them from its back, taking the events from
/// the end of the last piece, and each piece gives its room back an eighth
/// at a time as it empties: at most an eighth of a piece is held twice.
/// (Moved a piece at a time from the front, a whole piece was held twice,
/// 9.4 MB of the dense capture's peak.)
#[derive(Debug, Default)]
struct Pieces {
    full: Vec<Vec<GroupEvent>>,
    last: Vec<GroupEvent>,
}

/// Events per piece (about 9.4 MB of them).
const PIECE: usize = 1 << 16;

impl Pieces {
    fn push(&mut self, ev: GroupEvent) {
        if self.last.len() == PIECE {
            let full = std::mem::replace(&mut self.last, Vec::with_capacity(PIECE));
            self.full.push(full);
        }
        self.last.push(ev);
    }

    fn joined(self) -> Vec<GroupEvent> {
        if self.full.is_empty() {
            return self.last;
        }
        let n = self.full.len() * PIECE + self.last.len();
        let mut all = VecDeque::with_capacity(n);
        for mut piece in self.full.into_iter().chain([self.last]).rev() {
            while let Some(ev) = super::pop_giving_room_back(&mut piece) {
                all.push_front(ev);
            }
        }
        // Made to its size and filled from the back, it starts where its
        // room does: the conversion moves nothing.
        Vec::from(all)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::event::{ErrorCode, Evidence, Location};
    use crate::time::Timestamp;

    /// Builds events of group `g` on one connection, a frame each.
    struct Wire {
        client: Arc<ClientRef>,
        source: Source,
        frame: u64,
    }

    impl Wire {
        fn new() -> Wire {
            Wire {
                client: Arc::new(ClientRef::default()),
                source: crate::event::Source::from("t.pcap"),
                frame: 0,
            }
        }

        fn event(&mut self, member: &str, generation: i32, kind: EventKind) -> GroupEvent {
            self.frame += 1;
            GroupEvent {
                ts: Timestamp(self.frame as i64 * 1_000_000_000),
                group: Some(Id::from("g")),
                member_id: Some(Id::from(member)),
                group_instance_id: None,
                generation_id: Some(generation),
                client: self.client.clone(),
                kind,
                evidence: Evidence {
                    source: self.source.clone(),
                    at: Location::Frame { frame: self.frame },
                },
                truncated: false,
            }
        }

        /// A heartbeat of `member` and its answer (`error` or none).
        fn beat(&mut self, member: &str, error: Option<i16>) -> [GroupEvent; 2] {
            let exchange = self.frame + 1;
            [
                self.event(member, 1, EventKind::HeartbeatRequest { exchange }),
                self.event(
                    member,
                    1,
                    EventKind::HeartbeatResponse {
                        exchange,
                        error: error.map(ErrorCode),
                    },
                ),
            ]
        }

        /// `n` heartbeats of `member` answered without error.
        fn beats(&mut self, member: &str, n: usize) -> Vec<GroupEvent> {
            (0..n).flat_map(|_| self.beat(member, None)).collect()
        }

        /// A request of `member`, its kind made from its exchange.
        fn request(&mut self, member: &str, kind: impl FnOnce(u64) -> EventKind) -> GroupEvent {
            let exchange = self.frame + 1;
            self.event(member, 1, kind(exchange))
        }

        fn commit(&mut self, member: &str) -> GroupEvent {
            self.request(member, |exchange| EventKind::OffsetCommitRequest {
                exchange,
                partitions: 0,
                offsets: Vec::new(),
            })
        }

        /// A commit of `member` and its answer (`error` or none).
        fn committed(&mut self, member: &str, error: Option<i16>) -> [GroupEvent; 2] {
            let request = self.commit(member);
            let exchange = self.frame;
            let answer = self.event(
                member,
                1,
                EventKind::OffsetCommitResponse {
                    exchange,
                    error: error.map(ErrorCode),
                    partitions: Vec::new(),
                },
            );
            [request, answer]
        }

        fn leave(&mut self, member: &str) -> GroupEvent {
            self.request(member, |exchange| EventKind::LeaveGroupRequest {
                exchange,
                members: Vec::new(),
            })
        }
    }

    #[test]
    fn events_kept_across_pieces_are_joined_in_the_order_pushed() {
        let mut w = Wire::new();
        let mut pieces = Pieces::default();
        let n = 2 * PIECE + 3;
        for _ in 0..n {
            pieces.push(w.event("m", 1, EventKind::ConnectionClosed { reset: false }));
        }
        assert_eq!(pieces.full.len(), 2);
        let joined = pieces.joined();
        assert_eq!(joined.capacity(), n, "made to its size");
        let frames: Vec<u64> = joined
            .iter()
            .map(|e| match e.evidence.at {
                Location::Frame { frame } => frame,
                Location::Line { .. } => 0,
            })
            .collect();
        assert_eq!(frames, (1..=n as u64).collect::<Vec<u64>>());
    }

    fn frames_kept(events: Vec<GroupEvent>) -> (Vec<u64>, Vec<(Source, u64)>) {
        let mut fold = HeartbeatFold::new();
        events.into_iter().for_each(|ev| fold.push(ev));
        let folded = fold.finish();
        let frames = folded
            .events
            .iter()
            .map(|ev| match ev.evidence.at {
                Location::Frame { frame } => frame,
                Location::Line { line } => line,
            })
            .collect();
        (frames, folded.dropped)
    }

    #[test]
    fn a_run_of_heartbeats_keeps_its_first_and_last() {
        let mut w = Wire::new();
        let events = w.beats("a", 5);
        let (kept, dropped) = frames_kept(events);
        assert_eq!(kept, [1, 2, 9, 10]);
        assert_eq!(dropped, [(crate::event::Source::from("t.pcap"), 6)]);
    }

    #[test]
    fn commits_and_other_members_heartbeats_go_on_between() {
        let mut w = Wire::new();
        let mut events = Vec::new();
        for _ in 0..3 {
            events.extend(w.beat("a", None));
            events.extend(w.beat("b", None));
            events.push(w.commit("a"));
        }
        let (kept, _) = frames_kept(events);
        // a: 1-2 first, 11-12 last; b: 3-4 first, 13-14 last; every commit
        // (none was answered: kept).
        assert_eq!(kept, [1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15]);
    }

    #[test]
    fn a_run_of_answered_commits_keeps_its_first_and_last_beside_the_heartbeats() {
        let mut w = Wire::new();
        let mut events = Vec::new();
        for _ in 0..4 {
            events.extend(w.beat("a", None));
            events.extend(w.committed("a", None));
        }
        events.extend(w.committed("a", Some(22)));
        let (kept, dropped) = frames_kept(events);
        // Heartbeats: 1-2 first, 13-14 last. Commits: 3-4 first; the last
        // request, 17, is the one answered ILLEGAL_GENERATION (18), which
        // ends both runs: both are kept, 7-8, 11-12 and 15-16 are not.
        assert_eq!(kept, [1, 2, 3, 4, 13, 14, 17, 18]);
        assert_eq!(dropped, [(crate::event::Source::from("t.pcap"), 10)]);
    }

    #[test]
    fn any_other_event_of_the_group_ends_its_runs_keeping_their_last() {
        let mut w = Wire::new();
        let mut events = Vec::new();
        events.extend(w.beats("a", 3));
        events.push(w.leave("b"));
        events.extend(w.beats("a", 3));
        let (kept, _) = frames_kept(events);
        // Before the LeaveGroup (7): 1-2 and 5-6; after it: 8-9 and 12-13.
        assert_eq!(kept, [1, 2, 5, 6, 7, 8, 9, 12, 13]);
    }

    #[test]
    fn an_answer_with_an_error_ends_the_runs_and_is_kept() {
        let mut w = Wire::new();
        let mut events = Vec::new();
        events.extend(w.beats("a", 3));
        // REBALANCE_IN_PROGRESS (27).
        events.extend(w.beat("a", Some(27)));
        events.extend(w.beat("a", None));
        let (kept, _) = frames_kept(events);
        // The request answered with the error (7) is the run's last sign
        // of life: 3-6 are in the middle. After the answer, a new run.
        assert_eq!(kept, [1, 2, 7, 8, 9, 10]);
    }

    #[test]
    fn a_heartbeat_never_answered_is_kept() {
        let mut w = Wire::new();
        let mut events = Vec::new();
        events.extend(w.beat("a", None));
        let [unanswered, _] = w.beat("a", None);
        events.push(unanswered);
        events.extend(w.beats("a", 2));
        let (kept, dropped) = frames_kept(events);
        // 3 never answered; 5-6 in the middle.
        assert_eq!(kept, [1, 2, 3, 7, 8]);
        assert_eq!(dropped[0].1, 2);
    }

    #[test]
    fn a_new_generation_or_connection_begins_a_new_run() {
        let mut w = Wire::new();
        let mut events = Vec::new();
        events.extend(w.beats("a", 3));
        for _ in 0..3 {
            let mut pair = w.beat("a", None);
            pair.iter_mut().for_each(|ev| ev.generation_id = Some(2));
            events.extend(pair);
        }
        w.client = Arc::new(ClientRef {
            address: Some("10.0.0.1:5000".into()),
            ..ClientRef::default()
        });
        events.extend(w.beats("a", 3));
        let (kept, _) = frames_kept(events);
        assert_eq!(kept, [1, 2, 5, 6, 7, 8, 11, 12, 13, 14, 17, 18]);
    }

    #[test]
    fn a_heartbeat_cut_short_ends_the_runs() {
        let mut w = Wire::new();
        let mut events = Vec::new();
        events.extend(w.beats("a", 3));
        let mut cut = w.beat("b", None);
        cut[0].truncated = true;
        events.extend(cut);
        events.extend(w.beats("a", 3));
        let (kept, _) = frames_kept(events);
        assert_eq!(kept, [1, 2, 5, 6, 7, 8, 9, 10, 13, 14]);
    }

    /// Every lab capture and every fixture capture: the groups rebuilt
    /// from the folded time line, with their costs, are those rebuilt from
    /// every event.
    #[test]
    fn groups_and_costs_rebuilt_from_folded_heartbeats_and_commits_are_those_of_every_event() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut captures: Vec<_> = ["lab", "kafka", "snaplen"]
            .iter()
            .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains(".pcap"))
            .collect();
        captures.sort();
        assert!(captures.len() > 20);
        let mut folded_in_all = 0;
        let mut commits_folded = 0;
        let commits_in = |events: &[GroupEvent]| {
            events
                .iter()
                .filter(|e| matches!(e.kind, EventKind::OffsetCommitRequest { .. }))
                .count()
        };
        for capture in &captures {
            let opts = crate::options::ReadOptions::default();
            let rebuilt = |events: &[GroupEvent], commits: Option<crate::stops::CommitBook>| {
                let read =
                    crate::input::read_inputs(std::slice::from_ref(capture), &opts, false, true)
                        .unwrap();
                let mut h = crate::group::reconstruct(events);
                crate::stops::apply_folded(&mut h, events, read.data, commits);
                format!("{h:?}")
            };
            let read = crate::input::read_inputs(std::slice::from_ref(capture), &opts, false, true)
                .unwrap();
            let all = super::super::merge(read.captured, Vec::new()).events;
            let mut fold = HeartbeatFold::new();
            let mut commits = crate::stops::CommitBook::default();
            for ev in &all {
                let mut ev = ev.clone();
                commits.see(&mut ev);
                fold.push(ev);
            }
            let folded = fold.finish();
            let dropped: u64 = folded.dropped.iter().map(|(_, n)| n).sum();
            assert_eq!(folded.events.len() as u64 + dropped, all.len() as u64);
            folded_in_all += dropped;
            commits_folded += commits_in(&all) - commits_in(&folded.events);
            assert!(
                rebuilt(&folded.events, Some(commits)) == rebuilt(&all, None),
                "{}: other groups with {dropped} heartbeat and commit events folded",
                capture.display()
            );
        }
        // The comparison means something: heartbeats and commits were
        // folded.
        assert!(folded_in_all > 1000, "{folded_in_all} folded");
        assert!(commits_folded > 100, "{commits_folded} commits folded");
    }
}
