//! KIP-848 consumer groups: rebalances are group-epoch bumps.
//!
//! Takes: one group's events when it speaks ConsumerGroupHeartbeat (API 68)
//! or the new coordinator logs its epochs. Gives: a [`GroupHistory`] whose
//! "generations" are group epochs. There is no JoinGroup round: a member
//! joins with `member_epoch` 0, leaves with -1 (-2: a static member leaving
//! for a while), changes its subscription by sending new topic names, and
//! the coordinator bumps the group epoch and reconciles each member towards
//! it (KIP-848, `ConsumerGroupHeartbeatRequest.json`). A round here runs
//! from the first cause to the last member answered with the new epoch.

use std::collections::{BTreeSet, HashMap, VecDeque};

use crate::event::{BrokerLine, ClientLine, EventKind, GroupEvent};
use crate::report::{GroupSummary, StateChange};
use crate::time::Timestamp;

use super::classic::{client_key, Activity, ActivityKind};
use super::members::{partition_names, MemberBook};
use super::migration::Handover;
use super::round::{Candidate, Deferred, Round, Silence};
use super::trigger::{Confidence, Kind};
use super::GroupHistory;

/// Causes kept while waiting for an epoch bump.
const MAX_PENDING: usize = 64;

#[derive(Default)]
struct Consumer<'a> {
    book: MemberBook,
    epoch: Option<i32>,
    epochs: BTreeSet<i32>,
    current: BTreeSet<String>,
    /// Members whose join the inputs showed (taken over from the classic
    /// group, a JoinGroup, a "joins the consumer group" line), until they
    /// leave or are fenced: a classic member's every JoinGroup is logged as
    /// joining
    /// (`classicGroupJoinToConsumerGroup` always calls
    /// `getOrMaybeSubscribeDynamicConsumerGroupMember` with
    /// createIfNotExists), but only a member not yet in it joins.
    known: BTreeSet<String>,
    member_epoch: HashMap<String, i32>,
    pending: VecDeque<(Candidate, &'a GroupEvent)>,
    round: Option<Round>,
    done: super::round::ClosedRounds,
    states: Vec<StateChange>,
    activity: Vec<Activity>,
    assignors: BTreeSet<String>,
    span: Option<(Timestamp, Timestamp)>,
    /// Client "Reconciling assignment with local epoch E" lines with no
    /// round of epoch E in the inputs: (member, E).
    unmatched_reconciles: Vec<(String, i32)>,
}

/// Rebuilds a KIP-848 group's history; `handover` is the classic group it
/// was converted from, if the inputs show one (ConsumerGroup.java
/// `fromClassicGroup`: group epoch and member epochs = the generation).
pub fn reconstruct(
    group: &str,
    events: &[&GroupEvent],
    handover: Option<&Handover>,
) -> GroupHistory {
    let mut c = Consumer::default();
    if let Some(h) = handover {
        c.epoch = h.generation;
        c.current = h.members.clone();
        c.known = h.known.clone();
    }
    for ev in events {
        c.span = Some(c.span.map_or((ev.ts, ev.ts), |(a, _)| (a, ev.ts)));
        c.book.observe(ev);
        c.apply(ev);
    }
    c.close();
    let rounds_let_go = c.done.let_go;
    let (mut rounds, let_go) = c.done.take();
    let activity = super::resolve::ActivityIndex::new(&c.activity);
    for r in &mut rounds {
        super::resolve::resolve(r, &c.book, &activity, &[]);
    }
    let mut rebalances: Vec<_> = rounds
        .iter()
        .map(|r| super::record(group, "consumer", r, &c.book))
        .collect();
    super::mark_storms(&mut rebalances);
    let mut summary = c.summary(group, &rebalances);
    summary.rebalance_count += rounds_let_go as u64;
    summary.notes.extend(let_go);
    summary.notes.extend(c.reconcile_note());
    GroupHistory {
        summary,
        rebalances,
        rounds_let_go,
    }
}

