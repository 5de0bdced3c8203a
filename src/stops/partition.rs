//! One rebalance's partition stops: who had each partition, who has it
//! after, when it stopped and resumed, and the offsets around the move.
//!
//! Takes: a [`Round`] (the record, the group's and the clients' indexes).
//! Gives: its [`PartitionStop`]s. The rules and their sources are in the
//! parent module's documentation.

use std::collections::{BTreeMap, BTreeSet};

use crate::report::{Owner, PartitionStop, Rebalance};
use crate::time::Timestamp;

use super::index::{Assigned, ClientIndex, GroupIndex, MemberTrail};
use super::kip848::{Cause, Move};

/// Commit errors that are the client's `CommitFailedException`
/// (`ConsumerCoordinator.OffsetCommitResponseHandler.handle`).
const COMMIT_FAILED: [&str; 4] = [
    "ILLEGAL_GENERATION",
    "REBALANCE_IN_PROGRESS",
    "UNKNOWN_MEMBER_ID",
    "FENCED_INSTANCE_ID",
];

/// How far ahead a cooperative round's revoked partitions are looked for
/// in the follow-up rounds' assignments (generations).
const FOLLOW_UP_GENERATIONS: i32 = 3;

/// What one rebalance's stops are computed from.
pub(crate) struct Round<'a> {
    pub r: &'a Rebalance,
    pub next_start: Option<Timestamp>,
    pub idx: &'a GroupIndex,
    pub clients: &'a ClientIndex,
    /// What hands partitions over: "SyncGroup" (classic) or
    /// "ConsumerGroupHeartbeat" (KIP-848), for notes.
    pub assigned_by: &'static str,
    /// Owners before the round inferred from the data path, for members
    /// no SyncGroup answer of the previous generation names (module
    /// `inferred`).
    pub inferred: &'a [Assigned],
}

/// The partition stops of one round. `carried` holds `(generation,
/// partition)` pairs already reported by an earlier cooperative round (its
/// revocation resumed in that generation's assignment).
pub(crate) fn stops(c: &Round<'_>, carried: &mut BTreeSet<(i32, String)>) -> Vec<PartitionStop> {
    let Some(gen) = c.r.generation else {
        return Vec::new();
    };
    // A group deleted and made again hands the old group's partitions to
    // the new one's members: they stopped when the old owners left (Kafka
    // deletes only an empty group) and resume where auto.offset.reset puts
    // the new owner, the committed offsets having gone with the group
    // (GroupMetadataManager `deleteGroups` removes them).
    // (A broker's log names the new group's "old generation 0": the old
    // group's owners are still the ones that stopped.)
    let (prev, made_again) = match (c.r.made_again_from, c.r.previous_generation) {
        (Some(old), _) => (old, true),
        (None, Some(prev)) => (prev, false),
        (None, None) => return Vec::new(),
    };
    let start = c.r.started_at;
    let new = c
        .idx
        .owners_between(gen, start, c.next_start.unwrap_or(Timestamp(i64::MAX)));
    let (old, emptied) = previous_owners(c, prev);
    let emptied = emptied || made_again;
    if new.is_empty() && !c.idx.assigned.contains_key(&gen) {
        return Vec::new();
    }
    let cooperative = c
        .idx
        .protocols
        .get(&gen)
        .is_some_and(|p| p.contains("cooperative"));
    let mut names: BTreeSet<&str> = old.keys().copied().collect();
    names.extend(new.keys().copied());
    let mut out = Vec::new();
    for p in names {
        let from = old.get(p).copied();
        let mut to = new.get(p).copied();
        let Some(from) = from else {
            continue; // first assigned here, or carried from a cooperative round
        };
        if carried.remove(&(gen, p.to_string())) {
            continue;
        }
        let same = to.is_some_and(|t| t.member_id == from.member_id);
        if cooperative && same && !emptied {
            continue; // KIP-429: what stays with its owner never stops
        }
        if cooperative && !emptied && keeps(c, from, gen) {
            continue;
        }
        if cooperative && to.is_none() {
            if let Some((g, a)) = follow_up_owner(c.idx, gen, p) {
                carried.insert((g, p.to_string()));
                to = Some(a);
            }
        }
        out.push(one(c, p, from, to, cooperative, emptied));
    }
    out
}

