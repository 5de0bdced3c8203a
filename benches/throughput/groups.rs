//! Consumer groups on the wire: a classic (eager, range) coordinator and
//! its Java consumers, played as actions of the [`crate::scenario`].
//!
//! Takes: the simulation's clock and wire. Gives: the group APIs' frames
//! on each consumer's coordinator connection: ApiVersions and
//! FindCoordinator on connect, the KIP-394 JoinGroup dance
//! (MEMBER_ID_REQUIRED, then the join parked until the round completes),
//! SyncGroup with range assignments, Heartbeats every 3 s answered
//! REBALANCE_IN_PROGRESS while a round is open, OffsetCommits every 5 s,
//! LeaveGroup then FIN. Scripted per group: every consumer starts (one
//! round after group.initial.rebalance.delay.ms), a consumer joins later,
//! one leaves, one goes silent and is expired after session.timeout.ms:
//! four rounds per group. Timings follow the Java client's defaults.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use bytes::Bytes;
use kgtrace::capture::synth::Side;

use crate::bulk::Bulk;
use crate::frames::{self, Versions, Who, MEMBER_ID_REQUIRED, NEW_CLIENT, OLD_CLIENT};
use crate::scenario::{broker, Action, Sim, MS, SEC};
use crate::wire::{ConnId, Fault};

mod life;

/// Rounds each group's script makes: start, a consumer joins, one leaves,
/// one is expired.
pub const ROUNDS_PER_GROUP: u64 = 4;
/// Partitions of each group's topic.
const PARTITIONS: i32 = 12;
/// heartbeat.interval.ms
const HEARTBEAT: i64 = 3 * SEC;
/// auto.commit.interval.ms
const COMMIT: i64 = 5 * SEC;
/// session.timeout.ms
const SESSION_TIMEOUT: i64 = 45 * SEC;
/// group.initial.rebalance.delay.ms
const INITIAL_DELAY: i64 = 3 * SEC;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    NotStarted,
    Joining,
    AwaitingJoin,
    AwaitingSync,
    Stable,
    Silent,
    Gone,
}

struct Member {
    group: usize,
    client: String,
    member_id: String,
    addr: SocketAddr,
    conn: ConnId,
    versions: &'static Versions,
    corr: i32,
    token: u64,
    status: Status,
    partitions: Vec<i32>,
    next_partitions: Vec<i32>,
    fetch: Option<usize>,
    offset: i64,
}

impl Member {
    fn who(&self) -> Who<'_> {
        Who {
            client: &self.client,
            group: "",
            member_id: &self.member_id,
            versions: self.versions,
        }
    }

    fn next_corr(&mut self) -> i32 {
        self.corr += 1;
        self.corr
    }

    fn active(&self) -> bool {
        !matches!(self.status, Status::NotStarted | Status::Gone)
    }
}

struct Group {
    name: String,
    topic: String,
    generation: i32,
    rebalancing: bool,
    retrigger: bool,
    completing: bool,
    leader: Option<usize>,
    parked: Vec<(usize, i32)>,
    sync_left: usize,
}

/// Every group and consumer of the capture.
pub struct Groups {
    members: Vec<Member>,
    groups: Vec<Group>,
}

impl Groups {
    /// Creates the groups and schedules their scripts.
    pub fn new<W: Write>(sim: &mut Sim<W>) -> Groups {
        let mut g = Groups {
            members: Vec::new(),
            groups: Vec::new(),
        };
        let plan = sim.plan;
        let d = plan.seconds * SEC;
        for gi in 0..plan.groups {
            g.groups.push(Group {
                name: format!("orders-processor-{gi}"),
                topic: format!("orders-{gi}"),
                generation: 0,
                rebalancing: false,
                retrigger: false,
                completing: false,
                leader: None,
                parked: Vec::new(),
                sync_left: 0,
            });
            let stagger = gi as i64 * d / (8 * plan.groups as i64);
            let first = g.members.len();
            let members = plan.members + gi * 7 % (plan.spread + 1);
            for i in 0..=members {
                g.add_member(sim, gi, i);
            }
            for i in 0..members {
                sim.after(stagger + i as i64 * 150 * MS, Action::Connect(first + i));
            }
            sim.after(stagger + d / 5, Action::Connect(first + members));
            sim.after(stagger + 2 * d / 5, Action::Leave(first + 1));
            sim.after(stagger + 3 * d / 5, Action::Vanish(first + 2));
            if plan.storm_every > 0 && gi % plan.storm_every == 0 {
                g.storm(sim, gi, members + 1, stagger + 7 * d / 10);
            }
        }
        g
    }

    /// A rebalance storm in group `gi` at `at`: consumers join one by one,
    /// each while the previous round is still settling, then leave one by
    /// one (a rolling restart of a deployment).
    fn storm<W: Write>(&mut self, sim: &mut Sim<W>, gi: usize, from: usize, at: i64) {
        const JOINERS: usize = 6;
        for k in 0..JOINERS {
            let m = self.members.len();
            self.add_member(sim, gi, from + k);
            sim.after(at + k as i64 * 1_500 * MS, Action::Connect(m));
            sim.after(at + 60 * SEC + k as i64 * 2 * SEC, Action::Leave(m));
        }
    }

