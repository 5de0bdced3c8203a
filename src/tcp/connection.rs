//! One TCP connection: who is client and server, and its two directions.
//!
//! Takes: the segments of one 4-tuple (already matched by
//! [`super::Reassembler`]). Gives: [`StreamEvent`]s for it: data and gaps of
//! each direction, and its close. Stream gaps become diagnostics here, where
//! the connection and direction are known.

use std::net::SocketAddr;

use super::reassembly::{HalfStream, Incoming, Limits, Released};
use super::{ConnectionKey, Direction, StreamEvent};
use crate::capture::Segment;
use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::time::Timestamp;

/// Where events go, with what they need to name the connection.
pub(super) struct Emit<'e> {
    pub source: &'e str,
    pub diags: &'e mut Diagnostics,
    pub out: &'e mut dyn FnMut(StreamEvent<'_>),
}

/// State of one live connection.
#[derive(Debug)]
pub(super) struct Connection {
    pub id: u64,
    pub key: ConnectionKey,
    /// Index 0: client to server; 1: server to client.
    halves: [HalfStream; 2],
    pub last_ts: Timestamp,
}

/// What a segment did to the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum After {
    Open,
    Closed,
}

fn index(dir: Direction) -> usize {
    match dir {
        Direction::ToServer => 0,
        Direction::ToClient => 1,
    }
}

impl Connection {
    pub fn new(id: u64, key: ConnectionKey, ts: Timestamp) -> Self {
        Connection {
            id,
            key,
            halves: Default::default(),
            last_ts: ts,
        }
    }

    pub fn direction(&self, src: SocketAddr) -> Direction {
        if src == self.key.client {
            Direction::ToServer
        } else {
            Direction::ToClient
        }
    }

    /// The wire sequence number of the first data byte of the client's
    /// stream, once known (to recognise a retransmitted SYN).
    pub fn client_base(&self) -> Option<u32> {
        let half = &self.halves[0];
        half.started().then(|| half.base())
    }

    /// Next expected sequence numbers, client's then server's (kept after
    /// close to recognise stale retransmissions).
    pub fn next_seqs(&self) -> [Option<u32>; 2] {
        self.halves
            .each_ref()
            .map(|h| h.started().then(|| h.next_seq()))
    }

    /// Learns a direction's start without data: from a SYN-ACK's
    /// acknowledgment, the client's first byte (when its SYN was missed).
    pub fn start_if_unknown(&mut self, dir: Direction, seq: u32) {
        let half = &mut self.halves[index(dir)];
        if !half.started() {
            half.start(seq);
        }
    }

    pub fn segment(&mut self, seg: &Segment<'_>, limits: &Limits, emit: &mut Emit<'_>) -> After {
        self.last_ts = self.last_ts.max(seg.ts);
        let dir = self.direction(seg.src);
        if seg.flags.rst {
            self.flush("connection reset", emit);
            self.closed(seg, true, emit);
            return After::Closed;
        }
        // A SYN occupies one sequence number: data starts after it.
        let data_seq = seg.seq.wrapping_add(u32::from(seg.flags.syn));
        self.start_if_unknown(dir, data_seq);
        if seg.flags.syn && seg.flags.ack && dir == Direction::ToClient {
            self.start_if_unknown(Direction::ToServer, seg.ack);
        }
        let incoming = Incoming {
            seq: data_seq,
            payload: seg.payload,
            missing: seg.missing,
            fin: seg.flags.fin,
            ts: seg.ts,
            frame: seg.frame,
        };
        self.take(dir, incoming, limits, emit);
        if self.halves.iter().all(HalfStream::finished) {
            self.closed(seg, false, emit);
            return After::Closed;
        }
        After::Open
    }

