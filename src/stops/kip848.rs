//! KIP-848 partition moves: who owned each partition, when the owner let it
//! go and when the coordinator handed it to the next owner, read from
//! ConsumerGroupHeartbeat (API 68).
//!
//! Takes: one group's events (time order), its rebalances (for how a member
//! was removed) and the clients' topic names. Gives: [`Move`]s, each a
//! partition's stop with its old owner, cause and stop time, and the new
//! owner's assigning answer (None: still unowned at the end of the input).
//!
//! The rules, from Apache Kafka:
//! - The answer's `assignment` is the member's whole target assignment,
//!   sent only when it changed (`ConsumerGroupHeartbeatResponse.json`; the
//!   coordinator's `GroupMetadataManager.consumerGroupHeartbeat` fills it
//!   when the member's assignment differs from what it last sent).
//! - The member reconciles at once: `AbstractMembershipManager.
//!   maybeReconcile` computes `revokedPartitions` = owned - target and
//!   calls `markPendingRevocationToPauseFetching` ("stop fetching from the
//!   partitions") before it commits (`signalReconciliationStarted`) and
//!   runs `onPartitionsRevoked`; then it acknowledges with a request whose
//!   `topic_partitions` list what it now owns (`ConsumerGroupHeartbeatRequest.
//!   json`: null = unchanged). So a partition stops at the answer that
//!   dropped it; when that answer was not captured, at the request that no
//!   longer lists a partition the member had acknowledged.
//! - The coordinator gives a partition to its next owner only once the old
//!   owner no longer holds it (`CurrentAssignmentBuilder.
//!   computeNextAssignment`: a partition still owned at another member's
//!   epoch stays in `partitionsPendingAssignment`), or once the old owner is
//!   removed (`GroupMetadataManager`'s session timeout fences it; a
//!   `member_epoch` -1 request leaves, -2 is a static member leaving for a
//!   while, `ConsumerGroupMember`). So the next owner's answer listing it
//!   hands it over.
//! - A member removed without leaving (fenced after its session timeout,
//!   `onPartitionsLost`) stopped at its last request: it was frozen or gone.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::event::{EventKind, GroupEvent, TopicPartitions};
use crate::report::Rebalance;
use crate::time::Timestamp;

use super::index::{Assigned, ClientIndex};

/// One partition's move from one member to the next.
#[derive(Clone, Debug)]
pub(crate) struct Move {
    pub partition: String,
    /// The old owner (`ts`: when it got the partition).
    pub from: Assigned,
    /// The new owner (`ts`: the answer handing it over).
    pub to: Option<Assigned>,
    /// `revoked`, `owner_left` or `owner_silent` (decided later for a
    /// member found gone: [`Cause::Removed`]).
    pub cause: Cause,
    pub stopped_at: Timestamp,
}

/// Why the old owner let the partition go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Cause {
    /// Its answer (or acknowledgement) no longer held it.
    Revoked,
    /// It sent `member_epoch` -1 (or -2).
    Left,
    /// The coordinator handed it on without the owner letting go: the
    /// owner was removed (session timeout, fenced); when is decided from
    /// its last request.
    Removed,
}

/// Whether the group's events show KIP-848 ownership (an assignment or an
/// owned list in a ConsumerGroupHeartbeat).
pub(crate) fn speaks_kip848(events: &[&GroupEvent]) -> bool {
    events.iter().any(|e| {
        matches!(
            e.kind,
            EventKind::ConsumerGroupHeartbeatResponse {
                assignment: Some(_),
                ..
            } | EventKind::ConsumerGroupHeartbeatRequest { owned: Some(_), .. }
        )
    })
}

/// Ownership as the heartbeats show it, and the moves found so far.
#[derive(Default)]
struct Book {
    /// Partition -> (owner, since).
    owner: BTreeMap<String, (String, Timestamp)>,
    /// Partitions each member acknowledged owning (its requests' lists).
    acked: HashMap<String, BTreeSet<String>>,
    /// Stops waiting for a next owner, by partition.
    open: BTreeMap<String, Move>,
    done: Vec<Move>,
    /// Before the group's first ConsumerGroupHeartbeat (a classic group
    /// being converted): ownership is followed, moves are the classic
    /// stage's.
    classic: bool,
}

impl Book {
    fn owned_by(&self, m: &str) -> Vec<String> {
        self.owner
            .iter()
            .filter(|(_, (o, _))| o == m)
            .map(|(p, _)| p.clone())
            .collect()
    }

    fn stop(&mut self, p: &str, cause: Cause, at: Timestamp) {
        let Some((m, since)) = self.owner.remove(p) else {
            return;
        };
        if self.classic {
            return;
        }
        if let Some(a) = self.acked.get_mut(&m) {
            a.remove(p);
        }
        let mv = Move {
            partition: p.to_string(),
            from: Assigned {
                ts: since,
                member_id: m,
                partitions: Vec::new(),
                inferred: false,
            },
            to: None,
            cause,
            stopped_at: at,
        };
        if let Some(old) = self.open.insert(p.to_string(), mv) {
            self.done.push(old);
        }
    }

