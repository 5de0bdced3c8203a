//! Broker and client log lines applied to a classic group's history.
//!
//! Takes: one [`BrokerLine`] or [`ClientLine`] event. Gives: changes to the
//! [`Classic`] machine (rounds opened and closed, causes suspected). The
//! order of the broker's lines follows `GroupCoordinator.scala`:
//! "Preparing to rebalance" → "Stabilized" → "Assignment received"; a
//! LeaveGroup's "Preparing to rebalance" is logged before "Member ... has
//! left" (seen in Kafka 3.7 logs), so causes may arrive after the round
//! opened.

use std::collections::BTreeSet;

use crate::event::{BrokerLine, ClientLine, EventKind, GroupEvent};

use super::classic::{ActivityKind, Classic};
use super::round::{Candidate, Deferred};
use super::trigger::{self, Confidence, Kind};

fn candidate(ev: &GroupEvent, kind: Kind, confidence: Confidence, detail: String) -> Candidate {
    Candidate {
        kind,
        confidence,
        member_id: ev
            .member_id
            .as_deref()
            .filter(|m| !m.is_empty())
            .map(String::from),
        client_id: ev.client.client_id.clone(),
        detail,
        at: ev.ts,
        deferred: Deferred::No,
    }
}

/// Applies a broker line.
pub fn on_broker(g: &mut Classic, ev: &GroupEvent, line: &BrokerLine) {
    match line {
        BrokerLine::PreparingRebalance {
            state,
            old_generation,
            reason,
            ..
        } => preparing(g, ev, state, *old_generation, reason.as_deref()),
        BrokerLine::Stabilized {
            generation,
            members,
            leader,
            ..
        } => stabilized(
            g,
            ev,
            *generation,
            *members,
            leader.as_ref().map(|l| l.to_string()),
        ),
        BrokerLine::AssignmentReceived { generation, .. } => {
            assignment_received(g, ev, *generation)
        }
        BrokerLine::MemberJoined {
            pending,
            from_empty,
        } => {
            if *from_empty {
                joined_empty_group(g, ev);
            }
            on_broker_join(g, ev, *pending);
        }
        BrokerLine::MemberFailed | BrokerLine::MemberLeft { .. } if late_for_emptied(g, ev) => {}
        BrokerLine::MemberFailed => {
            mark_removed(g, ev, "session_timeout");
            suspect(
                g,
                ev,
                Kind::SessionTimeout,
                Confidence::High,
                "broker: member failed, removed on heartbeat expiration".into(),
            );
        }
        BrokerLine::MemberLeft { client_reason } => {
            let kind = client_reason
                .as_deref()
                .and_then(trigger::from_client_reason)
                .unwrap_or(Kind::MemberLeft);
            mark_removed(g, ev, "left");
            let detail = match client_reason {
                Some(r) => format!("broker: member left with LeaveGroup; client reason: \"{r}\""),
                None => "broker: member left with LeaveGroup".into(),
            };
            suspect(g, ev, kind, Confidence::High, detail);
        }
        BrokerLine::StaticMemberReplaced { old_member_id } => {
            let detail = format!(
                "broker: static member {} replaced {}",
                ev.group_instance_id.as_deref().unwrap_or("?"),
                old_member_id.as_deref().unwrap_or("its old member id")
            );
            // GroupCoordinator.scala `updateStaticMemberAndRebalance`: while
            // Stable with the same protocol, "Static member which joins
            // during Stable stage and doesn't affect selectProtocol will not
            // trigger rebalance": a note; a round it does start is opened by
            // its own "Preparing" line.
            if g.round.is_none() {
                g.notes
                    .push(format!("{detail} at {}, without a rebalance", ev.ts));
            }
            let c = candidate(ev, Kind::StaticMemberReplaced, Confidence::High, detail);
            g.context(ev, Some(c));
        }
        BrokerLine::PendingSyncRemoved { members } => {
            let r = g.round_at(ev);
            r.cite(ev);
            for m in members {
                r.removed.insert(m.clone(), "pending_sync".into());
            }
        }
        BrokerLine::Other { message } if message == "failed to persist static member metadata" => {
            g.notes.push(format!(
                "{}: the broker could not store a static member's new member id and reverted it (no rebalance)",
                ev.ts
            ));
            cite_if_open(g, ev);
        }
        BrokerLine::RebalanceTimeoutRemoved { members } => {
            // GroupCoordinator.scala `onCompleteJoin` (2.6.1+): the join
            // phase ended at the rebalance timeout without them.
            let r = g.round_at(ev);
            r.cite(ev);
            for m in members {
                r.removed.insert(m.clone(), "rebalance_timeout".into());
            }
            r.notes.push(format!(
                "{} never rejoined: the join phase waited the whole rebalance timeout for {} (the straggler)",
                members.join(", "),
                if members.len() == 1 { "it" } else { "them" }
            ));
        }
        BrokerLine::PendingMemberExpired if g.round.is_some() => {
            // GroupCoordinator.scala `onExpirePendingMember` / ClassicGroup
            // (KIP-394): a member that got MEMBER_ID_REQUIRED and never came
            // back holds the join phase until its session timeout.
            let r = g.round_at(ev);
            r.cite(ev);
            r.notes.push(format!(
                "pending member {} (KIP-394) never rejoined with its new member id: the join phase waited until its session timeout expired",
                ev.member_id.as_deref().unwrap_or("?")
            ));
        }
        BrokerLine::StaticMemberFenced { .. } => {
            // GroupCoordinator.scala `validateCurrentMember`: the request is
            // answered FENCED_INSTANCE_ID; the group does not move.
            if g.round.is_none() {
                g.notes.push(format!(
                    "{}: a request of static member {} was fenced (FENCED_INSTANCE_ID: another process uses its group.instance.id); no rebalance",
                    ev.ts,
                    ev.group_instance_id.as_deref().unwrap_or("?")
                ));
            }
            g.context(ev, None);
        }
        BrokerLine::GroupEmpty => emptied(g, ev),
        BrokerLine::GroupDead => {
            cite_if_open(g, ev);
            // The same deletion as a DeleteGroups answer just read (clocks
            // apart): the new group's round, if one opened, stays.
            if g.deleted_recently(ev.ts) {
                return;
            }
            // GroupMetadataManager: a Dead group is removed; a group of the
            // same name is created again at generation 0.
            g.dead(ev.ts);
        }
        BrokerLine::CoordinatorLoaded { .. } | BrokerLine::CoordinatorUnloaded { .. } => {
            if let Some(b) = &ev.client.broker {
                g.coordinator = Some(b.clone());
            }
            let c = candidate(
                ev,
                Kind::CoordinatorChanged,
                Confidence::Medium,
                "broker: coordinator (re)loaded or unloaded the group".into(),
            );
            g.context(ev, Some(c));
        }
        _ => cite_if_open(g, ev),
    }
}

