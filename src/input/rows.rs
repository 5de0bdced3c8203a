//! `decode`'s rows, or one capture file's or one log's group events for
//! `timeline`, handed on while the input is read, in their order.
//!
//! Takes: the rows of exchanges (or their events) as the Kafka stage
//! completes them (in response order) and, with each batch, what that
//! stage knew ([`Mark`]): the earliest request time and frame a row still
//! to come can carry, and the last packet's time. Gives: batches of rows in
//! order (time, then frame, ties in the order made: the order `decode`
//! sorts its whole list into, and the time line's within one capture file)
//! on a channel, each row as soon as no row still to come can sort before
//! it. A row still to come is a request waiting for its answer (a
//! JoinGroup parked for the rebalance timeout holds the rows after it),
//! bytes of a connection not yet told Kafka, or bytes not yet handed on by
//! TCP reassembly: those wait behind a hole at most 2 s of capture time
//! ([`crate::tcp::HOLE_TIMEOUT_NANOS`], checked every second) and then go
//! on with their own packet's time, so a row is held until the last packet
//! is [`WINDOW_NS`] past it. Packet times never go back (the capture reader
//! takes a time before the last packet's as the last packet's). So memory
//! follows the requests in flight and the window, not the capture's
//! length, and the rows are the sorted list's. Only when more than
//! [`MAX_HELD`] rows wait at once are the earliest written anyway: a row
//! that then comes after rows later in order is written when it comes, and
//! counted in a `row_order` diagnostic.
//!
//! A log has no requests in flight: its events wait until its lines have
//! reached [`LOG_WINDOW_NS`] past them ([`Mark::of_log`]), and one that
//! comes from further back is written when it comes and counted.
//!
//! The heartbeat fold needs each group's events in order, not every
//! group's together: its window ([`Window::by_group`]) holds an event back
//! only for requests of its own group still waiting (and for those that
//! may name any group), so a JoinGroup parked for its rebalance timeout
//! holds back its own group's events, not the coordinator's.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;

use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::event::{GroupEvent, Id, Location};
use crate::fast_hash::FastMap;
use crate::kafka::{earliest, KafkaDecoder, OpenByGroup};
use crate::report::ExchangeRow;
use crate::time::Timestamp;

/// How long (capture time) a row is held after its time: above the 3 s
/// that TCP data may wait behind a hole before it is handed on with its own
/// packet's time.
pub const WINDOW_NS: i64 = 10_000_000_000;

/// How far back in time (log time) a log line may come after later ones
/// and still be written in the time line's order, when one log's events
/// are written as it is read: lines logged by several threads, or through
/// an asynchronous appender, come a little out of order; a clock stepped
/// back or logs joined out of order come further, and are said
/// (`row_order`).
pub const LOG_WINDOW_NS: i64 = 60_000_000_000;

/// Rows held at once, at most (about 200 bytes each): past it the earliest
/// are written although a request in flight may still sort before them.
pub const MAX_HELD: usize = 1 << 20;

/// Rows handed on at once.
const BATCH: usize = 1024;

/// A time and a frame: the order rows are written in.
pub type Key = (Timestamp, u64);

/// What the Kafka stage knew when it handed a batch on.
#[derive(Clone, Debug, Default)]
pub(super) struct Mark {
    /// The earliest request still waiting for its answer, or bytes not yet
    /// decoded (a connection not yet told Kafka).
    pub open: Option<Key>,
    /// The last packet's time.
    pub latest: Option<Timestamp>,
    /// The same told apart by group, for a window that holds each group's
    /// events apart ([`Window::by_group`]).
    pub by_group: Option<Arc<OpenByGroup>>,
}

impl Mark {
    /// The mark after a log's lines up to the time `latest`: a line still
    /// to come may carry a time up to [`LOG_WINDOW_NS`] before it.
    pub(super) fn of_log(latest: Timestamp) -> Mark {
        Mark {
            open: Some((latest.offset_by(-LOG_WINDOW_NS), 0)),
            latest: Some(latest),
            by_group: None,
        }
    }

