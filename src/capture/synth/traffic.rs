//! Bulk request/response traffic for throughput runs and large fixtures.
//!
//! Takes: a size target, a few shape knobs ([`TrafficSpec`]) and a callback
//! that fills in exchange *n*'s request and response bytes. Gives: a legacy
//! pcap of that many bytes, the exchanges spread round-robin over several
//! connections, each opened with a handshake and segmented like real TCP,
//! written streaming (memory stays flat however large the file).

use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use super::conversation::TcpConversation;
use super::frame::Link;
use super::writer::{PcapOptions, PcapWriter};
use crate::time::Timestamp;

/// The shape of generated traffic.
#[derive(Clone, Debug)]
pub struct TrafficSpec {
    /// Stop once the file holds at least this many bytes.
    pub target_bytes: u64,
    /// Client connections, used round-robin.
    pub connections: u16,
    /// Largest TCP payload per packet.
    pub segment_size: usize,
    /// Link type of every frame.
    pub link: Link,
    /// The broker's address; clients are 10.1.x.y.
    pub server: SocketAddr,
    /// Time of the first packet.
    pub start: Timestamp,
}

impl Default for TrafficSpec {
    fn default() -> Self {
        TrafficSpec {
            target_bytes: 1 << 20,
            connections: 16,
            segment_size: 1448,
            link: Link::Ethernet,
            server: SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9)), 9092),
            start: Timestamp::from_secs_nanos(1_714_564_800, 0),
        }
    }
}

/// What [`write_traffic`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrafficStats {
    /// Packets written.
    pub packets: u64,
    /// File bytes written.
    pub file_bytes: u64,
    /// Request/response pairs written.
    pub exchanges: u64,
    /// TCP payload bytes written (both directions).
    pub payload_bytes: u64,
}

/// Counts what passes through to the inner writer.
struct Counting<W> {
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

/// Writes a legacy pcap of request/response exchanges until it holds
/// `spec.target_bytes`. `exchange(n, request, response)` fills both buffers
/// (cleared before each call) for the n-th exchange; empty means "send
/// nothing". Use [`kafka_like_exchange`] for Kafka-shaped frames.
pub fn write_traffic<W: Write>(
    out: W,
    spec: &TrafficSpec,
    mut exchange: impl FnMut(u64, &mut Vec<u8>, &mut Vec<u8>),
) -> io::Result<TrafficStats> {
    let counting = Counting {
        inner: io::BufWriter::with_capacity(1 << 20, out),
        bytes: 0,
    };
    let mut pcap = PcapWriter::new(counting, spec.link, PcapOptions::default())?;
    let mut convs = open_connections(spec);
    let mut stats = TrafficStats::default();
    let (mut request, mut response) = (Vec::new(), Vec::new());
    let mut clock = spec.start;
    for conv in &mut convs {
        conv.set_time(clock).handshake();
        clock = conv.now();
    }
    while pcap_bytes(&pcap) < spec.target_bytes {
        request.clear();
        response.clear();
        exchange(stats.exchanges, &mut request, &mut response);
        let i = (stats.exchanges % convs.len() as u64) as usize;
        let conv = &mut convs[i];
        conv.set_time(clock)
            .client_sends(&request)
            .server_sends(&response)
            .ack(super::Side::Client);
        clock = conv.now();
        stats.packets += conv.packets().len() as u64;
        stats.payload_bytes += (request.len() + response.len()) as u64;
        stats.exchanges += 1;
        conv.drain_to(&mut pcap)?;
    }
    for conv in &mut convs {
        stats.packets += conv.packets().len() as u64;
        conv.drain_to(&mut pcap)?;
    }
    let mut counting = pcap.into_inner();
    counting.flush()?;
    stats.file_bytes = counting.bytes;
    Ok(stats)
}

fn pcap_bytes<W: Write>(pcap: &PcapWriter<Counting<W>>) -> u64 {
    pcap.get_ref().bytes
}

fn open_connections(spec: &TrafficSpec) -> Vec<TcpConversation> {
    (0..spec.connections.max(1))
        .map(|n| {
            let ip = Ipv4Addr::new(10, 1, (n >> 8) as u8, n as u8);
            let client = SocketAddr::new(IpAddr::V4(ip), 40_000 + n % 20_000);
            let isn = 0x9e37_79b9u32.wrapping_mul(u32::from(n) + 1);
            TcpConversation::between(client, spec.server)
                .isns(isn, isn ^ 0x5555_5555)
                .segment_size(spec.segment_size)
                .step_nanos(20_000)
        })
        .collect()
}

/// A deterministic xorshift step, so generated traffic is reproducible.
fn mix(n: u64) -> u64 {
    let mut x = n.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xd1b5_4a32_d192_ed03;
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^ (x >> 33)
}

/// Fills a Kafka-shaped request and response for exchange `n`: a 4-byte
/// size, then (request) api_key, api_version, correlation_id = n, a
/// client_id, or (response) correlation_id = n, then a filler body of
/// 0..=8 KiB (1 in 8 larger, up to 64 KiB, like Fetch responses). The bodies
/// are not valid Kafka messages: this is for the capture and TCP stages and
/// for the Kafka splitter's framing, not for decoding.
pub fn kafka_like_exchange(n: u64, request: &mut Vec<u8>, response: &mut Vec<u8>) {
    let r = mix(n);
    let api_key = [0i16, 1, 3, 8, 9, 10, 11, 12, 14, 18][(r % 10) as usize];
    let body = (r >> 8) as usize % 256;
    let resp_body = if (r >> 20).is_multiple_of(8) {
        (r >> 24) as usize % 65_536
    } else {
        (r >> 24) as usize % 8_192
    };
    let corr = n as i32;
    let client_id = b"kgtrace-bench";
    let mut header = Vec::with_capacity(32);
    header.extend_from_slice(&api_key.to_be_bytes());
    header.extend_from_slice(&1i16.to_be_bytes());
    header.extend_from_slice(&corr.to_be_bytes());
    header.extend_from_slice(&(client_id.len() as i16).to_be_bytes());
    header.extend_from_slice(client_id);
    frame(request, &header, body, r as u8);
    frame(response, &corr.to_be_bytes(), resp_body, (r >> 4) as u8);
}

fn frame(out: &mut Vec<u8>, header: &[u8], body: usize, fill: u8) {
    let size = (header.len() + body) as i32;
    out.extend_from_slice(&size.to_be_bytes());
    out.extend_from_slice(header);
    out.resize(out.len() + body, fill);
}
