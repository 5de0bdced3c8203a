//! Online protocol migration (KIP-848, Apache Kafka 3.8+): a group that
//! changes between the classic protocol and the consumer protocol.
//!
//! Takes: one group's events in time order. Gives: the stretches in which
//! the broker ran it as a classic group or as a consumer group
//! ([`segments`]), what one stretch hands to the next ([`Handover`]), and
//! the joined history ([`join`]), so that a migrated group keeps its
//! classic rounds and then its epochs, one protocol per record.
//!
//! Apache Kafka's GroupMetadataManager.java: `convertToConsumerGroup`
//! (a ConsumerGroupHeartbeat joining a classic group) makes a consumer
//! group whose group epoch and member epochs are the classic generation
//! (ConsumerGroup.java `fromClassicGroup`), so the round the joining member
//! causes goes from that generation to the next epoch; the classic members
//! stay in it and keep speaking JoinGroup/SyncGroup/Heartbeat/LeaveGroup
//! (`classicGroupJoinToConsumerGroup`, `classicGroupLeaveToConsumerGroup`).
//! `convertToClassicGroup` (the last consumer-protocol member leaves or is
//! fenced) makes a classic group at the group epoch (ClassicGroup.java
//! `fromConsumerGroup`) and prepares a rebalance "Downgrade group G from
//! consumer to classic".

use std::collections::BTreeSet;
use std::ops::Range;

use crate::event::{BrokerLine, ClientLine, EventKind, GroupEvent};

use super::GroupHistory;

/// The protocol the broker runs a group with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// JoinGroup/SyncGroup generations.
    Classic,
    /// ConsumerGroupHeartbeat group epochs.
    Consumer,
}

/// What the rounds after a conversion inherit from the rounds before it.
#[derive(Clone, Debug, Default)]
pub struct Handover {
    /// The generation (classic) or group epoch (consumer) at the
    /// conversion: the converted group keeps it.
    pub generation: Option<i32>,
    /// The members in the group at the conversion.
    pub members: BTreeSet<String>,
    /// Every member id seen before the conversion: a classic member that
    /// the consumer group took over is no newcomer when it rejoins.
    pub known: BTreeSet<String>,
}

/// Which protocol an event shows the broker running, if any. Only
/// evidence that the other protocol cannot produce counts: a consumer
/// group answers a classic member's JoinGroup without a leader, and a
/// member leaving or refused says nothing about the group.
fn shows(ev: &GroupEvent) -> Option<Protocol> {
    match &ev.kind {
        EventKind::ConsumerGroupHeartbeatResponse {
            error: None,
            member_epoch,
            ..
        } if *member_epoch >= 0 => Some(Protocol::Consumer),
        EventKind::Broker(
            BrokerLine::GroupEpochBumped { .. }
            | BrokerLine::TargetAssignmentComputed { .. }
            | BrokerLine::MemberAssignmentState { .. },
        )
        | EventKind::Client(ClientLine::Reconciling { .. }) => Some(Protocol::Consumer),
        EventKind::Broker(BrokerLine::Other { message }) => match message.as_str() {
            "group converted to consumer" => Some(Protocol::Consumer),
            "group converted to classic" => Some(Protocol::Classic),
            _ => None,
        },
        // A classic group always answers a successful JoinGroup with its
        // leader (`ClassicGroup.leaderOrNull`); a consumer group never does
        // (`classicGroupJoinToConsumerGroup` sets no leader).
        EventKind::JoinGroupResponse {
            error: None,
            leader,
            ..
        } if !leader.is_empty() => Some(Protocol::Classic),
        // Only a classic group prepares, stabilizes and receives a leader's
        // assignment (a downgrade's first line: "Preparing to rebalance group
        // G … (reason: Downgrade group G from consumer to classic …)").
        EventKind::Broker(
            BrokerLine::PreparingRebalance { .. }
            | BrokerLine::Stabilized { .. }
            | BrokerLine::AssignmentReceived { .. },
        ) => Some(Protocol::Classic),
        _ => None,
    }
}