    /// Rows before this key can have nothing still to come before them.
    fn bound(&self) -> Option<Key> {
        self.bound_with(self.open)
    }

    /// `open`, or the window's time if earlier.
    fn bound_with(&self, open: Option<Key>) -> Option<Key> {
        let seen = self.latest.map(|t| (t.offset_by(-WINDOW_NS), 0))?;
        Some(open.map_or(seen, |open| open.min(seen)))
    }

    /// Events of no group, or of a group with no request of its own
    /// waiting, before this key have nothing still to come before them.
    fn bound_of_any(&self) -> Option<Key> {
        match &self.by_group {
            Some(open) => self.bound_with(open.ungrouped),
            None => self.bound(),
        }
    }

    /// Events of `group` before this key have nothing still to come
    /// before them.
    fn bound_of(&self, group: &str) -> Option<Key> {
        let any = self.bound_of_any();
        match self.by_group.as_ref().and_then(|o| o.groups.get(group)) {
            Some(own) => any.map(|b| b.min(*own)),
            None => any,
        }
    }
}

/// Makes the Kafka stage's [`Mark`]s. Finding the earliest request in
/// flight is a pass over every live connection (thousands on a busy
/// coordinator: done at every hand-over it was an eighth of the run), so
/// it is done at every [`RESCAN`]th hand-over, or once two seconds of capture
/// time has passed, and kept in between. A kept value stays a bound when
/// the pass's own time, less the window, is one too: requests answered
/// since only raise the earliest, and bytes read since came in packets no
/// earlier than the pass (less what TCP held back, within the window).
#[derive(Debug, Default)]
pub(super) struct Marker {
    /// Whether to tell the requests apart by group ([`Mark::by_group`]).
    groups: bool,
    by_group: Option<Arc<OpenByGroup>>,
    open: Option<Key>,
    scanned_at: Option<Timestamp>,
    hand_overs: u32,
}

/// Hand-overs between two passes over the connections ...
const RESCAN: u32 = 32;
/// ... or capture time (ns).
const RESCAN_AFTER_NS: i64 = 2_000_000_000;

impl Marker {
    /// A marker that tells requests apart by group when `groups`.
    pub(super) fn new(groups: bool) -> Marker {
        Marker {
            groups,
            ..Marker::default()
        }
    }

    /// The mark for a hand-over after a packet of time `latest`.
    pub(super) fn mark(&mut self, decoder: &KafkaDecoder, latest: Option<Timestamp>) -> Mark {
        let stale = match (self.scanned_at, latest) {
            (Some(at), Some(now)) => now.0.saturating_sub(at.0) > RESCAN_AFTER_NS,
            _ => true,
        };
        if stale || self.hand_overs.is_multiple_of(RESCAN) {
            let pass = latest.map(|t| (t.offset_by(-WINDOW_NS), 0));
            if self.groups {
                let mut open = at_most_apart(decoder.open_by_group(), MAX_GROUPS_APART);
                open.ungrouped = earliest(open.ungrouped, pass);
                let of_groups = open.groups.values().min().copied();
                self.open = earliest(open.ungrouped, of_groups);
                self.by_group = Some(Arc::new(open));
            } else {
                self.open = earliest(decoder.oldest_open(), pass);
            }
            self.scanned_at = latest;
        }
        self.hand_overs = self.hand_overs.wrapping_add(1);
        Mark {
            open: self.open,
            latest,
            by_group: self.by_group.clone(),
        }
    }
}

/// Groups held apart at most ([`at_most_apart`]).
const MAX_GROUPS_APART: usize = 1024;

