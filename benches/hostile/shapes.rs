//! The hostile shapes of issue 14, written as captures at any scale.
//!
//! Takes: a shape and a count. Gives: a pcap file on disk: one JoinGroup
//! response listing `n` members (and the leader's SyncGroup assigning them),
//! `n` rebalances of one group, `n` groups of one rebalance each, `n`
//! SYN-only connections, `n` idle connections followed by a fixed run of
//! traffic on one more, `n` unanswered 16 MiB JoinGroup requests of tiny
//! protocols, or a SyncGroup assigning `n` partitions.

use std::fs::File;
use std::io::{self, BufWriter};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;

use kgtrace::capture::synth::{Link, PcapOptions, PcapWriter, Side, TcpConversation};
use kgtrace::capture::TcpFlags;
use kgtrace::Timestamp;

use crate::wire;

/// Packets of traffic after the idle connections (issue 14: 5 k packets
/// after 150 k idle connections took 18 s).
pub const IDLE_TRAFFIC_EXCHANGES: usize = 10_000;

type Writer = PcapWriter<BufWriter<File>>;

fn writer(path: &Path) -> io::Result<Writer> {
    PcapWriter::new(
        BufWriter::new(File::create(path)?),
        Link::Ethernet,
        PcapOptions::default(),
    )
}

fn start() -> Timestamp {
    Timestamp::from_secs_nanos(1_714_564_800, 0)
}

fn client_addr(i: usize) -> SocketAddr {
    let ip = Ipv4Addr::new(10, (i >> 16) as u8 + 1, (i >> 8) as u8, i as u8);
    SocketAddr::new(IpAddr::V4(ip), 40_000 + (i % 20_000) as u16)
}

fn broker() -> SocketAddr {
    "10.0.0.2:9092".parse().expect("a literal address")
}

fn exchange(conv: &mut TcpConversation, (req, resp): (Vec<u8>, Vec<u8>)) {
    conv.client_sends(&req).server_sends(&resp);
}

/// Writes shape `shape` at count `n` to `path`.
pub fn write(shape: &str, n: usize, path: &Path) -> io::Result<()> {
    let mut pcap = writer(path)?;
    match shape {
        "members" => members(n, &mut pcap)?,
        "rebalances" => rebalances(n, &mut pcap)?,
        "groups" => groups(n, &mut pcap)?,
        "syn-only" => syn_only(n, &mut pcap)?,
        "idle" => idle(n, &mut pcap)?,
        "tiny-protocols" => tiny_protocols(n, &mut pcap)?,
        "partitions" => partitions(n, &mut pcap)?,
        other => panic!("unknown shape {other}"),
    }
    use std::io::Write;
    pcap.into_inner().flush()
}

/// One JoinGroup response listing `n` members, then the leader's SyncGroup.
fn members(n: usize, pcap: &mut Writer) -> io::Result<()> {
    let all: Vec<String> = (0..n).map(|i| format!("consumer-{i}-member")).collect();
    let mut conv = TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092");
    conv.handshake();
    exchange(&mut conv, wire::join_group(1, "c", "big", &all[0], 1, &all));
    exchange(&mut conv, wire::sync_group(2, "c", "big", &all[0], 1, &all));
    conv.fin(Side::Client).fin(Side::Server);
    conv.write_to(pcap)
}

/// `n` rounds of one group on one connection: a new member joins (empty
/// member id), syncs and leaves, one second apart.
fn rebalances(n: usize, pcap: &mut Writer) -> io::Result<()> {
    let mut conv = TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092");
    conv.handshake();
    let mut corr = 0;
    for i in 0..n {
        let me = vec![format!("m-{i}")];
        let generation = i as i32 + 1;
        corr += 1;
        exchange(
            &mut conv,
            wire::join_group(corr, "c", "storm", &me[0], generation, &me),
        );
        corr += 1;
        exchange(
            &mut conv,
            wire::sync_group(corr, "c", "storm", &me[0], generation, &me),
        );
        corr += 1;
        exchange(&mut conv, wire::leave_group(corr, "c", "storm", &me[0]));
        conv.wait_nanos(1_000_000_000);
        conv.drain_to(pcap)?;
    }
    conv.fin(Side::Client).fin(Side::Server);
    conv.drain_to(pcap)
}

