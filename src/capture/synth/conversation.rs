//! A scripted TCP conversation between one client and one server.
//!
//! Takes: what each side sends, in order, and how the network should misbehave
//! (reordering, retransmission, overlap, loss, FIN/RST). Gives: the packets,
//! with sequence and acknowledgment numbers kept right and times rising by a
//! fixed step, ready for any [`PacketSink`].

use std::io;
use std::net::SocketAddr;

use super::frame::TcpPacket;
use super::writer::PacketSink;
use crate::capture::TcpFlags;
use crate::time::Timestamp;

/// One end of the conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The side that connects (sends the SYN).
    Client,
    /// The side that listens.
    Server,
}

/// A packet the conversation produced (owned, so it can be edited).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SynthPacket {
    /// Capture time.
    pub ts: Timestamp,
    /// Sender.
    pub src: SocketAddr,
    /// Receiver.
    pub dst: SocketAddr,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// Flags.
    pub flags: TcpFlags,
    /// Payload.
    pub payload: Vec<u8>,
}

impl SynthPacket {
    /// This packet as a [`TcpPacket`] to write.
    pub fn as_tcp(&self) -> TcpPacket<'_> {
        TcpPacket {
            src: self.src,
            dst: self.dst,
            seq: self.seq,
            ack: self.ack,
            flags: self.flags,
            payload: &self.payload,
        }
    }
}

/// Tracks both directions' sequence numbers and builds the packets.
///
/// Data of each side starts at its ISN + 1, whether or not
/// [`TcpConversation::handshake`] is called, so a conversation without a
/// handshake looks like a capture started mid-connection. "Offsets" in this
/// API are relative to that first data byte.
#[derive(Clone, Debug)]
pub struct TcpConversation {
    client: SocketAddr,
    server: SocketAddr,
    isn: [u32; 2],
    next: [u32; 2],
    clock: Timestamp,
    step_nanos: i64,
    segment_size: usize,
    packets: Vec<SynthPacket>,
}

const ACK: TcpFlags = TcpFlags {
    syn: false,
    ack: true,
    fin: false,
    rst: false,
};

impl TcpConversation {
    /// A conversation between two `ip:port` strings (IPv6 as `[::1]:9092`).
    ///
    /// # Panics
    /// If either address does not parse.
    pub fn new(client: &str, server: &str) -> Self {
        let parse = |s: &str| {
            s.parse::<SocketAddr>()
                .unwrap_or_else(|e| panic!("synth: bad address {s:?}: {e}"))
        };
        TcpConversation::between(parse(client), parse(server))
    }

    /// A conversation between two socket addresses. Defaults: ISNs 1000 and
    /// 5000, first packet at 2024-05-01T12:00:00Z, 1 ms between packets,
    /// segments of 1460 bytes.
    pub fn between(client: SocketAddr, server: SocketAddr) -> Self {
        TcpConversation {
            client,
            server,
            isn: [1000, 5000],
            next: [1001, 5001],
            clock: Timestamp::from_secs_nanos(1_714_564_800, 0),
            step_nanos: 1_000_000,
            segment_size: 1460,
            packets: Vec::new(),
        }
    }

    /// Sets both initial sequence numbers (try one near `u32::MAX` to wrap).
    pub fn isns(mut self, client: u32, server: u32) -> Self {
        self.isn = [client, server];
        self.next = [client.wrapping_add(1), server.wrapping_add(1)];
        self
    }

    /// Sets the time of the next packet.
    pub fn starting_at(mut self, ts: Timestamp) -> Self {
        self.clock = ts;
        self
    }

    /// Sets the time between packets.
    pub fn step_nanos(mut self, nanos: i64) -> Self {
        self.step_nanos = nanos;
        self
    }

    /// Sets the largest payload per segment.
    pub fn segment_size(mut self, bytes: usize) -> Self {
        self.segment_size = bytes.max(1);
        self
    }

    fn idx(side: Side) -> usize {
        match side {
            Side::Client => 0,
            Side::Server => 1,
        }
    }

    fn ends(&self, from: Side) -> (SocketAddr, SocketAddr) {
        match from {
            Side::Client => (self.client, self.server),
            Side::Server => (self.server, self.client),
        }
    }