/// Kafka logs "Preparing to rebalance" and even "Group G with generation N
/// is now empty" before "Member M has left group G" (GroupCoordinator.scala
/// `removeCurrentMemberFromGroup` logs after `removeMemberAndUpdateGroup`):
/// a removal line right after the group emptied belongs to that round.
/// A member's join line: KIP-394's first step is context for the round it
/// will start; a member added is a cause.
fn on_broker_join(g: &mut Classic, ev: &GroupEvent, pending: bool) {
    if pending {
        // GroupCoordinator.scala `doNewMemberJoinGroup` (KIP-394): the
        // member id is created and MEMBER_ID_REQUIRED answered; nothing
        // changes until the member rejoins with it.
        let c = candidate(
            ev,
            Kind::MemberJoined,
            Confidence::High,
            "new member (KIP-394: broker created its member id and asked it to rejoin)".into(),
        );
        g.context(ev, Some(c));
    } else {
        suspect(
            g,
            ev,
            Kind::MemberJoined,
            Confidence::High,
            "member added".into(),
        );
    }
}

/// "… joins group G in Empty state …" is logged before the member is added
/// (GroupCoordinator.scala `doNewMemberJoinGroup` /
/// `doPendingMemberJoinGroup`; GroupMetadataManager.java
/// `classicGroupJoinNewMember` / `classicGroupJoinExistingMember`): the
/// group is Empty, whatever generation it keeps, and the round this join
/// opens forms it (unlike "Preparing to rebalance … in state S", whose S is
/// the state after the transition).
fn joined_empty_group(g: &mut Classic, ev: &GroupEvent) {
    match g.round.as_mut() {
        Some(r) if r.members_before.is_empty() => r.state_before = "Empty".into(),
        Some(_) => {}
        None => {
            g.current.clear();
            g.set_state(ev.ts, "Empty");
        }
    }
}