impl<'a> Consumer<'a> {
    fn apply(&mut self, ev: &'a GroupEvent) {
        match &ev.kind {
            EventKind::ConsumerGroupHeartbeatRequest {
                member_epoch,
                subscribed_topic_names,
                server_assignor,
                ..
            } => {
                if let Some(a) = server_assignor {
                    self.assignors.insert(a.clone());
                }
                self.on_request(ev, *member_epoch, subscribed_topic_names.as_deref());
            }
            EventKind::ConsumerGroupHeartbeatResponse { error: Some(e), .. } => {
                if matches!(
                    e.name(),
                    "FENCED_MEMBER_EPOCH" | "UNKNOWN_MEMBER_ID" | "STALE_MEMBER_EPOCH"
                ) {
                    self.activity.push(activity(ev, ActivityKind::Evicted));
                }
                self.cite(ev);
            }
            EventKind::ConsumerGroupHeartbeatResponse {
                member_epoch,
                assignment,
                ..
            } => self.on_response(ev, *member_epoch, assignment.as_deref()),
            EventKind::ConnectionClosed { .. } => {
                self.activity.push(activity(ev, ActivityKind::Close))
            }
            EventKind::JoinGroupRequest { .. } => self.on_classic_join(ev),
            EventKind::JoinGroupResponse { error: None, .. } => {
                // `classicGroupJoinToConsumerGroup` answers with the
                // member's epoch as the generation.
                match ev.generation_id.filter(|g| *g >= 0) {
                    Some(g) => self.on_response(ev, g, None),
                    None => self.cite(ev),
                }
            }
            EventKind::SyncGroupResponse {
                error: None,
                assignment,
                ..
            } => self.on_classic_sync(ev, assignment),
            EventKind::LeaveGroupRequest { members, .. } => {
                for m in members {
                    self.known.remove(&m.member_id);
                }
                self.suspect(
                    ev,
                    Kind::MemberLeft,
                    Confidence::High,
                    "LeaveGroup from a classic member of the consumer group (GroupMetadataManager `classicGroupLeaveToConsumerGroup` bumps the group epoch)".into(),
                );
                self.cite(ev);
            }
            EventKind::LeaveGroupResponse { error: None, .. } => {
                if let Some(m) = ev.member_id.as_deref() {
                    self.current.remove(m);
                }
                self.cite(ev);
            }
            EventKind::Broker(line) => self.on_broker(ev, line),
            EventKind::Client(line) => self.on_client(ev, line),
            _ => self.cite(ev),
        }
    }

    fn cite(&mut self, ev: &'a GroupEvent) {
        if let Some(r) = self.round.as_mut() {
            r.cite(ev);
        }
    }

    fn suspect(&mut self, ev: &'a GroupEvent, kind: Kind, confidence: Confidence, detail: String) {
        let c = Candidate {
            kind,
            confidence,
            member_id: ev.member_id.clone().filter(|m| !m.is_empty()),
            client_id: ev.client.client_id.clone(),
            detail,
            at: ev.ts,
            deferred: Deferred::No,
        };
        // Causes wait for the next epoch bump; a group that never bumps must
        // not grow them without bound: keep the latest.
        if self.pending.len() >= MAX_PENDING {
            self.pending.pop_front();
        }
        self.pending.push_back((c, ev));
    }

    fn on_request(&mut self, ev: &'a GroupEvent, member_epoch: i32, topics: Option<&[String]>) {
        let member = ev.member_id.clone().unwrap_or_default();
        match member_epoch {
            0 => {
                self.activity.push(activity(ev, ActivityKind::Join));
                self.suspect(
                    ev,
                    Kind::MemberJoined,
                    Confidence::High,
                    "ConsumerGroupHeartbeat with member_epoch 0: a member joins".into(),
                );
            }
            -1 => {
                self.known.remove(&member);
                self.suspect(
                    ev,
                    Kind::MemberLeft,
                    Confidence::High,
                    "ConsumerGroupHeartbeat with member_epoch -1: the member leaves".into(),
                )
            }
            -2 => {
                self.known.remove(&member);
                self.suspect(
                    ev,
                    Kind::MemberLeft,
                    Confidence::Medium,
                    "ConsumerGroupHeartbeat with member_epoch -2: a static member leaves for a while"
                        .into(),
                )
            }
            _ => {
                if let Some(t) = topics {
                    let known = self
                        .book
                        .get(&member)
                        .map(|m| m.topics.clone())
                        .unwrap_or_default();
                    if !known.is_empty() && known != t {
                        let detail = format!(
                            "subscription changed from [{}] to [{}]",
                            known.join(","),
                            t.join(",")
                        );
                        self.suspect(ev, Kind::SubscriptionChanged, Confidence::High, detail);
                    }
                }
            }
        }
        if let (Some(t), false) = (topics, member.is_empty()) {
            self.book.entry(&member).topics = t.to_vec();
        }
        self.cite(ev);
    }

