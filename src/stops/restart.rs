//! Partition stops no rebalance explains: a static member (KIP-345)
//! restarted within its session timeout.
//!
//! Takes: one group's index (its SyncGroup answers by generation, its
//! members' trails), its rebalances and the clients' Fetch traffic. Gives:
//! a [`StopWithoutRebalance`] per replacement seen, with each partition's
//! stop (from the old process to the new one).
//!
//! The rule, from Apache Kafka: a static member's `close()` sends no
//! LeaveGroup (`AbstractCoordinator.maybeLeaveGroup` leaves only dynamic
//! members, or static ones on an explicit `GroupMembershipOperation.
//! LEAVE_GROUP`), so on the wire it goes quiet as a crash does. Its new
//! process joins with the same `group.instance.id` and an empty member id;
//! the coordinator swaps in a new member id and, the group being Stable
//! with unchanged metadata, answers the current generation and assignment
//! without a rebalance (GroupCoordinator `doStaticNewMemberJoinGroup` /
//! `updateStaticMemberAndRebalance`; GroupMetadataManager
//! `classicGroupJoinNewStaticMember` in Kafka 4). The partitions stopped
//! from the old process's last request to the new one's first Fetch.

use crate::report::{Rebalance, StopWithoutRebalance};
use crate::time::Timestamp;

use super::index::{Assigned, ClientIndex, GroupIndex};
use super::partition::{self, Round};

/// The static member restarts of one group that no rebalance covers.
///
/// A restart is either an answer in one generation naming a new member id
/// for an instance that an earlier answer named with another (Apache
/// Kafka's swap), or, whatever member id the broker answers, a JoinGroup
/// with an empty member id and that instance's `group.instance.id` after
/// the old owner's connection ended: a new process (KIP-345; the broker's
/// answer need not change the member id for the process to be new).
pub(crate) fn static_restarts(
    group: &str,
    rebalances: &[Box<Rebalance>],
    idx: &GroupIndex,
    clients: &ClientIndex,
) -> Vec<StopWithoutRebalance> {
    let instance = |m: &str| {
        idx.members
            .get(m)
            .and_then(|t| t.group_instance_id.as_deref())
    };
    let in_a_round = |ts: Timestamp| {
        rebalances
            .iter()
            .any(|r| r.started_at <= ts && r.completed_at.is_none_or(|c| ts <= c))
    };
    let mut out = Vec::new();
    for (gen, answers) in &idx.assigned {
        for (j, new) in answers.iter().enumerate() {
            let Some(id) = instance(&new.member_id) else {
                continue;
            };
            let Some(old) = answers[..j]
                .iter()
                .rev()
                .find(|a| instance(&a.member_id) == Some(id))
            else {
                continue;
            };
            let joined = new_process_join(idx, id, old, new);
            if (old.member_id == new.member_id && joined.is_none()) || in_a_round(new.ts) {
                continue;
            }
            let mut stop = replaced(group, *gen, old, new, joined, idx, clients);
            if !stop.partitions.is_empty() {
                if old.member_id == new.member_id {
                    for p in &mut stop.partitions {
                        p.notes.push(format!(
                            "the broker answered the new process with the old member id {} (Apache Kafka gives a new one: GroupMetadataManager.java `classicGroupJoinNewStaticMember` -> `updateStaticMemberThenRebalanceOrCompleteJoin`)",
                            new.member_id
                        ));
                    }
                }
                stop.group_instance_id = Some(id.to_string());
                out.push(stop);
            }
        }
    }
    out
}

/// The JoinGroup of a new process of static member `id` between the `old`
/// and the `new` answer: an empty member id with its `group.instance.id`
/// (GroupCoordinator.scala `doStaticNewMemberJoinGroup`,
/// GroupMetadataManager.java `classicGroupJoinNewStaticMember`: a known
/// instance joining with UNKNOWN_MEMBER_ID is a restarted process), sent
/// after the old owner's connection ended (the same process resetting its
/// member id would keep its connection).
fn new_process_join(
    idx: &GroupIndex,
    id: &str,
    old: &Assigned,
    new: &Assigned,
) -> Option<Timestamp> {
    let closed = idx.members.get(old.member_id.as_str())?.closed.as_slice();
    idx.static_joins
        .iter()
        .filter(|s| s.group_instance_id == id && s.ts > old.ts && s.ts <= new.ts)
        .find(|s| closed.iter().any(|c| *c > old.ts && *c <= s.ts))
        .map(|s| s.ts)
}

/// The stop of `old`'s partitions that `new` (same instance) took back.
fn replaced(
    group: &str,
    gen: i32,
    old: &Assigned,
    new: &Assigned,
    joined: Option<Timestamp>,
    idx: &GroupIndex,
    clients: &ClientIndex,
) -> StopWithoutRebalance {
    // The new process's JoinGroup (its first request after the old
    // answer): the old one was gone by then.
    let rejoined = joined
        .or_else(|| {
            idx.members
                .get(new.member_id.as_str())
                .and_then(|t| t.joins.iter().find(|ts| **ts >= old.ts && **ts <= new.ts))
                .copied()
        })
        .unwrap_or(new.ts);
    let record = Rebalance {
        group: group.to_string(),
        previous_generation: Some(gen),
        generation: Some(gen),
        started_at: rejoined,
        ..Rebalance::default()
    };
    let c = Round {
        r: &record,
        next_start: None,
        idx,
        clients,
        assigned_by: "SyncGroup",
        inferred: &[],
    };
    let trail = idx.members.get(old.member_id.as_str());
    let partitions = old
        .partitions
        .iter()
        .filter(|p| new.partitions.contains(p))
        .map(|p| {
            let mut notes = Vec::new();
            let at = partition::last_request_before(&c, old, trail, rejoined, &mut notes);
            partition::fill(&c, p, old, Some(new), "owner_silent", at, notes)
        })
        .collect();
    StopWithoutRebalance {
        group: group.to_string(),
        generation: Some(gen),
        cause: "static_member_restarted".into(),
        group_instance_id: None,
        partitions,
    }
}
