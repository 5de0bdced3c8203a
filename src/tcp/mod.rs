//! TCP segments in, per-connection byte streams out.
//!
//! Takes: [`Segment`]s in capture order from [`crate::capture`]. Gives:
//! [`StreamEvent`]s: a connection opened (with client and server named),
//! contiguous data of one direction, a gap where bytes were lost, a close.
//! Our own code (no crate fits: pcap-analyzer's reassembly is tied to its
//! flow engine). The shape follows Zeek and pcap-analyzer: a table of
//! connections keyed by 4-tuple, two directions each
//! ([`reassembly::HalfStream`]), data released as soon as it is contiguous.
//!
//! Rules worth knowing:
//! - Roles: the SYN's sender is the client; else the SYN-ACK's receiver;
//!   else the end on a configured Kafka port is the server; else the lower
//!   port is (ephemeral ports are high).
//! - A connection is opened only by a SYN or a segment with payload, so the
//!   last ACKs of a closed connection do not resurrect it. Without a SYN the
//!   first byte seen starts the stream, with one `MidStreamStart` diagnostic.
//! - A connection closes when both FINs have been reached in order, or on a
//!   RST; its state is dropped then, and a new SYN on the same 4-tuple gets a
//!   new `conn` id. Open connections are not closed at [`Reassembler::finish`]
//!   (they were not closed on the wire); their buffered bytes are released.
//! - Memory: out-of-order bytes per direction are capped, and so are the
//!   number of connections (the least recently active one is evicted).

use crate::event::Source;
use std::collections::VecDeque;
use std::net::SocketAddr;

use crate::capture::Segment;
use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::fast_hash::{FastMap, FastSet};
use crate::time::Timestamp;

mod connection;
pub mod reassembly;

use connection::{After, Connection, Emit};
use reassembly::Limits;

/// The two ends of a connection, by role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConnectionKey {
    /// The end that connects (a Kafka client, or a broker fetching as a follower).
    pub client: SocketAddr,
    /// The end that listens (a broker).
    pub server: SocketAddr,
}

/// Which way bytes flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client to server: Kafka requests.
    ToServer,
    /// Server to client: Kafka responses.
    ToClient,
}

/// What the reassembler reports, in capture order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamEvent<'a> {
    /// A connection was first seen. Always before its other events.
    Opened {
        /// Unique per connection instance (a reused 4-tuple gets a new id).
        conn: u64,
        /// Client and server.
        key: ConnectionKey,
        /// Time of the packet that opened it.
        ts: Timestamp,
        /// Frame of that packet.
        frame: u64,
        /// True if its SYN or SYN-ACK was captured.
        syn_seen: bool,
    },
    /// The next bytes of one direction.
    Data {
        /// Connection.
        conn: u64,
        /// Direction.
        dir: Direction,
        /// Time of the packet that made these bytes available (never a later
        /// ACK's).
        ts: Timestamp,
        /// Frame of that packet.
        frame: u64,
        /// The bytes.
        bytes: &'a [u8],
    },
    /// Bytes of one direction that were never captured; data resumes after.
    Gap {
        /// Connection.
        conn: u64,
        /// Direction.
        dir: Direction,
        /// Time of the first packet after the hole.
        ts: Timestamp,
        /// Frame of that packet.
        frame: u64,
        /// How many bytes are missing.
        missing_bytes: u64,
        /// True when the bytes were sent in sequence but cut off by the
        /// capture's snaplen (a hole of known length inside a packet), false
        /// when packets were lost.
        snapped: bool,
    },
    /// The connection closed (both FINs, or a RST).
    Closed {
        /// Connection.
        conn: u64,
        /// Time of the closing packet.
        ts: Timestamp,
        /// Frame of the closing packet.
        frame: u64,
        /// True for a RST.
        reset: bool,
    },
}

impl StreamEvent<'_> {
    /// The time of the packet behind the event.
    pub fn ts(&self) -> Timestamp {
        match *self {
            StreamEvent::Opened { ts, .. }
            | StreamEvent::Data { ts, .. }
            | StreamEvent::Gap { ts, .. }
            | StreamEvent::Closed { ts, .. } => ts,
        }
    }

    /// The same event over other bytes: a `Data` event's bytes replaced by
    /// `bytes`, every other event as it is (for handing events between
    /// threads, where the bytes travel in a buffer of their own).
    pub fn with_bytes(self, bytes: &[u8]) -> StreamEvent<'_> {
        match self {
            StreamEvent::Data {
                conn,
                dir,
                ts,
                frame,
                ..
            } => StreamEvent::Data {
                conn,
                dir,
                ts,
                frame,
                bytes,
            },
            StreamEvent::Opened {
                conn,
                key,
                ts,
                frame,
                syn_seen,
            } => StreamEvent::Opened {
                conn,
                key,
                ts,
                frame,
                syn_seen,
            },
            StreamEvent::Gap {
                conn,
                dir,
                ts,
                frame,
                missing_bytes,
                snapped,
            } => StreamEvent::Gap {
                conn,
                dir,
                ts,
                frame,
                missing_bytes,
                snapped,
            },
            StreamEvent::Closed {
                conn,
                ts,
                frame,
                reset,
            } => StreamEvent::Closed {
                conn,
                ts,
                frame,
                reset,
            },
        }
    }
}

