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
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Mutex, PoisonError};
use std::thread::ScopedJoinHandle;

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

/// A stage's thread. Joined when its input ends, or as soon as it is found
/// gone: a stage's thread only ends early by panicking, and its panic is
/// then raised on the thread that feeds it instead of after the rest of
/// the input has been read for nothing.
struct Stage<'scope> {
    thread: Option<ScopedJoinHandle<'scope, ()>>,
}

impl Stage<'_> {
    fn join(&mut self) {
        if let Some(thread) = self.thread.take() {
            if let Err(panic) = thread.join() {
                std::panic::resume_unwind(panic);
            }
        }
    }
}

/// The producer's side: batches items and hands each full one on.
struct Emitter<'h, 'a, 'scope> {
    batch: Batch,
    handoff: &'h mut Handoff<'a, 'scope, Batch>,
    /// Batches the consumer has emptied, for reuse.
    recycled: Receiver<Batch>,
}

impl Emitter<'_, '_, '_> {
    fn emit(&mut self, handed: Handed<'_>) {
        self.batch.push(handed);
        if self.batch.full() {
            self.send();
        }
    }

    fn send(&mut self) {
        let next = self.recycled.try_recv().unwrap_or_default();
        self.handoff.send(std::mem::replace(&mut self.batch, next));
    }

    /// Hands on what is left.
    fn flush(&mut self) {
        if !self.batch.items.is_empty() {
            self.send();
        }
    }
}

/// Whether to run a capture's stages on threads of their own: when a
/// second core is there to take them (and always in this crate's unit
/// tests, so that they compare both paths on any machine).
pub(crate) fn worthwhile() -> bool {
    cfg!(test) || std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

/// Runs `produce` on this thread and `consume` on a second one named
/// `name` ([`beside`]), handing over every item `produce` emits, in order,
/// in batches; returns what `produce` returns once `consume` has taken
/// every item.
pub(crate) fn run<T>(
    name: &str,
    produce: impl FnOnce(&mut dyn FnMut(Handed<'_>)) -> T,
    mut consume: impl FnMut(Handed<'_>) + Send,
) -> T {
    let (back, recycled) = mpsc::channel::<Batch>();
    beside(
        name,
        move |mut batch: Batch| {
            batch.replay(&mut consume);
            batch.recycle();
            // The producer may have finished: then the batch is dropped.
            let _ = back.send(batch);
        },
        |handoff| {
            let mut emitter = Emitter {
                batch: Batch::default(),
                handoff,
                recycled,
            };
            let produced = produce(&mut |handed| emitter.emit(handed));
            emitter.flush();
            produced
        },
    )
}

/// The sending end of [`beside`]: hands items to the worker's thread, or
/// to the worker in place when no thread could be had. It can move to
/// another thread.
pub(crate) struct Handoff<'a, 'scope, T> {
    to: To<'a, 'scope, T>,
}

enum To<'a, 'scope, T> {
    Thread {
        tx: Option<SyncSender<T>>,
        worker: Stage<'scope>,
    },
    InPlace(&'a mut (dyn FnMut(T) + Send)),
}

impl<T> Handoff<'_, '_, T> {
    /// Hands `item` to the worker, waiting while [`BATCHES_IN_FLIGHT`]
    /// items wait for it.
    pub(crate) fn send(&mut self, item: T) {
        match &mut self.to {
            To::InPlace(work) => work(item),
            To::Thread { tx, worker } => {
                if let Some(sender) = tx {
                    if sender.send(item).is_err() {
                        *tx = None;
                        worker.join();
                    }
                }
            }
        }
    }

    /// Closes the channel and waits for the worker.
    fn finish(self) {
        if let To::Thread { tx, mut worker } = self.to {
            drop(tx);
            worker.join();
        }
    }
}

/// Runs `body` on this thread with a [`Handoff`] whose items `work` takes,
/// in order, on a second thread named `name` (or in place where no thread
/// can be had); returns what `body` returns once `work` has taken every
/// item.
pub(crate) fn beside<T: Send, R>(
    name: &str,
    work: impl FnMut(T) + Send,
    body: impl FnOnce(&mut Handoff<'_, '_, T>) -> R,
) -> R {
    let work = Mutex::new(work);
    let (tx, items) = mpsc::sync_channel::<T>(BATCHES_IN_FLIGHT);
    std::thread::scope(|scope| {
        let shared = &work;
        let spawned =
            std::thread::Builder::new()
                .name(name.into())
                .spawn_scoped(scope, move || {
                    let mut work = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    items.into_iter().for_each(&mut *work);
                });
        let Ok(thread) = spawned else {
            let mut work = work.lock().unwrap_or_else(PoisonError::into_inner);
            let mut handoff = Handoff {
                to: To::InPlace(&mut *work),
            };
            return body(&mut handoff);
        };
        let mut handoff = Handoff {
            to: To::Thread {
                tx: Some(tx),
                worker: Stage {
                    thread: Some(thread),
                },
            },
        };
        let done = body(&mut handoff);
        handoff.finish();
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
            // Mostly small, every 500th past a whole batch, so batches end
            // both on the item count and on the bytes.
            let len = if frame % 500 == 0 {
                BATCH_BYTES + 1000
            } else {
                (frame as usize * 7919) % 3000
            };
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
            "test",
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
        run("test", |_| (), |_| calls += 1);
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
    fn a_consumer_panic_stops_the_producer_at_its_next_batch() {
        let items = items(50);
        let emitted = std::cell::Cell::new(0usize);
        let rounds = 2_000;
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run(
                "test",
                |emit| {
                    for _ in 0..rounds {
                        emit_all(&items, emit);
                        emitted.set(emitted.get() + 1);
                    }
                },
                |_| panic!("consumer failed"),
            )
        }));
        assert!(outcome.is_err());
        // A batch holds at most BATCH_ITEMS items (100 per round here):
        // the producer stops within a few batches of the first.
        assert!(emitted.get() < 10 * BATCH_ITEMS / 100, "{}", emitted.get());
    }

    #[test]
    #[should_panic(expected = "consumer failed")]
    fn a_consumer_panic_is_raised_on_the_producer_thread() {
        let items = items(50);
        run(
            "test",
            |emit| emit_all(&items, emit),
            |h| {
                if matches!(h, Handed::Stream(StreamEvent::Closed { .. })) {
                    panic!("consumer failed");
                }
            },
        );
    }
}