fn late_for_emptied(g: &mut Classic, ev: &GroupEvent) -> bool {
    if g.round.is_some() {
        return false;
    }
    let Some(last) = g.done.last_mut().filter(|r| r.emptied) else {
        return false;
    };
    let ended = last.completed_at.unwrap_or(last.started_at);
    if ev.ts.0 - ended.0 > 1_000_000_000 {
        return false;
    }
    last.cite(ev);
    true
}

fn cite_if_open(g: &mut Classic, ev: &GroupEvent) {
    if let Some(r) = g.round.as_mut() {
        r.cite(ev);
    }
}

fn suspect(g: &mut Classic, ev: &GroupEvent, kind: Kind, confidence: Confidence, detail: String) {
    let c = candidate(ev, kind, confidence, detail);
    let r = g.round_at(ev);
    r.cite(ev);
    r.suspect(c);
}

/// Like [`suspect`], for client evidence that asks for a round but does not
/// prove the broker started one.
fn suspect_weak(
    g: &mut Classic,
    ev: &GroupEvent,
    kind: Kind,
    confidence: Confidence,
    detail: String,
) {
    let c = candidate(ev, kind, confidence, detail);
    let r = g.weak_round_at(ev);
    r.cite(ev);
    r.suspect(c);
}

fn mark_removed(g: &mut Classic, ev: &GroupEvent, how: &str) {
    if let Some(m) = ev
        .member_id
        .as_deref()
        .filter(|m| !m.is_empty())
        .map(String::from)
    {
        g.round_at(ev).removed.insert(m, how.to_string());
    }
}

fn preparing(
    g: &mut Classic,
    ev: &GroupEvent,
    state: &str,
    old_generation: i32,
    reason: Option<&str>,
) {
    // A round that already reached `old_generation` is over: this is a new
    // one. So is a round that started from an older generation: Kafka's
    // `initNextGeneration` adds exactly one per completed join, so it
    // produced previous + 1 (a grepped log shows only the "Preparing"
    // lines: 5, 6, 7 are three rounds).
    let advanced = g.round.as_ref().and_then(|r| {
        r.previous_generation
            .filter(|p| r.generation.is_none() && *p < old_generation)
    });
    if let Some(p) = advanced {
        if let Some(r) = g.round.as_mut() {
            r.generation = Some(p + 1);
            r.notes.push(format!(
                "its end is not in the inputs: the next \"Preparing\" line shows generation {old_generation}"
            ));
        }
        g.close_round();
    } else if g
        .round
        .as_ref()
        .is_some_and(|r| r.generation == Some(old_generation))
    {
        g.close_round();
    }
    if g.state == "Dead" || old_generation == 0 {
        g.generation = Some(old_generation);
    }
    let r = g.round_at(ev);
    // "in state S" is logged after `transitionTo(PreparingRebalance)`
    // (GroupCoordinator.scala `prepareRebalance`): it is never the state
    // before. Old generation 0 is a group forming.
    if old_generation == 0 && r.members_before.is_empty() {
        r.state_before = "Empty".into();
    }
    let _ = state;
    // The broker's count wins over kgtrace's.
    r.previous_generation = Some(old_generation);
    r.cite(ev);
    if let Some(reason) = reason {
        let (kind, confidence) = trigger::from_coordinator_reason(reason);
        if trigger::client_reason_part(reason).is_some_and(trigger::is_cooperative_follow_up) {
            r.expected_reason = Some(format!("cooperative follow-up round (KIP-429): {reason}"));
        }
        if kind != Kind::Unknown {
            r.suspect(candidate(
                ev,
                kind,
                confidence,
                format!("broker: preparing to rebalance (reason: {reason})"),
            ));
        } else {
            r.needs_cause = true;
            r.notes.push(format!(
                "the broker's reason is not one kgtrace knows: {reason}"
            ));
        }
    } else {
        // 0.9–2.0 write no reason here; their other lines are hidden by
        // the default log level (kafka-log-formats.md §2).
        r.needs_cause = true;
        r.log_hides = Some(
            "this broker (before 2.1) logs no reason with \"Preparing to rebalance\", and its default INFO level hides \
             a step: 0.10 logs \"has failed\" only at TRACE, 0.11–2.1 log LeaveGroup only at DEBUG, and up to 2.6.0 \
             members that did not rejoin are dropped without a line"
                .into(),
        );
    }
}

