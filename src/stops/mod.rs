//! What each rebalance cost the consumers: which partitions stopped, for how
//! long, and which records will be processed twice.
//!
//! Takes: the [`GroupHistory`]s from [`crate::group`], the group events of
//! the timeline and the data-path events ([`crate::event::DataEvent`]:
//! Fetch positions and watermarks). Gives: each [`Rebalance`] filled with
//! its [`Cost`]: `status`, `waiting_for`, `stop` and `partitions`; each
//! group's stops no rebalance explains (a static member restarted within
//! its session timeout: module `restart`). KIP-848 groups' partition moves are
//! read from ConsumerGroupHeartbeat (module `kip848`), classic groups' from
//! SyncGroup answers.
//!
//! The rules, from the clients (Kafka is the authority):
//! - Eager protocols (range, roundrobin, sticky) revoke every owned
//!   partition before the member sends JoinGroup: `ConsumerCoordinator.
//!   onJoinPrepare` calls `revokePartitions`/`invokePartitionsRevoked` for
//!   the whole assignment when the protocol is EAGER; librdkafka's
//!   `rd_kafka_cgrp_revoke_all_rejoin` likewise (rdkafka_cgrp.c).
//! - Cooperative (KIP-429, `cooperative-sticky`): `onJoinPrepare` revokes
//!   nothing; `ConsumerCoordinator.onJoinComplete` revokes only
//!   `owned - assigned` once the SyncGroup answer arrives, then
//!   `requestRejoin`s so a follow-up round hands them over; partitions that
//!   stay with their owner never stop.
//! - A member leaving revokes at `onLeavePrepare` (`AbstractCoordinator.
//!   maybeLeaveGroup`); after a poll timeout (`AbstractCoordinator`'s
//!   heartbeat thread: "consumer poll timeout has expired") the member had
//!   stopped consuming `max.poll.interval.ms` (its JoinGroup
//!   `rebalance_timeout_ms`) before the LeaveGroup, or at its last commit if
//!   later.
//! - A member removed by the coordinator (session or rebalance timeout)
//!   stopped at its last request: it was frozen or gone.
//! - A commit that fails with ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS,
//!   UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID is the client's
//!   `CommitFailedException` (`ConsumerCoordinator.OffsetCommitResponseHandler`):
//!   its offsets are lost and the new owner starts from the last commit
//!   that succeeded.
//! - A classic group deleted once its members left (DeleteGroups; Kafka
//!   deletes only an empty group, GroupMetadataManager `deleteGroups`, and
//!   its committed offsets with it) and made again: the new group's first
//!   rebalance takes the old group's partitions from the owners of its last
//!   generation, stopped when they left, and the new owner resumes where
//!   `auto.offset.reset` put it (its OffsetFetch answered -1), so what the
//!   old owners had read is read again (Apache Kafka 4.4 in the lab:
//!   `fixtures/kafka/ak4_java_recreated`).
//!
//! - The old owner's position is its last Fetch `fetch_offset`: the Java
//!   consumer fetches a partition again only once poll() returned what was
//!   buffered for it (`AbstractFetch.fetchablePartitions`), so records an
//!   answer delivered past it may never have reached the application, and
//!   a revocation drops them. librdkafka prefetches ahead of the
//!   application (`queued.min.messages`), so for it the count is an upper
//!   bound.
//!
//! A partition resumes at the new owner's first Fetch of it after the
//! SyncGroup answer that assigned it (a KIP-227 fetch session keeps
//! fetching partitions it does not re-list: see
//! [`crate::kafka`]'s fetch memory); else at that answer. From logs alone
//! the partitions are unknown: the stop is the group's, from the round's
//! start to its "Assignment received" / "Stabilized", with a note.

mod commits;
mod index;
mod inferred;
mod kip848;
mod partition;
mod restart;
mod series;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use crate::event::{DataEvent, GroupEvent};
use crate::fast_hash::FastMap;
use crate::group::GroupHistory;
use crate::report::{PartitionStop, Rebalance, RebalanceStop, StopWithoutRebalance, WorstStop};
use crate::spread;
use crate::time::Timestamp;