/// `open`, or, when more than `max` groups have a request waiting, every
/// request holding back every group (as a window that does not hold groups
/// apart does): each hand-over looks at each group held apart, and a
/// capture of a hundred thousand groups each with a request never answered
/// would make that quadratic.
fn at_most_apart(mut open: OpenByGroup, max: usize) -> OpenByGroup {
    if open.groups.len() > max {
        let of_groups = open.groups.values().min().copied();
        open.ungrouped = earliest(open.ungrouped, of_groups);
        open.groups = FastMap::default();
    }
    open
}

/// What a window holds: something with a place in request order.
pub trait InOrder {
    /// Its time and frame (0 for none: it sorts first, as `None` does;
    /// frames count from 1).
    fn order(&self) -> Key;

    /// The group it is of, for a window that holds groups apart.
    fn group(&self) -> Option<&Id> {
        None
    }
}

impl InOrder for ExchangeRow {
    /// The order `decode` writes rows in.
    fn order(&self) -> Key {
        let (ts, frame) = self.request_order();
        (ts, frame.unwrap_or(0))
    }
}

impl InOrder for GroupEvent {
    /// The time line's order within one capture file or log: time, then
    /// frame (a log's events in the order made, that is of their lines)
    /// ([`crate::timeline::order_key`]).
    fn order(&self) -> Key {
        match self.evidence.at {
            Location::Frame { frame } => (self.ts, frame),
            Location::Line { .. } => (self.ts, 0),
        }
    }

    fn group(&self) -> Option<&Id> {
        self.group.as_ref()
    }
}

/// `decode`'s rows in request order.
pub type RowWindow = Window<ExchangeRow>;

/// One capture file's or log's group events in the time line's order
/// (`timeline`).
pub type EventWindow = Window<GroupEvent>;

/// Rows' places (their slot in [`Window`]'s rows) by their key and the
/// order they were made in, the earliest first: only the earliest is ever
/// looked at or taken, so a heap, not a tree. Rows come nearly in key
/// order, so most go in at the bottom in a step or two; a B-tree's insert
/// descended the whole tree each time (about 700 instructions a row on the
/// dense capture, with tens of thousands held).
type Places = BinaryHeap<Reverse<((Key, u64), usize)>>;

/// The earliest of `places`: its key and order, and its slot.
fn earliest_place(places: &Places) -> Option<((Key, u64), usize)> {
    places.peek().map(|Reverse(place)| *place)
}

/// The window between the Kafka stage and whoever writes the rows.
#[derive(Debug)]
pub struct Window<T> {
    /// Where each held row is kept, in the order it goes out: its key, then
    /// the order it was made in (ties keep it). A queue of these few bytes,
    /// not of the rows: the rows stay where they were put.
    held: Places,
    /// The rows held, by slot; a slot emptied is reused.
    rows: Vec<Option<T>>,
    free: Vec<usize>,
    next_seq: u64,
    /// The last row handed on.
    written: Option<Key>,
    /// Rows that came after a row later in request order.
    late: u64,
    first_late: Option<(Key, Key)>,
    send: SyncSender<Vec<T>>,
    /// Batches the writer is done with, dropped here: freed by the thread
    /// that made them (freed by the writer's thread, each of their strings
    /// went back to another thread's heap, a tenth of the run).
    written_back: Receiver<Vec<T>>,
    /// The receiving end is gone (its writer failed): rows are dropped,
    /// and the capture's reader, which shares this, stops ([`Stoppable`]).
    gone: Arc<AtomicBool>,
    /// [`MAX_HELD`], smaller in tests.
    max_held: usize,
    /// Whether each group's rows are held apart ([`Self::by_group`]).
    by_group: bool,
    /// Rows of groups that a request of their own holds back, by group,
    /// each in order (`by_group` only).
    parked: FastMap<Id, Places>,
    /// How many rows `parked` holds.
    parked_len: usize,
    /// The last row of each group handed on (`by_group` only).
    written_of: FastMap<Id, Key>,
    /// It holds a log's events ([`Mark::of_log`]): what a row written out
    /// of order says.
    log: bool,
}