    /// `m` holds `p` from `at` on: it hands over an open stop, or takes it
    /// from an owner that never let go (removed).
    fn take(&mut self, p: &str, m: &str, at: Timestamp) {
        match self.owner.get(p) {
            Some((o, _)) if o == m => return,
            Some(_) => self.stop(p, Cause::Removed, at),
            None => {}
        }
        if self.classic {
            self.owner.insert(p.to_string(), (m.to_string(), at));
            return;
        }
        // Back to the same member (a static member's return, a fenced
        // member rejoining) ends the stop too: `to` is then itself.
        if let Some(mut mv) = self.open.remove(p) {
            mv.to = Some(Assigned {
                ts: at,
                member_id: m.to_string(),
                partitions: vec![p.to_string()],
                inferred: false,
            });
            self.done.push(mv);
        }
        self.owner.insert(p.to_string(), (m.to_string(), at));
    }
}

fn names(tps: &[TopicPartitions], clients: &ClientIndex) -> BTreeSet<String> {
    tps.iter()
        .flat_map(|t| {
            let topic = clients
                .topic_names
                .get(&t.topic)
                .map_or(t.topic.as_str(), |n| n.as_str());
            t.partitions.iter().map(move |p| format!("{topic}-{p}"))
        })
        .collect()
}

/// The partition moves of one KIP-848 group, in the order they were found.
pub(crate) fn moves(events: &[&GroupEvent], clients: &ClientIndex) -> Vec<Move> {
    let mut b = Book {
        classic: true,
        ..Book::default()
    };
    for ev in events {
        if matches!(
            ev.kind,
            EventKind::ConsumerGroupHeartbeatRequest { .. }
                | EventKind::ConsumerGroupHeartbeatResponse { .. }
        ) {
            b.classic = false;
        }
        let Some(m) = ev.member_id.as_deref() else {
            continue;
        };
        match &ev.kind {
            // A classic member's assignment (before the conversion, or a
            // classic member of the converted group: GroupMetadataManager
            // `classicGroupSyncToConsumerGroup`) reads as an answer too.
            EventKind::ConsumerGroupHeartbeatResponse {
                error: None,
                assignment: Some(a),
                ..
            }
            | EventKind::SyncGroupResponse {
                error: None,
                assignment: a,
                ..
            } => {
                let target = names(a, clients);
                for p in b.owned_by(m) {
                    if !target.contains(&p) {
                        b.stop(&p, Cause::Revoked, ev.ts);
                    }
                }
                for p in &target {
                    b.take(p, m, ev.ts);
                }
            }
            EventKind::LeaveGroupRequest { members, .. } => {
                for leaving in members {
                    for p in b.owned_by(&leaving.member_id) {
                        b.stop(&p, Cause::Left, ev.ts);
                    }
                }
            }
            EventKind::ConsumerGroupHeartbeatRequest { member_epoch, .. } if *member_epoch < 0 => {
                for p in b.owned_by(m) {
                    b.stop(&p, Cause::Left, ev.ts);
                }
                b.acked.remove(m);
            }
            EventKind::ConsumerGroupHeartbeatRequest {
                owned: Some(o),
                member_epoch,
                ..
            } => {
                let listed = names(o, clients);
                // A rejoin (epoch 0) lists what it still holds; any other
                // request drops what it acknowledged before and no longer
                // lists (its answer was not captured).
                let acked = b.acked.entry(m.to_string()).or_default().clone();
                for p in b.owned_by(m) {
                    if acked.contains(&p) && !listed.contains(&p) && *member_epoch > 0 {
                        b.stop(&p, Cause::Revoked, ev.ts);
                    }
                }
                for p in &listed {
                    // Owned before any captured answer gave it (the member
                    // was in the group before the capture began).
                    if !b.owner.contains_key(p) && !b.open.contains_key(p) {
                        b.take(p, m, ev.ts);
                    }
                }
                let held: BTreeSet<String> = listed
                    .into_iter()
                    .filter(|p| b.owner.get(p).is_some_and(|(o, _)| o == m))
                    .collect();
                b.acked.insert(m.to_string(), held);
            }
            _ => {}
        }
    }
    let mut out = b.done;
    out.extend(b.open.into_values());
    out
}

/// The round a move belongs to, the one that caused it: a revocation, the
/// round running when the answer took the partition away; a leave, the
/// round it started (the first from its time on); a member removed, the
/// round in which the coordinator handed its partitions on. Before every
/// round: the first.
pub(crate) fn round_of(rebalances: &[Box<Rebalance>], mv: &Move) -> Option<usize> {
    if rebalances.is_empty() {
        return None;
    }
    let running = |at: Timestamp| rebalances.iter().rposition(|r| r.started_at <= at);
    let i = match (mv.cause, &mv.to) {
        (Cause::Revoked, _) => running(mv.stopped_at),
        (Cause::Removed, Some(to)) => running(to.ts),
        _ => rebalances
            .iter()
            .position(|r| r.started_at >= mv.stopped_at)
            .or_else(|| running(mv.stopped_at)),
    };
    Some(i.unwrap_or(0))
}
