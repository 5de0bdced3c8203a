//! The benchmark capture's story: a broker's view of several consumer
//! groups living through a few rebalances while consumers fetch and
//! producers produce, as one discrete-event simulation.
//!
//! Takes: a [`Plan`] (size, groups, members, simulated length). Gives: a
//! deterministic pcap written through [`Wire`], and [`CaptureFacts`] saying
//! what is in it. Actions wait in a heap by time; each one writes its
//! packets (never earlier than itself), so the wire can write everything
//! before the next action's time. Group behaviour is in [`crate::groups`],
//! bulk traffic in [`crate::bulk`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use kgtrace::Timestamp;

use crate::bulk::Bulk;
use crate::groups::Groups;
use crate::wire::{Wire, WireStats};

/// Nanoseconds per millisecond and per second.
pub const MS: i64 = 1_000_000;
/// Nanoseconds per second.
pub const SEC: i64 = 1_000 * MS;

/// The capture to write.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Stop once the file holds this many bytes (and the story is told).
    pub target_bytes: u64,
    /// Consumer groups.
    pub groups: usize,
    /// Consumers each group starts with.
    pub members: usize,
    /// Simulated seconds the scripted rebalances are spread over.
    pub seconds: i64,
    /// Group `g` starts with `members + g * 7 % (spread + 1)` consumers.
    pub spread: usize,
    /// Every this-many-th group (0: none) also has a rebalance storm.
    pub storm_every: usize,
    /// Share of the file's bytes that Fetch/Produce record data fills.
    pub bulk_share: f64,
}

/// What the generated capture holds, for the benchmark's table.
#[derive(Clone, Copy, Debug, Default)]
pub struct CaptureFacts {
    /// File size.
    pub file_bytes: u64,
    /// TCP side.
    pub wire: WireStats,
    /// Group-API request/response pairs written.
    pub group_exchanges: u64,
    /// Fetch and Produce pairs written.
    pub bulk_exchanges: u64,
    /// Bytes of record data in Fetch responses and Produce requests.
    pub bulk_record_bytes: u64,
    /// JoinGroup rounds the coordinator completed (one per generation).
    pub generations: u64,
}

/// What happens next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// Consumer `m` connects to the coordinator.
    Connect(usize),
    /// Consumer `m` sends its first JoinGroup (no member id yet).
    JoinFirst(usize),
    /// Consumer `m` (re)joins with its member id.
    Join(usize),
    /// The coordinator answers every parked JoinGroup of group `g`.
    CompleteJoin(usize),
    /// Consumer `m` sends SyncGroup.
    Sync(usize),
    /// Consumer `m` heartbeats (if `token` is still its current one).
    Heartbeat(usize, u64),
    /// Consumer `m` commits offsets (if `token` is current).
    Commit(usize, u64),
    /// Consumer `m` leaves with LeaveGroup and closes.
    Leave(usize),
    /// Consumer `m` goes silent (process killed, no FIN).
    Vanish(usize),
    /// The coordinator expires silent consumer `m`'s session.
    Expire(usize),
    /// Bulk stream `s` sends its next Fetch or Produce.
    Bulk(usize),
}

/// The simulation: clock, action heap, and the two kinds of traffic.
pub struct Sim<W: Write> {
    pub wire: Wire<W>,
    pub plan: Plan,
    pub start: Timestamp,
    pub now: Timestamp,
    pub rng: Rng,
    pub facts: CaptureFacts,
    actions: BinaryHeap<Reverse<(i64, u64, Action)>>,
    order: u64,
}

impl<W: Write> Sim<W> {
    /// Runs `action` `delay_nanos` from now.
    pub fn after(&mut self, delay_nanos: i64, action: Action) {
        self.at(self.now.offset_by(delay_nanos), action);
    }

    /// Runs `action` at `ts` (not before now).
    pub fn at(&mut self, ts: Timestamp, action: Action) {
        self.order += 1;
        let ts = ts.0.max(self.now.0);
        self.actions.push(Reverse((ts, self.order, action)));
    }

    /// Seconds since the capture began.
    pub fn elapsed_secs(&self) -> f64 {
        (self.now.0 - self.start.0) as f64 / SEC as f64
    }
}

/// The broker every connection goes to (the capture is taken on it).
pub fn broker() -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9)), 9092)
}

/// Writes the capture of `plan` to `out`.
pub fn write_capture<W: Write>(out: W, plan: Plan) -> io::Result<CaptureFacts> {
    let start = Timestamp::from_secs_nanos(1_714_564_800, 0);
    let mut sim = Sim {
        wire: Wire::new(out)?,
        plan,
        start,
        now: start,
        rng: Rng(0x2545_f491_4f6c_dd1d),
        facts: CaptureFacts::default(),
        actions: BinaryHeap::new(),
        order: 0,
    };
    let mut groups = Groups::new(&mut sim);
    let mut bulk = Bulk::new(&mut sim);
    let end = start.offset_by(plan.seconds * SEC);
    while let Some(Reverse((ts, _, action))) = sim.actions.pop() {
        if ts >= end.0 && sim.wire.file_bytes() >= plan.target_bytes {
            break;
        }
        sim.now = Timestamp(ts);
        sim.wire.flush_before(sim.now)?;
        match action {
            Action::Bulk(s) => bulk.step(&mut sim, s, &groups),
            other => groups.step(&mut sim, other, &mut bulk),
        }
    }
    let mut facts = sim.facts;
    (facts.file_bytes, facts.wire) = sim.wire.finish()?;
    Ok(facts)
}

/// xorshift64*: deterministic and dependency-free.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..hi` (`lo` if empty).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        lo + (self.next() % (hi - lo) as u64) as i64
    }
}
