//! `decode`'s rows, or one capture file's group events for `timeline`,
//! handed on while the capture is read, in their order.
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

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;

use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::event::{GroupEvent, Location};
use crate::kafka::KafkaDecoder;
use crate::report::ExchangeRow;
use crate::time::Timestamp;

/// How long (capture time) a row is held after its time: above the 3 s
/// that TCP data may wait behind a hole before it is handed on with its own
/// packet's time.
pub const WINDOW_NS: i64 = 10_000_000_000;

/// Rows held at once, at most (about 200 bytes each): past it the earliest
/// are written although a request in flight may still sort before them.
pub const MAX_HELD: usize = 1 << 20;

/// Rows handed on at once.
const BATCH: usize = 1024;

/// A time and a frame: the order rows are written in.
pub type Key = (Timestamp, u64);

/// What the Kafka stage knew when it handed a batch on.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Mark {
    /// The earliest request still waiting for its answer, or bytes not yet
    /// decoded (a connection not yet told Kafka).
    pub open: Option<Key>,
    /// The last packet's time.
    pub latest: Option<Timestamp>,
}

impl Mark {
    /// Rows before this key can have nothing still to come before them.
    fn bound(self) -> Option<Key> {
        let seen = self.latest.map(|t| (t.offset_by(-WINDOW_NS), 0))?;
        Some(self.open.map_or(seen, |open| open.min(seen)))
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
    open: Option<Key>,
    scanned_at: Option<Timestamp>,
    hand_overs: u32,
}

/// Hand-overs between two passes over the connections ...
const RESCAN: u32 = 32;
/// ... or capture time (ns).
const RESCAN_AFTER_NS: i64 = 2_000_000_000;

impl Marker {
    /// The mark for a hand-over after a packet of time `latest`.
    pub(super) fn mark(&mut self, decoder: &KafkaDecoder, latest: Option<Timestamp>) -> Mark {
        let stale = match (self.scanned_at, latest) {
            (Some(at), Some(now)) => now.0.saturating_sub(at.0) > RESCAN_AFTER_NS,
            _ => true,
        };
        if stale || self.hand_overs.is_multiple_of(RESCAN) {
            let pass = latest.map(|t| (t.offset_by(-WINDOW_NS), 0));
            self.open = match (decoder.oldest_open(), pass) {
                (Some(open), Some(pass)) => Some(open.min(pass)),
                (open, pass) => open.or(pass),
            };
            self.scanned_at = latest;
        }
        self.hand_overs = self.hand_overs.wrapping_add(1);
        Mark {
            open: self.open,
            latest,
        }
    }
}

/// What a window holds: something with a place in request order.
pub trait InOrder {
    /// Its time and frame (0 for none: it sorts first, as `None` does;
    /// frames count from 1).
    fn order(&self) -> Key;
}

impl InOrder for ExchangeRow {
    /// The order `decode` writes rows in.
    fn order(&self) -> Key {
        let (ts, frame) = self.request_order();
        (ts, frame.unwrap_or(0))
    }
}

impl InOrder for GroupEvent {
    /// The time line's order within one capture file: time, then frame
    /// ([`crate::timeline::order_key`]).
    fn order(&self) -> Key {
        match self.evidence.at {
            Location::Frame { frame } => (self.ts, frame),
            Location::Line { .. } => (self.ts, 0),
        }
    }
}

/// `decode`'s rows in request order.
pub type RowWindow = Window<ExchangeRow>;

/// One capture file's group events in the time line's order (`timeline`).
pub type EventWindow = Window<GroupEvent>;

/// The window between the Kafka stage and whoever writes the rows.
#[derive(Debug)]
pub struct Window<T> {
    /// Where each held row is kept, in the order it goes out: its key, then
    /// the order it was made in (ties keep it). A tree of these few bytes,
    /// not of the rows: the rows stay where they were put.
    held: BTreeMap<(Key, u64), usize>,
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
}

impl<T: InOrder> Window<T> {
    /// Rows to `send`, in batches, each to come back through
    /// `written_back` once written.
    pub fn new(send: SyncSender<Vec<T>>, written_back: Receiver<Vec<T>>) -> Window<T> {
        Window {
            held: BTreeMap::new(),
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
        }
    }

    /// Takes `rows` (emptying it), then hands on every row that nothing
    /// still to come, as `mark` says, can sort before.
    pub(super) fn take(&mut self, rows: &mut Vec<T>, mark: Mark) {
        for row in rows.drain(..) {
            let key = row.order();
            if let Some(written) = self.written.filter(|w| key < *w) {
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
            self.held.insert((key, seq), slot);
        }
        let bound = mark.bound();
        let max_held = self.max_held;
        self.release(|held, key| held > max_held || bound.is_some_and(|b| key < b));
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
        self.release(|_, _| true);
    }

    /// Flushes, and counts the rows that came out of order.
    pub(super) fn finish(mut self, diags: &mut Diagnostics) {
        self.flush();
        self.rows = Vec::new();
        let Some(((ts, frame), (before_ts, before_frame))) = self.first_late else {
            return;
        };
        let detail = format!(
            "{} rows were written after rows later in their order (first: one at {ts}, frame \
             {frame}, after one at {before_ts}, frame {before_frame}): more than {} rows waited \
             at once for an earlier request's answer, and the earliest were written first; \
             `--format json` or `--format table` sorts the whole list",
            self.late, self.max_held,
        );
        diags.add(DiagnosticKind::RowOrder, "rows", "order", detail);
    }

    /// Hands on rows from the earliest while `due(rows held, its key)`.
    fn release(&mut self, due: impl Fn(usize, Key) -> bool) {
        while self.written_back.try_recv().is_ok() {}
        let mut batch = Vec::new();
        while let Some((&(key, seq), &slot)) = self.held.first_key_value() {
            if !due(self.held.len(), key) {
                break;
            }
            self.held.remove(&(key, seq));
            self.written = Some(self.written.map_or(key, |w| w.max(key)));
            if let Some(row) = self.rows[slot].take() {
                batch.push(row);
            }
            self.free.push(slot);
            if batch.len() == BATCH {
                self.hand_on(std::mem::take(&mut batch));
            }
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