    fn add_member<W: Write>(&mut self, sim: &mut Sim<W>, gi: usize, i: usize) {
        let m = self.members.len();
        let group = &self.groups[gi].name;
        let addr = SocketAddr::new(
            IpAddr::V4(Ipv4Addr::new(10, 1, gi as u8, 10 + i as u8)),
            50_000 + (m % 10_000) as u16,
        );
        let (a, b) = (sim.rng.next(), sim.rng.next());
        self.members.push(Member {
            group: gi,
            client: format!("consumer-{group}-{}", i + 1),
            member_id: format!(
                "consumer-{group}-{}-{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
                i + 1,
                a as u32,
                (a >> 32) as u16,
                (a >> 48) as u16 & 0xfff,
                b as u16 & 0xfff,
                b >> 16 & 0xffff_ffff_ffff
            ),
            addr,
            conn: 0,
            versions: if gi.is_multiple_of(2) {
                &NEW_CLIENT
            } else {
                &OLD_CLIENT
            },
            corr: 0,
            token: 0,
            status: Status::NotStarted,
            partitions: Vec::new(),
            next_partitions: Vec::new(),
            fetch: None,
            offset: 1_000 * m as i64,
        });
    }

    /// The topic and partitions consumer `m` fetches now (none before its
    /// first assignment or after it stopped).
    pub fn assigned(&self, m: usize) -> (&str, &[i32]) {
        let member = &self.members[m];
        let topic = &self.groups[member.group].topic;
        match member.status {
            Status::Gone | Status::Silent | Status::NotStarted => (topic, &[]),
            _ => (topic, &member.partitions),
        }
    }

    /// Runs one group action.
    pub fn step<W: Write>(&mut self, sim: &mut Sim<W>, action: Action, bulk: &mut Bulk) {
        match action {
            Action::Connect(m) => self.connect(sim, m, bulk),
            Action::JoinFirst(m) => self.join_first(sim, m),
            Action::Join(m) => self.join(sim, m),
            Action::CompleteJoin(g) => self.complete_join(sim, g),
            Action::Sync(m) => self.sync(sim, m),
            Action::Heartbeat(m, token) => self.heartbeat(sim, m, token),
            Action::Commit(m, token) => self.commit(sim, m, token),
            Action::Leave(m) => self.leave(sim, m, bulk),
            Action::Vanish(m) => self.vanish(sim, m, bulk),
            Action::Expire(m) => self.expire(sim, m),
            Action::Bulk(_) => {}
        }
    }

    /// Request now, response `latency` later (after the request's last
    /// packet); returns when the response was sent.
    fn exchange<W: Write>(
        sim: &mut Sim<W>,
        conn: ConnId,
        frames: (Vec<u8>, Vec<u8>),
        latency: i64,
    ) {
        let end = sim
            .wire
            .send(conn, Side::Client, sim.now, &frames.0, Fault::None);
        let at = sim.now.offset_by(latency).max(end);
        sim.wire
            .send(conn, Side::Server, at, &frames.1, Fault::None);
        sim.facts.group_exchanges += 1;
    }

    fn connect<W: Write>(&mut self, sim: &mut Sim<W>, m: usize, bulk: &mut Bulk) {
        let member = &mut self.members[m];
        member.conn = sim.wire.connect(member.addr, broker(), sim.now, 40_000);
        member.status = Status::Joining;
        let software = if member.versions.join >= 9 {
            "3.7.0"
        } else {
            "2.8.2"
        };
        let c = member.next_corr();
        let f = frames::api_versions(member.versions, c, &member.client, software);
        Self::exchange(sim, member.conn, f, 300_000);
        sim.now = sim.now.offset_by(MS);
        let c = member.next_corr();
        let group = &self.groups[member.group].name;
        let f = frames::find_coordinator(member.versions, c, &member.client, group);
        Self::exchange(sim, member.conn, f, 400_000);
        let fetch_addr = SocketAddr::new(member.addr.ip(), member.addr.port() + 10_000);
        member.fetch = Some(bulk.start_fetch(sim, m, fetch_addr, &member.client, member.versions));
        sim.after(5 * MS, Action::JoinFirst(m));
    }

    fn join_first<W: Write>(&mut self, sim: &mut Sim<W>, m: usize) {
        let group = self.groups[self.members[m].group].name.clone();
        let member = &mut self.members[m];
        let c = member.next_corr();
        let asked = Who {
            group: &group,
            member_id: "",
            ..member.who()
        };
        let req = frames::join_request(
            &asked,
            c,
            frames::subscription(&self.groups[member.group].topic, &[]),
        );
        let given = Who {
            group: &group,
            ..member.who()
        };
        let resp = frames::join_response(&given, c, MEMBER_ID_REQUIRED, -1, "", &[]);
        Self::exchange(sim, member.conn, (req, resp), 500_000);
        sim.after(2 * MS, Action::Join(m));
    }

    fn join<W: Write>(&mut self, sim: &mut Sim<W>, m: usize) {
        let gi = self.members[m].group;
        let (group, topic) = (self.groups[gi].name.clone(), self.groups[gi].topic.clone());
        let member = &mut self.members[m];
        let c = member.next_corr();
        let who = Who {
            group: &group,
            ..member.who()
        };
        let req = frames::join_request(&who, c, frames::subscription(&topic, &member.partitions));
        sim.wire
            .send(member.conn, Side::Client, sim.now, &req, Fault::None);
        member.status = Status::AwaitingJoin;
        self.groups[gi].parked.push((m, c));
        self.groups[gi].rebalancing = true;
        self.maybe_complete(sim, gi);
    }

    /// Schedules the end of the join phase once every known member has
    /// rejoined (or, for a new group, after the initial delay).
    fn maybe_complete<W: Write>(&mut self, sim: &mut Sim<W>, gi: usize) {
        let group = &self.groups[gi];
        if group.completing || group.parked.is_empty() {
            return;
        }
        let waiting = self
            .members
            .iter()
            .filter(|x| x.group == gi && x.active() && x.status != Status::AwaitingJoin)
            .count();
        let delay = if group.generation == 0 {
            INITIAL_DELAY
        } else if waiting == 0 {
            2 * MS
        } else {
            return;
        };
        self.groups[gi].completing = true;
        sim.after(delay, Action::CompleteJoin(gi));
    }
}