fn stabilized(
    g: &mut Classic,
    ev: &GroupEvent,
    generation: i32,
    members: Option<u32>,
    leader: Option<String>,
) {
    if g.round
        .as_ref()
        .is_some_and(|r| r.generation.is_some_and(|x| x != generation))
    {
        g.close_round();
    }
    if g.round.is_none() {
        // A generation the inputs already closed (its members all synced
        // on the wire before the log's clock-corrected line): a late line
        // of that round, not a round of its own.
        if let Some(last) = g
            .done
            .last_mut()
            .filter(|r| r.generation == Some(generation))
        {
            last.cite(ev);
            return;
        }
    }
    let opened = g.round.is_none();
    let r = g.round_at(ev);
    if opened {
        r.needs_cause = true;
        r.opened_mid_round = true;
        r.notes
            .push("the inputs begin inside this rebalance (first seen: \"Stabilized\")".into());
    }
    r.cite(ev);
    if r.generation.is_none() {
        r.generation = Some(generation);
        r.join_completed_at = Some(ev.ts);
    }
    r.logged_members = members.or(r.logged_members);
    if members.is_none() && !r.removed.values().any(|why| why == "rebalance_timeout") {
        // "Stabilized group G generation N (P)" without "with K members" is
        // the wording of 0.11–2.7 (kafka-log-formats.md §2). Up to 2.6.0,
        // GroupCoordinator.scala `onCompleteJoin` dropped the members that
        // had not rejoined without a line (2.6.1 added "removed members who
        // haven't joined"), so whatever the trigger, a departure may be
        // missing from this log: said on the round, once.
        let note = "this broker's wording (\"Stabilized\" gives no member count) is Kafka 2.7 or older: up to \
                    2.6.0 a member that did not rejoin within the rebalance timeout was dropped without a line, so \
                    a departure may be missing from this log";
        if !r.notes.iter().any(|n| n == note) {
            r.notes.push(note.into());
        }
    }
    if leader.is_some() {
        g.leader = leader;
    }
    g.saw_generation(generation);
    g.set_state(ev.ts, "CompletingRebalance");
}

fn assignment_received(g: &mut Classic, ev: &GroupEvent, generation: i32) {
    let wire_waits = match g.round.as_mut() {
        Some(r) if r.generation.is_none_or(|x| x == generation) => {
            r.cite(ev);
            r.generation.get_or_insert(generation);
            r.completed_at = Some(r.completed_at.map_or(ev.ts, |c| c.max(ev.ts)));
            !r.expected.is_empty() && !r.all_synced()
        }
        _ => {
            if let Some(last) = g
                .done
                .last_mut()
                .filter(|r| r.generation == Some(generation))
            {
                last.cite(ev);
                last.completed_at = Some(last.completed_at.map_or(ev.ts, |c| c.max(ev.ts)));
            }
            return;
        }
    };
    g.saw_generation(generation);
    if !wire_waits {
        g.close_round();
        g.set_state(ev.ts, "Stable");
    }
}

