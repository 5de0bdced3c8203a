//! Owners before a round whose previous generation's assignment the input
//! never showed (a capture that starts after the group settled, the
//! normal case): inferred from the data path.
//!
//! Takes: one group's rebalances, its [`GroupIndex`] and the
//! [`ClientIndex`]. Gives: per round (by index), an [`Assigned`] (marked
//! `inferred`) for each member before it that no SyncGroup answer of the
//! previous generation names: the partitions its client fetched, or its
//! member committed offsets for, between the previous round's end and this
//! round's start.
//!
//! Kafka: a consumer fetches only partitions it is assigned.
//! `ConsumerCoordinator.onJoinComplete` hands the SyncGroup assignment to
//! `SubscriptionState.assignFromSubscribed`, and the fetcher builds each
//! Fetch from the assigned, fetchable partitions only
//! (`AbstractFetch.fetchablePartitions` over
//! `subscriptions.fetchablePartitions`); its commits are the positions of
//! assigned partitions (`SubscriptionState.allConsumed`). librdkafka
//! likewise fetches only the toppars of its assignment
//! (`rd_kafka_cgrp_assign` → `rd_kafka_assignment_add`). A partition no
//! listed request touched (idle under a KIP-227 fetch session whose start
//! was not captured) stays unknown.

use std::collections::{BTreeMap, BTreeSet};

use crate::report::Rebalance;
use crate::time::Timestamp;

use super::index::{Assigned, ClientIndex, ClientKey, GroupIndex};

/// Note on every stop whose old owner was inferred.
pub(crate) const NOTE: &str =
    "assignment before the capture started: owner inferred from its Fetch requests";

/// The inferred previous owners of each round (index into `rebalances`).
pub(crate) fn previous_owners(
    rebalances: &[Box<Rebalance>],
    idx: &GroupIndex,
    clients: &ClientIndex,
) -> BTreeMap<usize, Vec<Assigned>> {
    let mut out = BTreeMap::new();
    for (i, r) in rebalances.iter().enumerate() {
        let Some(prev) = r.previous_generation else {
            continue;
        };
        let from = i
            .checked_sub(1)
            .and_then(|j| rebalances.get(j))
            .map_or(Timestamp(i64::MIN), |p| {
                p.completed_at.unwrap_or(p.started_at)
            });
        let found = one_round(r, prev, (from, r.started_at), idx, clients);
        if !found.is_empty() {
            out.insert(i, found);
        }
    }
    out
}

/// The inferred assignments of `r`'s members before it, from their traffic
/// in `[from, to)`. A partition two members touched goes to the later one.
fn one_round(
    r: &Rebalance,
    prev: i32,
    (from, to): (Timestamp, Timestamp),
    idx: &GroupIndex,
    clients: &ClientIndex,
) -> Vec<Assigned> {
    let answered: BTreeSet<&str> = idx
        .assigned
        .get(&prev)
        .into_iter()
        .flatten()
        .filter(|a| a.ts < to)
        .map(|a| a.member_id.as_str())
        .collect();
    let mut keys: BTreeMap<&ClientKey, usize> = BTreeMap::new();
    for m in &r.members_before {
        if let Some(k) = idx
            .members
            .get(m.member_id.as_str())
            .and_then(|t| t.client.as_ref())
        {
            *keys.entry(k).or_default() += 1;
        }
    }
    // (partition, when, member) of every Fetch position and commit.
    let mut touched: Vec<(String, Timestamp, &str)> = Vec::new();
    // A KIP-848 member whose assignment a ConsumerGroupHeartbeat answer
    // gave (the whole assignment, sent whenever it changed:
    // GroupMetadataManager.java `consumerGroupHeartbeat`) is named too: its
    // Fetches would only name the same partitions again, by topic name
    // where its assignment may be by topic id.
    let shown =
        |m: &crate::report::MemberSummary| r.protocol == "consumer" && !m.assignment.is_empty();
    for m in r
        .members_before
        .iter()
        .filter(|m| !shown(m))
        .map(|m| m.member_id.as_str())
    {
        let Some(t) = idx.members.get(m).filter(|_| !answered.contains(m)) else {
            continue;
        };
        let within = |ts: &Timestamp| *ts >= from && *ts < to;
        // Two members on one client key cannot be told apart.
        let key = t.client.as_ref().filter(|k| keys.get(k) == Some(&1));
        if let Some(ct) = key.and_then(|k| clients.clients.get(k)) {
            for (p, trail) in &ct.partitions {
                for (ts, _) in trail.positions.within(from, to) {
                    touched.push((p.to_string(), ts, m));
                }
            }
        }
        for c in t.commits.iter().filter(|c| within(&c.ts)) {
            for o in &c.offsets {
                touched.push((format!("{}-{}", o.topic, o.partition), c.ts, m));
            }
        }
    }
    // partition -> (last touched, first touched, member)
    let mut latest: BTreeMap<&str, (Timestamp, Timestamp, &str)> = BTreeMap::new();
    for (p, ts, m) in &touched {
        let e = latest.entry(p.as_str()).or_insert((*ts, *ts, *m));
        if *ts >= e.0 {
            *e = (*ts, e.1.min(*ts), *m);
        }
    }
    let mut by_member: BTreeMap<&str, Assigned> = BTreeMap::new();
    for (p, (_, first, m)) in latest {
        let a = by_member.entry(m).or_insert_with(|| Assigned {
            ts: first,
            member_id: m.to_string(),
            partitions: Vec::new(),
            inferred: true,
        });
        a.ts = a.ts.min(first);
        a.partitions.push(p.to_string());
    }
    by_member.into_values().collect()
}
