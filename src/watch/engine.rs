//! The streaming engine: group events in, rebalance records out as they
//! start, complete and settle.
//!
//! Takes: [`GroupEvent`]s and [`DataEvent`]s in the order readers find
//! them (a capture's events in exchange completion order, a log's in line
//! order, several inputs interleaved). Gives: [`Output`]s: a round that
//! started, a record that completed, a record that hindsight changed, and
//! at the end of the input the rounds still open.
//!
//! It does not rewrite the reconstructor: it keeps per group a bounded
//! window of events in the time line's order ([`crate::timeline::order_key`])
//! and drives [`crate::group::reconstruct`] and [`crate::stops::apply`]
//! over it, the very code `rebalances` runs over the whole input. Since
//! both stages judge each group from its own events alone (plus the data
//! path), a window that holds everything a round's judgment looks at gives
//! the batch record.
//!
//! Memory is bounded by these windows (the constants below; a group whose
//! members asked for a `max.poll.interval.ms` or `session.timeout.ms` longer
//! than Kafka's defaults has its own, stretched to three times the longer
//! for its events, twice for its hindsight, and for the data path its
//! clients fetch that hindsight plus both timeouts, each counted up to
//! [`MAX_PATIENCE_NS`]: [`Window::bounds`], [`Window::data_retain_ns`]):
//! - per group, the events of the last [`RETAIN_NS`] of event time (less
//!   the middle of each member's run of plain heartbeats, and of its run
//!   of plain commits, once they are [`THIN_LAG_NS`] old, as `rebalances`
//!   folds them: [`Window::thin`]; a commit folded is kept as the stops
//!   stage reads it, trimmed as the events are), plus
//!   the span of the group's last completed round (who was a member, with
//!   what assignment: what the next round is compared with) and of every
//!   round that may still be revised or is still open, of the round each
//!   of their members last joined in (the JoinGroup its timeouts come
//!   from: at most one round per member) ([`kept_spans`]); events in
//!   between are dropped; the starts of the unexpected rounds of the last
//!   ten minutes before them (what a storm is counted from);
//! - the data path: each Fetch folded as it arrives into its client's
//!   per-partition positions and watermarks (what the stops stage looks
//!   up, [`ClientFolder`]; the events are not kept), of the last
//!   [`RETAIN_NS`]; topic names by id are kept;
//! - per emitted record, one rendered line while it can still change
//!   ([`HINDSIGHT_NS`] after it completed), then only the time before which
//!   nothing is emitted again;
//! - a group with no event for [`RETAIN_NS`] and no open round is evicted
//!   whole.
//!
//! Connections live in the readers (`tcp`, `kafka`), which already evict
//! closed and idle ones.

use crate::event::Source;
use std::collections::{BTreeMap, BTreeSet};

use crate::event::{DataEvent, EventKind, GroupEvent, Id, Location};
use crate::fast_hash::FastMap;
use crate::filter::Filter;
use crate::input::Flow;
use crate::no_rebalance::Sources;
use crate::report::Rebalance;
use crate::stops::{ClientFolder, Commit, CommitBook, GroupCommits};
use crate::time::Timestamp;
use crate::timeline::heartbeats::{role, Role, Runs};
use crate::timeline::{order_key, ClockLine};
use crate::unmatched::Tally;

const SECOND_NS: i64 = 1_000_000_000;

/// Event time a group's window keeps behind its newest event: the storm
/// window (10 min, `group::STORM_WINDOW_NS`) plus Kafka's default
/// `max.poll.interval.ms` (5 min), so a storm and a poll timeout are judged
/// with everything they look at.
pub const RETAIN_NS: i64 = 15 * 60 * SECOND_NS;

/// Event time after its completion during which a record may still change:
/// a storm is named when its fifth round comes, up to 10 min after the
/// first (`group::STORM_WINDOW_NS`); a LeaveGroup is judged by what the
/// member did next, within `max.poll.interval.ms` (5 min by default); a
/// partition's stop ends with the first Fetch after the assignment. After
/// it the record is final.
pub const HINDSIGHT_NS: i64 = 10 * 60 * SECOND_NS;

/// The longest timeout a group's own requests stretch its window by
/// ([`Timeouts`], [`Window::bounds`]). Kafka bounds
/// `session.timeout.ms` by the broker's `group.max.session.timeout.ms` (30
/// minutes by default) but not `max.poll.interval.ms` (Kafka Streams once
/// set it to `Integer.MAX_VALUE`): past an hour a group's window stays at
/// three hours of events, and a judgement that looks further back can
/// differ from `rebalances`.
pub const MAX_PATIENCE_NS: i64 = 60 * 60 * SECOND_NS;

/// How old a plain heartbeat or commit is (behind the newest event time)
/// before [`Window::thin`] folds it. The fold takes events in the time line's
/// order, and a capture's events come in the order their exchanges
/// complete: an event that ends a member's run can come late by as long
/// as its request waited for the answer. Only a JoinGroup or a SyncGroup
/// waits long. While a JoinGroup waits the group prepares a rebalance and
/// answers its members' heartbeats REBALANCE_IN_PROGRESS
/// (GroupCoordinator.scala `handleHeartbeat`), which ends their runs as
/// it comes. A follower's SyncGroup waits for the leader's, as long as
/// the leader takes to assign, while heartbeats may be answered without
/// error (`handleHeartbeat` in CompletingRebalance, Kafka 2.x on): a
/// leader slower than this lag can cost a run the exchange just before
/// the SyncGroup, which the batch fold would have kept. Half a minute is
/// far above what assignors take.
pub const THIN_LAG_NS: i64 = 30 * SECOND_NS;

/// Groups rebuilt at once, spread over the cores: their records are held
/// until told (all of a rebalance-dense log's 200 groups at once held
/// 20 MB more).
const REBUILT_AT_ONCE: usize = 16;

/// Records that may still change are rebuilt on every this many
/// evaluations (with [`super::TICK`], once a second).
pub const REVISE_EVERY: u64 = 5;

/// What the engine tells.
#[derive(Clone, Debug)]
pub enum Output {
    /// A round began (its record is `in_progress`).
    Started(Box<Rebalance>),
    /// A round completed or was superseded: its record.
    Completed(Box<Rebalance>),
    /// A record already told, changed by what came after it.
    Revised(Box<Rebalance>),
    /// A record already told that no longer stands: events that arrived
    /// later but happened earlier (a parked JoinGroup request is seen only
    /// with its answer, seconds on) put its evidence in another round.
    Withdrawn(Box<Rebalance>),
    /// The input ended inside this round.
    Unfinished(Box<Rebalance>),
}

impl Output {
    /// The record told.
    pub fn rebalance(&self) -> &Rebalance {
        match self {
            Output::Started(r)
            | Output::Completed(r)
            | Output::Revised(r)
            | Output::Withdrawn(r)
            | Output::Unfinished(r) => r,
        }
    }
}

/// Bounds of the windows (the constants above; tests shrink them).
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// [`RETAIN_NS`].
    pub retain_ns: i64,
    /// [`HINDSIGHT_NS`].
    pub hindsight_ns: i64,
    /// [`THIN_LAG_NS`].
    pub thin_lag_ns: i64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            retain_ns: RETAIN_NS,
            hindsight_ns: HINDSIGHT_NS,
            thin_lag_ns: THIN_LAG_NS,
        }
    }
}

/// One group's live state.
#[derive(Default)]
struct Window {
    /// Its events in the time line's order.
    events: Vec<GroupEvent>,
    /// An event that may change a round arrived since the last evaluation.
    dirty: bool,
    /// Any event arrived since the last evaluation.
    touched: bool,
    /// Start times of rounds told as started.
    announced: Vec<Timestamp>,
    /// Records told and still able to change: [`Place`] → (completion,
    /// the record as last told).
    told: BTreeMap<Place, (Timestamp, Box<Rebalance>)>,
    /// Records that started before this are final or forgotten: never told
    /// again.
    final_before: Timestamp,
    /// Spans of rounds the next evaluation must still see ([`kept_spans`],
    /// from the last evaluation) and the earliest open round's start: kept
    /// by [`Window::trim`].
    kept: Vec<(Timestamp, Timestamp)>,
    open_since: Option<Timestamp>,
    /// The open rounds' records as last rebuilt (selected by the filter),
    /// in the boxes the rebuild gave them.
    #[allow(clippy::vec_box)]
    open: Vec<Box<Rebalance>>,
    /// Start times of rounds the filter turned away, each counted once in
    /// [`Engine::unmatched`]; trimmed with the events.
    rejected: BTreeSet<Timestamp>,
    /// The sorted starts of its unexpected rounds (`Rebalance::expected`
    /// false), as last rebuilt while they could still be told, back to the
    /// storm window before the earliest round still to tell
    /// ([`Window::storms`]).
    unexpected: Vec<Timestamp>,
    /// Its newest event.
    newest: Timestamp,
    /// Events before this time have been through [`Window::thin`], which
    /// left these runs open.
    thinned_to: Timestamp,
    runs: Runs<Spot>,
    /// The commits [`Window::thin`] took out of `events`, by member, in
    /// time order: the stops stage reads them besides the events' own
    /// (it looks a partition's last commit up at any time), and
    /// [`Window::trim`] trims them as it trims the events.
    commits: Vec<(Id, Commit)>,
    /// The longest timeouts its members asked for: what stretches its
    /// windows past the engine's ([`Window::bounds`]).
    timeouts: Timeouts,
}