/// The note on each stop handed over a group's deletion.
pub(crate) const DELETED_BETWEEN: &str = "the group was deleted between the old owner and the new, and its committed offsets with it: the new owner started where auto.offset.reset put it";

/// Whether `from`, a cooperative member of the round, still holds what it
/// had: it got no successful SyncGroup answer in generation `gen` (and was
/// not removed). A cooperative member gives partitions up only in
/// `ConsumerCoordinator.onJoinComplete` (`owned - assigned`, once its own
/// SyncGroup answer arrived; `onJoinPrepare` revokes nothing unless its
/// generation was reset); a SyncGroup answered with an error such as
/// REBALANCE_IN_PROGRESS just rejoins keeping the assignment (librdkafka
/// `rd_kafka_cgrp_handle_SyncGroup_memberstate`: `rd_kafka_cgrp_rejoin`,
/// only ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID revoke all as lost). So a
/// round it never completed does not stop its partitions.
fn keeps(c: &Round<'_>, from: &Assigned, gen: i32) -> bool {
    let end = c.next_start.unwrap_or(Timestamp(i64::MAX));
    let answered = c.idx.assigned.get(&gen).is_some_and(|v| {
        v.iter()
            .any(|a| a.member_id == from.member_id && a.ts >= c.r.started_at && a.ts < end)
    });
    let removed = c.r.removed.iter().any(|m| m.member_id == from.member_id);
    !answered && !removed
}

/// The owners before the round: generation `prev`'s answers, or when the
/// group was empty in between (no member before), the last generation that
/// had any. In a cooperative group a member of the group that got no answer
/// in `prev` still holds its last answer's partitions (see [`keeps`]).
fn previous_owners<'a>(c: &Round<'a>, prev: i32) -> (BTreeMap<&'a str, &'a Assigned>, bool) {
    let mut owners = c
        .idx
        .owners_between(prev, Timestamp(i64::MIN), c.r.started_at);
    let cooperative = [prev, c.r.generation.unwrap_or(prev)].iter().any(|g| {
        c.idx
            .protocols
            .get(g)
            .is_some_and(|p| p.contains("cooperative"))
    });
    if cooperative {
        for m in &c.r.members_before {
            if owners.values().any(|a| a.member_id == m.member_id) {
                continue;
            }
            let last = c
                .idx
                .assigned
                .range(..prev)
                .flat_map(|(_, v)| v.iter())
                .filter(|a| a.member_id == m.member_id && a.ts < c.r.started_at)
                .max_by_key(|a| a.ts);
            for a in last.into_iter() {
                for p in &a.partitions {
                    owners.entry(p.as_str()).or_insert(a);
                }
            }
        }
    }
    // A capture that started after the previous generation's SyncGroup:
    // who fetched what (answers and the cooperative fallback come first).
    for a in c.inferred {
        for p in &a.partitions {
            owners.entry(p.as_str()).or_insert(a);
        }
    }
    if !owners.is_empty() || !c.r.members_before.is_empty() {
        return (owners, false);
    }
    let last = c
        .idx
        .assigned
        .range(..prev)
        .rev()
        .map(|(g, _)| c.idx.owners(*g))
        .find(|o| !o.is_empty());
    match last {
        Some(o) => (o, true),
        None => (owners, false),
    }
}

/// The first later generation (within a few) assigning `p`.
fn follow_up_owner<'a>(idx: &'a GroupIndex, gen: i32, p: &str) -> Option<(i32, &'a Assigned)> {
    // Generations come off the wire: the last one has no later one.
    let next = gen.checked_add(1)?;
    idx.assigned
        .range(next..=gen.saturating_add(FOLLOW_UP_GENERATIONS))
        .find_map(|(g, v)| {
            v.iter()
                .find(|a| a.partitions.iter().any(|x| x == p))
                .map(|a| (*g, a))
        })
}