use index::{ClientIndex, CommitsFrom, GroupIndex};

pub use index::{ClientFolder, CommitBook};
pub(crate) use index::{Commit, GroupCommits};

/// What one rebalance cost (the stage's output, written into the record).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cost {
    /// `completed`, `superseded` or `in_progress`.
    pub status: String,
    /// Who an `in_progress` round waits for.
    pub waiting_for: Vec<String>,
    /// First stop to last resume.
    pub stop: Option<RebalanceStop>,
    /// Each partition stop.
    pub partitions: Vec<PartitionStop>,
    /// What a group-level stop (logs alone) cannot say.
    pub notes: Vec<String>,
}

/// Fills every rebalance of `histories` with its cost.
pub fn apply(histories: &mut [GroupHistory], events: &[GroupEvent], data: &[DataEvent]) {
    apply_index(histories, events, &ClientIndex::build(data));
}

/// [`apply`] with the data path already indexed, on up to `workers`
/// threads ([`ClientFolder::snapshot_for`]: the watch engine rebuilds each
/// group with its own clients' traffic, the groups spread over the cores).
///
/// `folded` are the commits taken out of `events` (the watch engine's
/// windows fold the middle of each member's run of plain commits into
/// them): read besides the events' own.
pub(crate) fn apply_with(
    histories: &mut [GroupHistory],
    events: &[GroupEvent],
    clients: &ClientIndex,
    folded: Option<CommitBook>,
    workers: usize,
) {
    let commits = match folded {
        Some(book) => Commits::EventsAnd(book),
        None => Commits::Events,
    };
    apply_index_on(histories, events, clients, commits, workers);
}

/// [`apply`] with the data path already folded (batch runs fold it as
/// they read: [`ClientFolder`]).
///
/// `commits`, when given, saw every OffsetCommit of the inputs while
/// `events` lost some (folded: [`crate::timeline::HeartbeatFold`]): the
/// commits are read from it, not from `events`.
pub fn apply_folded(
    histories: &mut [GroupHistory],
    events: &[GroupEvent],
    data: ClientFolder,
    commits: Option<CommitBook>,
) {
    let workers = spread::workers_for(events.len());
    let commits = commits.map_or(Commits::Events, Commits::Book);
    apply_index_on(histories, events, &data.finish(), commits, workers);
}

/// Where the stops stage reads commits from: the events, a book of every
/// commit ([`CommitBook`]), or the events and a book of the commits taken
/// out of them.
enum Commits {
    Events,
    Book(CommitBook),
    EventsAnd(CommitBook),
}

fn apply_index(histories: &mut [GroupHistory], events: &[GroupEvent], clients: &ClientIndex) {
    apply_index_on(
        histories,
        events,
        clients,
        Commits::Events,
        spread::workers_for(events.len()),
    );
}

/// [`apply_index`] on up to `workers` threads (the result is the same on
/// any number).
fn apply_index_on(
    histories: &mut [GroupHistory],
    events: &[GroupEvent],
    clients: &ClientIndex,
    mut commits: Commits,
    workers: usize,
) {
    // Hashed, not ordered: only looked up (a tree walk compared group names
    // byte by byte for every event).
    let mut by_group: FastMap<&str, Vec<&GroupEvent>> = FastMap::default();
    for ev in events {
        if let Some(g) = ev.group.as_deref() {
            by_group.entry(g).or_default().push(ev);
        }
    }
    // Each group's commits are taken out of the book, not copied (one
    // history per group: the group stage rebuilds each group once).
    let mut jobs: Vec<_> = histories
        .iter_mut()
        .map(|h| {
            let group = h.summary.group.as_str();
            let from = match &mut commits {
                Commits::Events => CommitsFrom::Events,
                Commits::Book(b) => CommitsFrom::Book(b.take(group)),
                Commits::EventsAnd(b) => CommitsFrom::EventsAnd(b.take(group)),
            };
            (h, Some(from))
        })
        .collect();
    drop(commits);
    // Each group's costs depend on its own events and the shared index
    // only: worked out on every core.
    spread::for_each_mut(&mut jobs, workers, |(h, book)| {
        let evs: &[&GroupEvent] = by_group
            .get(h.summary.group.as_str())
            .map_or(&[], Vec::as_slice);
        let from = book.take().unwrap_or(CommitsFrom::Events);
        cost_group(h, evs, from, clients);
    });
}

