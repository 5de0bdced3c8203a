//! One capture's stages on several cores: packets and TCP on the reading
//! thread, the Kafka stage on a second, normalizing and folding on a third.
//!
//! Takes: a producer that reads packets and reassembles them, handing each
//! [`StreamEvent`] (and the end of each packet's events) to an emitter, and
//! a consumer for those same items ([`run`]); or any work to run beside a
//! body that hands it items ([`beside`]). Gives: the consumer called with
//! the same items in the same order as if it had been called in place, on
//! a thread of its own, so the stages of a capture's reading overlap
//! (issue 12: on a group-traffic-dense capture, reading and reassembling
//! packets took about a quarter of the time, decoding Kafka about half and
//! normalizing and folding what was decoded about a sixth, one after the
//! other).
//!
//! Stream events cross in batches: each batch copies its stream bytes into
//! one buffer, batches are recycled, and at most [`BATCHES_IN_FLIGHT`]
//! wait at once, so memory stays a few MiB whatever the capture's size.
//! Watch mode does not use this: it hands each packet's events on at once.

use std::ops::Range;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};

use crate::tcp::StreamEvent;

/// What the producer hands on.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Handed<'a> {
    /// The reassembler's next event.
    Stream(StreamEvent<'a>),
    /// Every event of one packet has been handed on.
    PacketDone,
}

/// A batch is sent once its bytes reach this size ...
const BATCH_BYTES: usize = 256 * 1024;

/// ... or its items this count.
const BATCH_ITEMS: usize = 4096;

/// Batches sent and not yet taken: the producer waits beyond this.
pub(crate) const BATCHES_IN_FLIGHT: usize = 4;

/// A recycled batch keeps at most this much room (one batch can hold a
/// large run of reassembled bytes released at once).
const KEPT_ROOM: usize = 4 * BATCH_BYTES;

/// One item as it crosses: stream bytes are a range of the batch's buffer.
#[derive(Debug)]
enum Item {
    Stream(StreamEvent<'static>),
    Data {
        event: StreamEvent<'static>,
        bytes: Range<usize>,
    },
    PacketDone,
}

#[derive(Debug, Default)]
struct Batch {
    items: Vec<Item>,
    bytes: Vec<u8>,
}

impl Batch {
    fn push(&mut self, handed: Handed<'_>) {
        let item = match handed {
            Handed::PacketDone => Item::PacketDone,
            Handed::Stream(ev @ StreamEvent::Data { bytes, .. }) => {
                let start = self.bytes.len();
                self.bytes.extend_from_slice(bytes);
                Item::Data {
                    event: ev.with_bytes(&[]),
                    bytes: start..self.bytes.len(),
                }
            }
            Handed::Stream(other) => Item::Stream(other.with_bytes(&[])),
        };
        self.items.push(item);
    }

    fn full(&self) -> bool {
        self.bytes.len() >= BATCH_BYTES || self.items.len() >= BATCH_ITEMS
    }

    /// Hands every item to `consume`, in order.
    fn replay(&self, consume: &mut impl FnMut(Handed<'_>)) {
        for item in &self.items {
            consume(match item {
                Item::Stream(ev) => Handed::Stream(*ev),
                Item::PacketDone => Handed::PacketDone,
                Item::Data { event, bytes } => {
                    Handed::Stream(event.with_bytes(&self.bytes[bytes.clone()]))
                }
            });
        }
    }

    /// Empties the batch for reuse, keeping a bounded room.
    fn recycle(&mut self) {
        self.items.clear();
        self.bytes.clear();
        self.bytes.shrink_to(KEPT_ROOM);
    }
}

/// The producer's side: batches items and sends each full one.
struct Emitter {
    batch: Batch,
    to_consumer: SyncSender<Batch>,
    recycled: Receiver<Batch>,
    /// The consumer has gone (it panicked): items are dropped, and its
    /// panic is raised when it is joined.
    gone: bool,
}

impl Emitter {
    fn emit(&mut self, handed: Handed<'_>) {
        if self.gone {
            return;
        }
        self.batch.push(handed);
        if self.batch.full() {
            self.send();
        }
    }