    /// A classic member's JoinGroup into the consumer group: only a member
    /// id the group does not have yet is a join; the KIP-394 first step
    /// (no member id, answered MEMBER_ID_REQUIRED) and known members'
    /// rejoins are not.
    fn on_classic_join(&mut self, ev: &'a GroupEvent) {
        self.activity.push(activity(ev, ActivityKind::Join));
        let member = ev.member_id.clone().unwrap_or_default();
        if !member.is_empty() && self.known.insert(member) {
            self.suspect(
                ev,
                Kind::MemberJoined,
                Confidence::High,
                "JoinGroup from a new classic member of the consumer group".into(),
            );
        }
        self.cite(ev);
    }

    /// A classic member's SyncGroup answer carries its assignment for its
    /// current epoch.
    fn on_classic_sync(
        &mut self,
        ev: &'a GroupEvent,
        assignment: &[crate::event::TopicPartitions],
    ) {
        let member = ev.member_id.clone().unwrap_or_default();
        if member.is_empty() {
            return self.cite(ev);
        }
        self.book.entry(&member).assignment = partition_names(assignment);
        if let Some(r) = self
            .round
            .as_mut()
            .filter(|r| r.generation.is_some() && r.generation == ev.generation_id)
        {
            r.assignment_after
                .insert(member, partition_names(assignment));
        }
        self.cite(ev);
    }

    fn on_response(
        &mut self,
        ev: &'a GroupEvent,
        member_epoch: i32,
        assignment: Option<&[crate::event::TopicPartitions]>,
    ) {
        let member = ev.member_id.clone().unwrap_or_default();
        if member_epoch < 0 {
            self.current.remove(&member);
            self.cite(ev);
            return;
        }
        if !member.is_empty() {
            self.current.insert(member.clone());
            self.member_epoch.insert(member.clone(), member_epoch);
            if let Some(a) = assignment {
                self.book.entry(&member).assignment = partition_names(a);
            }
        }
        if self.epoch.is_none_or(|e| member_epoch > e) {
            self.bump(ev, member_epoch);
        }
        if let Some(r) = self
            .round
            .as_mut()
            .filter(|r| r.generation == Some(member_epoch))
        {
            r.cite(ev);
            r.record_join(&member, ev.client.client_id.clone(), ev.ts, None);
            r.synced.insert(member.clone());
            if let Some(a) = assignment {
                r.assignment_after.insert(member, partition_names(a));
            }
            r.completed_at = Some(ev.ts);
        }
    }

    fn bump(&mut self, ev: &'a GroupEvent, epoch: i32) {
        self.close();
        let pending = std::mem::take(&mut self.pending);
        let started = pending.front().map_or(ev.ts, |(c, _)| c.at);
        let mut r = Round::new(started, self.epoch);
        r.members_before = self
            .current
            .iter()
            .filter(|m| ev.member_id.as_deref() != Some(m.as_str()) || self.epoch.is_some())
            .cloned()
            .collect();
        for m in &r.members_before {
            let b = self.book.get(m);
            r.assignment_before.insert(
                m.clone(),
                b.map(|x| x.assignment.clone()).unwrap_or_default(),
            );
            r.silences.push(Silence {
                member_id: m.clone(),
                last_seen: b.and_then(|x| x.last_seen).filter(|t| *t < started),
                session_timeout_ms: None,
            });
        }
        for (c, cev) in pending {
            r.cite(cev);
            if matches!(c.kind, Kind::MemberLeft) {
                r.removed
                    .insert(c.member_id.clone().unwrap_or_default(), "left".into());
            }
            if c.detail.starts_with("broker: member fenced") {
                if let Some(m) = c.member_id.clone() {
                    r.removed.insert(m, c.kind.name().into());
                }
            }
            r.suspect(c);
        }
        r.needs_cause = r.candidates.is_empty();
        r.generation = Some(epoch);
        r.join_completed_at = Some(ev.ts);
        r.cite(ev);
        self.epoch = Some(epoch);
        self.epochs.insert(epoch);
        self.state(started, "Reconciling");
        self.round = Some(r);
    }

    fn close(&mut self) {
        if let Some(r) = self.round.take() {
            if let Some(at) = r.completed_at {
                self.state(at, "Stable");
            }
            self.done.push(r);
        }
    }

    fn state(&mut self, at: Timestamp, state: &str) {
        if self.states.last().is_none_or(|s| s.state != state) {
            self.states.push(StateChange {
                at,
                state: state.to_string(),
                generation: self.epoch,
            });
        }
    }