/// Where a capture event is in its window: its time, frame and input (the
/// input's address: a run's events all come from one input).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Spot(Timestamp, u64, usize);

impl Spot {
    fn of(ev: &GroupEvent) -> Option<Spot> {
        match ev.evidence.at {
            Location::Frame { frame } => {
                Some(Spot(ev.ts, frame, ev.evidence.source.as_ptr() as usize))
            }
            Location::Line { .. } => None,
        }
    }
}

/// A log's times as logged, and the nanoseconds its lines were moved by
/// to line it up with the captures (`None` before it is lined up).
struct LogTimes {
    first: Timestamp,
    newest: Timestamp,
    moved_ns: Option<i64>,
}

/// Counts for the summary line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Rounds told as started.
    pub started: u64,
    /// Records told as completed (or superseded).
    pub completed: u64,
    /// Records told again, changed.
    pub revised: u64,
    /// Records withdrawn.
    pub withdrawn: u64,
    /// Rounds open when the input ended (or was stopped).
    pub unfinished: u64,
    /// Groups seen.
    pub groups: u64,
    /// Groups evicted for silence.
    pub evicted: u64,
    /// Plain heartbeats and commits (requests and answers) folded out of
    /// the windows ...
    pub thinned: u64,
    /// ... of which commits.
    pub thinned_commits: u64,
}

/// The streaming engine.
pub struct Engine {
    groups: BTreeMap<String, Window>,
    /// The data path, folded as it arrives (16 bytes per partition a
    /// Fetch names, not the events) and trimmed to the window.
    data: ClientFolder,
    filter: Filter,
    bounds: Bounds,
    /// The first capture event's time: with each log's first, the first
    /// event's time on the capture's clock ([`Engine::first`], relative
    /// `--since`/`--until`).
    first_captured: Option<Timestamp>,
    /// The newest time of captures and the data path (`None` before the
    /// first): with each log's newest, what [`Engine::newest_time`] makes
    /// the newest time of.
    newest_captured: Option<Timestamp>,
    /// Each log's clock lined up with the captures' as pairs arrive, as
    /// `rebalances` lines it up ([`ClockLine`]).
    clock: ClockLine,
    /// Per log: its times as logged and what its lines were moved by.
    logs: BTreeMap<Source, LogTimes>,
    /// The newest event time seen on any input.
    newest: Timestamp,
    /// What was told.
    pub counts: Counts,
    /// Rounds before and after the filter, for the warning when none is
    /// told ([`crate::unmatched`]).
    pub unmatched: Tally,
    /// Each input's group events, for the warning on an input whose
    /// groups made no round ([`crate::no_rebalance`]).
    pub sources: Sources,
    /// Groups that had a round (told or not), by name.
    pub rebalanced: BTreeSet<String>,
    /// Data events arrived since the last revising evaluation.
    new_data: bool,
    /// The data path was last trimmed at this cut.
    data_cut: Timestamp,
    /// The windows were last thinned up to this time.
    thin_cut: Timestamp,
    /// Evaluations so far.
    calls: u64,
    /// Records that became final, kept for [`Engine::take_settled`] once
    /// [`Engine::keep_settled`] asked for them (`rebalances` written as
    /// its records settle); `None` in `watch`, which has told them.
    settled: Option<Vec<Settled>>,
    /// The inputs hold no capture ([`Engine::without_captures`]).
    logs_only: bool,
}

/// A final record, and its place among its group's records of the same
/// start (0 for the first: a group whose inputs change protocol has a
/// record of each stretch starting at one line).
#[derive(Debug)]
pub struct Settled {
    /// The record (boxed as the groups' rebuilds give it).
    pub record: Box<Rebalance>,
    /// How many of the group's records of its start come before it.
    pub nth: u32,
}

/// Where a record is in its group: its start, and how many of the group's
/// records of that start come before it (a group changing protocol on one
/// line has a classic and a consumer record of one start: keyed by start
/// alone, each took the other's place at every rebuild).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Place(Timestamp, u32);

impl Engine {
    /// An engine selecting records with `filter`.
    pub fn new(filter: Filter, bounds: Bounds) -> Engine {
        Engine {
            groups: BTreeMap::new(),
            data: ClientFolder::default(),
            filter: filter.clone(),
            bounds,
            first_captured: None,
            newest_captured: None,
            clock: ClockLine::bounded(),
            logs: BTreeMap::new(),
            newest: Timestamp::default(),
            counts: Counts::default(),
            unmatched: Tally::new(&filter, None, ("rebalance", "rebalances")),
            sources: Sources::default(),
            rebalanced: BTreeSet::new(),
            new_data: false,
            data_cut: Timestamp::default(),
            thin_cut: Timestamp::default(),
            calls: 0,
            settled: None,
            logs_only: false,
        }
    }

    /// The inputs are logs alone: no log is ever lined up with a capture's
    /// clock, so the pairs that would line it up are not gathered (each
    /// was kept in a list the capture's answers never came to empty).
    pub fn without_captures(&mut self) {
        self.logs_only = true;
    }

    /// Keeps every record as it becomes final, for [`Self::take_settled`].
    pub fn keep_settled(&mut self) {
        self.settled.get_or_insert_with(Vec::new);
    }