impl<T: InOrder> Window<T> {
    /// Rows to `send`, in batches, each to come back through
    /// `written_back` once written.
    pub fn new(send: SyncSender<Vec<T>>, written_back: Receiver<Vec<T>>) -> Window<T> {
        Window {
            held: Places::new(),
            rows: Vec::new(),
            free: Vec::new(),
            next_seq: 0,
            written: None,
            late: 0,
            first_late: None,
            send,
            written_back,
            gone: Arc::default(),
            max_held: MAX_HELD,
            by_group: false,
            parked: FastMap::default(),
            parked_len: 0,
            written_of: FastMap::default(),
            log: false,
        }
    }

    /// Says that the rows it takes are a log's events, ordered by
    /// [`Mark::of_log`].
    pub(super) fn reading_a_log(&mut self) {
        self.log = true;
    }

    /// The same, holding each group's rows apart: a row waits for the
    /// requests of its own group still to be answered and for those that
    /// may name any group, not for every group's ([`Mark::bound_of`]). So
    /// the rows come in order group by group (each group's as the time
    /// line has them), not across groups: for the heartbeat fold, whose
    /// every rule is within one group. On a busy coordinator a JoinGroup
    /// parked for its rebalance timeout held back every group's events
    /// (60 k events, 16 s of the dense capture, at the end of its reading).
    pub fn by_group(self) -> Window<T> {
        Window {
            by_group: true,
            ..self
        }
    }

    /// Whether it holds each group's rows apart.
    pub(super) fn is_by_group(&self) -> bool {
        self.by_group
    }

    /// Takes `rows` (emptying it), then hands on every row that nothing
    /// still to come, as `mark` says, can sort before.
    pub(super) fn take(&mut self, rows: &mut Vec<T>, mark: Mark) {
        for row in rows.drain(..) {
            let key = row.order();
            // Looked up by the row's own id: no copy of it per row.
            let (written, parked) = match row.group().filter(|_| self.by_group) {
                Some(g) => (self.written_of.get(g).copied(), self.parked.contains_key(g)),
                None => (self.written, false),
            };
            if let Some(written) = written.filter(|w| key < *w) {
                self.late += 1;
                self.first_late.get_or_insert((key, written));
            }
            let seq = self.next_seq;
            self.next_seq += 1;
            let slot = match self.free.pop() {
                Some(slot) => {
                    self.rows[slot] = Some(row);
                    slot
                }
                None => {
                    self.rows.push(Some(row));
                    self.rows.len() - 1
                }
            };
            let lane = self.rows[slot]
                .as_ref()
                .and_then(InOrder::group)
                .filter(|_| parked)
                .and_then(|g| self.parked.get_mut(g));
            match lane {
                Some(lane) => {
                    lane.push(Reverse(((key, seq), slot)));
                    self.parked_len += 1;
                }
                None => {
                    self.held.push(Reverse(((key, seq), slot)));
                }
            }
        }
        if self.by_group && self.held.len() + self.parked_len <= self.max_held {
            return self.release_by_group(&mark);
        }
        self.unpark(|_| true);
        let bound = mark.bound();
        let max_held = self.max_held;
        self.release(|held, key| held > max_held || bound.is_some_and(|b| key < b));
    }

    /// Hands on, in order, every row held that `mark` lets go for its
    /// group; a row its own group's request still holds back is parked
    /// with that group's.
    fn release_by_group(&mut self, mark: &Mark) {
        // A group some of whose rows may go: all of them back in the one
        // order, beside the group's rows that were never parked.
        self.unpark(|(g, lane)| {
            let first = earliest_place(lane).map(|((k, _), _)| k);
            first.is_some_and(|k| mark.bound_of(g).is_some_and(|b| k < b))
        });
        while self.written_back.try_recv().is_ok() {}
        let any = mark.bound_of_any();
        let mut batch = Vec::new();
        while let Some(((key, seq), slot)) = earliest_place(&self.held) {
            if any.is_none_or(|b| key >= b) {
                break;
            }
            self.held.pop();
            let group = self.rows[slot].as_ref().and_then(InOrder::group);
            if let Some(g) = group.filter(|g| mark.bound_of(g).is_none_or(|b| key >= b)) {
                self.parked
                    .entry(g.clone())
                    .or_default()
                    .push(Reverse(((key, seq), slot)));
                self.parked_len += 1;
                continue;
            }
            self.hand_out(key, slot, &mut batch);
        }
        if !batch.is_empty() {
            self.hand_on(batch);
        }
    }