/// What one group's rebalances cost, from its own events (time order),
/// its commits and the shared index of the data path.
fn cost_group(h: &mut GroupHistory, evs: &[&GroupEvent], from: CommitsFrom, clients: &ClientIndex) {
    let mut idx = GroupIndex::build(evs, from);
    idx.name_topics(&clients.topic_names);
    let moves = kip848::speaks_kip848(evs).then(|| kip848::moves(evs, clients));
    let costs = costs(&h.rebalances, &idx, clients, moves.as_deref());
    for (r, c) in h.rebalances.iter_mut().zip(costs) {
        r.status = c.status;
        r.waiting_for = c.waiting_for;
        r.stop = c.stop;
        r.partitions = c.partitions;
        r.notes.extend(c.notes);
    }
    h.summary.stops_without_rebalance =
        restart::static_restarts(&h.summary.group, &h.rebalances, &idx, clients);
    if clients.unnamed_topic_ids > 0 {
        h.summary.notes.push(format!(
            "{} topic id(s) in Fetch v13+ were never named by a captured Metadata answer: their partitions are shown by id",
            clients.unnamed_topic_ids
        ));
    }
}

/// The stops stage one group at a time, as the groups are rebuilt (the
/// batch run of `rebalances` and `groups`, which lets each group's events
/// go once it is costed): the data path's index, built once, and the
/// commit book each group's commits are taken from.
pub struct Costing {
    clients: ClientIndex,
    commits: Commits,
}

impl Costing {
    /// The index of `data` and the book of `commits` (none: each group's
    /// commits come from its events).
    pub fn new(data: ClientFolder, commits: Option<CommitBook>) -> Costing {
        Costing {
            clients: data.finish(),
            commits: commits.map_or(Commits::Events, Commits::Book),
        }
    }

    /// Takes `group`'s commits out of the book, for [`Self::cost`]: one
    /// group's are read once.
    pub fn commits_of(&mut self, group: &str) -> GroupCostInput {
        GroupCostInput(match &mut self.commits {
            Commits::Events => CommitsFrom::Events,
            Commits::Book(b) => CommitsFrom::Book(b.take(group)),
            Commits::EventsAnd(b) => CommitsFrom::EventsAnd(b.take(group)),
        })
    }

    /// Costs one group's rebalances ([`apply_folded`] for one group).
    pub fn cost(&self, h: &mut GroupHistory, evs: &[&GroupEvent], commits: GroupCostInput) {
        cost_group(h, evs, commits.0, &self.clients);
    }
}

/// One group's commits, taken out of a [`Costing`]'s book.
#[derive(Debug)]
pub struct GroupCostInput(CommitsFrom);