fn owner(idx: &GroupIndex, a: &Assigned) -> Owner {
    Owner {
        member_id: a.member_id.clone(),
        client_id: idx
            .members
            .get(a.member_id.as_str())
            .and_then(|t| t.client_id.clone()),
    }
}

fn one(
    c: &Round<'_>,
    p: &str,
    from: &Assigned,
    to: Option<&Assigned>,
    cooperative: bool,
    emptied: bool,
) -> PartitionStop {
    let mut notes = Vec::new();
    if from.inferred {
        notes.push(super::inferred::NOTE.to_string());
    }
    let trail = c.idx.members.get(from.member_id.as_str());
    let (why, stopped_at) = why_stopped(c, from, trail, cooperative, emptied, &mut notes);
    fill(c, p, from, to, why, stopped_at, notes)
}

/// A KIP-848 move's stop: why and when from its cause (a member removed
/// without letting go stopped at its last request before the hand-over).
pub(crate) fn moved(c: &Round<'_>, mv: &Move) -> PartitionStop {
    let mut notes = Vec::new();
    let (why, at) = match mv.cause {
        Cause::Revoked => ("revoked", mv.stopped_at),
        Cause::Left => ("owner_left", mv.stopped_at),
        Cause::Removed => {
            let trail = c.idx.members.get(mv.from.member_id.as_str());
            let at = last_request_before(c, &mv.from, trail, mv.stopped_at, &mut notes);
            ("owner_silent", at)
        }
    };
    fill(c, &mv.partition, &mv.from, mv.to.as_ref(), why, at, notes)
}

/// The stop of `p` moved from `from` (stopped at `stopped_at` for `why`)
/// to `to` (assigned at `to.ts`): its resume and the offsets around it.
pub(crate) fn fill(
    c: &Round<'_>,
    p: &str,
    from: &Assigned,
    to: Option<&Assigned>,
    why: &str,
    stopped_at: Timestamp,
    mut notes: Vec<String>,
) -> PartitionStop {
    let trail = c.idx.members.get(from.member_id.as_str());
    let mut stop = PartitionStop {
        partition: p.to_string(),
        from: Some(owner(c.idx, from)),
        to: to.map(|t| owner(c.idx, t)),
        why_stopped: why.to_string(),
        stopped_at,
        ..PartitionStop::default()
    };
    if let Some(t) = to {
        resume(c, p, t, &mut stop, &mut notes);
    }
    if stop.resumed_at.is_some_and(|r| r < stop.stopped_at) {
        notes.push("the resume seen comes before the stop: times unknown".into());
        stop.resumed_at = None;
    }
    stop.stopped_ms = stop.resumed_at.map(|r| r.millis_since(stop.stopped_at));
    offsets_before(c, p, trail, &mut stop);
    // ConsumerCoordinator.onJoinPrepare commits the consumed positions
    // (auto-commit, or the revocation callback) before it rejoins: a
    // successful commit made inside the round is where the old owner's
    // processing ended. Otherwise its last fetch position is an upper
    // bound (records fetched may not all have been processed).
    let processed = match (stop.last_committed_offset, stop.committed_at) {
        (Some(o), Some(at)) if at >= c.r.started_at => Some(o),
        _ => stop.last_fetched_offset,
    };
    if let (Some(old), Some(new)) = (processed, stop.resume_offset) {
        // Offsets come off the wire: absurd ones saturate, never wrap.
        stop.reprocessed = Some(old.saturating_sub(new).max(0));
        stop.skipped = Some(new.saturating_sub(old).max(0));
    }
    stop.notes = notes;
    stop
}

