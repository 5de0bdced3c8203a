//! The second half of a consumer's life: a completed join phase, SyncGroup,
//! steady heartbeats and commits, and the three ways of leaving a group
//! (LeaveGroup, silence until the session expires).
//!
//! Takes and gives as [`super`] does; split off to keep files small.

use std::io::Write;

use super::{
    Bytes, Fault, Groups, Side, Status, Who, COMMIT, HEARTBEAT, PARTITIONS, SESSION_TIMEOUT,
};
use crate::bulk::Bulk;
use crate::frames::{self, REBALANCE_IN_PROGRESS};
use crate::scenario::{Action, Sim, MS};

impl Groups {
    /// The coordinator answers every parked JoinGroup with the new
    /// generation; the leader's answer lists the members' subscriptions.
    pub(super) fn complete_join<W: Write>(&mut self, sim: &mut Sim<W>, gi: usize) {
        let group = &mut self.groups[gi];
        group.completing = false;
        let mut parked = std::mem::take(&mut group.parked);
        if parked.is_empty() {
            return;
        }
        group.generation += 1;
        sim.facts.generations += 1;
        parked.sort_by(|a, b| {
            self.members[a.0]
                .member_id
                .cmp(&self.members[b.0].member_id)
        });
        let leader = match group.leader {
            Some(l) if parked.iter().any(|p| p.0 == l) => l,
            _ => parked[0].0,
        };
        group.leader = Some(leader);
        let (name, topic, generation) = (group.name.clone(), group.topic.clone(), group.generation);
        let n = parked.len() as i32;
        let mut subscriptions = Vec::new();
        for (i, &(m, _)) in parked.iter().enumerate() {
            let member = &mut self.members[m];
            let i = i as i32;
            // Kafka's RangeAssignor: consecutive blocks, the first ones larger.
            let (base, extra) = (PARTITIONS / n, PARTITIONS % n);
            let first = i * base + i.min(extra);
            member.next_partitions = (first..first + base + i32::from(i < extra)).collect();
            subscriptions.push((
                member.member_id.clone(),
                frames::subscription(&topic, &member.partitions),
            ));
        }
        let leader_id = self.members[leader].member_id.clone();
        for (k, &(m, corr)) in parked.iter().enumerate() {
            let member = &mut self.members[m];
            let listed: &[(String, Bytes)] = if m == leader { &subscriptions } else { &[] };
            let who = Who {
                group: &name,
                ..member.who()
            };
            let resp = frames::join_response(&who, corr, 0, generation, &leader_id, listed);
            let at = sim.now.offset_by(k as i64 * 60_000);
            sim.wire
                .send(member.conn, Side::Server, at, &resp, Fault::None);
            sim.facts.group_exchanges += 1;
            member.status = Status::AwaitingSync;
            let delay = if m == leader {
                MS
            } else {
                2 * MS + k as i64 * 100_000
            };
            sim.after(delay, Action::Sync(m));
        }
        self.groups[gi].sync_left = parked.len();
    }