    /// Puts the parked groups `which` picks back in the one order.
    fn unpark(&mut self, which: impl Fn((&Id, &Places)) -> bool) {
        if self.parked_len == 0 {
            return;
        }
        let groups: Vec<Id> = self
            .parked
            .iter()
            .filter(|lane| which(*lane))
            .map(|(g, _)| g.clone())
            .collect();
        for g in groups {
            if let Some(mut lane) = self.parked.remove(&g) {
                self.parked_len -= lane.len();
                self.held.append(&mut lane);
            }
        }
    }

    /// Row `slot` (of `key`) goes into `batch`, handed on once full.
    fn hand_out(&mut self, key: Key, slot: usize, batch: &mut Vec<T>) {
        self.written = Some(self.written.map_or(key, |w| w.max(key)));
        if let Some(row) = self.rows[slot].take() {
            if let Some(g) = row.group().filter(|_| self.by_group) {
                // The id is copied once per group, not once per row.
                match self.written_of.get_mut(g) {
                    Some(w) => *w = (*w).max(key),
                    None => {
                        self.written_of.insert(g.clone(), key);
                    }
                }
            }
            batch.push(row);
        }
        self.free.push(slot);
        if batch.len() == BATCH {
            self.hand_on(std::mem::take(batch));
        }
    }

    /// Set once nobody takes the rows any more: a capture read through
    /// [`Stoppable`] with it ends there (`decode big.pcap | head`: the rest
    /// is not read for nothing).
    pub(super) fn gone(&self) -> Arc<AtomicBool> {
        self.gone.clone()
    }

    /// The same, holding at most `max_held` rows (`usize::MAX`: never
    /// letting one go before its time, whatever it holds).
    pub fn holding_at_most(self, max_held: usize) -> Window<T> {
        Window { max_held, ..self }
    }

    /// Hands on every row held, in order (the input ended).
    pub(super) fn flush(&mut self) {
        self.unpark(|_| true);
        self.release(|_, _| true);
    }

    /// Flushes, and counts the rows that came out of order.
    pub(super) fn finish(mut self, diags: &mut Diagnostics) {
        self.flush();
        self.rows = Vec::new();
        let Some(((ts, frame), (before_ts, before_frame))) = self.first_late else {
            return;
        };
        let detail = if self.log {
            format!(
                "{} written after events later in time (first: one at {ts}, after one at \
                 {before_ts}): a log line came more than {} s of log time after later lines (a \
                 clock stepped back, or logs joined out of order), or more than {} events waited \
                 at once; `--format json` or `--format table` sorts the whole list",
                if self.late == 1 {
                    "1 event was".to_string()
                } else {
                    format!("{} events were", self.late)
                },
                LOG_WINDOW_NS / 1_000_000_000,
                self.max_held,
            )
        } else {
            format!(
                "{} rows were written after rows later in their order (first: one at {ts}, frame \
                 {frame}, after one at {before_ts}, frame {before_frame}): more than {} rows \
                 waited at once for an earlier request's answer, and the earliest were written \
                 first; `--format json` or `--format table` sorts the whole list",
                self.late, self.max_held,
            )
        };
        diags.add(DiagnosticKind::RowOrder, "rows", "order", detail);
    }