fn emptied(g: &mut Classic, ev: &GroupEvent) {
    if let Some(r) = g.round.as_mut() {
        r.cite(ev);
        if let Some(gen) = ev.generation_id {
            r.generation.get_or_insert(gen);
        }
        r.completed_at = Some(ev.ts);
        r.emptied = true;
        r.notes.push("the group became Empty".into());
    }
    if let Some(gen) = ev.generation_id {
        g.saw_generation(gen);
    }
    g.close_round();
    g.current.clear();
    g.set_state(ev.ts, "Empty");
}

/// Applies a Java client line.
pub fn on_client(g: &mut Classic, ev: &GroupEvent, line: &ClientLine) {
    match line {
        ClientLine::Joining {
            reason: Some(reason),
        } => match trigger::from_client_reason(reason) {
            // The Java client keeps its own leave's text as the next join's
            // reason (AbstractCoordinator.java `resetGenerationOnLeaveGroup`
            // -> `resetStateAndRejoin("consumer pro-actively leaving the
            // group")`): the leave reset its member id, so this join is a new
            // member's, whatever the text says.
            Some(Kind::MemberLeft | Kind::PollTimeout) => suspect_weak(
                g,
                ev,
                Kind::MemberJoined,
                Confidence::Medium,
                format!("client: joining again after its own leave (reason: {reason})"),
            ),
            Some(kind) => suspect_weak(
                g,
                ev,
                kind,
                Confidence::High,
                format!("client: joining group due to: {reason}"),
            ),
            None => {
                let r = g.weak_round_at(ev);
                r.cite(ev);
                if trigger::is_cooperative_follow_up(reason) {
                    r.expected_reason = Some(format!(
                        "cooperative follow-up round (KIP-429): \"{reason}\""
                    ));
                } else {
                    r.needs_cause = true;
                }
            }
        },
        ClientLine::RejoinRequested { reason } => match trigger::from_client_reason(reason) {
            Some(kind) => suspect_weak(
                g,
                ev,
                kind,
                Confidence::High,
                format!("client: rejoin requested due to: {reason}"),
            ),
            None => {
                let r = g.weak_round_at(ev);
                r.cite(ev);
                r.needs_cause = true;
            }
        },
        ClientLine::PollTimeoutExpired { .. } if ev.group_instance_id.is_some() => {
            // AbstractCoordinator `maybeLeaveGroup`: since 2.3 a static
            // member sends no LeaveGroup; it stays in the group until its
            // session times out, so this line starts no rebalance.
            g.notes.push(format!(
                "{}: static member {} passed max.poll.interval.ms; static members send no LeaveGroup, so only a session timeout would remove it",
                ev.ts,
                ev.group_instance_id.as_deref().unwrap_or("?")
            ));
            g.context(ev, None);
        }
        ClientLine::PollTimeoutExpired { exceeded_ms } => {
            mark_removed(g, ev, "left");
            let by = exceeded_ms
                .map(|ms| format!(" (exceeded by {ms} ms)"))
                .unwrap_or_default();
            suspect(
                g,
                ev,
                Kind::PollTimeout,
                Confidence::High,
                format!("client: consumer poll timeout has expired{by}"),
            );
        }
        ClientLine::Joined { .. } => joined(g, ev),
        ClientLine::AssignmentFinished { member_ids, .. } => leader_assigned(g, ev, member_ids),
        ClientLine::Synced => {
            // One client's log shows one member: its sync ends its round.
            if let Some(r) = g.round.as_mut() {
                r.cite(ev);
                r.completed_at = Some(ev.ts);
                if r.expected.len() <= 1 {
                    g.close_round();
                    g.set_state(ev.ts, "Stable");
                }
            }
        }
        ClientLine::Leaving { reason } => {
            let kind = reason
                .as_deref()
                .and_then(trigger::from_client_reason)
                .unwrap_or(Kind::MemberLeft);
            mark_removed(g, ev, "left");
            let detail = format!(
                "client: sending LeaveGroup due to {}",
                reason.as_deref().unwrap_or("(no reason)")
            );
            suspect(g, ev, kind, Confidence::High, detail);
        }
        ClientLine::HeartbeatFailed { error } => {
            let e = error.to_ascii_uppercase();
            if e.contains("UNKNOWN_MEMBER_ID")
                || e.contains("ILLEGAL_GENERATION")
                || e.contains("FENCED")
            {
                g.activity.push(super::classic::Activity {
                    at: ev.ts,
                    client_key: super::classic::client_key(ev),
                    member_id: ev.member_id.as_deref().map(String::from),
                    what: ActivityKind::Evicted,
                });
            }
            // REBALANCE_IN_PROGRESS says the group is rebalancing; the
            // other errors (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED)
            // are the consequence of a round, not a round.
            let rebalancing = e.contains("REBALANCE") || e.contains("REBALANCING");
            if rebalancing {
                let r = g.round_at(ev);
                r.cite(ev);
                r.needs_cause = true;
            } else {
                g.context(ev, None);
            }
        }
        ClientLine::CoordinatorUnavailable { detail } => {
            let c = candidate(
                ev,
                Kind::CoordinatorChanged,
                Confidence::Medium,
                format!("client: coordinator unavailable: {detail}"),
            );
            g.context(ev, Some(c));
        }
        _ => cite_if_open(g, ev),
    }
}