/// Each round's cost; `moves` are a KIP-848 group's partition moves (None:
/// a classic group).
fn costs(
    rebalances: &[Box<Rebalance>],
    idx: &GroupIndex,
    clients: &ClientIndex,
    moves: Option<&[kip848::Move]>,
) -> Vec<Cost> {
    let mut carried: BTreeSet<(i32, String)> = BTreeSet::new();
    let mut by_round: BTreeMap<usize, Vec<&kip848::Move>> = BTreeMap::new();
    for mv in moves.into_iter().flatten() {
        if let Some(i) = kip848::round_of(rebalances, mv) {
            by_round.entry(i).or_default().push(mv);
        }
    }
    let moved: BTreeSet<(&str, &str)> = moves
        .into_iter()
        .flatten()
        .map(|m| (m.partition.as_str(), m.from.member_id.as_str()))
        .collect();
    let inferred = inferred::previous_owners(rebalances, idx, clients);
    let mut out = Vec::with_capacity(rebalances.len());
    for (i, r) in rebalances.iter().enumerate() {
        let next = rebalances.get(i + 1);
        let (status, waiting_for) = status(r, next.is_some(), idx);
        let ctx = partition::Round {
            r,
            next_start: next.map(|n| n.started_at),
            idx,
            clients,
            assigned_by: "SyncGroup",
            inferred: inferred.get(&i).map_or(&[], Vec::as_slice),
        };
        let mut partitions = partition::stops(&ctx, &mut carried);
        let kip = partition::Round {
            assigned_by: "ConsumerGroupHeartbeat",
            ..ctx
        };
        // A classic member's stop whose next owner only a KIP-848 move
        // shows (a converted group) is that move's.
        partitions.retain(|p| {
            p.to.is_some()
                || !p
                    .from
                    .as_ref()
                    .is_some_and(|f| moved.contains(&(p.partition.as_str(), f.member_id.as_str())))
        });
        for mv in by_round.remove(&i).unwrap_or_default() {
            partitions.retain(|p| p.partition != mv.partition);
            partitions.push(partition::moved(&kip, mv));
        }
        // Each stop handed over a deletion, classic or KIP-848, says so.
        if r.made_again_from.is_some() {
            for p in &mut partitions {
                p.notes.push(partition::DELETED_BETWEEN.into());
            }
        }
        // Longest first; still stopped counts as longest.
        partitions.sort_by(|a, b| {
            let ms = |p: &PartitionStop| p.stopped_ms.unwrap_or(f64::INFINITY);
            ms(b)
                .total_cmp(&ms(a))
                .then_with(|| a.partition.cmp(&b.partition))
        });
        let stop = span(r, &partitions, idx, moves.is_some());
        let notes = if stop
            .as_ref()
            .is_some_and(|s| s.partitions_stopped.is_none())
        {
            silent_before(r)
        } else {
            Vec::new()
        };
        out.push(Cost {
            status,
            waiting_for,
            stop,
            partitions,
            notes,
        });
    }
    out
}

/// `completed`, `superseded` or `in_progress`, and who an open round waits
/// for: members of the group before it that have not rejoined (join phase),
/// else members that joined but were not answered by SyncGroup.
fn status(r: &Rebalance, followed: bool, idx: &GroupIndex) -> (String, Vec<String>) {
    if r.completed_at.is_some() {
        return ("completed".into(), Vec::new());
    }
    if followed {
        return ("superseded".into(), Vec::new());
    }
    let name =
        |m: &crate::report::MemberSummary| m.client_id.clone().unwrap_or(m.member_id.clone());
    // Joined: answered in the round, or its JoinGroup request seen in it.
    let mut joined: BTreeSet<&str> = r.joins.iter().map(|j| j.member_id.as_str()).collect();
    joined.extend(
        idx.members
            .iter()
            .filter(|(_, t)| t.joins.iter().any(|ts| *ts >= r.started_at))
            .map(|(m, _)| &**m),
    );
    let removed: BTreeSet<&str> = r.removed.iter().map(|m| m.member_id.as_str()).collect();
    let waiting: Vec<String> = if r.join_completed_at.is_none() {
        r.members_before
            .iter()
            .filter(|m| {
                !joined.contains(m.member_id.as_str()) && !removed.contains(m.member_id.as_str())
            })
            .map(name)
            .collect()
    } else {
        let synced: BTreeSet<&str> = r
            .members_after
            .iter()
            .filter(|m| !m.assignment.is_empty())
            .map(|m| m.member_id.as_str())
            .collect();
        r.joins
            .iter()
            .filter(|j| !synced.contains(j.member_id.as_str()))
            .map(|j| j.client_id.clone().unwrap_or(j.member_id.clone()))
            .collect()
    };
    ("in_progress".into(), waiting)
}