/// Whether an event is a member's first ConsumerGroupHeartbeat (epoch 0):
/// the request that makes a classic group convert.
fn is_consumer_join(ev: &GroupEvent) -> bool {
    matches!(
        ev.kind,
        EventKind::ConsumerGroupHeartbeatRequest {
            member_epoch: 0,
            ..
        }
    )
}

/// Whether a member leaves the consumer group (a ConsumerGroupHeartbeat
/// with epoch -1 or -2, the broker's "Member M left the consumer group." or
/// its fence): the last consumer-protocol member leaving makes the group
/// classic again (`validateOnlineDowngradeWithFencedMembers`).
fn is_consumer_leave(ev: &GroupEvent) -> bool {
    matches!(
        ev.kind,
        EventKind::ConsumerGroupHeartbeatRequest { member_epoch, .. } if member_epoch < 0
    ) || matches!(
        ev.kind,
        EventKind::Broker(BrokerLine::MemberLeft { .. } | BrokerLine::MemberFenced { .. })
    )
}

/// Splits a group's events into the stretches each protocol ran, in
/// order; a group that never changed is one stretch. A stretch that starts
/// with a conversion begins at the request that caused it when the inputs
/// show it (the joining member's first heartbeat, the last consumer
/// member's leave), else at the first event showing the new protocol.
pub fn segments(events: &[&GroupEvent]) -> Vec<(Protocol, Range<usize>)> {
    let mut cuts: Vec<(Protocol, usize)> = Vec::new();
    for (i, ev) in events.iter().enumerate() {
        let Some(p) = shows(ev) else { continue };
        match cuts.last() {
            None => cuts.push((p, 0)),
            Some(&(q, from)) if q != p => {
                let at = start_of_conversion(events, from, i, p);
                cuts.push((p, at));
            }
            _ => {}
        }
    }
    if cuts.is_empty() {
        let consumer = events.iter().any(|e| super::is_kip848(e));
        let p = if consumer {
            Protocol::Consumer
        } else {
            Protocol::Classic
        };
        return vec![(p, 0..events.len())];
    }
    let ends: Vec<usize> = cuts
        .iter()
        .skip(1)
        .map(|c| c.1)
        .chain([events.len()])
        .collect();
    cuts.iter()
        .zip(ends)
        .map(|(&(p, from), to)| (p, from..to))
        .filter(|(_, r)| !r.is_empty())
        .collect()
}

/// Where the stretch of `to` starts, given that event `seen` is the first
/// to show it and the previous stretch started at `from`: the first
/// request after the previous protocol's last evidence that causes the
/// conversion.
fn start_of_conversion(events: &[&GroupEvent], from: usize, seen: usize, to: Protocol) -> usize {
    let last_old = (from..seen)
        .rev()
        .find(|&k| shows(events[k]).is_some())
        .map_or(from, |k| k + 1);
    let causes = |k: &usize| match to {
        Protocol::Consumer => is_consumer_join(events[*k]),
        Protocol::Classic => is_consumer_leave(events[*k]),
    };
    match to {
        Protocol::Consumer => (last_old..seen).find(causes).unwrap_or(seen),
        // The last consumer member's leave, the latest before the classic
        // evidence.
        Protocol::Classic => (last_old..seen).rev().find(causes).unwrap_or(seen),
    }
}

/// What one stretch hands to the group converted from it: its last
/// generation or epoch, its members, every member id it saw.
pub fn handover(history: &GroupHistory, events: &[&GroupEvent]) -> Handover {
    Handover {
        generation: history.summary.generation,
        members: history
            .summary
            .members
            .iter()
            .map(|m| m.member_id.clone())
            .collect(),
        known: member_ids(events),
    }
}