    /// The records that became final since the last call (none unless
    /// [`Self::keep_settled`] was called), in no particular order: a
    /// record is final once it is [`HINDSIGHT_NS`] past its completion,
    /// and never changes after.
    pub fn take_settled(&mut self) -> Vec<Settled> {
        self.settled
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// No record still to become final starts before this: the earliest
    /// start of a record told and not final, of a round open, and of any
    /// event a window holds (a round not yet told starts at one of its
    /// events: one whose first events were trimmed is never told), and the
    /// windows' retention behind the newest event (a group not yet seen
    /// starts at an event still to come).
    pub fn unsettled_from(&self) -> Timestamp {
        let mut from = self.newest.offset_by(-self.bounds.retain_ns);
        for w in self.groups.values() {
            let earliest = [
                w.events.first().map(|e| e.ts),
                w.told.keys().next().map(|p| p.0),
                w.open_since,
                w.open.iter().map(|r| r.started_at).min(),
            ];
            if let Some(e) = earliest.into_iter().flatten().min() {
                from = from.min(e);
            }
        }
        from
    }

    /// The newest event time, on the captures' clock.
    pub fn newest(&self) -> Timestamp {
        self.newest
    }

    /// The end of the input for [`Self::keep_settled`]: every group
    /// rebuilt, and every record not yet final made final (nothing more
    /// can change it), the rounds still open with them, as `rebalances`
    /// shows them.
    pub fn finish_settling(&mut self) -> Vec<Settled> {
        let unfinished = self.finish();
        let mut last = self.take_settled();
        for w in self.groups.values_mut() {
            let told = std::mem::take(&mut w.told).into_iter();
            last.extend(told.map(|(Place(_, nth), (_, record))| Settled { record, nth }));
        }
        // A round still open after a record of its start (the group's
        // stretches of two protocols) comes after it, as in its group; two
        // open of one start, in their group's order (the rounds come group
        // by group).
        let (mut group, mut places) = (String::new(), Places::default());
        for o in unfinished {
            let Output::Unfinished(record) = o else {
                continue;
            };
            if record.group != group {
                group.clone_from(&record.group);
                places = Places::default();
            }
            let nth = u32::MAX / 2 + places.of(record.started_at).1;
            last.push(Settled { record, nth });
        }
        last
    }

    /// Takes what a reader handed on.
    pub fn take(&mut self, flow: Flow) {
        match flow {
            Flow::Captured(evs) => evs.into_iter().for_each(|e| self.push(e)),
            Flow::Logged(evs) => evs.into_iter().for_each(|e| self.push_logged(e)),
            Flow::Data(evs) => evs.into_iter().for_each(|e| self.push_data(e)),
        }
    }

    /// Takes one group event of a capture. An event naming no group is
    /// dropped: no record is built from it (the reconstructor reads
    /// grouped events only; a groupless static-member line gives a group
    /// note, never a record).
    pub fn push(&mut self, ev: GroupEvent) {
        self.first_captured = Some(self.first_captured.map_or(ev.ts, |f| f.min(ev.ts)));
        self.captured_at(ev.ts);
        if self.clock.captured(&ev) {
            self.line_up_clocks();
        }
        self.insert(ev);
    }

    /// Takes one group event of a log: moved onto the captures' clock
    /// once its log's offset is known (the log's events taken before
    /// that are moved when it becomes known or changes).
    pub fn push_logged(&mut self, mut ev: GroupEvent) {
        let source = &ev.evidence.source;
        match self.logs.get_mut(source) {
            Some(log) => {
                log.first = log.first.min(ev.ts);
                log.newest = log.newest.max(ev.ts);
            }
            None => {
                let times = LogTimes {
                    first: ev.ts,
                    newest: ev.ts,
                    moved_ns: None,
                };
                self.logs.insert(source.clone(), times);
            }
        }
        if !self.logs_only && self.clock.logged(&ev) {
            self.line_up_clocks();
        }
        let lined = self.logs.get(&ev.evidence.source).and_then(|l| l.moved_ns);
        if let Some(ns) = lined {
            ev.ts = ev.ts.offset_by(ns);
        }
        // A log not lined up while a capture is read does not move the
        // windows: minutes ahead, it would put the capture's events behind
        // them until it is lined up.
        if lined.is_some() || self.newest_captured.is_none() {
            self.newest = self.newest.max(ev.ts);
        }
        self.insert(ev);
    }

    /// The first event's time, on the captures' clock.
    fn first(&self) -> Option<Timestamp> {
        let logged = self
            .logs
            .values()
            .map(|l| l.first.offset_by(l.moved_ns.unwrap_or(0)));
        self.first_captured.into_iter().chain(logged).min()
    }

    /// Moves the events of each log whose offset changed by the change,
    /// and puts the windows they are in back in order (rebuilt at the next
    /// evaluation: their records may move, told again or withdrawn). The
    /// batch run adds the final offset once; adding each change in whole
    /// nanoseconds ends at the same times.
    fn line_up_clocks(&mut self) {
        for (source, ms) in self.clock.offsets() {
            let ns = (ms * 1e6) as i64;
            // A log has times before its lines can pair: it is known here.
            let Some(log) = self.logs.get_mut(&source) else {
                continue;
            };
            let before = log.moved_ns.replace(ns).unwrap_or(0);
            let delta = ns.wrapping_sub(before);
            if delta == 0 {
                continue;
            }
            for w in self.groups.values_mut() {
                w.move_log(&source, delta);
            }
        }
        self.newest = self.newest_time();
    }

    /// A capture's (or the data path's) time: the first one puts the
    /// windows on the captures' clock.
    fn captured_at(&mut self, ts: Timestamp) {
        let first = self.newest_captured.is_none();
        self.newest_captured = Some(self.newest_captured.map_or(ts, |n| n.max(ts)));
        self.newest = match first {
            true => self.newest_time(),
            false => self.newest.max(ts),
        };
    }

    /// The newest time the windows are trimmed and records settled by, on
    /// the captures' clock: the captures' and the lined-up logs' newest,
    /// or with no capture yet, the logs' own.
    fn newest_time(&self) -> Timestamp {
        let logged = self.logs.values().filter_map(|l| match l.moved_ns {
            Some(ns) => Some(l.newest.offset_by(ns)),
            None => self.newest_captured.is_none().then_some(l.newest),
        });
        logged.fold(self.newest_captured.unwrap_or_default(), Timestamp::max)
    }

    fn insert(&mut self, ev: GroupEvent) {
        let rebalanced = &self.rebalanced;
        self.sources
            .add_unless_rebalanced(&ev, |g| rebalanced.contains(g));
        let Some(group) = ev.group.as_deref() else {
            return;
        };
        if !self.groups.contains_key(group) {
            self.counts.groups += 1;
            self.groups.insert(group.to_string(), Window::default());
        }
        let Some(w) = self.groups.get_mut(group) else {
            return;
        };
        w.dirty |= may_change_a_round(&ev);
        w.touched = true;
        w.newest = w.newest.max(ev.ts);
        w.timeouts = w.timeouts.max(Timeouts::of(&ev));
        // Events come almost in order: the place is found from the end.
        let key = order_key(&ev);
        let at = w
            .events
            .iter()
            .rposition(|e| order_key(e) <= key)
            .map_or(0, |i| i + 1);
        w.events.insert(at, ev);
    }

    /// Takes one data-path event.
    pub fn push_data(&mut self, ev: DataEvent) {
        self.captured_at(ev.ts);
        self.data.fold(&ev);
        self.new_data = true;
    }

    /// Whether some group waits for an evaluation.
    pub fn has_work(&self) -> bool {
        self.groups.values().any(|w| w.dirty || w.touched)
    }

    /// Rebuilds the groups that changed (every group when `all`) and tells
    /// what is new; then drops what no later decision needs. A group is
    /// rebuilt when an event that may change a round arrived; one with
    /// records that may still change (a revision) also when anything of
    /// its own or on the data path arrived, but only every
    /// [`REVISE_EVERY`]th call (a revision is not urgent; a completion is).
    pub fn evaluate(&mut self, all: bool) -> Vec<Output> {
        self.calls += 1;
        let revise = all || self.calls.is_multiple_of(REVISE_EVERY);
        let new_data = self.new_data;
        let names: Vec<String> = self
            .groups
            .iter()
            .filter(|(_, w)| {
                all || w.dirty || (revise && !w.told.is_empty() && (w.touched || new_data))
            })
            .map(|(g, _)| g.clone())
            .collect();
        if revise {
            self.new_data = false;
        }
        let mut out = Vec::new();
        let first = self.first();
        // Each group is rebuilt from its own window in place, with the data
        // path of its own clients (both stages judge a group from its own
        // events alone; copying every named group's events into one run
        // made the end of the input, when all are rebuilt, hold them
        // twice): a few groups at a time on every core (their records are
        // held until told), then told one group after the other, in name
        // order.
        if !names.is_empty() {
            // The data path does not change while the groups are rebuilt.
            let unnamed = self.data.unnamed_topic_ids();
            for some in names.chunks(REBUILT_AT_ONCE) {
                self.rebuild_and_tell(some, unnamed, first, &mut out);
            }
        }
        // Told in the order things happened, not group by group.
        out.sort_by_key(|o| {
            let r = o.rebalance();
            match o {
                Output::Completed(_) | Output::Revised(_) => r.completed_at.unwrap_or(r.started_at),
                _ => r.started_at,
            }
        });
        self.count(&out);
        self.trim();
        out
    }

    /// Rebuilds the groups `names` on every core, then tells what is new
    /// of each, in their order.
    fn rebuild_and_tell(
        &mut self,
        names: &[String],
        unnamed: usize,
        first: Option<Timestamp>,
        out: &mut Vec<Output>,
    ) {
        let data = &self.data;
        let windows: Vec<(&String, &Window)> = names
            .iter()
            .filter_map(|g| self.groups.get_key_value(g))
            .collect();
        let weight = windows.iter().map(|(_, w)| w.events.len()).sum();
        let rebuilt =
            crate::spread::map_in_order(&windows, crate::spread::workers_for(weight), |(g, w)| {
                rebuild(g, w, data, unnamed)
            });
        for (g, histories) in names.iter().zip(rebuilt) {
            let Some(w) = self.groups.get_mut(g) else {
                continue;
            };
            w.dirty = false;
            w.touched = false;
            for h in histories {
                if !h.rebalances.is_empty() && !self.rebalanced.contains(&h.summary.group) {
                    self.rebalanced.insert(h.summary.group.clone());
                }
                self.unmatched.first_event(first);
                let select = Select {
                    filter: &self.filter,
                    first,
                    unmatched: &mut self.unmatched,
                };
                let told = self.settled.is_none().then_some(&mut *out);
                w.tell(h.rebalances, select, told);
            }
        }
    }

    /// The end of the input (or a stop): every group rebuilt, and the
    /// rounds still open told as unfinished, as `rebalances` shows them.
    pub fn finish(&mut self) -> Vec<Output> {
        let mut out = self.evaluate(true);
        let unfinished: Vec<Output> = self
            .groups
            .values_mut()
            .flat_map(|w| std::mem::take(&mut w.open))
            .map(Output::Unfinished)
            .collect();
        self.count(&unfinished);
        out.extend(unfinished);
        out
    }

    fn count(&mut self, out: &[Output]) {
        for o in out {
            match o {
                Output::Started(_) => self.counts.started += 1,
                Output::Completed(_) => self.counts.completed += 1,
                Output::Revised(_) => self.counts.revised += 1,
                Output::Withdrawn(_) => self.counts.withdrawn += 1,
                Output::Unfinished(_) => self.counts.unfinished += 1,
            }
        }
    }

    /// Drops what no later decision needs (the windows of the module
    /// documentation).
    fn trim(&mut self) {
        let bounds = self.bounds;
        let newest = self.newest;
        let before = self.groups.len();
        let (mut thinned, mut commits) = (0, 0);
        // Thinned as the data path is trimmed, once the time thinned to has
        // moved by a 64th of the window (or the lag, if shorter): each pass
        // shifts the lists it shortens. Only while no log is read: a log's
        // lines move when its clock is lined up with the captures', and the
        // fold needs the time line's order (`rebalances` folds one capture
        // read alone).
        let thin_to = newest.offset_by(-self.bounds.thin_lag_ns);
        let every = (self.bounds.retain_ns / 64).min(self.bounds.thin_lag_ns);
        let thin = self.logs.is_empty() && thin_to.0.saturating_sub(self.thin_cut.0) >= every;
        if thin {
            self.thin_cut = thin_to;
        }
        let settled = &mut self.settled;
        // Trimming shifts every list it shortens: done once the cut has moved
        // by a 64th of the window (14 s of 15 min), it costs about what it
        // drops, and the data path holds at most that much more.
        let data_cut = newest.offset_by(-bounds.retain_ns);
        let trim_data = data_cut.0.saturating_sub(self.data_cut.0) >= bounds.retain_ns / 64;
        // A group whose own timeouts reach further back keeps its own
        // clients' part of the data path longer (each group is rebuilt with
        // its own clients' part); everyone else's is trimmed to the
        // engine's window.
        let data = &self.data;
        let mut longer: FastMap<u32, Timestamp> = FastMap::default();
        self.groups.retain(|_, w| {
            let own = w.bounds(bounds);
            let cut = newest.offset_by(-own.retain_ns);
            let back = w.data_retain_ns(bounds);
            if trim_data && back > bounds.retain_ns {
                let own_cut = newest.offset_by(-back);
                for client in data.clients_of(&w.events) {
                    let at = longer.entry(client).or_insert(own_cut);
                    *at = (*at).min(own_cut);
                }
            }
            let gone = w.settle(newest, own.hindsight_ns);
            if let Some(kept) = settled.as_mut() {
                kept.extend(gone);
            }
            w.trim(cut);
            if thin {
                let (events, of_commits) = w.thin(thin_to);
                thinned += events;
                commits += of_commits;
            }
            // Silent for the whole window, nothing open, nothing to revise.
            !(w.newest < cut && w.open_since.is_none() && w.told.is_empty() && !w.dirty)
        });
        self.counts.evicted += (before - self.groups.len()) as u64;
        self.counts.thinned += thinned;
        self.counts.thinned_commits += commits;
        if trim_data {
            self.data.trim_but(data_cut, &longer);
            self.data_cut = data_cut;
        }
    }

    /// Each log's clock offset as lined up so far (milliseconds: log +
    /// offset = capture).
    pub fn clock_offsets(&self) -> BTreeMap<Source, f64> {
        self.clock.offsets()
    }

    /// Group events and data-path entries (Fetch times, positions,
    /// watermarks) held now (for tests and the memory figures).
    pub fn held(&self) -> (usize, usize) {
        let events = self.groups.values().map(|w| w.events.len()).sum();
        (events, self.data.entries())
    }
}

impl Window {
    /// The engine's `bounds`, stretched to this group's own timeouts (its
    /// patience `p`, the longer of its [`Timeouts`]): records may change for `2p`
    /// after they completed (a JoinGroup parked for up to the rebalance
    /// timeout is seen only with its answer, and it can change the round
    /// before it; a member that left on a poll timeout rejoins at its next
    /// `poll()`, AbstractCoordinator.java `maybeLeaveGroup`), and events
    /// are kept for `3p` (a record still changing looks back up to `p`
    /// before its round: a silence of the session timeout, an idleness of
    /// `max.poll.interval.ms`, `resolve::judge_leave`). With Kafka's
    /// defaults (5 minutes, 45 seconds) these are the engine's bounds.
    /// Measured with the engine's bounds cut to a second: every capture
    /// fixture but a storm's then gives `rebalances`' records; stretched
    /// less, more differ (`tests/watch.rs`,
    /// `a_captured_groups_window_stretched_to_its_own_timeouts_...`).
    fn bounds(&self, engine: Bounds) -> Bounds {
        Bounds {
            retain_ns: engine.retain_ns.max(3 * self.timeouts.patience_ns()),
            hindsight_ns: engine.hindsight_ns.max(2 * self.timeouts.patience_ns()),
            ..engine
        }
    }