/// The leader's "Finished assignment for group at generation N: {m=…}"
/// (ConsumerCoordinator.java `onLeaderElected`) lists every member of
/// generation N (the JoinGroup answer's members, GroupCoordinator.scala
/// `onCompleteJoin` / ClassicGroup.java `currentClassicGroupMembers`). A
/// member in it that the previous generation's list did not hold joined
/// the group: it is why a follower's heartbeat was answered "group is
/// already rebalancing". Medium: the client log does not show that the
/// new member's JoinGroup, rather than another cause, started the round.
fn leader_assigned(g: &mut Classic, ev: &GroupEvent, member_ids: &[String]) {
    let Some(generation) = ev.generation_id else {
        return cite_if_open(g, ev);
    };
    let now: BTreeSet<String> = member_ids.iter().cloned().collect();
    let before = g.leader_members.replace((generation, now.clone()));
    let Some((previous, before)) = before.filter(|(p, _)| *p < generation) else {
        return cite_if_open(g, ev);
    };
    if before.is_empty() || g.round.is_none() {
        return cite_if_open(g, ev);
    }
    for m in now.difference(&before) {
        let c = Candidate {
            member_id: Some(m.clone()),
            client_id: g.book.client_id(m),
            ..candidate(
                ev,
                Kind::MemberJoined,
                Confidence::Medium,
                format!("client: the leader's assignment for generation {generation} lists member {m}, absent from generation {previous}'s"),
            )
        };
        let r = g.round_at(ev);
        r.cite(ev);
        r.suspect(c);
    }
    cite_if_open(g, ev);
}

fn joined(g: &mut Classic, ev: &GroupEvent) {
    if let EventKind::Client(ClientLine::Joined {
        protocol: Some(p), ..
    }) = &ev.kind
    {
        g.assignors.insert(p.clone());
    }
    let Some(generation) = ev.generation_id else {
        return cite_if_open(g, ev);
    };
    if g.round
        .as_ref()
        .is_some_and(|r| r.generation.is_some_and(|x| x != generation))
    {
        g.close_round();
    }
    let r = g.weak_round_at(ev);
    r.cite(ev);
    if r.generation.is_none() {
        r.generation = Some(generation);
        r.join_completed_at = Some(ev.ts);
    }
    if let Some(m) = ev
        .member_id
        .as_deref()
        .filter(|m| !m.is_empty())
        .map(String::from)
    {
        r.record_join(&m, ev.client.client_id.clone(), ev.ts, None);
    }
    g.saw_generation(generation);
}