fn member_ids(events: &[&GroupEvent]) -> BTreeSet<String> {
    // Each id once, then copied: not a String per event.
    let ids: BTreeSet<&str> = events
        .iter()
        .filter_map(|e| e.member_id.as_deref())
        .filter(|m| !m.is_empty())
        .collect();
    ids.into_iter().map(String::from).collect()
}

/// One history from the stretches' histories, in order: every record
/// keeps its own protocol; the summary is the group as it is at the end,
/// with every generation and epoch seen and a note per conversion.
pub fn join(group: &str, parts: Vec<(Protocol, GroupHistory)>) -> GroupHistory {
    let converted = parts.len() > 1;
    // Room for every stretch's rebalances at once: grown by doubling, a
    // group of thousands of stretches held up to twice its records.
    let later: usize = parts.iter().skip(1).map(|(_, h)| h.rebalances.len()).sum();
    let mut parts = parts.into_iter();
    let Some((mut protocol, mut out)) = parts.next() else {
        return GroupHistory {
            summary: crate::report::GroupSummary {
                group: group.to_string(),
                ..Default::default()
            },
            rebalances: Vec::new(),
            rounds_let_go: 0,
        };
    };
    // Gathered over every stretch, then written once: a set rebuilt per
    // stretch made a group of many conversions quadratic (the benchmark's
    // generated 1 GiB log of mixed versions: 95 s with it, 44 s without).
    let mut generations: BTreeSet<i32> = out.summary.generations_seen.iter().copied().collect();
    let mut assignors: BTreeSet<String> = out.summary.assignors.iter().cloned().collect();
    out.rebalances.reserve_exact(later);
    let mut conversions = 0usize;
    let mut last_unsaid: Option<String> = None;
    for (p, next) in parts {
        let at = next
            .summary
            .first_seen
            .map_or_else(|| "?".to_string(), |t| t.to_string());
        let made_again = out.summary.state == "Dead";
        conversions += usize::from(!made_again);
        if made_again {
            // Deleted, then made again under the other protocol: no
            // conversion (GroupMetadataManager converts only a live group).
            out.summary.notes.push(format!(
                "{at}: the group had been deleted; a group of the same name was made again with the {} protocol (not a conversion: nothing was handed over)",
                match p {
                    Protocol::Consumer => "consumer",
                    Protocol::Classic => "classic",
                }
            ));
        } else if conversions <= MAX_CONVERSION_NOTES {
            out.summary
                .notes
                .push(conversion_note(protocol, p, &at, out.summary.generation));
        } else {
            last_unsaid = Some(at);
        }
        let s = next.summary;
        out.rebalances.extend(next.rebalances);
        out.rounds_let_go += next.rounds_let_go;
        generations.extend(s.generations_seen.iter().copied());
        out.summary.states.extend(s.states);
        out.summary.notes.extend(s.notes);
        assignors.extend(s.assignors);
        out.summary.protocol = s.protocol;
        out.summary.protocol_type = s.protocol_type.or(out.summary.protocol_type);
        out.summary.state = s.state;
        out.summary.generation = s.generation.or(out.summary.generation);
        out.summary.members = s.members;
        out.summary.leader = s.leader;
        out.summary.coordinator = s.coordinator.or(out.summary.coordinator.take());
        out.summary.first_seen = out.summary.first_seen.or(s.first_seen);
        out.summary.last_seen = s.last_seen.or(out.summary.last_seen);
        protocol = p;
    }
    if let Some(last) = last_unsaid {
        out.summary.notes.push(format!(
            "{} more conversions between the classic and consumer protocols are not listed one by one (the last at {last}): a group that changes protocol this often mixes classic and KIP-848 members, or its inputs interleave two clusters' groups of one name",
            conversions - MAX_CONVERSION_NOTES
        ));
    }
    if !converted {
        return out;
    }
    out.summary.generations_seen = generations.into_iter().collect();
    out.summary.assignors = assignors.into_iter().collect();
    super::mark_storms(&mut out.rebalances);
    let s = &mut out.summary;
    s.rebalance_count = (out.rebalances.len() + out.rounds_let_go) as u64;
    s.rebalancing_ms =
        super::round::round_us(out.rebalances.iter().filter_map(|r| r.duration_ms).sum());
    s.storm = out.rebalances.iter().any(|r| r.storm);
    s.rebalances_per_hour = match (s.first_seen, s.last_seen) {
        (Some(a), Some(b)) if b.millis_since(a) >= 60_000.0 => {
            Some(out.rebalances.len() as f64 / (b.millis_since(a) / 3_600_000.0))
        }
        _ => None,
    };
    out
}