    /// How far back the data path must reach for this group: its `2p` of
    /// hindsight, a round of up to its rebalance timeout, and the session
    /// timeout before it (a partition's last Fetch before its stop comes up
    /// to that long before the round: a static member that expired). Round
    /// spans keep events, not the data path. With Kafka's defaults, 15
    /// minutes 45 seconds. With the engine's bounds cut to a second, this
    /// (36 s for the lab's 10 s and 6 s) gives every lab capture's records,
    /// three times the longer timeout (30 s) did not (`tests/watch.rs`).
    fn data_retain_ns(&self, engine: Bounds) -> i64 {
        let t = self.timeouts;
        engine
            .retain_ns
            .max(2 * t.patience_ns() + t.rebalance_ns + t.session_ns)
    }

    /// Moves the events of log `source` by `delta` nanoseconds (its clock
    /// offset changed) and puts the window back in the time line's order.
    fn move_log(&mut self, source: &str, delta: i64) {
        let mut moved = false;
        for e in &mut self.events {
            if matches!(e.evidence.at, Location::Line { .. }) && &*e.evidence.source == source {
                e.ts = e.ts.offset_by(delta);
                moved = true;
            }
        }
        if moved {
            self.events.sort_by(|a, b| order_key(a).cmp(&order_key(b)));
            self.newest = self.events.last().map_or(self.newest, |e| e.ts);
            self.dirty = true;
            self.touched = true;
        }
    }

    /// Compares the rebuilt records with what was told and tells the
    /// difference.
    ///
    /// With no `out` (the records are kept as they settle, nothing is
    /// told), a record rebuilt replaces the one held, neither copied nor
    /// rendered to be compared.
    #[allow(clippy::vec_box)] // As `GroupHistory` holds them.
    fn tell(
        &mut self,
        mut rebalances: Vec<Box<Rebalance>>,
        select: Select,
        out: Option<&mut Vec<Output>>,
    ) {
        self.storms(&mut rebalances);
        let telling = out.is_some();
        let mut untold = Vec::new();
        let out = out.unwrap_or(&mut untold);
        self.kept = kept_spans(&rebalances, self.final_before);
        self.open_since = None;
        self.open.clear();
        let mut standing = Vec::new();
        let mut places = Places::default();
        for r in rebalances {
            let place = places.of(r.started_at);
            if r.status == "in_progress" {
                self.open_since.get_or_insert(r.started_at);
            }
            // Before `final_before`: a final record, or what is left of one
            // whose first events were trimmed (never told again).
            let told = self.told.contains_key(&place);
            if r.started_at < self.final_before && !told {
                continue;
            }
            if !select.filter.rebalance(&r, select.first) {
                if self.rejected.insert(r.started_at) {
                    select.unmatched.add(&*r);
                }
                continue;
            }
            if r.status == "in_progress" {
                if telling && !self.announced.contains(&r.started_at) {
                    self.announced.push(r.started_at);
                    out.push(Output::Started(r.clone()));
                }
                self.open.push(r);
                continue;
            }
            let done = r.completed_at.unwrap_or(r.started_at);
            standing.push(place);
            match self.told.get_mut(&place) {
                None if !telling => {
                    self.told.insert(place, (done, r));
                }
                None => {
                    self.told.insert(place, (done, r.clone()));
                    out.push(Output::Completed(r));
                }
                Some((_, old)) if !telling => *old = r,
                Some((_, old)) if !same_record(old, &r) => {
                    *old = r.clone();
                    out.push(Output::Revised(r));
                }
                Some(_) => {}
            }
        }
        let gone: Vec<Place> = self
            .told
            .keys()
            .filter(|k| !standing.contains(k))
            .copied()
            .collect();
        for k in gone {
            if let Some((_, r)) = self.told.remove(&k) {
                out.push(Output::Withdrawn(r));
            }
        }
    }

    /// Marks the storms of the rebuilt records still to tell (from the
    /// earliest told or `final_before`, whichever is earlier) as the batch
    /// run marks them over the group's whole history: with the rounds of
    /// the ten minutes before them that have become final. Those rounds'
    /// events have left the window (a round still open when its group
    /// fell silent is told maybe an hour later, and the storm it closed
    /// was gone from the window: told as no storm), but their starts are
    /// kept, as rebuilt while they could still be told.
    fn storms(&mut self, rebalances: &mut [Box<Rebalance>]) {
        let told_from = self.told.keys().next().map(|p| p.0);
        let from = told_from.map_or(self.final_before, |t| t.min(self.final_before));
        let back = from.offset_by(-crate::group::STORM_WINDOW_NS);
        self.unexpected.retain(|s| *s < from && *s >= back);
        crate::group::mark_storms_after(rebalances, &self.unexpected, from);
        let rebuilt = rebalances
            .iter()
            .filter(|r| !r.expected && r.started_at >= from)
            .map(|r| r.started_at);
        self.unexpected.extend(rebuilt);
        self.unexpected.sort_unstable();
    }

    /// Records past their hindsight become final: forgotten, and nothing
    /// that started before they completed is told again (once the window
    /// is trimmed, the events of a final round that are left could look
    /// like a round of their own).
    /// Gives the records that became final, as last told.
    fn settle(&mut self, newest: Timestamp, hindsight: i64) -> Vec<Settled> {
        let limit = newest.offset_by(-hindsight);
        let settled: Vec<(Place, Timestamp)> = self
            .told
            .iter()
            .filter(|(_, (done, _))| *done < limit)
            .map(|(place, (done, _))| (*place, *done))
            .collect();
        let mut gone = Vec::with_capacity(settled.len());
        for (place, done) in settled {
            let record = self.told.remove(&place).map(|(_, r)| r);
            gone.extend(record.map(|record| Settled {
                record,
                nth: place.1,
            }));
            self.final_before = self.final_before.max(done.offset_by(1));
        }
        let final_before = self.final_before;
        self.announced.retain(|s| *s >= final_before);
        gone
    }

