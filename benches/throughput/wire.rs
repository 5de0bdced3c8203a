//! The benchmark capture's TCP side: many connections to one broker, their
//! packets merged in time order into a legacy pcap, with the network's
//! usual misbehaviour sprinkled in.
//!
//! Takes: "connection c, side s sends these bytes at time t" from the
//! scenario. Gives: packets (via kgtrace's [`TcpConversation`], which keeps
//! sequence and acknowledgment numbers right), a delayed ACK from the
//! receiver every two full segments as Linux sends them, and on request a
//! segment delivered out of order, a retransmitted segment or a segment the
//! capture lost (a gap). Packets wait in a heap until the scenario's clock
//! passes them, so the file is in capture-time order however the
//! conversations interleave.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, BufWriter, Write};
use std::net::SocketAddr;

use kgtrace::capture::synth::{
    Link, PacketSink, PcapOptions, PcapWriter, Side, SynthPacket, TcpConversation,
};
use kgtrace::Timestamp;

/// Largest TCP payload per packet (Ethernet MTU 1500 with TCP timestamps).
const MSS: usize = 1448;

/// What may go wrong with one message on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fault {
    /// Delivered as sent.
    #[default]
    None,
    /// Two neighbouring segments arrive swapped.
    Reorder,
    /// One segment is sent again after the message.
    Retransmit,
    /// One segment never reaches the capture.
    Lose,
}

/// Counts of what was written.
#[derive(Clone, Copy, Debug, Default)]
pub struct WireStats {
    /// Packets written.
    pub packets: u64,
    /// Connections opened.
    pub connections: u64,
    /// Segments delivered out of order.
    pub reordered: u64,
    /// Segments retransmitted.
    pub retransmitted: u64,
    /// Segments lost before the capture.
    pub lost: u64,
}

struct Queued {
    ts: i64,
    order: u64,
    packet: SynthPacket,
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        (self.ts, self.order) == (other.ts, other.order)
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.ts, self.order).cmp(&(other.ts, other.order))
    }
}

/// Counts bytes on their way to the file.
pub struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Connection handle.
pub type ConnId = usize;

/// Every connection of the capture and the packets not yet written.
pub struct Wire<W: Write> {
    pcap: PcapWriter<Counting<BufWriter<W>>>,
    convs: Vec<TcpConversation>,
    queue: BinaryHeap<Reverse<Queued>>,
    order: u64,
    /// What was written so far.
    pub stats: WireStats,
}

impl<W: Write> Wire<W> {
    /// A capture on Ethernet, written to `out`.
    pub fn new(out: W) -> io::Result<Self> {
        let counting = Counting {
            inner: BufWriter::with_capacity(1 << 20, out),
            bytes: 0,
        };
        Ok(Wire {
            pcap: PcapWriter::new(counting, Link::Ethernet, PcapOptions::default())?,
            convs: Vec::new(),
            queue: BinaryHeap::new(),
            order: 0,
            stats: WireStats::default(),
        })
    }

    /// Opens a connection with a handshake at `at`; `step_nanos` apart
    /// are the packets of one burst.
    pub fn connect(
        &mut self,
        client: SocketAddr,
        server: SocketAddr,
        at: Timestamp,
        step_nanos: i64,
    ) -> ConnId {
        let id = self.convs.len();
        // Spread ISNs over the whole space so some connections wrap.
        let isn = 0x9e37_79b9u32.wrapping_mul(id as u32 + 7);
        let mut conv = TcpConversation::between(client, server)
            .isns(isn, isn ^ 0xa5a5_5a5a)
            .segment_size(MSS)
            .step_nanos(step_nanos);
        conv.set_time(at).handshake();
        self.convs.push(conv);
        self.stats.connections += 1;
        self.enqueue(id);
        id
    }

    /// `from` sends `payload` on `conn` starting at `at`, with a delayed ACK
    /// from the other side after every two segments; returns the time just
    /// after the last packet.
    pub fn send(
        &mut self,
        conn: ConnId,
        from: Side,
        at: Timestamp,
        payload: &[u8],
        fault: Fault,
    ) -> Timestamp {
        let other = match from {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        };
        let conv = &mut self.convs[conn];
        conv.set_time(at);
        let chunks: Vec<&[u8]> = payload.chunks(2 * MSS).collect();
        for (i, pair) in chunks.iter().enumerate() {
            conv.send(from, pair);
            if pair.len() == 2 * MSS || i + 1 == chunks.len() {
                conv.ack(other);
            }
        }
        self.apply(conn, fault);
        let end = self.convs[conn].now();
        self.enqueue(conn);
        end
    }

    /// Both sides close with FIN at `at`.
    pub fn close(&mut self, conn: ConnId, at: Timestamp) -> Timestamp {
        let conv = &mut self.convs[conn];
        conv.set_time(at)
            .fin(Side::Client)
            .fin(Side::Server)
            .ack(Side::Client);
        let end = conv.now();
        self.enqueue(conn);
        end
    }

    /// Damages the message just sent on `conn` (data packets only).
    fn apply(&mut self, conn: ConnId, fault: Fault) {
        let conv = &mut self.convs[conn];
        let data: Vec<usize> = (0..conv.packets().len())
            .filter(|&i| !conv.packets()[i].payload.is_empty())
            .collect();
        // Only messages of several segments are damaged: a lost single
        // segment would lose a whole request, not exercise resync.
        if data.len() < 4 {
            return;
        }
        let mid = data[data.len() / 2];
        match fault {
            Fault::None => {}
            Fault::Reorder => {
                conv.swap(mid, data[data.len() / 2 + 1]);
                self.stats.reordered += 1;
            }
            Fault::Retransmit => {
                conv.retransmit(mid);
                self.stats.retransmitted += 1;
            }
            Fault::Lose => {
                conv.drop_packet(mid);
                self.stats.lost += 1;
            }
        }
    }

    fn enqueue(&mut self, conn: ConnId) {
        for packet in self.convs[conn].packets_mut().drain(..) {
            self.order += 1;
            self.queue.push(Reverse(Queued {
                ts: packet.ts.0,
                order: self.order,
                packet,
            }));
        }
    }

    /// Writes every queued packet earlier than `now`.
    pub fn flush_before(&mut self, now: Timestamp) -> io::Result<()> {
        while self.queue.peek().is_some_and(|q| q.0.ts < now.0) {
            let Some(Reverse(q)) = self.queue.pop() else {
                break;
            };
            self.pcap.write_tcp(q.packet.ts, &q.packet.as_tcp())?;
            self.stats.packets += 1;
        }
        Ok(())
    }

    /// Bytes in the file so far.
    pub fn file_bytes(&self) -> u64 {
        self.pcap.get_ref().bytes
    }

    /// Writes what is left and flushes; returns the file's size and the
    /// final counts.
    pub fn finish(mut self) -> io::Result<(u64, WireStats)> {
        self.flush_before(Timestamp(i64::MAX))?;
        let stats = self.stats;
        let mut counting = self.pcap.into_inner();
        counting.flush()?;
        Ok((counting.bytes, stats))
    }
}