    fn send(&mut self) {
        let next = self.recycled.try_recv().unwrap_or_default();
        let full = std::mem::replace(&mut self.batch, next);
        if self.to_consumer.send(full).is_err() {
            self.gone = true;
        }
    }
}

/// Whether a second core is there to take the Kafka stage.
pub(crate) fn worthwhile() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

/// Runs `produce` on this thread and `consume` on a second one, handing
/// over every item `produce` emits, in order; returns what `produce`
/// returns once `consume` has taken every item.
pub(crate) fn run<T>(
    produce: impl FnOnce(&mut dyn FnMut(Handed<'_>)) -> T,
    mut consume: impl FnMut(Handed<'_>) + Send,
) -> T {
    let (to_consumer, batches) = mpsc::sync_channel::<Batch>(BATCHES_IN_FLIGHT);
    let (back, recycled): (Sender<Batch>, Receiver<Batch>) = mpsc::channel();
    std::thread::scope(|scope| {
        let consumer = scope.spawn(move || {
            for mut batch in batches {
                batch.replay(&mut consume);
                batch.recycle();
                // The producer may have finished: then the batch is dropped.
                let _ = back.send(batch);
            }
        });
        let mut emitter = Emitter {
            batch: Batch::default(),
            to_consumer,
            recycled,
            gone: false,
        };
        let produced = produce(&mut |handed| emitter.emit(handed));
        if !emitter.batch.items.is_empty() && !emitter.gone {
            emitter.send();
        }
        // Closing the channel ends the consumer's loop.
        drop(emitter);
        if let Err(panic) = consumer.join() {
            std::panic::resume_unwind(panic);
        }
        produced
    })
}

/// The sending end of [`beside`]'s channel (it can move to another thread).
pub(crate) struct Handoff<T> {
    to_worker: Option<SyncSender<T>>,
}

impl<T> Handoff<T> {
    /// Hands `item` to the worker, waiting while [`BATCHES_IN_FLIGHT`]
    /// items wait for it. Once the worker has gone (it panicked), items
    /// are dropped: its panic is raised when it is joined.
    pub(crate) fn send(&mut self, item: T) {
        if let Some(tx) = &self.to_worker {
            if tx.send(item).is_err() {
                self.to_worker = None;
            }
        }
    }
}

/// Runs `body` on this thread with a [`Handoff`] whose items `work` takes,
/// in order, on a second thread; returns what `body` returns once `work`
/// has taken every item.
pub(crate) fn beside<T: Send, R>(
    mut work: impl FnMut(T) + Send,
    body: impl FnOnce(Handoff<T>) -> R,
) -> R {
    let (tx, items) = mpsc::sync_channel::<T>(BATCHES_IN_FLIGHT);
    std::thread::scope(|scope| {
        let worker = scope.spawn(move || items.into_iter().for_each(&mut work));
        // `body` owns the sending end: its return closes the channel.
        let done = body(Handoff {
            to_worker: Some(tx),
        });
        if let Err(panic) = worker.join() {
            std::panic::resume_unwind(panic);
        }
        done
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::{ConnectionKey, Direction};
    use crate::time::Timestamp;

    /// What a consumer saw, with the bytes copied out.
    #[derive(Debug, PartialEq)]
    enum Seen {
        Data(u64, Vec<u8>),
        Other(String),
        PacketDone,
    }

    fn seen(handed: Handed<'_>) -> Seen {
        match handed {
            Handed::PacketDone => Seen::PacketDone,
            Handed::Stream(StreamEvent::Data { frame, bytes, .. }) => {
                Seen::Data(frame, bytes.to_vec())
            }
            Handed::Stream(other) => Seen::Other(format!("{other:?}")),
        }
    }

    fn items(n: u64) -> Vec<(StreamEvent<'static>, Vec<u8>)> {
        let key = ConnectionKey {
            client: "10.0.0.1:40000".parse().unwrap(),
            server: "10.0.0.2:9092".parse().unwrap(),
        };
        let ts = Timestamp::from_secs_nanos(1_700_000_000, 0);
        let mut out = vec![(
            StreamEvent::Opened {
                conn: 1,
                key,
                ts,
                frame: 1,
                syn_seen: true,
            },
            Vec::new(),
        )];
        for frame in 2..n {
            // Sizes from 0 to past a whole batch, so batches end mid-run.
            let len = (frame as usize * 7919) % (BATCH_BYTES + 1000);
            let bytes: Vec<u8> = (0..len).map(|i| (i as u64 ^ frame) as u8).collect();
            let ev = StreamEvent::Data {
                conn: 1,
                dir: Direction::ToServer,
                ts,
                frame,
                bytes: &[],
            };
            out.push((ev, bytes));
        }
        out.push((
            StreamEvent::Closed {
                conn: 1,
                ts,
                frame: n,
                reset: false,
            },
            Vec::new(),
        ));
        out
    }

    fn emit_all(items: &[(StreamEvent<'static>, Vec<u8>)], emit: &mut dyn FnMut(Handed<'_>)) {
        for (ev, bytes) in items {
            let ev = ev.with_bytes(bytes);
            emit(Handed::Stream(ev));
            emit(Handed::PacketDone);
        }
    }

    #[test]
    fn the_consumer_sees_every_item_in_order_with_its_bytes() {
        let items = items(5000);
        let mut direct = Vec::new();
        emit_all(&items, &mut |h| direct.push(seen(h)));
        let mut across = Vec::new();
        let returned = run(
            |emit| {
                emit_all(&items, emit);
                "produced"
            },
            |h| across.push(seen(h)),
        );
        assert_eq!(returned, "produced");
        assert_eq!(across.len(), 2 * items.len());
        assert_eq!(across, direct);
    }

    #[test]
    fn nothing_emitted_reaches_the_consumer_as_nothing() {
        let mut calls = 0;
        run(|_| (), |_| calls += 1);
        assert_eq!(calls, 0);
    }

    #[test]
    fn a_recycled_batch_keeps_a_bounded_room() {
        let mut batch = Batch::default();
        let big = vec![0u8; 8 * BATCH_BYTES];
        batch.push(Handed::Stream(StreamEvent::Data {
            conn: 1,
            dir: Direction::ToClient,
            ts: Timestamp::from_secs_nanos(0, 0),
            frame: 1,
            bytes: &big,
        }));
        assert!(batch.full());
        batch.recycle();
        assert!(batch.items.is_empty() && batch.bytes.is_empty());
        assert!(batch.bytes.capacity() <= KEPT_ROOM);
    }

    #[test]
    #[should_panic(expected = "consumer failed")]
    fn a_consumer_panic_is_raised_on_the_producer_thread() {
        let items = items(50);
        run(
            |emit| emit_all(&items, emit),
            |h| {
                if matches!(h, Handed::Stream(StreamEvent::Closed { .. })) {
                    panic!("consumer failed");
                }
            },
        );
    }
}