/// First stop to last resume; from logs alone (no assignment seen), the
/// round itself with a note.
fn span(
    r: &Rebalance,
    partitions: &[PartitionStop],
    idx: &GroupIndex,
    kip848: bool,
) -> Option<RebalanceStop> {
    if let Some(first) = partitions.iter().map(|p| p.stopped_at).min() {
        let ended_at = partitions
            .iter()
            .map(|p| p.resumed_at)
            .collect::<Option<Vec<Timestamp>>>()
            .and_then(|v| v.into_iter().max());
        return Some(RebalanceStop {
            started_at: first,
            ended_at,
            stopped_ms: ended_at.map(|e| e.millis_since(first)),
            partitions_stopped: Some(partitions.len() as u64),
        });
    }
    let seen_assignments = r.generation.is_some_and(|g| idx.assigned.contains_key(&g));
    if seen_assignments || kip848 || r.expected {
        return None;
    }
    // Logs alone: the group stopped for the round.
    Some(RebalanceStop {
        started_at: r.started_at,
        ended_at: r.completed_at,
        stopped_ms: r.completed_at.map(|c| c.millis_since(r.started_at)),
        partitions_stopped: None,
    })
}

/// From logs alone, a member the coordinator removed for a timeout had
/// stopped consuming before the round: its session (heartbeat expiry,
/// `GroupCoordinator.onExpireHeartbeat` / `GroupMetadataManager`'s session
/// timer) or rebalance timeout ran out first, and a broker log says neither
/// the timeout nor when the member went quiet.
fn silent_before(r: &Rebalance) -> Vec<String> {
    r.removed
        .iter()
        .filter(|m| matches!(m.how.as_str(), "session_timeout" | "rebalance_timeout"))
        .map(|m| {
            let who = m.client_id.as_deref().unwrap_or(&m.member_id);
            let timeout = if m.how == "session_timeout" {
                "session.timeout.ms"
            } else {
                "max.poll.interval.ms"
            };
            format!(
                "no assignments in the input: {who}'s partitions stopped before this round, when it went quiet (up to its {timeout} earlier); the stop shown is the round's"
            )
        })
        .collect()
}

/// The longest partition stop over `rebalances` and the stops no
/// rebalance explains (still-open stops measured to `end`), else the
/// longest group-level stop.
pub fn worst_stop<'a>(
    rebalances: impl IntoIterator<Item = &'a Rebalance>,
    without: &[StopWithoutRebalance],
    end: Option<Timestamp>,
) -> Option<WorstStop> {
    let mut best: Option<WorstStop> = None;
    let mut consider = |w: WorstStop, ms: Option<f64>, at: Timestamp| {
        let Some(ms) = ms.or_else(|| end.map(|e| e.millis_since(at))) else {
            return;
        };
        if best.as_ref().is_none_or(|b| ms > b.stopped_ms) {
            best = Some(WorstStop {
                stopped_ms: ms,
                ..w
            });
        }
    };
    for r in rebalances {
        let w = |partition: Option<String>, why: &str| WorstStop {
            group: r.group.clone(),
            previous_generation: r.previous_generation,
            generation: r.generation,
            partition,
            stopped_ms: 0.0,
            why_stopped: why.to_string(),
            without_rebalance: false,
        };
        for p in &r.partitions {
            let at = p.stopped_at;
            consider(
                w(Some(p.partition.clone()), &p.why_stopped),
                p.stopped_ms,
                at,
            );
        }
        if let (true, Some(s)) = (r.partitions.is_empty(), &r.stop) {
            consider(
                w(None, "group (partitions unknown)"),
                s.stopped_ms,
                s.started_at,
            );
        }
    }
    for s in without {
        for p in &s.partitions {
            let w = WorstStop {
                group: s.group.clone(),
                previous_generation: s.generation,
                generation: s.generation,
                partition: Some(p.partition.clone()),
                stopped_ms: 0.0,
                why_stopped: p.why_stopped.clone(),
                without_rebalance: true,
            };
            consider(w, p.stopped_ms, p.stopped_at);
        }
    }
    best
}