    /// Folds the middle of each member's run of plain heartbeats, and of
    /// its run of plain commits, out of the events from where the last
    /// call stopped to `until`, by the rule `rebalances` folds them by
    /// ([`crate::timeline::HeartbeatFold`]: the rebuilt records are those
    /// of every event). Each run's newest exchange stays (every later read,
    /// and the rebuilding at the end of the window, sees it); the one
    /// before it goes once the next comes. A commit that goes is kept in
    /// `commits`, as `rebalances` keeps every commit in its book. Gives
    /// how many events went, and how many of them were commits.
    fn thin(&mut self, until: Timestamp) -> (u64, u64) {
        let from = self.events.partition_point(|e| e.ts < self.thinned_to);
        let to = self.events.partition_point(|e| e.ts < until);
        self.thinned_to = self.thinned_to.max(until);
        let mut gone: Vec<Spot> = Vec::new();
        for ev in self.events.get(from..to).unwrap_or_default() {
            match role(ev) {
                Role::Request { exchange, beat } => {
                    let (Some(spot), Ok(run)) = (Spot::of(ev), self.runs.run_of(ev, beat)) else {
                        continue;
                    };
                    if let (Some(h), true) = run.push(exchange, spot) {
                        gone.push(h.request);
                        gone.extend(h.answer);
                    }
                }
                Role::Answer { exchange, beat } => {
                    if let Some(spot) = Spot::of(ev) {
                        let member = ev.member_id.clone();
                        self.runs.answer(member, beat, exchange, spot);
                    }
                }
                Role::Plain => {}
                Role::Ends => self.runs = Runs::default(),
            }
        }
        if gone.is_empty() {
            return (0, 0);
        }
        gone.sort_unstable();
        let mut taken = GroupCommits::default();
        let before = self.events.len();
        self.events.retain(|e| {
            let folded = matches!(
                e.kind,
                EventKind::HeartbeatRequest { .. }
                    | EventKind::HeartbeatResponse { .. }
                    | EventKind::OffsetCommitRequest { .. }
                    | EventKind::OffsetCommitResponse { .. }
            ) && Spot::of(e).is_some_and(|s| gone.binary_search(&s).is_ok());
            if folded {
                taken.see(e);
            }
            !folded
        });
        let first_new = self.commits.len();
        self.commits.extend(taken.commits());
        let commits = 2 * (self.commits.len() - first_new) as u64;
        // Stable: each pass's commits are later than the last pass's.
        self.commits.sort_by_key(|(_, c)| c.ts);
        ((before - self.events.len()) as u64, commits)
    }

    /// Drops the events older than `cut` that neither a kept round
    /// ([`kept_spans`]) nor an open round spans, save each member's last
    /// OffsetCommit of each partition ([`last_commits`]).
    fn trim(&mut self, cut: Timestamp) {
        let old = |t: Timestamp| t < cut;
        if !self.events.first().is_some_and(|e| old(e.ts))
            && !self.commits.first().is_some_and(|(_, c)| old(c.ts))
        {
            return;
        }
        let open = self.open_since.unwrap_or(cut);
        let told_from = self.told.keys().next().map_or(cut, |p| p.0);
        let keep_from = cut.min(open).min(told_from);
        let kept = &self.kept;
        let keep = |t: Timestamp| t >= keep_from || within(kept, t);
        let (commits, folded) = last_commits(&self.events, &self.commits, keep_from);
        self.events
            .retain(|e| keep(e.ts) || commit_exchange(e).is_some_and(|x| commits.contains(&x)));
        let mut i = 0;
        self.commits.retain(|(_, c)| {
            i += 1;
            keep(c.ts) || folded.contains(&(i - 1))
        });
        self.rejected.retain(|s| keep(*s));
    }
}

/// The timeouts a group's members asked the coordinator for, the longest
/// of each, in nanoseconds, each at most [`MAX_PATIENCE_NS`] (0: none asked).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Timeouts {
    /// `session.timeout.ms`: how long a member may be silent.
    session_ns: i64,
    /// `max.poll.interval.ms`: how long a round waits for a member, and how
    /// long a member may go without polling.
    rebalance_ns: i64,
}

impl Timeouts {
    /// What `ev` asks for: a JoinGroup's `session_timeout_ms` and
    /// `rebalance_timeout_ms` (v1+; v0 used the session timeout for both,
    /// GroupCoordinator.scala `handleJoinGroup`), a ConsumerGroupHeartbeat's
    /// `rebalance_timeout_ms` (-1: unchanged; its session timeout is the
    /// broker's `group.consumer.session.timeout.ms`, not on the wire).
    fn of(ev: &GroupEvent) -> Timeouts {
        let ns = |ms: i32| (i64::from(ms.max(0)) * 1_000_000).min(MAX_PATIENCE_NS);
        match &ev.kind {
            EventKind::JoinGroupRequest {
                session_timeout_ms,
                rebalance_timeout_ms,
                ..
            } => Timeouts {
                session_ns: ns(*session_timeout_ms),
                rebalance_ns: ns(rebalance_timeout_ms.unwrap_or(*session_timeout_ms)),
            },
            EventKind::ConsumerGroupHeartbeatRequest {
                rebalance_timeout_ms,
                ..
            } => Timeouts {
                session_ns: 0,
                rebalance_ns: ns(*rebalance_timeout_ms),
            },
            _ => Timeouts::default(),
        }
    }

    /// Each the longer of the two.
    fn max(self, other: Timeouts) -> Timeouts {
        Timeouts {
            session_ns: self.session_ns.max(other.session_ns),
            rebalance_ns: self.rebalance_ns.max(other.rebalance_ns),
        }
    }

    /// The longer of them: what the group's windows are stretched by.
    fn patience_ns(self) -> i64 {
        self.session_ns.max(self.rebalance_ns)
    }
}

/// An OffsetCommit request's or answer's exchange.
fn commit_exchange(e: &GroupEvent) -> Option<u64> {
    match e.kind {
        EventKind::OffsetCommitRequest { exchange, .. }
        | EventKind::OffsetCommitResponse { exchange, .. } => Some(exchange),
        _ => None,
    }
}

/// The exchanges of the OffsetCommits older than `before` (the start of
/// what the window keeps whole) that are each member's last answered
/// commit of a partition before it, and the places in `folded` (the
/// commits [`Window::thin`] took out of the events, in time order) of
/// those that are. A partition's stop states the offset last committed
/// for it before the round (the records a new owner will process again); a
/// partition committed once and then only fetched can be a quarter of an
/// hour behind, and without that commit a revision after it left the
/// window lost the offset. Every round still told starts after `before`,
/// so for each of them the last commit is in the window or is this one.
/// (Failed or unanswered commits before `before` are not kept: a failure
/// is reported only when it falls inside the round.)
fn last_commits(
    events: &[GroupEvent],
    folded: &[(Id, Commit)],
    before: Timestamp,
) -> (
    crate::fast_hash::FastSet<u64>,
    crate::fast_hash::FastSet<usize>,
) {
    let older = &events[..events.partition_point(|e| e.ts < before)];
    // Answered without error (the stops stage takes no other as committed);
    // the answer may be just inside the window.
    let committed: crate::fast_hash::FastSet<u64> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::OffsetCommitResponse {
                exchange,
                error: None,
                ..
            } => Some(exchange),
            _ => None,
        })
        .collect();
    // The events' and the folded commits older than `before`, in time
    // order (walked newest first below).
    enum Made {
        Event(u64),
        Folded(usize),
    }
    let mut made: Vec<(Timestamp, &str, &[crate::event::PartitionOffset], Made)> = Vec::new();
    for e in older {
        if let EventKind::OffsetCommitRequest {
            exchange, offsets, ..
        } = &e.kind
        {
            if committed.contains(exchange) {
                let member = e.member_id.as_deref().unwrap_or("");
                made.push((e.ts, member, offsets, Made::Event(*exchange)));
            }
        }
    }
    let folded_older = folded.partition_point(|(_, c)| c.ts < before);
    for (i, (m, c)) in folded[..folded_older].iter().enumerate() {
        if c.answered && c.error.is_none() {
            made.push((c.ts, m, &c.offsets, Made::Folded(i)));
        }
    }
    // Stable: of an event and a folded commit at the same nanosecond, the
    // folded one counts as the later.
    made.sort_by_key(|(ts, ..)| *ts);
    let mut settled: crate::fast_hash::FastSet<(&str, &str, i32)> = Default::default();
    let (mut out, mut kept) = (
        crate::fast_hash::FastSet::default(),
        crate::fast_hash::FastSet::default(),
    );
    for (_, member, offsets, which) in made.iter().rev() {
        for o in offsets.iter() {
            if settled.insert((member, &*o.topic, o.partition)) {
                match which {
                    Made::Event(x) => out.insert(*x),
                    Made::Folded(i) => kept.insert(*i),
                };
            }
        }
    }
    (out, kept)
}

