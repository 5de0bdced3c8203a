//! Kafka frames over reassembled TCP streams → paired [`Exchange`]s.
//!
//! Takes: [`StreamEvent`]s from [`crate::tcp`]. Gives: [`Exchange`]s (one
//! per request/response pair, or lone side), [`ClosedConnection`]s for
//! connections that carried group traffic, and diagnostics. The only module
//! that imports kafka-protocol.
//!
//! Which connections are Kafka: those with an end on a configured port
//! (`--port`, default 9092), the broker being that end (so roles the TCP
//! layer guessed wrong are flipped); with `detect_ports`, also connections
//! whose first bytes in one direction are a plausible request header and
//! whose first answer carries the same correlation id (see `detect`).
//! TLS on a Kafka port yields one `Encrypted` diagnostic and the connection
//! is ignored.
//!
//! Files: `framing` splits frames (`resync` finds them again, `rules`
//! says what each direction keeps), `header` reads headers by hand,
//! `detect` recognises Kafka on unnamed ports, `decode` and
//! `decode_response` decode the group APIs through `guard` (which keeps
//! corrupt array counts from aborting), `consumer_protocol` reads the
//! embedded subscription/assignment, `legacy` the versions the crate
//! dropped, `guess` names the API of an answer without request,
//! `connection` pairs, `exchange` is the output type, `apis` and
//! `errors` name things as Kafka does.
//!
//! Closes: [`KafkaDecoder::take_closed`] returns the connections that
//! carried group traffic (a request naming a group) and have since closed,
//! with the last client id, group, member id and static id used on them;
//! [`crate::normalize::events_from_close`] makes `ConnectionClosed` events
//! of them. Call it after each event (or once at the end).

mod apis;
mod connection;
mod consumer_protocol;
mod data_path;
mod decode;
mod decode_data;
mod decode_response;
mod detect;
mod errors;
mod exchange;
mod fetch_memory;
mod framing;
mod guard;
mod guess;
mod header;
mod legacy;
mod offsets_v10;
mod partial;
mod resync;
mod rules;

use crate::event::Source;

pub use apis::api_name;
pub(crate) use consumer_protocol::MAX_KEPT_PER_MESSAGE;
pub use errors::error_name;
pub use exchange::{ClosedConnection, Exchange};

use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::fast_hash::FastMap;
use crate::tcp::{ConnectionKey, Direction, StreamEvent};
use crate::time::Timestamp;

use connection::Connection;
use detect::{Pending, Verdict};
use exchange::{Ctx, Ends};

/// The earliest time and frame an exchange still to come can carry, by
/// group ([`KafkaDecoder::open_by_group`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenByGroup {
    /// Requests that may name any group or none, and bytes not yet told
    /// Kafka: they hold back every group.
    pub ungrouped: Option<(Timestamp, u64)>,
    /// Requests whose events name one group, by that group.
    pub groups: FastMap<Box<str>, (Timestamp, u64)>,
}

/// The earlier of two times and frames, either possibly absent.
pub(crate) fn earliest(
    a: Option<(Timestamp, u64)>,
    b: Option<(Timestamp, u64)>,
) -> Option<(Timestamp, u64)> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// How to find and read Kafka.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KafkaConfig {
    /// Broker ports (`--port`, repeatable; default 9092).
    pub ports: Vec<u16>,
    /// Also recognise Kafka on other ports from the traffic.
    pub detect_ports: bool,
    /// Largest group-API frame buffered whole (bigger ones are skipped with
    /// a diagnostic).
    pub max_frame_len: usize,
}

impl Default for KafkaConfig {
    fn default() -> Self {
        KafkaConfig {
            ports: vec![9092],
            detect_ports: true,
            max_frame_len: 16 * 1024 * 1024,
        }
    }
}

/// A connection's role in the decoder.
enum Conn {
    /// Not classified yet (no configured port): first bytes kept.
    Pending(Pending),
    /// Kafka; `flipped` when requests flow in [`Direction::ToClient`].
    Kafka {
        c: Box<Connection>,
        flipped: bool,
        seen: [bool; 2],
    },
    /// Kafka by its port, no byte carried yet: the connection's state
    /// is made at its first byte, gap or close ([`KafkaDecoder::wake`]).
    /// A SYN flood or a capture of idle connections left a 544-byte state
    /// and its label per connection that never carried a byte: 320,000
    /// such connections passed the hostile benchmark's 512 MiB limit.
    Quiet(Quiet),
    /// Not Kafka, or encrypted: ignored.
    Ignored,
}