/// Conversions a group's notes state one by one; the rest are counted in
/// one note (a log mixing protocols under one group name converts on
/// nearly every line: 400 bytes of note each, held to the end).
const MAX_CONVERSION_NOTES: usize = 8;

fn conversion_note(from: Protocol, to: Protocol, at: &str, generation: Option<i32>) -> String {
    let g = generation.map_or_else(|| "?".to_string(), |g| g.to_string());
    match (from, to) {
        (Protocol::Classic, Protocol::Consumer) => format!(
            "{at}: the broker converted the classic group to a consumer group (online upgrade, GroupMetadataManager `convertToConsumerGroup`): generation {g} became group epoch {g}; rounds after this are group epochs"
        ),
        _ => format!(
            "{at}: the broker converted the consumer group to a classic group (online downgrade, GroupMetadataManager `convertToClassicGroup`): group epoch {g} became generation {g}; rounds after this are classic generations"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::GroupSummary;

    fn stretch(generations: &[i32], assignors: &[&str]) -> GroupHistory {
        GroupHistory {
            summary: GroupSummary {
                group: "g".into(),
                generations_seen: generations.to_vec(),
                assignors: assignors.iter().map(|a| a.to_string()).collect(),
                ..Default::default()
            },
            rebalances: Vec::new(),
            rounds_let_go: 0,
        }
    }

    #[test]
    fn joined_stretches_keep_every_generation_and_assignor_once_in_order() {
        let parts = vec![
            (Protocol::Classic, stretch(&[3, 1], &["range"])),
            (Protocol::Consumer, stretch(&[5, 4], &["uniform"])),
            (Protocol::Classic, stretch(&[7, 5], &["sticky", "range"])),
        ];
        let h = join("g", parts);
        assert_eq!(h.summary.generations_seen, vec![1, 3, 4, 5, 7]);
        assert_eq!(h.summary.assignors, vec!["range", "sticky", "uniform"]);
        assert_eq!(
            h.summary
                .notes
                .iter()
                .filter(|n| n.contains("converted"))
                .count(),
            2
        );
    }

    #[test]
    fn conversions_past_the_cap_are_counted_in_one_note() {
        let parts: Vec<_> = (0..20)
            .map(|i| {
                let protocol = if i % 2 == 0 {
                    Protocol::Classic
                } else {
                    Protocol::Consumer
                };
                (protocol, stretch(&[i], &["range"]))
            })
            .collect();
        let h = join("g", parts);
        let notes = &h.summary.notes;
        let listed = notes
            .iter()
            .filter(|n| n.contains("the broker converted"))
            .count();
        assert_eq!(listed, MAX_CONVERSION_NOTES);
        let counted: Vec<&String> = notes
            .iter()
            .filter(|n| n.contains("more conversions"))
            .collect();
        assert_eq!(counted.len(), 1, "{notes:?}");
        assert!(
            counted[0].starts_with(&format!("{} more", 19 - MAX_CONVERSION_NOTES)),
            "{}",
            counted[0]
        );
        assert_eq!(h.summary.generations_seen, (0..20).collect::<Vec<_>>());
    }

    #[test]
    fn one_stretch_is_returned_as_it_is() {
        let h = join("g", vec![(Protocol::Classic, stretch(&[3, 1], &["range"]))]);
        assert_eq!(h.summary.generations_seen, vec![3, 1]);
        assert!(h.summary.notes.is_empty());
    }
}