/// `n` groups, each joined and synced once by its own member.
fn groups(n: usize, pcap: &mut Writer) -> io::Result<()> {
    let mut conv = TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092");
    conv.handshake();
    let mut corr = 0;
    for i in 0..n {
        let group = format!("group-{i}");
        let me = vec![format!("m-{i}")];
        corr += 1;
        exchange(
            &mut conv,
            wire::join_group(corr, "c", &group, &me[0], 1, &me),
        );
        corr += 1;
        exchange(
            &mut conv,
            wire::sync_group(corr, "c", &group, &me[0], 1, &me),
        );
        conv.drain_to(pcap)?;
    }
    conv.fin(Side::Client).fin(Side::Server);
    conv.drain_to(pcap)
}

const SYN: TcpFlags = TcpFlags {
    syn: true,
    ack: false,
    fin: false,
    rst: false,
};

/// `n` JoinGroup requests of 16 MiB, each 64 protocols of 130 k
/// empty-named topics, never answered.
fn tiny_protocols(n: usize, pcap: &mut Writer) -> io::Result<()> {
    let mut conv = TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092");
    conv.handshake();
    let request = wire::join_group_of_tiny_protocols(1, 64, 130_000);
    for corr in 0..n {
        // The correlation id sits after size, api key and version.
        let mut r = request.clone();
        r[8..12].copy_from_slice(&(corr as i32 + 1).to_be_bytes());
        conv.client_sends(&r);
        conv.drain_to(pcap)?;
    }
    conv.fin(Side::Client).fin(Side::Server);
    conv.drain_to(pcap)
}

/// A JoinGroup, then a SyncGroup assigning `n` partitions to one member.
fn partitions(n: usize, pcap: &mut Writer) -> io::Result<()> {
    let me = vec!["m-0".to_string()];
    let mut conv = TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092");
    conv.handshake();
    exchange(&mut conv, wire::join_group(1, "c", "wide", &me[0], 1, &me));
    exchange(&mut conv, wire::sync_group_of_partitions(2, n));
    conv.fin(Side::Client).fin(Side::Server);
    conv.write_to(pcap)
}

/// `n` connections that send one SYN each and nothing more.
fn syn_only(n: usize, pcap: &mut Writer) -> io::Result<()> {
    let mut at = start();
    for i in 0..n {
        let mut conv = TcpConversation::between(client_addr(i), broker()).starting_at(at);
        conv.push(Side::Client, 1000, SYN, &[]);
        conv.write_to(pcap)?;
        at = at.offset_by(10_000);
    }
    Ok(())
}

/// `n` connections that shake hands and stay silent, then
/// [`IDLE_TRAFFIC_EXCHANGES`] request/response pairs on one more.
fn idle(n: usize, pcap: &mut Writer) -> io::Result<()> {
    let mut at = start();
    for i in 0..n {
        let mut conv = TcpConversation::between(client_addr(i), broker())
            .starting_at(at)
            .step_nanos(1_000);
        conv.handshake();
        conv.write_to(pcap)?;
        at = conv.now();
    }
    let mut conv = TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092").starting_at(at);
    conv.handshake();
    let me = vec!["m-0".to_string()];
    exchange(&mut conv, wire::join_group(1, "c", "busy", &me[0], 1, &me));
    for corr in 2..IDLE_TRAFFIC_EXCHANGES as i32 {
        exchange(
            &mut conv,
            wire::sync_group(corr, "c", "busy", &me[0], 1, &me),
        );
        conv.drain_to(pcap)?;
    }
    conv.fin(Side::Client).fin(Side::Server);
    conv.drain_to(pcap)
}