    fn on_broker(&mut self, ev: &'a GroupEvent, line: &BrokerLine) {
        match line {
            BrokerLine::GroupEpochBumped { epoch } if self.epoch.is_none_or(|e| *epoch > e) => {
                self.bump(ev, *epoch)
            }
            // GroupMetadataManager.java: a leave or a fence removes the
            // member and bumps the group epoch without a "Bumped group
            // epoch" line; the target assignment computed for the new epoch
            // shows it.
            BrokerLine::TargetAssignmentComputed { epoch, .. }
                if self.epoch.is_none_or(|e| *epoch > e) =>
            {
                self.bump(ev, *epoch)
            }
            BrokerLine::MemberFenced { reason } => {
                let r = reason.to_ascii_lowercase();
                let (kind, detail) = if r.contains("failed to sync") {
                    // A classic member inside a consumer group that did
                    // not send SyncGroup in time
                    // (`scheduleConsumerGroupSyncTimeout`).
                    (
                        Kind::PendingSyncExpired,
                        format!("broker: member fenced: {reason}"),
                    )
                } else if r.contains("session") {
                    (
                        Kind::SessionTimeout,
                        format!("broker: member fenced: {reason}"),
                    )
                } else if r.contains("transition")
                    || r.contains("failed to join")
                    || r.contains("rebalance timeout")
                {
                    (
                        Kind::PollTimeout,
                        format!("broker: member fenced for not revoking in time: {reason}"),
                    )
                } else {
                    (Kind::Unknown, format!("broker: member fenced: {reason}"))
                };
                if let Some(m) = ev.member_id.as_deref() {
                    self.known.remove(m);
                }
                self.suspect(ev, kind, Confidence::High, detail);
            }
            // KIP-394's first step ("Dynamic member with unknown member id
            // joins the consumer group. Created a new member id …"): the
            // member is answered MEMBER_ID_REQUIRED and is not in the group.
            BrokerLine::MemberJoined { pending: true, .. } => self.cite(ev),
            BrokerLine::MemberJoined { .. } => {
                let member = ev.member_id.clone().unwrap_or_default();
                // A member the broker already answered with an epoch has
                // joined: the capture showed it first, the log line is late.
                let answered = self.current.contains(&member);
                if member.is_empty() || (self.known.insert(member) && !answered) {
                    self.suspect(
                        ev,
                        Kind::MemberJoined,
                        Confidence::High,
                        "broker: member joined".into(),
                    )
                } else {
                    // A classic member already in the group rejoining
                    // (logged as "joins the consumer group using the
                    // classic protocol" at every JoinGroup).
                    self.cite(ev)
                }
            }
            BrokerLine::MemberLeft { .. } => {
                if let Some(m) = ev.member_id.as_deref() {
                    self.known.remove(m);
                }
                self.suspect(
                    ev,
                    Kind::MemberLeft,
                    Confidence::High,
                    "broker: member left".into(),
                )
            }
            // "Computed new subscription metadata" (or metadata hash) with
            // no member updating its subscription: the topics' metadata
            // changed (partitions added, a topic created for a regex).
            BrokerLine::SubscriptionChanged { detail } if detail.starts_with("Computed new") => {
                self.suspect(
                    ev,
                    Kind::MetadataChanged,
                    Confidence::High,
                    format!("broker: {detail}"),
                )
            }
            BrokerLine::SubscriptionChanged { detail } => self.suspect(
                ev,
                Kind::SubscriptionChanged,
                Confidence::High,
                format!("broker: {detail}"),
            ),
            BrokerLine::MemberAssignmentState { epoch, state, .. } => {
                if let Some(r) = self.round.as_mut().filter(|r| r.generation == Some(*epoch)) {
                    r.cite(ev);
                    if state.eq_ignore_ascii_case("stable") {
                        if let Some(m) = ev.member_id.clone() {
                            r.synced.insert(m);
                        }
                        r.completed_at = Some(ev.ts);
                    }
                }
            }
            _ => self.cite(ev),
        }
    }