/// Reassembly settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpConfig {
    /// Ports where Kafka brokers listen (the server side when no SYN says).
    pub kafka_ports: Vec<u16>,
    /// Out-of-order bytes buffered per direction before a hole is skipped.
    pub max_buffered_per_direction: usize,
    /// Connections tracked at once; beyond, the least recently active goes.
    pub max_connections: usize,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            kafka_ports: vec![9092],
            max_buffered_per_direction: 4 << 20,
            max_connections: 100_000,
        }
    }
}

/// Out-of-order segments buffered per direction before a hole is skipped.
pub const MAX_PENDING_SEGMENTS: usize = 4096;
/// Capture time data may wait behind a hole: 2 s, far above any LAN
/// retransmission timeout (Linux's minimum RTO is 200 ms).
pub const HOLE_TIMEOUT_NANOS: i64 = 2_000_000_000;
/// How often (capture time) every connection's holes are checked against
/// [`HOLE_TIMEOUT_NANOS`]; between sweeps only the connection a packet
/// belongs to is checked.
const SWEEP_EVERY_NANOS: i64 = 1_000_000_000;
/// Closed 4-tuples remembered to ignore their stale retransmissions.
const RECENTLY_CLOSED_CAP: usize = 4096;

/// A connection's 4-tuple as the tables' key, the same whichever way a
/// segment goes: each endpoint packed as its address's bits (an IPv4
/// address in the low 32), and its port with whether it is IPv6, the lower
/// endpoint first: hashed and compared as three integers (two
/// `SocketAddr`s were hashed field by field and compared variant by
/// variant at every packet; this took the reassembler's share of a dense
/// capture's 30 MB slice from 124.4 to 97.5 M instructions), and 48 bytes
/// where the pair took 64. Segments carry no IPv6 flow label or scope
/// ([`crate::capture::Segment`]), so equal keys are equal address pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tuple {
    addrs: [u128; 2],
    ports: u64,
}

/// Each field as a number (a derived hash wrote the addresses as a
/// 32-byte slice with its length: the long byte hash, twice the work).
impl std::hash::Hash for Tuple {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u128(self.addrs[0]);
        state.write_u128(self.addrs[1]);
        state.write_u64(self.ports);
    }
}

/// An endpoint packed for [`Tuple`]: its address's bits, and its port with
/// bit 16 set for IPv6.
fn packed(a: SocketAddr) -> (u128, u32) {
    match a {
        SocketAddr::V4(v4) => (u128::from(u32::from(*v4.ip())), u32::from(v4.port())),
        SocketAddr::V6(v6) => (u128::from(*v6.ip()), u32::from(v6.port()) | 1 << 16),
    }
}

/// Reassembles every connection of one capture.
#[derive(Debug)]
pub struct Reassembler {
    config: TcpConfig,
    limits: Limits,
    source: Source,
    /// Boxed: a connection's state is several hundred bytes, and a map of
    /// them inline holds that much in every empty slot too, and twice over
    /// while it grows (issue 14's 320 k SYN-only connections peaked at
    /// 445-452 MB that way, 342-354 MB boxed, and aborted under a 512 MiB
    /// `ulimit -v`).
    conns: FastMap<Tuple, Box<Connection>>,
    /// Next expected (client, server) sequence numbers of closed 4-tuples.
    closed: FastMap<Tuple, (ConnectionKey, [Option<u32>; 2])>,
    next_id: u64,
    last_sweep: Option<Timestamp>,
    /// Eviction order: connections in the order they were opened or last
    /// found active at an eviction (a clock, so each packet costs O(1) and
    /// each eviction amortised O(1), at any number of connections).
    order: VecDeque<(Tuple, u64, Timestamp)>,
    /// Connections holding data behind a hole: the only ones a sweep visits.
    waiting: FastSet<Tuple>,
}

/// Both orders of a 4-tuple map to one table key.
fn table_key(a: SocketAddr, b: SocketAddr) -> Tuple {
    let (a, b) = (packed(a), packed(b));
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    Tuple {
        addrs: [lo.0, hi.0],
        ports: u64::from(lo.1) << 32 | u64::from(hi.1),
    }
}

impl Reassembler {
    /// A reassembler for the capture named `source` (used in diagnostics).
    pub fn new(config: TcpConfig, source: Source) -> Self {
        let limits = Limits {
            max_buffered: config.max_buffered_per_direction,
            max_pending_segments: MAX_PENDING_SEGMENTS,
            hole_timeout_nanos: HOLE_TIMEOUT_NANOS,
        };
        Reassembler {
            config,
            limits,
            source,
            conns: FastMap::default(),
            closed: FastMap::default(),
            next_id: 1,
            last_sweep: None,
            order: VecDeque::new(),
            waiting: FastSet::default(),
        }
    }

    /// Changes how long data waits behind a hole (capture time).
    pub fn set_hole_timeout_nanos(&mut self, nanos: i64) {
        self.limits.hole_timeout_nanos = nanos;
    }

    /// Connections currently tracked.
    pub fn open_connections(&self) -> usize {
        self.conns.len()
    }