    /// Hands one segment to its direction, then gives up on holes that have
    /// waited too long in either direction.
    fn take(
        &mut self,
        dir: Direction,
        incoming: Incoming<'_>,
        limits: &Limits,
        emit: &mut Emit<'_>,
    ) {
        let overflowed = self.with_sink(
            dir,
            emit,
            |half, limits, sink| half.segment(incoming, limits, sink),
            limits,
        );
        if overflowed {
            let detail = format!(
                "out-of-order buffer limit reached on {}; skipped a hole",
                self.describe(dir)
            );
            let at = format!("frame {}", incoming.frame);
            emit.diags
                .add(DiagnosticKind::BufferOverflow, emit.source, at, detail);
        }
        for d in [Direction::ToServer, Direction::ToClient] {
            self.with_sink(
                d,
                emit,
                |half, limits, sink| half.expire(incoming.ts, limits, sink),
                limits,
            );
        }
    }

    /// True if either direction holds out-of-order data.
    pub fn has_pending(&self) -> bool {
        self.halves.iter().any(HalfStream::has_pending)
    }

    /// Gives up on holes that have waited too long, in both directions.
    pub fn expire(&mut self, now: Timestamp, limits: &Limits, emit: &mut Emit<'_>) {
        for d in [Direction::ToServer, Direction::ToClient] {
            self.with_sink(
                d,
                emit,
                |half, limits, sink| half.expire(now, limits, sink),
                limits,
            );
        }
    }

    /// Releases everything buffered in both directions, skipping holes.
    pub fn flush(&mut self, reason: &'static str, emit: &mut Emit<'_>) {
        let limits = Limits {
            max_buffered: 0,
            max_pending_segments: 0,
            hole_timeout_nanos: 0,
        };
        for d in [Direction::ToServer, Direction::ToClient] {
            self.with_sink(d, emit, |half, _, sink| half.flush(reason, sink), &limits);
        }
    }

    fn closed(&self, seg: &Segment<'_>, reset: bool, emit: &mut Emit<'_>) {
        (emit.out)(StreamEvent::Closed {
            conn: self.id,
            ts: seg.ts,
            frame: seg.frame,
            reset,
        });
    }

    fn describe(&self, dir: Direction) -> String {
        describe(self.key, dir)
    }

    /// Runs `f` on one direction with a sink that turns [`Released`] items
    /// into events (and gaps into diagnostics).
    fn with_sink<T>(
        &mut self,
        dir: Direction,
        emit: &mut Emit<'_>,
        f: impl FnOnce(&mut HalfStream, &Limits, &mut dyn FnMut(Released<'_>)) -> T,
        limits: &Limits,
    ) -> T {
        // The key by reference (only a gap reads it): copied, its 64 bytes
        // went into the sink with every packet.
        let (conn, key) = (self.id, &self.key);
        let half = &mut self.halves[index(dir)];
        let Emit { source, diags, out } = emit;
        let mut sink = |r: Released<'_>| match r {
            Released::Data { ts, frame, bytes } => out(StreamEvent::Data {
                conn,
                dir,
                ts,
                frame,
                bytes,
            }),
            Released::Gap {
                ts,
                frame,
                missing,
                reason,
            } => {
                let on = describe(*key, dir);
                let detail =
                    format!("{missing} bytes missing on {on}; resynced after them ({reason})");
                diags.add(
                    DiagnosticKind::StreamGap,
                    source,
                    format!("frame {frame}"),
                    detail,
                );
                out(StreamEvent::Gap {
                    conn,
                    dir,
                    ts,
                    frame,
                    missing_bytes: missing,
                    snapped: false,
                });
            }
            // Not a loss: counted by the capture reader, one note per input.
            Released::Snapped { ts, frame, missing } => out(StreamEvent::Gap {
                conn,
                dir,
                ts,
                frame,
                missing_bytes: missing,
                snapped: true,
            }),
        };
        f(half, limits, &mut sink)
    }
}

/// `client -> server (client to server)` or the reverse, for diagnostics.
pub(super) fn describe(key: ConnectionKey, dir: Direction) -> String {
    let (c, s) = (key.client, key.server);
    match dir {
        Direction::ToServer => format!("{c} -> {s} (client to server)"),
        Direction::ToClient => format!("{s} -> {c} (server to client)"),
    }
}