    /// SyncGroup; the answer carries the member's range assignment.
    pub(super) fn sync<W: Write>(&mut self, sim: &mut Sim<W>, m: usize) {
        let gi = self.members[m].group;
        let group = &self.groups[gi];
        let (name, topic, generation) = (group.name.clone(), group.topic.clone(), group.generation);
        let assignments: Vec<(String, Bytes)> = if group.leader == Some(m) {
            self.members
                .iter()
                .filter(|x| x.group == gi && x.status == Status::AwaitingSync)
                .map(|x| {
                    (
                        x.member_id.clone(),
                        frames::assignment(&topic, &x.next_partitions),
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
        let member = &mut self.members[m];
        if member.status != Status::AwaitingSync {
            return;
        }
        let c = member.next_corr();
        let who = Who {
            group: &name,
            ..member.who()
        };
        let mine = frames::assignment(&topic, &member.next_partitions);
        let f = frames::sync_group(&who, c, generation, &assignments, mine);
        Self::exchange(sim, member.conn, f, 700_000);
        member.partitions = std::mem::take(&mut member.next_partitions);
        member.status = Status::Stable;
        member.token += 1;
        let (token, jitter) = (member.token, sim.rng.range(0, 400 * MS));
        sim.after(HEARTBEAT + jitter, Action::Heartbeat(m, token));
        sim.after(COMMIT + jitter, Action::Commit(m, token));
        let group = &mut self.groups[gi];
        group.sync_left = group.sync_left.saturating_sub(1);
        if group.sync_left == 0 {
            group.rebalancing = group.retrigger;
            group.retrigger = false;
        }
    }

    /// A Heartbeat; REBALANCE_IN_PROGRESS sends the member back to JoinGroup.
    pub(super) fn heartbeat<W: Write>(&mut self, sim: &mut Sim<W>, m: usize, token: u64) {
        let rebalancing = self.groups[self.members[m].group].rebalancing;
        let name = self.groups[self.members[m].group].name.clone();
        let member = &mut self.members[m];
        if member.token != token || member.status != Status::Stable {
            return;
        }
        let error = if rebalancing {
            REBALANCE_IN_PROGRESS
        } else {
            0
        };
        let c = member.next_corr();
        let generation = self.groups[member.group].generation;
        let who = Who {
            group: &name,
            ..member.who()
        };
        Self::exchange(
            sim,
            member.conn,
            frames::heartbeat(&who, c, generation, error),
            250_000,
        );
        if rebalancing {
            member.status = Status::Joining;
            let delay = sim.rng.range(MS, 5 * MS);
            sim.after(delay, Action::Join(m));
        } else {
            sim.after(HEARTBEAT, Action::Heartbeat(m, token));
        }
    }

    /// An auto-commit of the member's partitions.
    pub(super) fn commit<W: Write>(&mut self, sim: &mut Sim<W>, m: usize, token: u64) {
        let gi = self.members[m].group;
        let (name, topic, generation) = {
            let g = &self.groups[gi];
            (g.name.clone(), g.topic.clone(), g.generation)
        };
        let member = &mut self.members[m];
        if member.token != token || member.status != Status::Stable || member.partitions.is_empty()
        {
            return;
        }
        member.offset += sim.rng.range(100, 5_000);
        let c = member.next_corr();
        let who = Who {
            group: &name,
            ..member.who()
        };
        let f = frames::offset_commit(
            &who,
            c,
            generation,
            &topic,
            &member.partitions,
            member.offset,
            0,
        );
        Self::exchange(sim, member.conn, f, 2 * MS);
        sim.after(COMMIT, Action::Commit(m, token));
    }

    /// LeaveGroup, then the consumer closes its connections.
    pub(super) fn leave<W: Write>(&mut self, sim: &mut Sim<W>, m: usize, bulk: &mut Bulk) {
        if self.members[m].status != Status::Stable {
            sim.after(1_000 * MS, Action::Leave(m));
            return;
        }
        let gi = self.members[m].group;
        let name = self.groups[gi].name.clone();
        let member = &mut self.members[m];
        let c = member.next_corr();
        let who = Who {
            group: &name,
            ..member.who()
        };
        Self::exchange(sim, member.conn, frames::leave_group(&who, c), MS);
        sim.wire.close(member.conn, sim.now.offset_by(5 * MS));
        member.status = Status::Gone;
        member.token += 1;
        if let Some(s) = member.fetch {
            bulk.stop(sim, s, true);
        }
        self.trigger(sim, gi);
    }

    /// The consumer stops talking (killed, or stuck); no FIN is seen.
    pub(super) fn vanish<W: Write>(&mut self, sim: &mut Sim<W>, m: usize, bulk: &mut Bulk) {
        let member = &mut self.members[m];
        if member.status != Status::Stable {
            sim.after(1_000 * MS, Action::Vanish(m));
            return;
        }
        member.status = Status::Silent;
        member.token += 1;
        if let Some(s) = member.fetch {
            bulk.stop(sim, s, false);
        }
        sim.after(SESSION_TIMEOUT, Action::Expire(m));
    }

    /// The coordinator removes a member whose session expired.
    pub(super) fn expire<W: Write>(&mut self, sim: &mut Sim<W>, m: usize) {
        self.members[m].status = Status::Gone;
        let gi = self.members[m].group;
        self.trigger(sim, gi);
    }

    /// Opens a round; members learn of it from their next Heartbeat.
    fn trigger<W: Write>(&mut self, sim: &mut Sim<W>, gi: usize) {
        let group = &mut self.groups[gi];
        if group.sync_left > 0 {
            group.retrigger = true;
        }
        group.rebalancing = true;
        self.maybe_complete(sim, gi);
    }
}