    /// Hands on rows from the earliest while `due(rows held, its key)`.
    fn release(&mut self, due: impl Fn(usize, Key) -> bool) {
        while self.written_back.try_recv().is_ok() {}
        let mut batch = Vec::new();
        while let Some(((key, _), slot)) = earliest_place(&self.held) {
            if !due(self.held.len(), key) {
                break;
            }
            self.held.pop();
            self.hand_out(key, slot, &mut batch);
        }
        if !batch.is_empty() {
            self.hand_on(batch);
        }
    }

    fn hand_on(&mut self, batch: Vec<T>) {
        if !self.gone.load(Relaxed) && self.send.send(batch).is_err() {
            self.gone.store(true, Relaxed);
        }
    }
}

/// A capture's bytes until a window's writer is gone ([`Window::gone`]),
/// then its end; without a window, all of them.
pub(super) struct Stoppable<R> {
    pub inner: R,
    pub gone: Option<Arc<AtomicBool>>,
}

impl<R: Read> Read for Stoppable<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.gone.as_ref().is_some_and(|g| g.load(Relaxed)) {
            return Ok(0);
        }
        self.inner.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::{channel, sync_channel};

    fn window(tx: SyncSender<Vec<ExchangeRow>>) -> RowWindow {
        RowWindow::new(tx, channel().1)
    }

    fn row(secs: i64, frame: u64, correlation_id: i32) -> ExchangeRow {
        ExchangeRow {
            ts: Timestamp(secs * 1_000_000_000),
            request_frame: Some(frame),
            correlation_id,
            ..ExchangeRow::default()
        }
    }

    fn mark(open: Option<(i64, u64)>, latest: i64) -> Mark {
        Mark {
            open: open.map(|(s, f)| (Timestamp(s * 1_000_000_000), f)),
            latest: Some(Timestamp(latest * 1_000_000_000)),
            by_group: None,
        }
    }

    fn received(rx: &Receiver<Vec<ExchangeRow>>) -> Vec<i32> {
        rx.try_iter().flatten().map(|r| r.correlation_id).collect()
    }

    #[test]
    fn rows_wait_for_an_earlier_request_in_flight_and_for_the_window() {
        let (tx, rx) = sync_channel(64);
        let mut w = window(tx);
        // Answered out of request order: the request of frame 1 is still
        // waiting, so nothing after it goes.
        w.take(
            &mut vec![row(10, 3, 3), row(10, 2, 2)],
            mark(Some((10, 1)), 100),
        );
        assert!(received(&rx).is_empty());
        // It is answered; the window still holds rows within 10 s of the
        // last packet.
        w.take(&mut vec![row(10, 1, 1), row(95, 9, 9)], mark(None, 100));
        assert_eq!(received(&rx), vec![1, 2, 3]);
        w.take(&mut Vec::new(), mark(None, 106));
        assert_eq!(received(&rx), vec![9]);
        let mut diags = Diagnostics::default();
        w.finish(&mut diags);
        assert_eq!(diags.count(DiagnosticKind::RowOrder), 0);
    }

    /// A heartbeat of `group` (`None`: of no group) at `secs`, frame
    /// `frame`.
    fn event(secs: i64, frame: u64, group: Option<&str>) -> GroupEvent {
        GroupEvent {
            ts: Timestamp(secs * 1_000_000_000),
            group: group.map(Id::from),
            member_id: None,
            group_instance_id: None,
            generation_id: None,
            client: Arc::default(),
            kind: crate::event::EventKind::HeartbeatRequest { exchange: frame },
            evidence: crate::event::Evidence {
                source: crate::event::Source::from("c.pcap"),
                at: Location::Frame { frame },
            },
            truncated: false,
        }
    }

    /// A mark after a packet at `latest` whose requests waiting for their
    /// answer are `any` (may name any group) and `of` (by group).
    fn group_mark(any: Option<(i64, u64)>, of: &[(&str, (i64, u64))], latest: i64) -> Mark {
        let key = |(s, f): (i64, u64)| (Timestamp(s * 1_000_000_000), f);
        let by_group = OpenByGroup {
            ungrouped: any.map(key),
            groups: of.iter().map(|(g, k)| (Box::from(*g), key(*k))).collect(),
        };
        let open = earliest(by_group.ungrouped, by_group.groups.values().min().copied());
        Mark {
            open,
            latest: Some(Timestamp(latest * 1_000_000_000)),
            by_group: Some(Arc::new(by_group)),
        }
    }

    /// A window holding groups apart, and what it hands on.
    fn group_window() -> (EventWindow, Receiver<Vec<GroupEvent>>) {
        let (tx, rx) = sync_channel(64);
        (EventWindow::new(tx, channel().1).by_group(), rx)
    }

    fn frames(rx: &Receiver<Vec<GroupEvent>>) -> Vec<u64> {
        rx.try_iter()
            .flatten()
            .map(|e| match e.evidence.at {
                Location::Frame { frame } => frame,
                Location::Line { line } => line,
            })
            .collect()
    }

    #[test]
    fn held_by_group_a_request_holds_back_its_own_group_only() {
        let (mut w, rx) = group_window();
        // Group a's JoinGroup of frame 1 waits for its answer (parked for
        // the rebalance timeout): a's later events wait, b's and those of
        // no group go.
        let mut evs = vec![
            event(12, 3, Some("a")),
            event(11, 2, Some("b")),
            event(13, 4, Some("b")),
            event(14, 5, None),
        ];
        w.take(&mut evs, group_mark(None, &[("a", (10, 1))], 100));
        assert_eq!(frames(&rx), vec![2, 4, 5]);
        // More of a's, one of them before a row of a's held (answered out
        // of order): still held.
        w.take(
            &mut vec![event(20, 7, Some("a")), event(15, 6, Some("a"))],
            group_mark(None, &[("a", (10, 1))], 101),
        );
        assert!(frames(&rx).is_empty());
        // Answered: a's events go, in a's order, the JoinGroup first.
        w.take(
            &mut vec![event(10, 1, Some("a"))],
            group_mark(None, &[], 102),
        );
        assert_eq!(frames(&rx), vec![1, 3, 6, 7]);
        let mut diags = Diagnostics::default();
        w.finish(&mut diags);
        assert_eq!(diags.count(DiagnosticKind::RowOrder), 0);
    }

    #[test]
    fn past_so_many_groups_with_a_request_waiting_every_request_holds_back_every_group() {
        let at = |s: i64| (Timestamp(s * 1_000_000_000), 1);
        let open = OpenByGroup {
            ungrouped: Some(at(50)),
            groups: [(Box::from("a"), at(20)), (Box::from("b"), at(30))]
                .into_iter()
                .collect(),
        };
        assert_eq!(at_most_apart(open.clone(), 2), open);
        let all = at_most_apart(open, 1);
        assert_eq!(all.ungrouped, Some(at(20)));
        assert!(all.groups.is_empty());
    }

    #[test]
    fn held_by_group_a_request_of_any_group_holds_back_every_group() {
        let (mut w, rx) = group_window();
        // A DescribeGroups may name any group: nothing after it goes.
        w.take(
            &mut vec![event(12, 3, Some("a")), event(11, 2, Some("b"))],
            group_mark(Some((10, 1)), &[], 100),
        );
        assert!(frames(&rx).is_empty());
        // Answered; the window still holds what is within 10 s of the
        // last packet, whatever its group.
        w.take(
            &mut vec![event(95, 9, Some("b")), event(10, 1, Some("a"))],
            group_mark(None, &[], 100),
        );
        assert_eq!(frames(&rx), vec![1, 2, 3]);
        w.flush();
        assert_eq!(frames(&rx), vec![9]);
    }

    #[test]
    fn held_by_group_rows_parked_at_the_end_go_in_their_group_order() {
        let (mut w, rx) = group_window();
        w.take(
            &mut vec![event(30, 5, Some("a")), event(20, 4, Some("a"))],
            group_mark(None, &[("a", (10, 1))], 100),
        );
        w.take(
            &mut vec![event(25, 6, Some("b"))],
            group_mark(None, &[("a", (10, 1))], 100),
        );
        assert_eq!(frames(&rx), vec![6]);
        // The capture ends with a's request never answered.
        w.flush();
        assert_eq!(frames(&rx), vec![4, 5]);
    }

    #[test]
    fn held_by_group_a_row_behind_its_own_group_is_counted_not_one_behind_another() {
        let (mut w, rx) = group_window();
        w.take(
            &mut vec![event(50, 5, Some("a")), event(60, 6, Some("b"))],
            group_mark(None, &[], 100),
        );
        assert_eq!(frames(&rx), vec![5, 6]);
        // Behind b's, ahead of nothing of a's: in order for its group.
        w.take(
            &mut vec![event(55, 7, Some("a"))],
            group_mark(None, &[], 100),
        );
        // Behind a's last: counted.
        w.take(
            &mut vec![event(40, 8, Some("a"))],
            group_mark(None, &[], 100),
        );
        assert_eq!(w.late, 1, "a's row behind a's, not the one behind b's");
        let mut diags = Diagnostics::default();
        w.finish(&mut diags);
        assert_eq!(frames(&rx), vec![7, 8]);
        assert_eq!(diags.count(DiagnosticKind::RowOrder), 1);
    }

    #[test]
    fn equal_keys_keep_the_order_they_were_made_in() {
        let (tx, rx) = sync_channel(64);
        let mut w = window(tx);
        w.take(&mut vec![row(5, 4, 1), row(5, 4, 2)], mark(Some((5, 4)), 6));
        w.take(&mut vec![row(5, 4, 3)], mark(None, 6));
        w.flush();
        assert_eq!(received(&rx), vec![1, 2, 3]);
    }

    #[test]
    fn a_row_behind_what_was_written_is_written_and_counted() {
        let (tx, rx) = sync_channel(64);
        let mut w = window(tx);
        w.take(&mut vec![row(100, 50, 1)], mark(None, 200));
        assert_eq!(received(&rx), vec![1]);
        // A request answered late, behind the window.
        w.take(&mut vec![row(20, 51, 2)], mark(None, 200));
        let mut diags = Diagnostics::default();
        w.finish(&mut diags);
        assert_eq!(received(&rx), vec![2]);
        assert_eq!(diags.count(DiagnosticKind::RowOrder), 1);
    }

    #[test]
    fn without_a_packet_time_nothing_goes_before_the_end() {
        let (tx, rx) = sync_channel(64);
        let mut w = window(tx);
        w.take(&mut vec![row(1, 1, 1)], Mark::default());
        assert!(received(&rx).is_empty());
        w.flush();
        assert_eq!(received(&rx), vec![1]);
    }

    #[test]
    fn a_gone_writer_ends_the_capture_its_rows_come_from() {
        let (tx, rx) = sync_channel(1);
        let mut w = window(tx);
        let mut capture = Stoppable {
            inner: &[7u8; 64][..],
            gone: Some(w.gone()),
        };
        let mut buf = [0u8; 16];
        assert_eq!(capture.read(&mut buf).unwrap(), 16);
        drop(rx);
        w.take(&mut vec![row(1, 1, 1)], mark(None, 100));
        assert_eq!(
            capture.read(&mut buf).unwrap(),
            0,
            "ended once nobody takes rows"
        );
    }

    #[test]
    fn a_gone_writer_drops_rows_without_blocking() {
        let (tx, rx) = sync_channel(1);
        drop(rx);
        let mut w = window(tx);
        w.take(
            &mut (0..3000).map(|i| row(i, i as u64 + 1, 0)).collect(),
            mark(None, 10_000),
        );
        w.flush();
        assert!(w.gone.load(Relaxed));
    }
}
