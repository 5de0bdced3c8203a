//! Bulk traffic around the groups: each consumer's Fetch connection and a
//! few producers' Produce connections.
//!
//! Takes: the simulation and a byte rate (from the plan's size and length).
//! Gives: real Fetch and Produce frames whose record bytes (incompressible,
//! like compressed batches) the decoder must skip. Fetches long-poll: most
//! answers are empty after `max.wait.ms` (500), the rest carry 16 KiB to
//! 1 MiB, paced so the record bytes follow the rate. Some large answers
//! arrive with two segments swapped or one retransmitted, and a few lose a
//! segment before the capture (gaps the TCP and Kafka stages must resync
//! after).

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use kgtrace::capture::synth::Side;

use crate::frames::{self, Versions, NEW_CLIENT};
use crate::groups::Groups;
use crate::scenario::{broker, Action, Sim, MS};
use crate::wire::{ConnId, Fault};

/// Producers writing while the consumers read.
const PRODUCERS: usize = 4;
/// Share of record bytes that Fetch responses carry (the rest: Produce).
const FETCH_SHARE: f64 = 0.75;
/// At most this many segments are lost in the whole capture.
const MAX_LOST: u64 = 8;

enum Kind {
    Fetch { member: usize },
    Produce { topic: String, partition: i32 },
}

struct Stream {
    kind: Kind,
    conn: ConnId,
    client: String,
    versions: &'static Versions,
    corr: i32,
    alive: bool,
}

/// Every bulk stream, and how many record bytes each kind has sent.
pub struct Bulk {
    streams: Vec<Stream>,
    records: Vec<u8>,
    rate: f64,
    fetched: u64,
    produced: u64,
    large: u64,
}