    /// The KIP-848 Java client logs its own epochs ("Reconciling assignment
    /// with local epoch E", ConsumerMembershipManager `reconcile` /
    /// MembershipManagerImpl 3.7–3.9) and state changes. E is the MEMBER's
    /// epoch (the group epoch of the target assignment it reconciles to),
    /// not a bump: the group may have moved several epochs meanwhile, and a
    /// member reconciles the same epoch more than once. It is client
    /// evidence of the round of that epoch, never a round of its own.
    fn on_client(&mut self, ev: &'a GroupEvent, line: &ClientLine) {
        match line {
            ClientLine::Reconciling { assigned, .. } => {
                // Local epoch 0 is the member still joining: no group epoch yet.
                let Some(epoch) = ev.generation_id.filter(|e| *e > 0) else {
                    return self.cite(ev);
                };
                let member = ev.member_id.clone().unwrap_or_default();
                let round = match self.round.as_mut().filter(|r| r.generation == Some(epoch)) {
                    Some(r) => Some(r),
                    None => self
                        .done
                        .iter_mut()
                        .rev()
                        .find(|r| r.generation == Some(epoch)),
                };
                match round {
                    Some(r) => {
                        r.cite(ev);
                        r.synced.insert(member.clone());
                        r.assignment_after.insert(member, assigned.clone());
                        r.completed_at = Some(r.completed_at.map_or(ev.ts, |c| c.max(ev.ts)));
                    }
                    None => {
                        self.cite(ev);
                        self.unmatched_reconciles.push((member, epoch));
                    }
                }
            }
            ClientLine::MemberStateChanged { to, .. } if to.eq_ignore_ascii_case("JOINING") => self
                .suspect(
                    ev,
                    Kind::MemberJoined,
                    Confidence::High,
                    "client: member joining the group".into(),
                ),
            ClientLine::MemberStateChanged { to, .. }
                if to.to_ascii_uppercase().contains("FENCED") =>
            {
                self.suspect(
                    ev,
                    Kind::SessionTimeout,
                    Confidence::Medium,
                    format!("client: member {to}"),
                )
            }
            ClientLine::Leaving { reason } => {
                let detail = format!(
                    "client: leaving the group ({})",
                    reason.as_deref().unwrap_or("no reason")
                );
                self.suspect(ev, Kind::MemberLeft, Confidence::High, detail);
                self.cite(ev);
            }
            _ => self.cite(ev),
        }
    }

    /// What client reconciliations without a round of their epoch say.
    fn reconcile_note(&self) -> Option<String> {
        if self.unmatched_reconciles.is_empty() {
            return None;
        }
        let members: BTreeSet<&str> = self
            .unmatched_reconciles
            .iter()
            .map(|(m, _)| if m.is_empty() { "?" } else { m.as_str() })
            .collect();
        let epochs: BTreeSet<i32> = self.unmatched_reconciles.iter().map(|(_, e)| *e).collect();
        let epochs: Vec<String> = epochs.iter().map(i32::to_string).collect();
        let members: Vec<&str> = members.into_iter().collect();
        Some(format!(
            "the client log shows member(s) {} reconciling at local epoch(s) {}: member epochs, not group epoch bumps (a member may skip epochs or reconcile one twice), so no rebalance is inferred from them; the broker's server.log (\"Bumped group epoch\", \"Computed a new target assignment for epoch\") or a capture of ConsumerGroupHeartbeat shows the rounds",
            members.join(", "),
            epochs.join(", ")
        ))
    }

    fn summary(&self, group: &str, rebalances: &[crate::report::Rebalance]) -> GroupSummary {
        let (first, last) = self.span.map_or((None, None), |(a, b)| (Some(a), Some(b)));
        GroupSummary {
            group: group.to_string(),
            protocol: "consumer".into(),
            protocol_type: Some("consumer".into()),
            assignors: self.assignors.iter().cloned().collect(),
            state: self
                .states
                .last()
                .map_or("Unknown".into(), |s| s.state.clone()),
            generation: self.epoch,
            generations_seen: self.epochs.iter().copied().collect(),
            members: self.book.summaries(&self.current),
            rebalance_count: rebalances.len() as u64,
            rebalancing_ms: super::round::round_us(
                rebalances.iter().filter_map(|r| r.duration_ms).sum(),
            ),
            storm: rebalances.iter().any(|r| r.storm),
            states: self.states.clone(),
            first_seen: first,
            last_seen: last,
            ..GroupSummary::default()
        }
    }
}

fn activity(ev: &GroupEvent, what: ActivityKind) -> Activity {
    Activity {
        at: ev.ts,
        client_key: client_key(ev),
        member_id: ev.member_id.clone().filter(|m| !m.is_empty()),
        what,
    }
}