/// The rounds a window keeps past its retention, as spans of event time,
/// sorted and disjoint. A round is still to be told when it is open or may
/// be revised (it started at or after `final_before`); for each such round
/// and for the last completed one (who was a member, with what assignment:
/// what the next round is compared with) the window keeps:
/// - the round itself (an open one is kept whole by [`Window::trim`]);
/// - the completed round before it, up to its start (the assignments its
///   members held going in, `members_before`; the generation it starts
///   from);
/// - for each member it began with, the latest round that member joined
///   in. That JoinGroup carries the member's session and rebalance
///   timeouts, by which its later removal is judged (a member that joined
///   an hour before it went silent is judged by them as the batch run
///   judges it).
///
/// (Whether a round is part of a storm is counted from the rounds of the
/// ten minutes before it: not from their events, from their starts,
/// [`Window::storms`].)
///
/// A span starts at the earliest JoinGroup request of its round, which may
/// precede the round's start, and ends at its completion or, for a round
/// superseded, where the next round starts.
fn kept_spans(
    rebalances: &[Box<Rebalance>],
    final_before: Timestamp,
) -> Vec<(Timestamp, Timestamp)> {
    let open = |r: &Rebalance| r.status == "in_progress";
    // A round that never completed (superseded) ends where the next one
    // begins. Its events after its start (a KIP-848 round's epoch bumps and
    // target assignments, a classic round's JoinGroups) are what keep it a
    // round of its own once the events before it are gone: kept only up to
    // its start, it was merged into the round after it on the next
    // rebuild, and that round, now starting before `final_before`, was
    // never told (a KIP-848 round still open when its group fell silent
    // for longer than the window).
    let span = |r: &Rebalance| {
        let from = r
            .joins
            .iter()
            .map(|j| j.requested_at)
            .fold(r.started_at, Timestamp::min);
        // The records come in start order.
        let after = rebalances.partition_point(|n| n.started_at <= r.started_at);
        let next = rebalances.get(after).map(|n| n.started_at);
        (from, r.completed_at.or(next).unwrap_or(r.started_at))
    };
    let last_done = rebalances.iter().rposition(|r| !open(r));
    let to_tell =
        |i: usize, r: &Rebalance| open(r) || r.started_at >= final_before || Some(i) == last_done;
    let mut spans = Vec::new();
    // The last completed round before the one looked at.
    let mut done_before: Option<usize> = None;
    for (i, r) in rebalances.iter().enumerate() {
        let before = done_before;
        if !open(r) {
            done_before = Some(i);
        }
        if !to_tell(i, r) {
            continue;
        }
        if !open(r) {
            spans.push(span(r));
        }
        // The completed round before it, and everything since: the lines
        // after a round and before the next (a generation stabilized, a
        // member's join) are what the next is told from (its
        // `previous_generation`, its members).
        if let Some(b) = before {
            let (from, to) = span(&rebalances[b]);
            spans.push((from, to.max(r.started_at)));
        }
        for m in &r.members_before {
            let joined = rebalances[..=i]
                .iter()
                .rposition(|j| j.joins.iter().any(|j| j.member_id == m.member_id));
            if let Some(j) = joined {
                spans.push(span(&rebalances[j]));
            }
        }
    }
    disjoint(spans)
}