    fn other(side: Side) -> Side {
        match side {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }

    /// Appends a packet from `from` with explicit seq and flags; ack is the
    /// other side's next sequence number. Does not move any sequence number.
    pub fn push(&mut self, from: Side, seq: u32, flags: TcpFlags, payload: &[u8]) -> &mut Self {
        let (src, dst) = self.ends(from);
        let ack = self.next[Self::idx(Self::other(from))];
        let ts = self.clock;
        self.clock = self.clock.offset_by(self.step_nanos);
        self.packets.push(SynthPacket {
            ts,
            src,
            dst,
            seq,
            ack,
            flags,
            payload: payload.to_vec(),
        });
        self
    }

    /// SYN, SYN-ACK, ACK.
    pub fn handshake(&mut self) -> &mut Self {
        let syn = TcpFlags {
            syn: true,
            ..TcpFlags::default()
        };
        let syn_ack = TcpFlags {
            syn: true,
            ack: true,
            ..TcpFlags::default()
        };
        let (c, s) = (self.isn[0], self.isn[1]);
        self.push(Side::Client, c, syn, &[]);
        // The SYN-ACK acknowledges the client's SYN: ack = client ISN + 1.
        self.push(Side::Server, s, syn_ack, &[]);
        let next_client = self.next[0];
        self.push(Side::Client, next_client, ACK, &[])
    }

    /// `from` sends `payload`, split into segments of the configured size.
    pub fn send(&mut self, from: Side, payload: &[u8]) -> &mut Self {
        for chunk in payload.chunks(self.segment_size) {
            let i = Self::idx(from);
            let seq = self.next[i];
            self.push(from, seq, ACK, chunk);
            self.next[i] = seq.wrapping_add(chunk.len() as u32);
        }
        self
    }

    /// The client sends `payload`.
    pub fn client_sends(&mut self, payload: &[u8]) -> &mut Self {
        self.send(Side::Client, payload)
    }

    /// The server sends `payload`.
    pub fn server_sends(&mut self, payload: &[u8]) -> &mut Self {
        self.send(Side::Server, payload)
    }

    /// `from` sends one segment at `offset` bytes from its first data byte,
    /// without moving its sequence number: for overlaps and retransmissions
    /// of arbitrary ranges.
    pub fn send_at(&mut self, from: Side, offset: u32, payload: &[u8]) -> &mut Self {
        let seq = self.isn[Self::idx(from)]
            .wrapping_add(1)
            .wrapping_add(offset);
        self.push(from, seq, ACK, payload)
    }

    /// `from` moves its sequence number past `bytes` that never reach the
    /// capture (lost packets).
    pub fn lose(&mut self, from: Side, bytes: u32) -> &mut Self {
        let i = Self::idx(from);
        self.next[i] = self.next[i].wrapping_add(bytes);
        self
    }

    /// A pure ACK from `from`.
    pub fn ack(&mut self, from: Side) -> &mut Self {
        let seq = self.next[Self::idx(from)];
        self.push(from, seq, ACK, &[])
    }

    /// A FIN (with ACK) from `from`; the FIN takes one sequence number.
    pub fn fin(&mut self, from: Side) -> &mut Self {
        let i = Self::idx(from);
        let seq = self.next[i];
        self.push(from, seq, TcpFlags { fin: true, ..ACK }, &[]);
        self.next[i] = seq.wrapping_add(1);
        self
    }

    /// A RST (with ACK) from `from`.
    pub fn rst(&mut self, from: Side) -> &mut Self {
        let seq = self.next[Self::idx(from)];
        self.push(from, seq, TcpFlags { rst: true, ..ACK }, &[])
    }

    /// Swaps the contents of packets `i` and `j` but not their times, so
    /// the capture stays in time order: an out-of-order delivery.
    ///
    /// # Panics
    /// If either index is out of range (as do `retransmit` and `drop_packet`).
    pub fn swap(&mut self, i: usize, j: usize) -> &mut Self {
        let (ti, tj) = (self.packets[i].ts, self.packets[j].ts);
        self.packets.swap(i, j);
        self.packets[i].ts = ti;
        self.packets[j].ts = tj;
        self
    }

    /// Sends packet `i` again, now (a retransmission).
    pub fn retransmit(&mut self, i: usize) -> &mut Self {
        let mut copy = self.packets[i].clone();
        copy.ts = self.clock;
        self.clock = self.clock.offset_by(self.step_nanos);
        self.packets.push(copy);
        self
    }

    /// Removes packet `i` from the capture (it was sent, never captured).
    pub fn drop_packet(&mut self, i: usize) -> &mut Self {
        self.packets.remove(i);
        self
    }

    /// Moves the clock on (a pause in the conversation).
    pub fn wait_nanos(&mut self, nanos: i64) -> &mut Self {
        self.clock = self.clock.offset_by(nanos);
        self
    }

    /// Sets the time of the next packet (to interleave conversations).
    pub fn set_time(&mut self, ts: Timestamp) -> &mut Self {
        self.clock = ts;
        self
    }

    /// Time of the next packet.
    pub fn now(&self) -> Timestamp {
        self.clock
    }

    /// The packets so far.
    pub fn packets(&self) -> &[SynthPacket] {
        &self.packets
    }

    /// The packets so far, to edit by hand.
    pub fn packets_mut(&mut self) -> &mut Vec<SynthPacket> {
        &mut self.packets
    }

    /// Writes every packet to `sink`.
    pub fn write_to(&self, sink: &mut impl PacketSink) -> io::Result<()> {
        self.packets
            .iter()
            .try_for_each(|p| sink.write_tcp(p.ts, &p.as_tcp()))
    }

    /// Writes every packet to `sink` and forgets them (for long streams).
    pub fn drain_to(&mut self, sink: &mut impl PacketSink) -> io::Result<()> {
        self.write_to(sink)?;
        self.packets.clear();
        Ok(())
    }
}