    /// Takes the next segment of the capture.
    pub fn push(
        &mut self,
        seg: &Segment<'_>,
        diags: &mut Diagnostics,
        out: &mut dyn FnMut(StreamEvent<'_>),
    ) {
        self.sweep(seg.ts, diags, out);
        let tk = table_key(seg.src, seg.dst);
        let mut emit = Emit {
            source: &self.source,
            diags,
            out,
        };
        if let Some(conn) = self.conns.get_mut(&tk) {
            if !is_new_syn(conn, seg) {
                if conn.segment(seg, &self.limits, &mut emit) == After::Closed {
                    self.forget(tk);
                } else if conn.has_pending() {
                    self.waiting.insert(tk);
                }
                return;
            }
            // A SYN with a new ISN: the 4-tuple was reused and its close was
            // not captured.
            conn.flush("connection reused", &mut emit);
            (emit.out)(StreamEvent::Closed {
                conn: conn.id,
                ts: seg.ts,
                frame: seg.frame,
                reset: false,
            });
            self.conns.remove(&tk);
        }
        if !seg.flags.syn && (seg.payload.is_empty() || self.is_stale(tk, seg)) {
            return; // ACK, FIN or RST of a connection we do not track
        }
        self.open(tk, seg, diags, out);
    }

    /// Releases everything still buffered (skipping holes) at the end of
    /// the capture. Connections stay open; call once.
    pub fn finish(&mut self, diags: &mut Diagnostics, out: &mut dyn FnMut(StreamEvent<'_>)) {
        let mut emit = Emit {
            source: &self.source,
            diags,
            out,
        };
        let mut conns: Vec<&mut Connection> = self.conns.values_mut().map(|c| &mut **c).collect();
        conns.sort_by_key(|c| c.id);
        for conn in conns {
            conn.flush("end of capture", &mut emit);
        }
    }

    /// Once a second of capture time, gives up on holes in connections that
    /// have gone quiet, so their data is not held back until the end.
    fn sweep(
        &mut self,
        now: Timestamp,
        diags: &mut Diagnostics,
        out: &mut dyn FnMut(StreamEvent<'_>),
    ) {
        let last = *self.last_sweep.get_or_insert(now);
        if now.0.saturating_sub(last.0) < SWEEP_EVERY_NANOS {
            return;
        }
        self.last_sweep = Some(now);
        let conns = &mut self.conns;
        self.waiting
            .retain(|tk| conns.get(tk).is_some_and(|c| c.has_pending()));
        let mut waiting: Vec<&mut Connection> = conns
            .iter_mut()
            .filter(|(tk, _)| self.waiting.contains(*tk))
            .map(|(_, c)| &mut **c)
            .collect();
        waiting.sort_by_key(|c| c.id);
        let mut emit = Emit {
            source: &self.source,
            diags,
            out,
        };
        for conn in waiting {
            conn.expire(now, &self.limits, &mut emit);
        }
    }

    fn open(
        &mut self,
        tk: Tuple,
        seg: &Segment<'_>,
        diags: &mut Diagnostics,
        out: &mut dyn FnMut(StreamEvent<'_>),
    ) {
        if self.conns.len() >= self.config.max_connections.max(1) {
            self.evict(seg, diags, out);
        }
        let key = self.roles(seg);
        let id = self.next_id;
        self.next_id += 1;
        let syn_seen = seg.flags.syn;
        out(StreamEvent::Opened {
            conn: id,
            key,
            ts: seg.ts,
            frame: seg.frame,
            syn_seen,
        });
        if !syn_seen {
            let detail = format!(
                "{} -> {}: no SYN captured; the stream starts at the first byte seen",
                key.client, key.server
            );
            diags.add(
                DiagnosticKind::MidStreamStart,
                &self.source,
                format!("frame {}", seg.frame),
                detail,
            );
        }
        let mut conn = Box::new(Connection::new(id, key, seg.ts));
        let mut emit = Emit {
            source: &self.source,
            diags,
            out,
        };
        if conn.segment(seg, &self.limits, &mut emit) == After::Open {
            if conn.has_pending() {
                self.waiting.insert(tk);
            }
            self.order.push_back((tk, id, conn.last_ts));
            self.conns.insert(tk, conn);
            if self.order.len() > 2 * self.conns.len() + 1024 {
                let conns = &self.conns;
                self.order
                    .retain(|(tk, id, _)| conns.get(tk).is_some_and(|c| c.id == *id));
            }
        }
    }

    /// Client and server of a new connection (see the module docs).
    fn roles(&self, seg: &Segment<'_>) -> ConnectionKey {
        let src_is_server = if seg.flags.syn {
            seg.flags.ack
        } else if self.config.kafka_ports.contains(&seg.dst.port()) {
            false
        } else if self.config.kafka_ports.contains(&seg.src.port()) {
            true
        } else {
            seg.src.port() < seg.dst.port()
        };
        if src_is_server {
            ConnectionKey {
                client: seg.dst,
                server: seg.src,
            }
        } else {
            ConnectionKey {
                client: seg.src,
                server: seg.dst,
            }
        }
    }

    fn forget(&mut self, tk: Tuple) {
        self.waiting.remove(&tk);
        if let Some(conn) = self.conns.remove(&tk) {
            if self.closed.len() >= RECENTLY_CLOSED_CAP {
                self.closed.clear();
            }
            self.closed.insert(tk, (conn.key, conn.next_seqs()));
        }
    }

    /// True for data at or before where a closed connection on this 4-tuple
    /// ended: a late retransmission, not a new connection.
    fn is_stale(&self, tk: Tuple, seg: &Segment<'_>) -> bool {
        let Some((key, next)) = self.closed.get(&tk) else {
            return false;
        };
        let i = usize::from(seg.src != key.client);
        next[i].is_some_and(|end| (seg.seq.wrapping_sub(end) as i32) < 0)
    }

    /// Drops the least recently active connection to make room; its close
    /// is reported at the packet that needed the room.
    fn evict(
        &mut self,
        seg: &Segment<'_>,
        diags: &mut Diagnostics,
        out: &mut dyn FnMut(StreamEvent<'_>),
    ) {
        // The front of the clock: gone connections are dropped from it,
        // ones active since they were queued go to the back.
        let tk = loop {
            let Some((tk, id, seen)) = self.order.pop_front() else {
                return;
            };
            match self.conns.get(&tk) {
                Some(c) if c.id == id && c.last_ts > seen => {
                    self.order.push_back((tk, id, c.last_ts));
                }
                Some(c) if c.id == id => break tk,
                _ => {}
            }
        };
        let Some(mut conn) = self.conns.remove(&tk) else {
            return;
        };
        self.waiting.remove(&tk);
        let mut emit = Emit {
            source: &self.source,
            diags,
            out,
        };
        conn.flush("connection evicted", &mut emit);
        let detail = format!(
            "more than {} connections at once; stopped following {} -> {}",
            self.config.max_connections, conn.key.client, conn.key.server
        );
        emit.diags.add(
            DiagnosticKind::BufferOverflow,
            &self.source,
            format!("frame {}", seg.frame),
            detail,
        );
        (emit.out)(StreamEvent::Closed {
            conn: conn.id,
            ts: seg.ts,
            frame: seg.frame,
            reset: false,
        });
    }
}

/// A SYN (not SYN-ACK) whose ISN differs from the tracked client's.
fn is_new_syn(conn: &Connection, seg: &Segment<'_>) -> bool {
    seg.flags.syn
        && !seg.flags.ack
        && seg.src == conn.key.client
        && conn
            .client_base()
            .is_some_and(|base| base != seg.seq.wrapping_add(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::synth::{Side, SynthPacket, TcpConversation};

    #[test]
    fn a_table_key_is_one_connection_either_way_and_no_other() {
        let addr = |s: &str| s.parse::<SocketAddr>().unwrap();
        let pairs = [
            ("10.0.0.1:50000", "10.0.0.2:9092"),
            ("10.0.0.1:9092", "10.0.0.2:50000"),
            ("10.0.0.1:50000", "10.0.0.2:9093"),
            ("10.0.0.1:50000", "10.0.0.1:9092"),
            ("[::ffff:10.0.0.1]:50000", "[::ffff:10.0.0.2]:9092"),
            ("[fd00::1]:50000", "[fd00::2]:9092"),
            ("[::a00:1]:50000", "[::a00:2]:9092"),
        ];
        for (i, (a, b)) in pairs.iter().enumerate() {
            let (a, b) = (addr(a), addr(b));
            assert_eq!(table_key(a, b), table_key(b, a));
            for (j, (c, d)) in pairs.iter().enumerate() {
                let same = table_key(a, b) == table_key(addr(c), addr(d));
                assert_eq!(same, i == j, "{a} {b} against {c} {d}");
            }
        }
    }

    /// An owned event, for comparing.
    #[derive(Clone, Debug, PartialEq, Eq)]
    enum Ev {
        Opened {
            conn: u64,
            client: SocketAddr,
            server: SocketAddr,
            syn: bool,
            frame: u64,
        },
        Data {
            conn: u64,
            dir: Direction,
            frame: u64,
            ts: Timestamp,
            bytes: Vec<u8>,
        },
        Gap {
            conn: u64,
            dir: Direction,
            frame: u64,
            missing: u64,
        },
        Closed {
            conn: u64,
            frame: u64,
            reset: bool,
        },
    }

    fn owned(e: StreamEvent<'_>) -> Ev {
        match e {
            StreamEvent::Opened {
                conn,
                key,
                frame,
                syn_seen,
                ..
            } => Ev::Opened {
                conn,
                client: key.client,
                server: key.server,
                syn: syn_seen,
                frame,
            },
            StreamEvent::Data {
                conn,
                dir,
                frame,
                ts,
                bytes,
            } => Ev::Data {
                conn,
                dir,
                frame,
                ts,
                bytes: bytes.to_vec(),
            },
            StreamEvent::Gap {
                conn,
                dir,
                frame,
                missing_bytes,
                ..
            } => Ev::Gap {
                conn,
                dir,
                frame,
                missing: missing_bytes,
            },
            StreamEvent::Closed {
                conn, frame, reset, ..
            } => Ev::Closed { conn, frame, reset },
        }
    }

    fn segment(p: &SynthPacket, frame: u64) -> Segment<'_> {
        Segment {
            frame,
            ts: p.ts,
            src: p.src,
            dst: p.dst,
            seq: p.seq,
            ack: p.ack,
            flags: p.flags,
            payload: &p.payload,
            missing: 0,
        }
    }

    /// Runs packets (frames numbered from 1) through a reassembler and
    /// checks that every event of a connection follows its Opened.
    fn run_with(packets: &[SynthPacket], config: TcpConfig) -> (Vec<Ev>, Diagnostics) {
        let mut r = Reassembler::new(config, crate::event::Source::from("t.pcap"));
        let mut diags = Diagnostics::default();
        let mut events = Vec::new();
        for (i, p) in packets.iter().enumerate() {
            r.push(&segment(p, i as u64 + 1), &mut diags, &mut |e| {
                events.push(owned(e))
            });
        }
        r.finish(&mut diags, &mut |e| events.push(owned(e)));
        let mut opened = std::collections::HashSet::new();
        for e in &events {
            match e {
                Ev::Opened { conn, .. } => {
                    assert!(opened.insert(*conn), "conn {conn} opened twice")
                }
                Ev::Data { conn, .. } | Ev::Gap { conn, .. } | Ev::Closed { conn, .. } => {
                    assert!(opened.contains(conn), "event before Opened: {e:?}")
                }
            }
        }
        (events, diags)
    }

    fn run(packets: &[SynthPacket]) -> (Vec<Ev>, Diagnostics) {
        run_with(packets, TcpConfig::default())
    }

    fn stream(events: &[Ev], dir: Direction) -> Vec<u8> {
        let mut out = Vec::new();
        for e in events {
            if let Ev::Data { dir: d, bytes, .. } = e {
                if *d == dir {
                    out.extend_from_slice(bytes);
                }
            }
        }
        out
    }

    fn data_frames(events: &[Ev], dir: Direction) -> Vec<u64> {
        events
            .iter()
            .filter(|e| matches!(e, Ev::Data { dir: d, .. } if *d == dir))
            .map(frame_of)
            .collect()
    }

    fn frame_of(e: &Ev) -> u64 {
        match e {
            Ev::Opened { frame, .. }
            | Ev::Data { frame, .. }
            | Ev::Gap { frame, .. }
            | Ev::Closed { frame, .. } => *frame,
        }
    }

    fn bytes(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 % 251) as u8).collect()
    }

    fn conv() -> TcpConversation {
        TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092")
    }

    #[test]
    fn a_payload_split_over_many_segments_comes_out_whole_with_each_packets_frame() {
        let mut c = conv().segment_size(7);
        c.handshake().client_sends(&bytes(1000)).server_sends(b"ok");
        let (events, diags) = run(c.packets());
        assert_eq!(stream(&events, Direction::ToServer), bytes(1000));
        assert_eq!(stream(&events, Direction::ToClient), b"ok");
        assert_eq!(
            data_frames(&events, Direction::ToServer),
            (4..4 + 143).collect::<Vec<u64>>()
        );
        assert_eq!(diags.total(), 0);
        assert!(matches!(
            events[0],
            Ev::Opened {
                syn: true,
                frame: 1,
                ..
            }
        ));
    }

    #[test]
    fn several_messages_in_one_segment_are_one_data_event() {
        let mut c = conv();
        c.handshake().client_sends(b"first|second|third");
        let (events, _) = run(c.packets());
        let data: Vec<&Ev> = events
            .iter()
            .filter(|e| matches!(e, Ev::Data { .. }))
            .collect();
        assert_eq!(data.len(), 1);
        assert!(
            matches!(data[0], Ev::Data { frame: 4, bytes, .. } if bytes == b"first|second|third")
        );
    }

    #[test]
    fn data_carries_its_own_packet_time_not_the_acks() {
        let mut c = conv().step_nanos(1_000_000);
        c.handshake()
            .client_sends(b"req")
            .wait_nanos(50_000_000)
            .ack(Side::Server);
        let ts = c.packets()[3].ts;
        let (events, _) = run(c.packets());
        assert!(events
            .iter()
            .any(|e| matches!(e, Ev::Data { ts: t, frame: 4, .. } if *t == ts)));
    }

    #[test]
    fn out_of_order_segments_are_released_in_order_when_the_hole_fills() {
        let mut c = conv().segment_size(10);
        c.handshake().client_sends(&bytes(40));
        c.swap(4, 5); // frames 5 and 6: bytes 10..20 arrive before 0..10? no: 20..30 before 10..20
        let (events, diags) = run(c.packets());
        assert_eq!(stream(&events, Direction::ToServer), bytes(40));
        // 0..10 at frame 4; 20..30 waits in frame 5 until frame 6 fills
        // 10..20, so both are released at frame 6; 30..40 at frame 7.
        assert_eq!(data_frames(&events, Direction::ToServer), [4, 6, 6, 7]);
        assert_eq!(diags.total(), 0);
    }

    #[test]
    fn retransmissions_and_overlaps_do_not_duplicate_bytes() {
        let mut c = conv().segment_size(10);
        c.handshake().client_sends(&bytes(30));
        c.retransmit(4).retransmit(3);
        let all = bytes(60);
        c.send_at(Side::Client, 25, &all[25..45]); // overlaps the end, adds 30..45
        c.send_at(Side::Client, 50, &all[50..60]); // beyond a hole
        c.send_at(Side::Client, 40, &all[40..55]); // fills 45..50, overlaps both sides
        let (events, diags) = run(c.packets());
        assert_eq!(stream(&events, Direction::ToServer), all);
        assert_eq!(diags.total(), 0);
    }

    #[test]
    fn sequence_numbers_wrap_past_two_to_the_32() {
        let mut c = conv().isns(u32::MAX - 20, u32::MAX - 3).segment_size(9);
        c.handshake()
            .client_sends(&bytes(200))
            .server_sends(&bytes(100));
        c.swap(5, 7);
        let (events, diags) = run(c.packets());
        assert_eq!(stream(&events, Direction::ToServer), bytes(200));
        assert_eq!(stream(&events, Direction::ToClient), bytes(100));
        assert_eq!(diags.total(), 0);
    }

    #[test]
    fn a_lost_segment_becomes_a_gap_and_the_stream_resyncs_after_it() {
        let mut c = conv();
        c.handshake()
            .client_sends(b"before")
            .lose(Side::Client, 50)
            .client_sends(b"after")
            .server_sends(b"resp");
        let (events, diags) = run(c.packets());
        assert_eq!(stream(&events, Direction::ToServer), b"beforeafter");
        assert_eq!(stream(&events, Direction::ToClient), b"resp");
        let gap = events.iter().find(|e| matches!(e, Ev::Gap { .. })).unwrap();
        assert_eq!(
            *gap,
            Ev::Gap {
                conn: 1,
                dir: Direction::ToServer,
                frame: 5,
                missing: 50
            }
        );
        assert_eq!(diags.count(DiagnosticKind::StreamGap), 1);
        // The bytes after the gap keep their own frame.
        assert_eq!(data_frames(&events, Direction::ToServer), [4, 5]);
    }

    #[test]
    fn a_hole_unfilled_for_two_seconds_of_capture_time_is_skipped_before_the_end() {
        let mut c = conv();
        c.handshake()
            .client_sends(b"a")
            .lose(Side::Client, 5)
            .client_sends(b"b");
        c.wait_nanos(2_500_000_000).client_sends(b"c");
        let (events, _) = run(c.packets());
        let gap_at = events
            .iter()
            .position(|e| matches!(e, Ev::Gap { .. }))
            .unwrap();
        let c_at = events
            .iter()
            .position(|e| matches!(e, Ev::Data { bytes, .. } if bytes == b"c"))
            .unwrap();
        assert!(
            gap_at < c_at,
            "the gap must be skipped when frame 6 arrives, not at finish"
        );
        assert_eq!(stream(&events, Direction::ToServer), b"abc");
    }

    #[test]
    fn a_capture_starting_mid_connection_starts_at_the_first_byte_seen() {
        let mut c = conv().isns(77_777, 999);
        c.server_sends(b"tail of a response")
            .client_sends(b"next request")
            .client_sends(b"another");
        let (events, diags) = run(c.packets());
        let client: SocketAddr = "10.0.0.1:50000".parse().unwrap();
        assert!(matches!(events[0], Ev::Opened { syn: false, client: cl, .. } if cl == client));
        assert_eq!(stream(&events, Direction::ToClient), b"tail of a response");
        assert_eq!(stream(&events, Direction::ToServer), b"next requestanother");
        assert_eq!(diags.count(DiagnosticKind::MidStreamStart), 1);
    }

    #[test]
    fn roles_come_from_the_syn_ack_then_the_kafka_port_then_the_lower_port() {
        let mut c = conv();
        c.handshake().client_sends(b"x");
        let (events, _) = run(&c.packets()[1..]);
        let client: SocketAddr = "10.0.0.1:50000".parse().unwrap();
        assert!(matches!(events[0], Ev::Opened { syn: true, client: cl, .. } if cl == client));
        assert_eq!(stream(&events, Direction::ToServer), b"x");

        let mut odd = TcpConversation::new("10.0.0.2:19092", "10.0.0.1:40000");
        odd.client_sends(b"from the broker");
        let config = TcpConfig {
            kafka_ports: vec![19092],
            ..TcpConfig::default()
        };
        let (events, _) = run_with(odd.packets(), config);
        let broker: SocketAddr = "10.0.0.2:19092".parse().unwrap();
        assert!(matches!(events[0], Ev::Opened { server, .. } if server == broker));

        let mut plain = TcpConversation::new("10.0.0.1:5000", "10.0.0.2:60000");
        plain.client_sends(b"?");
        let (events, _) = run(plain.packets());
        let low: SocketAddr = "10.0.0.1:5000".parse().unwrap();
        assert!(matches!(events[0], Ev::Opened { server, .. } if server == low));
    }

    #[test]
    fn fin_from_both_sides_closes_and_a_reused_four_tuple_is_a_new_connection() {
        let mut first = conv();
        first
            .handshake()
            .client_sends(b"one")
            .server_sends(b"1")
            .fin(Side::Client)
            .fin(Side::Server)
            .ack(Side::Client);
        first.retransmit(3);
        let mut second = conv().isns(90_000, 70_000).starting_at(first.now());
        second.handshake().client_sends(b"two").rst(Side::Server);
        let packets: Vec<SynthPacket> = first
            .packets()
            .iter()
            .chain(second.packets())
            .cloned()
            .collect();
        let (events, diags) = run(&packets);
        let closes: Vec<&Ev> = events
            .iter()
            .filter(|e| matches!(e, Ev::Closed { .. }))
            .collect();
        assert_eq!(
            closes,
            [
                &Ev::Closed {
                    conn: 1,
                    frame: 7,
                    reset: false
                },
                &Ev::Closed {
                    conn: 2,
                    frame: 14,
                    reset: true
                }
            ]
        );
        let opens = events
            .iter()
            .filter(|e| matches!(e, Ev::Opened { .. }))
            .count();
        assert_eq!(
            opens, 2,
            "the late ACK and the stale retransmission must not reopen: {events:?}"
        );
        assert!(events.contains(&Ev::Data {
            conn: 2,
            dir: Direction::ToServer,
            frame: 13,
            ts: packets[12].ts,
            bytes: b"two".to_vec()
        }));
        assert_eq!(diags.total(), 0, "{diags:?}");
    }

    #[test]
    fn a_new_syn_on_a_tracked_four_tuple_closes_the_old_connection() {
        let mut first = conv();
        first.handshake().client_sends(b"one");
        let mut second = conv().isns(123_456, 1).starting_at(first.now());
        second.handshake().client_sends(b"two");
        let packets: Vec<SynthPacket> = first
            .packets()
            .iter()
            .chain(second.packets())
            .cloned()
            .collect();
        let (events, _) = run(&packets);
        assert!(events.contains(&Ev::Closed {
            conn: 1,
            frame: 5,
            reset: false
        }));
        assert!(events.contains(&Ev::Data {
            conn: 2,
            dir: Direction::ToServer,
            frame: 8,
            ts: packets[7].ts,
            bytes: b"two".to_vec()
        }));
    }

    #[test]
    fn the_out_of_order_buffer_cap_skips_the_hole_and_says_so() {
        let mut c = conv().segment_size(50);
        c.handshake()
            .client_sends(b"start")
            .lose(Side::Client, 10)
            .client_sends(&bytes(500));
        let config = TcpConfig {
            max_buffered_per_direction: 120,
            ..TcpConfig::default()
        };
        let (events, diags) = run_with(c.packets(), config);
        assert!(diags.count(DiagnosticKind::BufferOverflow) >= 1);
        assert_eq!(diags.count(DiagnosticKind::StreamGap), 1);
        let mut expected = b"start".to_vec();
        expected.extend(bytes(500));
        assert_eq!(stream(&events, Direction::ToServer), expected);
        // The gap was skipped while packets were still arriving, not at finish.
        let gap = events
            .iter()
            .position(|e| matches!(e, Ev::Gap { .. }))
            .unwrap();
        assert!(matches!(
            events[gap],
            Ev::Gap {
                missing: 10,
                frame: 5,
                ..
            }
        ));
        assert!(frame_of(&events[gap + 1]) < 14);
    }

    #[test]
    fn the_connection_table_is_bounded() {
        let mut packets = Vec::new();
        for port in 0..5u16 {
            let mut c =
                TcpConversation::new(&format!("10.0.0.1:{}", 40_000 + port), "10.0.0.2:9092");
            c.handshake().client_sends(b"hi");
            packets.extend(c.packets().iter().cloned());
        }
        let mut r = Reassembler::new(
            TcpConfig {
                max_connections: 2,
                ..TcpConfig::default()
            },
            crate::event::Source::from("t"),
        );
        let mut diags = Diagnostics::default();
        for (i, p) in packets.iter().enumerate() {
            r.push(&segment(p, i as u64 + 1), &mut diags, &mut |_| {});
            assert!(r.open_connections() <= 2);
        }
        assert_eq!(diags.count(DiagnosticKind::BufferOverflow), 3);
    }

    #[test]
    fn a_capture_file_read_and_reassembled_gives_back_both_streams() {
        use crate::capture::synth::{Link, PcapOptions, PcapWriter};
        let mut c = conv().segment_size(100).isns(u32::MAX - 150, 3);
        c.handshake()
            .client_sends(&bytes(1000))
            .server_sends(&bytes(300));
        c.swap(6, 8).retransmit(5);
        let mut w =
            PcapWriter::new(Vec::new(), Link::EthernetVlan(5), PcapOptions::default()).unwrap();
        c.write_to(&mut w).unwrap();
        let file = w.into_inner();
        let mut diags = Diagnostics::default();
        let mut r = Reassembler::new(TcpConfig::default(), crate::event::Source::from("t.pcap"));
        let mut events = Vec::new();
        crate::capture::read_capture(&file[..], "t.pcap", &mut diags, |s| {
            r.push(&s, &mut Diagnostics::default(), &mut |e| {
                events.push(owned(e))
            })
        })
        .unwrap();
        r.finish(&mut diags, &mut |e| events.push(owned(e)));
        assert_eq!(stream(&events, Direction::ToServer), bytes(1000));
        assert_eq!(stream(&events, Direction::ToClient), bytes(300));
        assert_eq!(diags.total(), 0);
    }

    #[test]
    fn a_snaplen_cut_capture_keeps_each_streams_sequence_space_without_lost_gaps() {
        use crate::capture::synth::{Link, PcapOptions, PcapWriter};
        let mut c = conv().segment_size(100);
        c.handshake()
            .client_sends(&bytes(1000))
            .server_sends(&bytes(300));
        // 14 Ethernet + 20 IP + 20 TCP + 40 payload bytes kept per packet.
        let options = PcapOptions {
            snaplen: 94,
            ..PcapOptions::default()
        };
        let mut w = PcapWriter::new(Vec::new(), Link::Ethernet, options).unwrap();
        c.write_to(&mut w).unwrap();
        let file = w.into_inner();
        let mut diags = Diagnostics::default();
        let mut r = Reassembler::new(TcpConfig::default(), crate::event::Source::from("t.pcap"));
        let mut events = Vec::new();
        let mut snapped = 0;
        let mut d_tcp = Diagnostics::default();
        crate::capture::read_capture(&file[..], "t.pcap", &mut diags, |s| {
            r.push(&s, &mut d_tcp, &mut |e| {
                if let StreamEvent::Gap {
                    snapped: true,
                    missing_bytes,
                    ..
                } = e
                {
                    snapped += missing_bytes;
                }
                events.push(owned(e))
            })
        })
        .unwrap();
        r.finish(&mut d_tcp, &mut |e| events.push(owned(e)));
        // Every segment keeps its first 40 bytes; the other 60 are holes of
        // known length, and nothing waits for a retransmission.
        let kept: Vec<u8> = (0..10)
            .flat_map(|i| bytes(1000)[i * 100..i * 100 + 40].to_vec())
            .collect();
        assert_eq!(stream(&events, Direction::ToServer), kept);
        assert_eq!(snapped, 10 * 60 + 3 * 60);
        assert_eq!(d_tcp.total(), 0, "no lost bytes: {d_tcp:?}");
        assert_eq!(diags.total(), 0, "cut packets are not malformed: {diags:?}");
    }

    #[test]
    fn a_quiet_connections_hole_is_skipped_once_capture_time_moves_on_elsewhere() {
        let mut quiet = conv();
        quiet
            .handshake()
            .client_sends(b"a")
            .lose(Side::Client, 3)
            .client_sends(b"b");
        let mut busy = TcpConversation::new("10.0.0.3:50001", "10.0.0.2:9092")
            .starting_at(quiet.now())
            .step_nanos(400_000_000);
        busy.handshake()
            .client_sends(b"1")
            .client_sends(b"2")
            .client_sends(b"3")
            .client_sends(b"4");
        busy.client_sends(b"5")
            .client_sends(b"6")
            .client_sends(b"7");
        let packets: Vec<SynthPacket> = quiet
            .packets()
            .iter()
            .chain(busy.packets())
            .cloned()
            .collect();
        let mut r = Reassembler::new(TcpConfig::default(), crate::event::Source::from("t"));
        let mut diags = Diagnostics::default();
        let mut events = Vec::new();
        for (i, p) in packets.iter().enumerate() {
            r.push(&segment(p, i as u64 + 1), &mut diags, &mut |e| {
                events.push(owned(e))
            });
        }
        // No finish: the sweep alone must have released "b" behind the gap.
        let gap = Ev::Gap {
            conn: 1,
            dir: Direction::ToServer,
            frame: 5,
            missing: 3,
        };
        let gap_at = events
            .iter()
            .position(|e| *e == gap)
            .expect("gap skipped by the sweep");
        let b_at = events
            .iter()
            .position(|e| matches!(e, Ev::Data { conn: 1, bytes, .. } if bytes == b"b"))
            .unwrap();
        assert_eq!(b_at, gap_at + 1);
    }

    /// xorshift64*: deterministic randomness without a crate.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// Shuffles packets locally (within a few places), duplicates some and
    /// adds overlapping re-sends, as a bad network would.
    fn mangle(c: &mut TcpConversation, rng: &mut Rng, all: &[u8]) {
        let n = c.packets().len();
        for _ in 0..n / 2 {
            let i = 3 + rng.below(n - 3);
            let j = (i + 1 + rng.below(4)).min(n - 1);
            c.swap(i, j);
        }
        for _ in 0..rng.below(6) {
            let i = 3 + rng.below(n - 3);
            c.retransmit(i);
        }
        for _ in 0..rng.below(6) {
            let from = rng.below(all.len());
            let to = (from + 1 + rng.below(300)).min(all.len());
            c.send_at(Side::Client, from as u32, &all[from..to]);
        }
    }

    #[test]
    fn random_reordering_duplication_and_overlap_never_change_the_stream() {
        let mut rng = Rng(0x5eed_cafe_f00d_0001);
        for round in 0..200 {
            let all = bytes(1 + rng.below(3000));
            let isn = rng.next() as u32;
            let mut c = conv().isns(isn, !isn).segment_size(1 + rng.below(200));
            c.handshake().client_sends(&all);
            mangle(&mut c, &mut rng, &all);
            let (events, diags) = run(c.packets());
            assert_eq!(stream(&events, Direction::ToServer), all, "round {round}");
            assert_eq!(diags.total(), 0, "round {round}: {diags:?}");
        }
    }

    #[test]
    fn random_loss_never_panics_and_every_byte_is_data_or_gap() {
        let mut rng = Rng(0x0bad_5eed_0000_0002);
        for round in 0..200 {
            let all = bytes(1 + rng.below(3000));
            let mut c = conv()
                .isns(rng.next() as u32, 9)
                .segment_size(1 + rng.below(200));
            c.handshake().client_sends(&all).fin(Side::Client);
            mangle(&mut c, &mut rng, &all);
            for _ in 0..rng.below(5) {
                let n = c.packets().len();
                c.drop_packet(3 + rng.below(n - 3));
            }
            let config = TcpConfig {
                max_buffered_per_direction: 1 + rng.below(2000),
                ..TcpConfig::default()
            };
            let (events, _) = run_with(c.packets(), config);
            let data = stream(&events, Direction::ToServer).len() as u64;
            let gaps: u64 = events
                .iter()
                .map(|e| {
                    if let Ev::Gap { missing, .. } = e {
                        *missing
                    } else {
                        0
                    }
                })
                .sum();
            assert!(
                data + gaps <= all.len() as u64,
                "round {round}: more bytes out than sent"
            );
            let seen_end = c
                .packets()
                .iter()
                .filter(|p| p.src == c.packets()[0].src && !p.payload.is_empty());
            let last = seen_end
                .map(|p| {
                    p.seq.wrapping_sub(c.packets()[0].seq.wrapping_add(1)) as u64
                        + p.payload.len() as u64
                })
                .max();
            if let Some(last) = last.filter(|_| c.packets()[0].flags.syn) {
                assert_eq!(
                    data + gaps,
                    last,
                    "round {round}: every byte up to the last seen is data or gap"
                );
            }
        }
    }

    #[test]
    fn stray_acks_and_resets_of_unknown_connections_open_nothing() {
        let mut c = conv();
        c.ack(Side::Client).rst(Side::Server).fin(Side::Client);
        let (events, diags) = run(c.packets());
        assert!(events.is_empty());
        assert_eq!(diags.total(), 0);
    }
}