/// Why and when `from` stopped consuming.
fn why_stopped(
    c: &Round<'_>,
    from: &Assigned,
    trail: Option<&MemberTrail>,
    cooperative: bool,
    emptied: bool,
    notes: &mut Vec<String>,
) -> (&'static str, Timestamp) {
    let r = c.r;
    let removed = r.removed.iter().find(|m| m.member_id == from.member_id);
    let leave = trail.and_then(|t| {
        t.leaves
            .iter()
            .rev()
            .find(|(ts, _)| *ts <= r.completed_at.unwrap_or(Timestamp(i64::MAX)))
    });
    let how = removed.map(|m| m.how.as_str());
    let poll_timeout = leave
        .is_some_and(|(_, reason)| reason.as_deref().is_some_and(|x| x.contains("poll")))
        || (r.trigger.kind == "poll_timeout"
            && r.trigger.member_id.as_deref() == Some(from.member_id.as_str()));
    if poll_timeout {
        if let Some((ts, _)) = leave {
            return not_polling(*ts, trail, notes);
        }
    }
    if let (Some((ts, _)), true) = (leave, how == Some("left") || emptied) {
        // A group emptied leaves its partitions unassigned; one deleted and
        // made again hands them to its new members: their owners left.
        let unassigned = emptied && r.made_again_from.is_none();
        return (
            if unassigned {
                "unassigned"
            } else {
                "owner_left"
            },
            *ts,
        );
    }
    if matches!(
        how,
        Some("session_timeout" | "rebalance_timeout" | "replaced" | "unknown")
    ) {
        return (
            "owner_silent",
            last_request_before(c, from, trail, r.started_at, notes),
        );
    }
    if emptied {
        let at = last_request_before(c, from, trail, r.started_at, notes);
        return ("unassigned", at);
    }
    // Still a member: revoked.
    let at = if cooperative {
        // KIP-429: revoked once the SyncGroup answer shows it gone.
        c.idx
            .assigned
            .get(&r.generation.unwrap_or_default())
            .and_then(|v| v.iter().find(|a| a.member_id == from.member_id))
            .map(|a| a.ts)
    } else {
        // Eager: revoked in onJoinPrepare, before its JoinGroup.
        trail.and_then(|t| {
            t.joins
                .iter()
                .find(|ts| **ts >= r.started_at && r.completed_at.is_none_or(|e| **ts <= e))
                .copied()
        })
    };
    let at = at.unwrap_or_else(|| {
        notes.push("revocation time not seen: the round's start is used".into());
        r.started_at
    });
    ("revoked", at)
}

/// `owner_not_polling`: the LeaveGroup minus max.poll.interval.ms, or the
/// last commit if later.
fn not_polling(
    leave: Timestamp,
    trail: Option<&MemberTrail>,
    notes: &mut Vec<String>,
) -> (&'static str, Timestamp) {
    let Some(ms) = trail.and_then(|t| t.rebalance_timeout_ms) else {
        notes.push(
            "max.poll.interval.ms unknown (no JoinGroup seen): stopped at the LeaveGroup".into(),
        );
        return ("owner_not_polling", leave);
    };
    let mut at = Timestamp(leave.0.saturating_sub(i64::from(ms) * 1_000_000));
    let last_commit =
        trail.and_then(|t| t.commits.iter().rev().find(|x| x.ts <= leave).map(|x| x.ts));
    if let Some(c) = last_commit.filter(|c| *c > at) {
        at = c;
    }
    ("owner_not_polling", at)
}

/// The member's last request (Heartbeat, OffsetCommit, Fetch) before `by`.
pub(crate) fn last_request_before(
    c: &Round<'_>,
    from: &Assigned,
    trail: Option<&MemberTrail>,
    by: Timestamp,
    notes: &mut Vec<String>,
) -> Timestamp {
    let group = trail.and_then(|t| t.requests.iter().rev().find(|ts| **ts <= by).copied());
    let fetch = trail
        .and_then(|t| t.client.as_ref())
        .and_then(|k| c.clients.clients.get(k))
        .and_then(|ct| ct.fetches.last_until(by))
        .map(|(ts, _)| ts);
    group.max(fetch).unwrap_or_else(|| {
        notes.push(format!(
            "no request from {} seen before the round: its start is used",
            from.member_id
        ));
        by
    })
}