/// What a [`Conn::Quiet`] connection's state is made from.
struct Quiet {
    key: ConnectionKey,
    syn_seen: bool,
    flipped: bool,
}

/// Turns stream events into exchanges.
pub struct KafkaDecoder {
    config: KafkaConfig,
    source: Source,
    conns: FastMap<u64, Conn>,
    exchange_ids: u64,
    closed: Vec<ClosedConnection>,
    cut_frames: u64,
    /// Assignment stamps per client id (see [`Ctx::assignments`]).
    assignments: FastMap<String, u64>,
    kept_left: usize,
    /// Room the frame splitters hand their pieces on in, reused by every
    /// segment (a new vector per segment was an allocation each).
    pieces: Vec<framing::Piece>,
}

/// Heap bytes that the lists of all decoded messages of a run (every
/// capture) may keep: members, protocols, assignments, topics, partitions.
/// Past it, later messages keep their other fields but no lists, with an
/// `undecodable_message` diagnostic each. Real captures stay far below (a
/// partition costs 4 bytes, a topic or member about 100); the cap keeps a
/// crafted capture of many 16 MiB group messages under 512 MB.
pub const MAX_KEPT_PER_RUN: usize = 128 << 20;

impl KafkaDecoder {
    /// A decoder for one input named `source` (used in diagnostics).
    pub fn new(config: KafkaConfig, source: Source) -> Self {
        KafkaDecoder {
            config,
            source,
            conns: FastMap::default(),
            exchange_ids: 0,
            closed: Vec::new(),
            cut_frames: 0,
            assignments: FastMap::default(),
            pieces: Vec::new(),
            kept_left: MAX_KEPT_PER_RUN,
        }
    }

    /// The last exchange id handed out. Ids (the `exchange` of each wire
    /// [`crate::event::EventKind`]) are unique within one decoder; when
    /// several inputs are decoded one after another, start each decoder
    /// with [`KafkaDecoder::continue_exchange_ids`] from the previous one's
    /// last id to keep them unique over the run.
    pub fn last_exchange_id(&self) -> u64 {
        self.exchange_ids
    }

    /// Kafka frames (any API) that a stream hole cut short so far: the
    /// capture's snaplen, or lost bytes.
    pub fn cut_frames(&self) -> u64 {
        self.cut_frames
    }

    /// Bytes of decoded lists kept so far against [`MAX_KEPT_PER_RUN`].
    pub fn kept_bytes(&self) -> usize {
        MAX_KEPT_PER_RUN - self.kept_left
    }

    /// Continues a run whose earlier inputs kept `bytes` of decoded lists.
    pub fn continue_kept_bytes(&mut self, bytes: usize) {
        self.kept_left = MAX_KEPT_PER_RUN.saturating_sub(bytes);
    }

    /// Makes the next exchange id `after + 1`.
    pub fn continue_exchange_ids(&mut self, after: u64) {
        self.exchange_ids = self.exchange_ids.max(after);
    }

    /// Handles one event from the TCP layer.
    pub fn on_stream_event(
        &mut self,
        ev: &StreamEvent<'_>,
        diags: &mut Diagnostics,
        out: &mut Vec<Exchange>,
    ) {
        match *ev {
            StreamEvent::Opened {
                conn,
                key,
                syn_seen,
                ..
            } => self.open(conn, key, syn_seen),
            StreamEvent::Data {
                conn,
                dir,
                ts,
                frame,
                bytes,
            } => self.data(conn, dir, ts, frame, bytes, diags, out),
            StreamEvent::Gap {
                conn,
                dir,
                ts,
                frame,
                missing_bytes,
                ..
            } => self.gap(conn, dir, ts, frame, missing_bytes, diags, out),
            StreamEvent::Closed {
                conn,
                ts,
                frame,
                reset,
            } => self.close(conn, ts, frame, reset, diags, out),
        }
    }