impl Bulk {
    /// Opens the producers' connections; consumers open theirs on connect.
    pub fn new<W: Write>(sim: &mut Sim<W>) -> Bulk {
        let mut records = vec![0u8; 2 << 20];
        for chunk in records.chunks_mut(8) {
            let r = sim.rng.next().to_le_bytes();
            chunk.copy_from_slice(&r[..chunk.len()]);
        }
        // Headers, ACKs and group traffic fill the rest of the file.
        let rate = sim.plan.target_bytes as f64 * sim.plan.bulk_share / sim.plan.seconds as f64;
        let mut bulk = Bulk {
            streams: Vec::new(),
            records,
            rate,
            fetched: 0,
            produced: 0,
            large: 0,
        };
        for p in 0..PRODUCERS {
            let addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 2, 0, 10 + p as u8)), 41_000);
            let kind = Kind::Produce {
                topic: format!("orders-{}", p % sim.plan.groups.max(1)),
                partition: p as i32,
            };
            bulk.open(sim, kind, addr, &format!("producer-{}", p + 1), &NEW_CLIENT);
        }
        bulk
    }

    /// Opens consumer `member`'s Fetch connection; returns its stream.
    pub fn start_fetch<W: Write>(
        &mut self,
        sim: &mut Sim<W>,
        member: usize,
        addr: SocketAddr,
        client: &str,
        versions: &'static Versions,
    ) -> usize {
        self.open(sim, Kind::Fetch { member }, addr, client, versions)
    }

    fn open<W: Write>(
        &mut self,
        sim: &mut Sim<W>,
        kind: Kind,
        addr: SocketAddr,
        client: &str,
        versions: &'static Versions,
    ) -> usize {
        let conn = sim.wire.connect(addr, broker(), sim.now, 10_000);
        let (req, resp) = frames::api_versions(versions, 1, client, "3.7.0");
        let end = sim
            .wire
            .send(conn, Side::Client, sim.now.offset_by(MS), &req, Fault::None);
        sim.wire.send(
            conn,
            Side::Server,
            end.offset_by(200_000),
            &resp,
            Fault::None,
        );
        let s = self.streams.len();
        self.streams.push(Stream {
            kind,
            conn,
            client: client.to_string(),
            versions,
            corr: 1,
            alive: true,
        });
        sim.after(20 * MS, Action::Bulk(s));
        s
    }

    /// Stops stream `s`, closing its connection if `close`.
    pub fn stop<W: Write>(&mut self, sim: &mut Sim<W>, s: usize, close: bool) {
        let stream = &mut self.streams[s];
        if stream.alive && close {
            sim.wire.close(stream.conn, sim.now.offset_by(6 * MS));
        }
        stream.alive = false;
    }

    /// The next Fetch or Produce of stream `s`.
    pub fn step<W: Write>(&mut self, sim: &mut Sim<W>, s: usize, groups: &Groups) {
        if !self.streams[s].alive {
            return;
        }
        match self.streams[s].kind {
            Kind::Fetch { member } => self.fetch(sim, s, groups, member),
            Kind::Produce { .. } => self.produce(sim, s),
        }
    }

    /// Record bytes a kind may still send to stay on its share of the rate.
    fn due<W: Write>(&self, sim: &Sim<W>, share: f64, sent: u64) -> bool {
        self.rate * share * sim.elapsed_secs() > sent as f64
    }

    fn fault(&mut self) -> Fault {
        self.large += 1;
        match self.large {
            n if n % 331 == 17 && n / 331 < MAX_LOST => Fault::Lose,
            n if n % 97 == 5 => Fault::Reorder,
            n if n % 193 == 11 => Fault::Retransmit,
            _ => Fault::None,
        }
    }

    fn fetch<W: Write>(&mut self, sim: &mut Sim<W>, s: usize, groups: &Groups, member: usize) {
        let (topic, partitions) = groups.assigned(member);
        if partitions.is_empty() {
            sim.after(100 * MS, Action::Bulk(s));
            return;
        }
        let size = if self.due(sim, FETCH_SHARE, self.fetched) {
            sim.rng.range(16 << 10, 1 << 20) as usize
        } else {
            0
        };
        let offset = sim.rng.range(0, 1 << 20) as usize;
        let stream = &mut self.streams[s];
        stream.corr += 1;
        let f = frames::fetch(
            stream.versions,
            stream.corr,
            &stream.client,
            topic,
            partitions,
            &self.records[offset..offset + size],
        );
        let (conn, wait) = (
            stream.conn,
            if size == 0 {
                500 * MS
            } else {
                sim.rng.range(MS, 8 * MS)
            },
        );
        let fault = if size > 0 { self.fault() } else { Fault::None };
        let end = sim
            .wire
            .send(conn, Side::Client, sim.now, &f.0, Fault::None);
        let end = sim.wire.send(
            conn,
            Side::Server,
            sim.now.offset_by(wait).max(end),
            &f.1,
            fault,
        );
        self.fetched += size as u64;
        sim.facts.bulk_exchanges += 1;
        sim.facts.bulk_record_bytes += size as u64;
        sim.at(end.offset_by(200_000), Action::Bulk(s));
    }

    fn produce<W: Write>(&mut self, sim: &mut Sim<W>, s: usize) {
        let size = if self.due(sim, 1.0 - FETCH_SHARE, self.produced) {
            sim.rng.range(16 << 10, 256 << 10)
        } else {
            sim.rng.range(200, 2_000)
        } as usize;
        let offset = sim.rng.range(0, 1 << 20) as usize;
        let fault = if size > 16 << 10 {
            self.fault()
        } else {
            Fault::None
        };
        let stream = &mut self.streams[s];
        stream.corr += 1;
        let Kind::Produce { topic, partition } = &stream.kind else {
            return;
        };
        let f = frames::produce(
            stream.versions,
            stream.corr,
            &stream.client,
            topic,
            *partition,
            &self.records[offset..offset + size],
        );
        let conn = stream.conn;
        let end = sim.wire.send(conn, Side::Client, sim.now, &f.0, fault);
        let wait = sim.rng.range(2 * MS, 6 * MS);
        sim.wire.send(
            conn,
            Side::Server,
            sim.now.offset_by(wait).max(end),
            &f.1,
            Fault::None,
        );
        self.produced += size as u64;
        sim.facts.bulk_exchanges += 1;
        sim.facts.bulk_record_bytes += size as u64;
        sim.after(50 * MS, Action::Bulk(s));
    }
}