/// When and where the new owner resumed `p`.
fn resume(
    c: &Round<'_>,
    p: &str,
    to: &Assigned,
    stop: &mut PartitionStop,
    notes: &mut Vec<String>,
) {
    let trail = c.idx.members.get(to.member_id.as_str());
    let client = trail.and_then(|t| t.client.as_ref());
    let pt = client
        .and_then(|k| c.clients.clients.get(k))
        .and_then(|ct| ct.partition(p));
    // Time order: start at the answer instead of scanning from the start.
    let first = pt.and_then(|pt| pt.positions.first_from(to.ts));
    match first {
        Some((ts, offset)) => {
            stop.resumed_at = Some(ts);
            stop.resume_offset = Some(offset);
            stop.lag_at_resume = pt
                .and_then(|pt| pt.watermarks.first_from(ts))
                .map(|(_, hw)| hw.saturating_sub(offset));
        }
        None => {
            stop.resumed_at = Some(to.ts);
            notes.push(format!(
                "no Fetch of it by the new owner captured: resumed at the {} answer assigning it",
                c.assigned_by
            ));
        }
    }
    let fetched = client
        .and_then(|k| c.idx.offset_fetches.get(k))
        .and_then(|v| {
            v.iter()
                .filter(|(ts, _)| *ts >= to.ts && stop.resumed_at.is_none_or(|r| *ts <= r))
                .flat_map(|(_, offs)| offs.iter())
                .find(|o| o.is(p) && o.error.is_none())
        });
    if let Some(o) = fetched {
        if o.offset >= 0 {
            stop.resume_offset = Some(o.offset);
        } else if stop.resume_offset.is_some() {
            notes.push("no committed offset (OffsetFetch -1): auto.offset.reset chose the first Fetch position".into());
        }
    }
}

/// The old owner's last commit, last Fetch position, lag and failed commits.
fn offsets_before(c: &Round<'_>, p: &str, trail: Option<&MemberTrail>, stop: &mut PartitionStop) {
    let Some(t) = trail else { return };
    let until = stop
        .resumed_at
        .or(c.next_start)
        .unwrap_or(Timestamp(i64::MAX));
    let mut failed = None;
    for commit in t.commits.iter().filter(|x| x.ts <= until) {
        let Some(o) = commit.offsets.iter().find(|o| o.is(p)) else {
            continue;
        };
        // OffsetCommit answers carry an error per partition only (v0–v9:
        // no top-level error); `error` is the first of them, and the
        // answer's list holds only the partitions that failed. A partition
        // not in a non-empty list was committed; the first error stands
        // for all only when the list was lost (a cut answer).
        let listed = commit.errors.iter().rev().find(|(k, _)| k == p);
        let error = match listed {
            Some((_, e)) => *e,
            None if commit.errors.is_empty() => commit.error,
            None => None,
        };
        match error {
            None if commit.answered => {
                stop.last_committed_offset = Some(o.offset);
                stop.committed_at = Some(commit.ts);
            }
            Some(e) if COMMIT_FAILED.contains(&e.name()) && commit.ts >= c.r.started_at => {
                failed = Some(e.name().to_string());
            }
            _ => {}
        }
    }
    stop.commit_failed = failed;
    let pt = t
        .client
        .as_ref()
        .and_then(|k| c.clients.clients.get(k))
        .and_then(|ct| ct.partition(p));
    let Some(pt) = pt else { return };
    let bound = stop.resumed_at.unwrap_or(until);
    if let Some((ts, offset)) = pt.positions.last_before(bound) {
        // The position: a Java consumer fetches a partition again only once
        // the records buffered for it were returned by poll()
        // (`AbstractFetch.fetchablePartitions` leaves out
        // `fetchBuffer.bufferedPartitions()`), so each Fetch's
        // `fetch_offset` is what the application was given. Records the
        // last answers delivered may still sit in the buffer, and are
        // dropped when the partition is revoked: they are not counted.
        let position = offset;
        stop.last_fetched_offset = Some(position);
        // The last answer from that Fetch on, before the bound.
        stop.lag_at_stop = pt
            .watermarks
            .last_before(bound)
            .filter(|(w, _)| *w >= ts)
            .map(|(_, hw)| hw.saturating_sub(position).max(0));
    }
}