    /// Ends the input: requests still unanswered are emitted with no
    /// response (one `UnansweredRequest` diagnostic each); connections
    /// still being classified are classified on what was seen.
    pub fn finish(&mut self, diags: &mut Diagnostics, out: &mut Vec<Exchange>) {
        let mut ids: Vec<u64> = self.conns.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            self.settle_pending(id, diags, out);
            // One at a time, each let go once flushed: the quiet
            // connections' states are not all made at once at the end.
            self.wake(id);
            if let Some(Conn::Kafka { mut c, .. }) = self.conns.remove(&id) {
                let mut ctx = Ctx {
                    diags,
                    out,
                    exchange_ids: &mut self.exchange_ids,
                    cut_frames: &mut self.cut_frames,
                    assignments: &mut self.assignments,
                    kept_left: &mut self.kept_left,
                    pieces: &mut self.pieces,
                };
                c.flush(&mut ctx);
            }
        }
        self.conns.clear();
    }

    /// Connections that carried group traffic and have closed since the
    /// last call (see [`crate::normalize::events_from_close`]).
    pub fn take_closed(&mut self) -> Vec<ClosedConnection> {
        std::mem::take(&mut self.closed)
    }

    /// The earliest request time and frame an exchange still to come can
    /// carry: a request waiting for its answer, or bytes of a connection
    /// not yet told Kafka (`decode` writes its rows in that order as they
    /// come, [`crate::input`]). One pass over the live connections.
    pub fn oldest_open(&self) -> Option<(Timestamp, u64)> {
        self.conns
            .values()
            .filter_map(|c| match c {
                Conn::Pending(p) => p.first_held(),
                Conn::Kafka { c, .. } => c.oldest_waiting(),
                Conn::Quiet(_) | Conn::Ignored => None,
            })
            .min()
    }

    /// [`Self::oldest_open`] told apart by group: each group's requests
    /// waiting for their answer ([`Connection::waiting`]), and apart from
    /// them everything else (requests that may name any group or none,
    /// bytes not yet told Kafka). A JoinGroup parked for its rebalance
    /// timeout then holds back its own group's events only.
    pub fn open_by_group(&self) -> OpenByGroup {
        let mut open = OpenByGroup::default();
        for c in self.conns.values() {
            match c {
                Conn::Pending(p) => open.ungrouped = earliest(open.ungrouped, p.first_held()),
                Conn::Kafka { c, .. } => {
                    for (key, group) in c.waiting() {
                        match group {
                            Some(g) => {
                                let at = open.groups.entry(Box::from(g)).or_insert(key);
                                *at = (*at).min(key);
                            }
                            None => open.ungrouped = earliest(open.ungrouped, Some(key)),
                        }
                    }
                }
                Conn::Quiet(_) | Conn::Ignored => {}
            }
        }
        open
    }

    /// Bytes held across all connections (frame buffers and detection).
    pub fn buffered_bytes(&self) -> usize {
        self.conns
            .values()
            .map(|c| match c {
                Conn::Pending(p) => p.buffered_bytes(),
                Conn::Kafka { c, .. } => c.buffered_bytes(),
                Conn::Quiet(_) | Conn::Ignored => 0,
            })
            .sum()
    }

    fn open(&mut self, conn: u64, key: ConnectionKey, syn_seen: bool) {
        let ports = &self.config.ports;
        let quiet = |flipped| {
            Conn::Quiet(Quiet {
                key,
                syn_seen,
                flipped,
            })
        };
        let state = if ports.contains(&key.server.port()) {
            quiet(false)
        } else if ports.contains(&key.client.port()) {
            quiet(true)
        } else if self.config.detect_ports {
            Conn::Pending(Pending::new(key, syn_seen))
        } else {
            Conn::Ignored
        };
        self.conns.insert(conn, state);
    }

    fn kafka(&self, conn: u64, key: ConnectionKey, syn_seen: bool, flipped: bool) -> Conn {
        let (client, server) = if flipped {
            (key.server, key.client)
        } else {
            (key.client, key.server)
        };
        let ends = Ends {
            conn,
            client,
            server,
        };
        let c = Connection::new(
            ends,
            syn_seen,
            self.config.max_frame_len,
            self.source.clone(),
        );
        Conn::Kafka {
            c: Box::new(c),
            flipped,
            seen: [false; 2],
        }
    }

    /// Makes a [`Conn::Quiet`] connection's state, now that it carries
    /// something: the state it would have had since its SYN.
    fn wake(&mut self, conn: u64) {
        if let Some(Conn::Quiet(q)) = self.conns.get(&conn) {
            let state = self.kafka(conn, q.key, q.syn_seen, q.flipped);
            self.conns.insert(conn, state);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn data(
        &mut self,
        conn: u64,
        dir: Direction,
        ts: Timestamp,
        frame: u64,
        bytes: &[u8],
        diags: &mut Diagnostics,
        out: &mut Vec<Exchange>,
    ) {
        match self.conns.get_mut(&conn) {
            Some(Conn::Pending(p)) => {
                p.push(dir, ts, frame, bytes);
                if let Some(verdict) = p.verdict(false) {
                    self.classified(conn, verdict, diags, out);
                }
                return;
            }
            Some(Conn::Quiet(_)) => self.wake(conn),
            _ => {}
        }
        let source = self.source.clone();
        let Some(Conn::Kafka { c, flipped, seen }) = self.conns.get_mut(&conn) else {
            return;
        };
        let requests = (dir == Direction::ToServer) != *flipped;
        let first = !std::mem::replace(&mut seen[usize::from(requests)], true);
        if first && header::looks_like_tls(bytes) {
            let at = format!("frame {frame}");
            diags.add(
                DiagnosticKind::Encrypted,
                &source,
                at,
                "encrypted: use the broker logs",
            );
            self.conns.insert(conn, Conn::Ignored);
            return;
        }
        let mut ctx = Ctx {
            diags,
            out,
            exchange_ids: &mut self.exchange_ids,
            cut_frames: &mut self.cut_frames,
            assignments: &mut self.assignments,
            kept_left: &mut self.kept_left,
            pieces: &mut self.pieces,
        };
        if requests {
            c.on_request_bytes(bytes, ts, frame, &mut ctx);
        } else {
            c.on_response_bytes(bytes, ts, frame, &mut ctx);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn gap(
        &mut self,
        conn: u64,
        dir: Direction,
        ts: Timestamp,
        frame: u64,
        missing: u64,
        diags: &mut Diagnostics,
        out: &mut Vec<Exchange>,
    ) {
        self.wake(conn);
        match self.conns.get_mut(&conn) {
            Some(Conn::Pending(p)) => p.gap(dir, ts, frame, missing),
            Some(Conn::Kafka { c, flipped, .. }) => {
                let requests = (dir == Direction::ToServer) != *flipped;
                let mut ctx = Ctx {
                    diags,
                    out,
                    exchange_ids: &mut self.exchange_ids,
                    cut_frames: &mut self.cut_frames,
                    assignments: &mut self.assignments,
                    kept_left: &mut self.kept_left,
                    pieces: &mut self.pieces,
                };
                c.on_gap(requests, missing, ts, frame, &mut ctx);
            }
            _ => {}
        }
    }

    fn close(
        &mut self,
        conn: u64,
        ts: Timestamp,
        frame: u64,
        reset: bool,
        diags: &mut Diagnostics,
        out: &mut Vec<Exchange>,
    ) {
        self.settle_pending(conn, diags, out);
        self.wake(conn);
        if let Some(Conn::Kafka { mut c, .. }) = self.conns.remove(&conn) {
            let mut ctx = Ctx {
                diags,
                out,
                exchange_ids: &mut self.exchange_ids,
                cut_frames: &mut self.cut_frames,
                assignments: &mut self.assignments,
                kept_left: &mut self.kept_left,
                pieces: &mut self.pieces,
            };
            c.flush(&mut ctx);
            self.closed.extend(c.closed(ts, frame, reset));
        }
    }

    /// Classifies a still-pending connection on what it has sent so far.
    fn settle_pending(&mut self, conn: u64, diags: &mut Diagnostics, out: &mut Vec<Exchange>) {
        if let Some(Conn::Pending(p)) = self.conns.get(&conn) {
            let verdict = p.verdict(true).unwrap_or(Verdict::NotKafka);
            self.classified(conn, verdict, diags, out);
        }
    }

    /// Acts on a detection verdict: replays the kept bytes into a new Kafka
    /// connection, or forgets them.
    fn classified(
        &mut self,
        conn: u64,
        verdict: Verdict,
        diags: &mut Diagnostics,
        out: &mut Vec<Exchange>,
    ) {
        let Some(Conn::Pending(p)) = self.conns.remove(&conn) else {
            return;
        };
        let Verdict::Kafka { flipped } = verdict else {
            self.conns.insert(conn, Conn::Ignored);
            return;
        };
        let state = self.kafka(conn, p.key(), p.syn_seen(), flipped);
        self.conns.insert(conn, state);
        for chunk in p.into_chunks() {
            if chunk.gap > 0 {
                self.gap(
                    conn,
                    chunk.dir,
                    chunk.ts,
                    chunk.frame,
                    chunk.gap,
                    diags,
                    out,
                );
            } else {
                self.data(
                    conn,
                    chunk.dir,
                    chunk.ts,
                    chunk.frame,
                    &chunk.bytes,
                    diags,
                    out,
                );
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;