/// `spans` sorted, those that overlap or touch joined into one.
fn disjoint(mut spans: Vec<(Timestamp, Timestamp)>) -> Vec<(Timestamp, Timestamp)> {
    spans.sort_unstable();
    let mut out: Vec<(Timestamp, Timestamp)> = Vec::with_capacity(spans.len());
    for (a, b) in spans {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Whether `t` lies in one of `spans` ([`disjoint`]).
fn within(spans: &[(Timestamp, Timestamp)], t: Timestamp) -> bool {
    let i = spans.partition_point(|(a, _)| *a <= t);
    i > 0 && t <= spans[i - 1].1
}

/// Group `g`'s records rebuilt from its window `w` alone, with the data
/// path of its own clients, on the calling thread (the groups are spread
/// over the cores by [`Engine::evaluate`]).
fn rebuild(
    g: &str,
    w: &Window,
    data: &ClientFolder,
    unnamed: usize,
) -> Vec<crate::group::GroupHistory> {
    let mut histories = crate::group::reconstruct_on(&w.events, 1);
    let clients = data.snapshot_for(&w.events, unnamed);
    let folded = (!w.commits.is_empty()).then(|| {
        let commits = GroupCommits::of(w.commits.iter().cloned());
        CommitBook::of(Id::from(g), commits)
    });
    crate::stops::apply_with(&mut histories, &w.events, &clients, folded, 1);
    histories
}

/// Hands out each record's [`Place`] as a rebuild gives its group's
/// records in order: how many of that start it gave before.
#[derive(Default)]
struct Places(BTreeMap<Timestamp, u32>);

impl Places {
    fn of(&mut self, start: Timestamp) -> Place {
        let before = self.0.entry(start).or_default();
        let place = Place(start, *before);
        *before += 1;
        place
    }
}

/// What [`Window::tell`] selects with: the filter, the first event's time,
/// and the tally of rounds turned away.
struct Select<'a> {
    filter: &'a Filter,
    first: Option<Timestamp>,
    unmatched: &'a mut Tally,
}

/// Whether two renderings of a record say the same: equal records render
/// alike, so only unequal ones are rendered to be compared (rendering both
/// every time was a seventh of `watch`'s time on a rebalance-dense log).
fn same_record(a: &Rebalance, b: &Rebalance) -> bool {
    let json = |r: &Rebalance| serde_json_line(r);
    a == b || json(a) == json(b)
}

/// A record as its NDJSON line (what `--format ndjson` prints).
pub fn serde_json_line(r: &Rebalance) -> String {
    let report = crate::report::Report {
        rebalances: vec![Box::new(r.clone())],
        ..crate::report::Report::default()
    };
    let mut buf = Vec::new();
    let _ = crate::render::render(
        &report,
        crate::render::View::Rebalances,
        crate::render::Format::Ndjson,
        &crate::render::RenderOptions::default(),
        &mut buf,
    );
    String::from_utf8_lossy(&buf).trim_end().to_string()
}

/// Whether an event may start, move or end a round. Plain successful
/// heartbeats and commits (the bulk of a stable group's traffic) do not:
/// they wait for the next evaluation that something else asks for.
fn may_change_a_round(ev: &GroupEvent) -> bool {
    !matches!(
        &ev.kind,
        EventKind::HeartbeatRequest { .. }
            | EventKind::HeartbeatResponse { error: None, .. }
            | EventKind::OffsetCommitRequest { .. }
            | EventKind::OffsetCommitResponse { error: None, .. }
            | EventKind::OffsetFetch { error: None, .. }
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::event::{ClientRef, DataKind, Evidence, Location, PartitionOffset};

    #[test]
    fn a_record_is_the_same_as_its_copy_and_not_as_one_that_says_more() {
        let told = Rebalance {
            group: "g".into(),
            notes: vec!["the inputs end inside this rebalance".into()],
            ..Rebalance::default()
        };
        assert!(same_record(&told, &told.clone()));
        let mut revised = told.clone();
        revised.storm = true;
        assert!(!same_record(&told, &revised));
        let mut noted = told.clone();
        noted.notes.push("another".into());
        assert!(!same_record(&told, &noted));
    }

    fn fetch(second: i64, client: &Arc<ClientRef>) -> DataEvent {
        DataEvent {
            ts: Timestamp(second * SECOND_NS),
            client: client.clone(),
            kind: DataKind::FetchRequest {
                exchange: second as u64,
                partitions: vec![PartitionOffset {
                    topic: "orders".into(),
                    partition: 0,
                    offset: second,
                    error: None,
                }],
            },
            evidence: Evidence {
                source: crate::event::Source::from("t.pcap"),
                at: Location::Frame {
                    frame: second as u64,
                },
            },
        }
    }

    fn round(start_s: i64, end_s: i64) -> Rebalance {
        Rebalance {
            group: "g".into(),
            status: "completed".into(),
            started_at: Timestamp(start_s * SECOND_NS),
            completed_at: Some(Timestamp(end_s * SECOND_NS)),
            ..Rebalance::default()
        }
    }

    fn commit(second: i64, exchange: u64, partition: i32, error: Option<i16>) -> [GroupEvent; 2] {
        let event = |ts: i64, kind: EventKind| GroupEvent {
            ts: Timestamp(ts),
            group: Some("g".into()),
            member_id: Some("m".into()),
            group_instance_id: None,
            generation_id: Some(1),
            client: Arc::new(ClientRef::default()),
            kind,
            evidence: Evidence {
                source: crate::event::Source::from("t.pcap"),
                at: Location::Frame { frame: exchange },
            },
            truncated: false,
        };
        let offset = PartitionOffset {
            topic: "orders".into(),
            partition,
            offset: second,
            error: None,
        };
        let request = EventKind::OffsetCommitRequest {
            exchange,
            partitions: 1,
            offsets: vec![offset],
        };
        let answer = EventKind::OffsetCommitResponse {
            exchange,
            error: error.map(crate::event::ErrorCode),
            partitions: Vec::new(),
        };
        let at = second * SECOND_NS;
        [event(at, request), event(at + 1_000_000, answer)]
    }

    #[test]
    fn each_partitions_last_answered_commit_before_the_window_is_kept() {
        let events: Vec<GroupEvent> = [
            commit(1, 1, 0, None),
            commit(2, 2, 0, None),
            commit(3, 3, 1, Some(27)),
            commit(4, 4, 2, None),
            commit(10, 5, 0, None),
        ]
        .into_iter()
        .flatten()
        .collect();
        let (kept, _) = last_commits(&events, &[], Timestamp(5 * SECOND_NS));
        let mut kept: Vec<u64> = kept.into_iter().collect();
        kept.sort_unstable();
        // Partition 0's last before the window (not its first, not the one
        // inside it), none for partition 1 (its only commit failed), and
        // partition 2's; a commit whose answer falls just inside counts.
        assert_eq!(kept, vec![2, 4]);
        let edge = commit(4, 9, 3, None);
        let at = Timestamp(4 * SECOND_NS + 500_000);
        assert_eq!(
            last_commits(&edge, &[], at)
                .0
                .into_iter()
                .collect::<Vec<_>>(),
            vec![9]
        );
    }

    #[test]
    fn a_partitions_last_commit_before_the_window_may_be_one_folded_out_of_it() {
        let folded_commit = |second: i64, partition: i32| {
            let offset = PartitionOffset {
                topic: "orders".into(),
                partition,
                offset: second,
                error: None,
            };
            let commit = Commit {
                ts: Timestamp(second * SECOND_NS),
                offsets: vec![offset].into(),
                answered: true,
                ..Commit::default()
            };
            (Id::from("m"), commit)
        };
        // Partition 0: the event at 1 s, folded at 2 s, the event at 4 s;
        // partition 1: folded at 3 s only; partition 2: folded at 2 s, the
        // event at 3 s.
        let events: Vec<GroupEvent> = [
            commit(1, 1, 0, None),
            commit(3, 3, 2, None),
            commit(4, 4, 0, None),
            commit(10, 10, 0, None),
        ]
        .into_iter()
        .flatten()
        .collect();
        let folded = [
            folded_commit(2, 0),
            folded_commit(2, 2),
            folded_commit(3, 1),
        ];
        let (kept, kept_folded) = last_commits(&events, &folded, Timestamp(5 * SECOND_NS));
        let mut kept: Vec<u64> = kept.into_iter().collect();
        kept.sort_unstable();
        let mut kept_folded: Vec<usize> = kept_folded.into_iter().collect();
        kept_folded.sort_unstable();
        // The events at 4 s (partition 0) and 3 s (partition 2), the folded
        // commit of partition 1; not the folded commits a later event
        // commits the same partition after.
        assert_eq!(kept, vec![3, 4]);
        assert_eq!(kept_folded, vec![2]);
        // Before 2.5 s: partition 0's last is the folded one at 2 s, and so
        // is partition 2's.
        let (kept, kept_folded) = last_commits(&events, &folded, Timestamp(2_500_000_000));
        assert!(kept.is_empty(), "{kept:?}");
        let mut kept_folded: Vec<usize> = kept_folded.into_iter().collect();
        kept_folded.sort_unstable();
        assert_eq!(kept_folded, vec![0, 1]);
    }

    #[test]
    fn a_revisable_round_keeps_the_round_before_it_whose_assignments_it_began_with() {
        let s = |a: i64, b: i64| (Timestamp(a * SECOND_NS), Timestamp(b * SECOND_NS));
        let rounds = [round(0, 2), round(1000, 1002), round(3000, 3003)].map(Box::new);
        // Only the last round may still be revised: it, and the round
        // before it up to its start.
        let kept = kept_spans(&rounds, Timestamp(2000 * SECOND_NS));
        assert_eq!(kept, vec![s(1000, 3003)]);
        // All may: each with the one before it.
        let kept = kept_spans(&rounds, Timestamp(0));
        assert_eq!(kept, vec![s(0, 3003)]);
    }

    #[test]
    fn a_superseded_round_is_kept_up_to_the_start_of_the_round_after_it() {
        let s = |a: i64, b: i64| (Timestamp(a * SECOND_NS), Timestamp(b * SECOND_NS));
        // m joined in a round superseded at 200 s; the round at 5000 s,
        // the one to tell, began with m.
        let joined = Rebalance {
            status: "superseded".into(),
            completed_at: None,
            joins: vec![crate::report::MemberJoin {
                member_id: "m".into(),
                requested_at: Timestamp(100 * SECOND_NS),
                ..Default::default()
            }],
            ..round(100, 0)
        };
        let told = Rebalance {
            members_before: vec![crate::report::MemberSummary {
                member_id: "m".into(),
                ..Default::default()
            }],
            ..round(5000, 5002)
        };
        let rounds = [joined, round(200, 202), told].map(Box::new);
        let kept = kept_spans(&rounds, Timestamp(4000 * SECOND_NS));
        // Not (100, 100): what followed its start made it a round.
        assert_eq!(kept, vec![s(100, 5002)]);
    }

    #[test]
    fn a_storm_is_counted_with_the_final_rounds_whose_events_left_the_window() {
        let at = |s: i64| Timestamp(s * SECOND_NS);
        let mut w = Window::default();
        // Five unexpected rounds within ten minutes: a storm.
        let mut rounds: Vec<Box<Rebalance>> = (0..5)
            .map(|i| Box::new(round(100 * i, 100 * i + 2)))
            .collect();
        w.storms(&mut rounds);
        assert!(rounds.iter().all(|r| r.storm));
        // The first four became final and left the window; a fifth round
        // after them, rebuilt alone, is still one of that storm (and of a
        // storm of five with the rounds at 100–400 s).
        w.final_before = at(403);
        let mut rebuilt = vec![Box::new(round(500, 502))];
        w.storms(&mut rebuilt);
        assert!(rebuilt[0].storm);
        // Without what was kept of them, it was told as none.
        let mut alone = vec![Box::new(round(500, 502))];
        let mut fresh = Window {
            final_before: at(403),
            ..Window::default()
        };
        fresh.storms(&mut alone);
        assert!(!alone[0].storm);
        // Ten minutes on, the old rounds count no more.
        w.final_before = at(1101);
        let mut later = vec![Box::new(round(1110, 1112))];
        w.storms(&mut later);
        assert!(!later[0].storm);
        assert_eq!(w.unexpected, vec![at(1110)]);
    }

    fn asking(kind: EventKind) -> GroupEvent {
        GroupEvent {
            ts: Timestamp(0),
            group: Some("g".into()),
            member_id: Some("m".into()),
            group_instance_id: None,
            generation_id: None,
            client: Arc::new(ClientRef::default()),
            kind,
            evidence: Evidence {
                source: crate::event::Source::from("t.pcap"),
                at: Location::Frame { frame: 1 },
            },
            truncated: false,
        }
    }

    fn join(session_ms: i32, rebalance_ms: Option<i32>) -> GroupEvent {
        asking(EventKind::JoinGroupRequest {
            exchange: 1,
            session_timeout_ms: session_ms,
            rebalance_timeout_ms: rebalance_ms,
            protocol_type: "consumer".into(),
            protocols: Vec::new(),
            reason: None,
            identity_cut: false,
        })
    }

    #[test]
    fn a_groups_timeouts_are_the_longest_its_members_ask_for_up_to_an_hour() {
        let minutes = |m: i64| m * 60 * SECOND_NS;
        let of = |ev: GroupEvent| {
            let t = Timeouts::of(&ev);
            (t.session_ns, t.rebalance_ns)
        };
        // JoinGroup v0 has no rebalance timeout: the session timeout is both.
        assert_eq!(of(join(30_000, None)), (30 * SECOND_NS, 30 * SECOND_NS));
        assert_eq!(
            of(join(45_000, Some(300_000))),
            (45 * SECOND_NS, minutes(5))
        );
        let streams = join(45_000, Some(i32::MAX));
        assert_eq!(of(streams), (45 * SECOND_NS, MAX_PATIENCE_NS));
        assert_eq!(of(join(-1, Some(-1))), (0, 0));
        let heartbeat = |rebalance_timeout_ms: i32| {
            asking(EventKind::ConsumerGroupHeartbeatRequest {
                exchange: 2,
                member_epoch: 3,
                rebalance_timeout_ms,
                subscribed_topic_names: None,
                server_assignor: None,
                owned: None,
                broker_offers: None,
            })
        };
        // KIP-848: -1 is "unchanged", not a timeout.
        assert_eq!(of(heartbeat(-1)), (0, 0));
        assert_eq!(of(heartbeat(600_000)), (0, minutes(10)));
        assert_eq!(
            of(asking(EventKind::HeartbeatRequest { exchange: 3 })),
            (0, 0)
        );
        // Each the longest asked for, from different members.
        let both = Timeouts::of(&join(90_000, Some(60_000))).max(Timeouts::of(&heartbeat(600_000)));
        assert_eq!(
            (both.session_ns, both.rebalance_ns),
            (90 * SECOND_NS, minutes(10))
        );
        assert_eq!(both.patience_ns(), minutes(10));
    }

    #[test]
    fn kafkas_default_timeouts_keep_the_engines_windows_and_longer_ones_stretch_them() {
        let minutes = |m: i64| m * 60 * SECOND_NS;
        let engine = Bounds::default();
        let mut w = Window::default();
        assert_eq!(w.bounds(engine).retain_ns, RETAIN_NS);
        assert_eq!(w.bounds(engine).hindsight_ns, HINDSIGHT_NS);
        assert_eq!(w.data_retain_ns(engine), RETAIN_NS);
        // max.poll.interval.ms 5 min, session.timeout.ms 45 s.
        w.timeouts = Timeouts::of(&join(45_000, Some(300_000)));
        assert_eq!(w.bounds(engine).retain_ns, RETAIN_NS);
        assert_eq!(w.bounds(engine).hindsight_ns, HINDSIGHT_NS);
        assert_eq!(w.data_retain_ns(engine), minutes(15) + 45 * SECOND_NS);
        // max.poll.interval.ms raised to 30 min for slow processing.
        w.timeouts = Timeouts::of(&join(45_000, Some(1_800_000)));
        assert_eq!(w.bounds(engine).retain_ns, minutes(90));
        assert_eq!(w.bounds(engine).hindsight_ns, minutes(60));
        assert_eq!(w.data_retain_ns(engine), minutes(90) + 45 * SECOND_NS);
        assert_eq!(w.bounds(engine).thin_lag_ns, THIN_LAG_NS);
    }

    /// One classic group's traffic as a capture shows it, members `c1`/`m1`,
    /// `c2`/`m2`, ... each asking for `timeout_ms` as both its session and
    /// its rebalance timeout.
    struct Traffic {
        events: Vec<GroupEvent>,
        exchange: u64,
        timeout_ms: i32,
    }

    impl Traffic {
        fn push(&mut self, ms: i64, n: u8, generation: Option<i32>, kind: EventKind) {
            let frame = self.events.len() as u64 + 1;
            self.events.push(GroupEvent {
                ts: Timestamp(ms * 1_000_000),
                group: Some("g1".into()),
                member_id: Some(format!("m{n}").into()),
                generation_id: generation,
                client: Arc::new(ClientRef {
                    client_id: Some(format!("c{n}")),
                    address: Some(format!("10.0.0.{n}:40000")),
                    ..ClientRef::default()
                }),
                evidence: Evidence {
                    source: crate::event::Source::from("t.pcap"),
                    at: Location::Frame { frame },
                },
                ..asking(kind)
            });
        }

        /// A round of generation `generation` at `ms`: every member's
        /// JoinGroup (the first one leads), then every SyncGroup.
        fn round(&mut self, ms: i64, generation: i32, members: &[u8]) {
            let all: Vec<crate::event::JoinedMember> = members
                .iter()
                .map(|n| crate::event::JoinedMember {
                    member_id: format!("m{n}"),
                    ..Default::default()
                })
                .collect();
            for (i, n) in members.iter().enumerate() {
                self.exchange += 1;
                let exchange = self.exchange;
                let joining = EventKind::JoinGroupRequest {
                    exchange,
                    session_timeout_ms: self.timeout_ms,
                    rebalance_timeout_ms: Some(self.timeout_ms),
                    protocol_type: "consumer".into(),
                    protocols: Vec::new(),
                    reason: None,
                    identity_cut: false,
                };
                self.push(ms, *n, None, joining);
                let joined = EventKind::JoinGroupResponse {
                    exchange,
                    error: None,
                    protocol_name: Some("range".into()),
                    leader: format!("m{}", members[0]).into(),
                    members: if i == 0 {
                        all.clone().into()
                    } else {
                        Box::default()
                    },
                    parked_ms: Some(100.0),
                };
                self.push(ms + 100, *n, Some(generation), joined);
            }
            for (i, n) in members.iter().enumerate() {
                self.exchange += 1;
                let exchange = self.exchange;
                let syncing = EventKind::SyncGroupRequest {
                    exchange,
                    assignments: Vec::new(),
                };
                self.push(ms + 200, *n, Some(generation), syncing);
                let partitions = if members.len() == 1 {
                    vec![0, 1]
                } else {
                    vec![i as i32]
                };
                let synced = EventKind::SyncGroupResponse {
                    exchange,
                    error: None,
                    assignment: vec![crate::event::TopicPartitions {
                        topic: "orders".into(),
                        partitions,
                    }],
                };
                self.push(ms + 210, *n, Some(generation), synced);
            }
        }

        fn heartbeat(&mut self, ms: i64, n: u8, generation: i32, error: Option<i16>) {
            self.exchange += 1;
            let exchange = self.exchange;
            let beat = EventKind::HeartbeatRequest { exchange };
            self.push(ms, n, Some(generation), beat);
            let answer = EventKind::HeartbeatResponse {
                exchange,
                error: error.map(crate::event::ErrorCode),
            };
            self.push(ms + 1, n, Some(generation), answer);
        }
    }

    /// `m1` and `m2` Stable at generation 1; `m2` falls silent at 60 s
    /// (its process hangs, its connection stays open); the coordinator
    /// removes it once `timeout_ms` has passed and `m1` forms generation 2
    /// alone; `m1` goes on beating for `after_s` more seconds.
    fn silent_member(timeout_ms: i32, after_s: i64) -> Vec<GroupEvent> {
        let mut t = Traffic {
            events: Vec::new(),
            exchange: 0,
            timeout_ms,
        };
        t.round(0, 1, &[1, 2]);
        let expiry = 60_000 + i64::from(timeout_ms);
        for ms in (3_000..expiry).step_by(3_000) {
            t.heartbeat(ms, 1, 1, None);
            if ms <= 60_000 {
                t.heartbeat(ms + 500, 2, 1, None);
            }
        }
        // REBALANCE_IN_PROGRESS (GroupCoordinator.scala `handleHeartbeat`).
        t.heartbeat(expiry + 100, 1, 1, Some(27));
        t.round(expiry + 200, 2, &[1]);
        for ms in (expiry + 3_000..expiry + after_s * 1_000).step_by(3_000) {
            t.heartbeat(ms, 1, 2, None);
        }
        t.events
    }

    /// The records of `events` as the engine settles them with its default
    /// bounds, judging after every 50 events, and as one window holding
    /// every event (what `rebalances` rebuilds) gives them.
    fn settled_and_whole(events: Vec<GroupEvent>) -> (Vec<Rebalance>, Vec<Rebalance>) {
        // Fed as a capture hands them on (each exchange when it completes),
        // rebuilt whole in the time line's order, as `rebalances` sorts them.
        let mut whole = Window {
            events: events.clone(),
            ..Window::default()
        };
        whole.events.sort_by(|a, b| order_key(a).cmp(&order_key(b)));
        let batch = rebuild("g1", &whole, &ClientFolder::default(), 0);
        let mut engine = Engine::new(Filter::default(), Bounds::default());
        engine.keep_settled();
        for (i, ev) in events.into_iter().enumerate() {
            engine.push(ev);
            if i % 50 == 0 {
                engine.evaluate(false);
            }
        }
        let mut settled: Vec<Rebalance> = engine
            .finish_settling()
            .into_iter()
            .map(|s| *s.record)
            .collect();
        settled.sort_by_key(|r| r.started_at);
        let batch = batch
            .into_iter()
            .flat_map(|h| h.rebalances)
            .map(|r| *r)
            .collect();
        (settled, batch)
    }

    #[test]
    fn a_member_silent_for_a_half_hour_session_timeout_is_judged_as_rebalances_judges_it() {
        // session.timeout.ms 30 min (the broker's default
        // group.max.session.timeout.ms allows it): the round comes half an
        // hour after the member's last heartbeat, twice the engine's own
        // window. Without the group's window stretched to its timeout, the
        // heartbeat had left it and the silence was counted from the
        // member's SyncGroup: "no request from c2 for 1859.9 s" against
        // 1799.6 s.
        let (settled, batch) = settled_and_whole(silent_member(1_800_000, 1_200));
        assert_eq!(batch.len(), 2);
        let last = &batch[1].trigger;
        assert_eq!(last.kind, "session_timeout", "{last:?}");
        assert_eq!(last.member_id.as_deref(), Some("m2"));
        assert_eq!(settled.len(), batch.len());
        for (s, b) in settled.iter().zip(&batch) {
            assert_eq!(s.trigger, b.trigger);
            assert!(same_record(s, b), "{s:#?}\n{b:#?}");
        }
    }

    #[test]
    fn the_data_path_is_trimmed_to_the_window_once_the_cut_moved_a_64th_of_it() {
        let bounds = Bounds {
            retain_ns: 64 * SECOND_NS,
            hindsight_ns: 10 * SECOND_NS,
            thin_lag_ns: THIN_LAG_NS,
        };
        let mut engine = Engine::new(Filter::default(), bounds);
        let client = Arc::new(ClientRef {
            client_id: Some("c".into()),
            address: Some("10.0.0.1:5000".into()),
            ..ClientRef::default()
        });
        let mut most = 0;
        for second in 0..300 {
            engine.push_data(fetch(second, &client));
            engine.evaluate(false);
            // One Fetch time and one position per second.
            let held = engine.held().1;
            let window = 2 * (second.min(64) as usize + 1);
            assert!(held >= window, "second {second}: {held} < {window}");
            most = most.max(held);
        }
        // At most one second (a 64th of 64 s) more than the window.
        assert!(most <= 2 * (64 + 2), "{most}");
    }
}
