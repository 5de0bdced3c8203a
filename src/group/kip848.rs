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

use std::collections::{BTreeSet, VecDeque};

use crate::event::{BrokerLine, ClientLine, EventKind, GroupEvent};
use crate::fast_hash::FastMap;
use crate::report::{GroupSummary, StateChange};
use crate::time::Timestamp;

use super::classic::{client_key, Activity, ActivityKind};
use super::members::{partition_names, MemberBook};
use super::migration::Handover;
use super::resolve::ActivityIndex;
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
    member_epoch: FastMap<String, i32>,
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
    /// Every client "Reconciling assignment with local epoch E" line, in
    /// order: from a client log alone they are the rows (member epochs).
    reconciles: Vec<&'a GroupEvent>,
    /// Epochs the broker logged a target assignment for ("Computed a new
    /// target assignment for epoch E"): members reconcile only to these.
    targets: BTreeSet<i32>,
    /// The heartbeat interval each member was last told
    /// (ConsumerGroupHeartbeatResponse `HeartbeatIntervalMs`).
    heartbeat_ms: FastMap<String, i32>,
    /// Each member's latest joining ConsumerGroupHeartbeat (epoch 0).
    join_requests: FastMap<String, &'a GroupEvent>,
    /// Members whose joins the open round took from the wire, in the order
    /// their requests were sent.
    round_joiners: Vec<String>,
    /// When every member the inputs showed had left or was fenced, since
    /// the last bump that found members in the group: the group was empty
    /// then, and could have been deleted ([`Consumer::is_newer`]).
    emptied: Option<Timestamp>,
    /// The group was deleted, as [`super::deletion`] words it, until the
    /// new group's first bump notes it.
    deleted: Option<String>,
    /// When a deletion was last applied ([`super::SAME_DELETION_NS`]).
    deleted_at: Option<Timestamp>,
    /// The epoch the group had when it ended, until the new group's first
    /// bump takes it ([`crate::report::Rebalance::made_again_from`]).
    made_again_from: Option<i32>,
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
    // A client log alone: no group epoch is known, only the member's own.
    let member_view = rounds.is_empty() && c.epochs.is_empty() && !c.reconciles.is_empty();
    let protocol = if member_view {
        rounds = member_rounds(&c.reconciles);
        MEMBER_VIEW
    } else {
        "consumer"
    };
    let activity = super::resolve::ActivityIndex::new(&c.activity);
    for r in &mut rounds {
        if !member_view {
            fenced_by_silence(r, &c.book, &c.heartbeat_ms, &activity);
        }
        super::resolve::resolve(r, &c.book, &activity, &[]);
    }
    let mut rebalances: Vec<_> = rounds
        .iter_mut()
        .map(|r| Box::new(super::record(group, protocol, r, &c.book)))
        .collect();
    super::mark_storms(&mut rebalances);
    let mut summary = c.summary(group, &rebalances);
    summary.rebalance_count += rounds_let_go as u64;
    summary.notes.extend(let_go);
    if member_view {
        summary.notes.push(MEMBER_VIEW_NOTE.into());
    } else {
        summary.notes.extend(c.reconcile_note());
    }
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
                    self.assignors.insert(a.to_string());
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
            EventKind::GroupDeleted { error: None, .. } => self.deleted(ev),
            EventKind::GroupDeleted { .. } => self.cite(ev),
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
                self.removed(ev.ts);
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
                self.removed(ev.ts);
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
            member_id: ev
                .member_id
                .as_deref()
                .filter(|m| !m.is_empty())
                .map(String::from),
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
        let member = ev.member_id.as_deref().unwrap_or_default().to_string();
        match member_epoch {
            0 => {
                if !member.is_empty() {
                    self.join_requests.insert(member.clone(), ev);
                }
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
                self.removed(ev.ts);
                self.suspect(
                    ev,
                    Kind::MemberLeft,
                    Confidence::High,
                    "ConsumerGroupHeartbeat with member_epoch -1: the member leaves".into(),
                )
            }
            -2 => {
                self.known.remove(&member);
                self.removed(ev.ts);
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
        let member = ev.member_id.as_deref().unwrap_or_default().to_string();
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
        let member = ev.member_id.as_deref().unwrap_or_default().to_string();
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

    /// A ConsumerGroupHeartbeat answer (or a classic member's JoinGroup
    /// answer) at `member_epoch`. The open round of that epoch ends at the
    /// LAST answer that moved a member into it: the first answer carrying
    /// the new epoch, or a later one at that epoch carrying a changed
    /// assignment (partitions another member has since released).
    /// CurrentAssignmentBuilder.java `computeNextAssignment` keeps a member
    /// at its previous epoch while it still owns partitions to revoke
    /// (UNREVOKED_PARTITIONS) and gives it the target epoch only once they
    /// are gone (UNRELEASED_PARTITIONS until every partition is free, then
    /// STABLE); GroupMetadataManager.java `consumerGroupHeartbeat` answers
    /// every heartbeat with the member's epoch but sets the assignment only
    /// on a full request or when it changed. So the steady heartbeats that
    /// follow, at the same epoch and assignment, are no reconciliation and
    /// do not stretch the round to the next bump.
    fn on_response(
        &mut self,
        ev: &'a GroupEvent,
        member_epoch: i32,
        assignment: Option<&[crate::event::TopicPartitions]>,
    ) {
        let member = ev.member_id.as_deref().unwrap_or_default().to_string();
        if member_epoch < 0 {
            self.current.remove(&member);
            self.removed(ev.ts);
            self.cite(ev);
            return;
        }
        // The answer's assignment, named once for the three uses below.
        let names = assignment.map(partition_names);
        let mut reached = true;
        if !member.is_empty() {
            self.current.insert(member.clone());
            let before = self.member_epoch.insert(member.clone(), member_epoch);
            let changed = names
                .as_ref()
                .is_some_and(|n| self.book.get(&member).is_none_or(|m| &m.assignment != n));
            reached = before != Some(member_epoch) || changed;
            if let EventKind::ConsumerGroupHeartbeatResponse {
                heartbeat_interval_ms,
                ..
            } = &ev.kind
            {
                if *heartbeat_interval_ms > 0 {
                    self.heartbeat_ms
                        .insert(member.clone(), *heartbeat_interval_ms);
                }
            }
        }
        if self.is_newer(ev, member_epoch) {
            self.bump(ev, member_epoch);
        }
        // After the bump: the round's assignment_before is what the member
        // held before this answer moved it.
        if let Some(n) = names.as_ref().filter(|_| !member.is_empty()) {
            self.book.entry(&member).assignment = n.clone();
        }
        if assignment.is_some_and(|a| a.iter().all(|t| t.partitions.is_empty())) {
            self.defer_surplus_join(&member, member_epoch);
        }
        if let Some(r) = self
            .round
            .as_mut()
            .filter(|r| r.generation == Some(member_epoch))
        {
            r.cite(ev);
            r.record_join(&member, ev.client.client_id.clone(), ev.ts, None);
            r.synced.insert(member.clone());
            match names {
                Some(n) => {
                    r.assignment_after.insert(member, n);
                }
                // No assignment in the answer: unchanged since the last one
                // the member was sent (`consumerGroupHeartbeat` sets it only
                // when it changed), e.g. the partitions it kept after
                // revoking at its previous epoch.
                None if reached && !member.is_empty() => {
                    let kept = self
                        .book
                        .get(&member)
                        .map(|m| m.assignment.clone())
                        .unwrap_or_default();
                    r.assignment_after.entry(member).or_insert(kept);
                }
                None => {}
            }
            if reached {
                r.completed_at = Some(ev.ts);
            }
        }
    }

    fn bump(&mut self, ev: &'a GroupEvent, epoch: i32) {
        if !(self.current.is_empty() && self.known.is_empty()) {
            self.emptied = None;
        }
        if self.superseded_bump() {
            return self.fold_into_round(ev, epoch);
        }
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
        self.round_joiners.clear();
        for (c, cev) in &pending {
            if let (Some(m), true) = (c.member_id.as_ref(), is_wire_join(cev)) {
                if !self.round_joiners.contains(m) {
                    self.round_joiners.push(m.clone());
                }
            }
        }
        absorb(&mut r, pending);
        if self.epoch.is_none() {
            r.made_again_from = self.made_again_from.take();
        }
        if let Some(why) = self.deleted.take().filter(|_| self.epoch.is_none()) {
            r.notes.push(super::made_again_note(&why, "epoch"));
        }
        r.generation = Some(epoch);
        r.join_completed_at = Some(ev.ts);
        r.cite(ev);
        self.epoch = Some(epoch);
        self.epochs.insert(epoch);
        self.state(started, "Reconciling");
        self.round = Some(r);
    }

    /// Moves a joiner's join out of the open round into the causes of the
    /// next bump when its answer shows another bump made its membership.
    /// GroupMetadataManager.java `consumerGroupHeartbeat` bumps the group
    /// epoch once per heartbeat that changes the group (`groupEpoch += 1`:
    /// a new member always does) and answers the member with the TARGET
    /// assignment epoch, which may be older than its own bump while the next
    /// target is not computed yet (group.consumer.assignment.interval.ms).
    /// So a round from P to E holds at most E − P joins (one when P is
    /// unknown), the first to reach the broker; a later joiner answered at
    /// E with an EMPTY assignment (`group.targetAssignment(member)` of a
    /// member the target of E does not hold) joined in a later epoch, and
    /// its join is that bump's cause. Only bumps read from the wire: a
    /// log's "Bumped group epoch to E" lines give each bump.
    fn defer_surplus_join(&mut self, member: &str, epoch: i32) {
        let Some(r) = self.round.as_mut() else {
            return;
        };
        if r.generation != Some(epoch) || r.seen_in.contains("log") {
            return;
        }
        let allowance = r
            .previous_generation
            .map_or(1, |p| usize::try_from(epoch.saturating_sub(p)).unwrap_or(1))
            .max(1);
        let Some(at) = self.round_joiners.iter().position(|m| m == member) else {
            return;
        };
        if at < allowance {
            return;
        }
        self.round_joiners.remove(at);
        r.candidates
            .retain(|c| !(c.kind == Kind::MemberJoined && c.member_id.as_deref() == Some(member)));
        r.needs_cause = r.candidates.is_empty();
        if let Some(join) = self.join_requests.get(member).copied() {
            self.suspect(
                join,
                Kind::MemberJoined,
                Confidence::High,
                format!("ConsumerGroupHeartbeat with member_epoch 0: a member joins (answered at epoch {epoch} with an empty assignment: its own join bumped a later epoch)"),
            );
        }
    }

    /// Whether the open round is a group epoch bump that Kafka superseded
    /// before computing its target assignment. GroupMetadataManager.java
    /// `consumerGroupHeartbeat`: a member's epoch only ever becomes a
    /// TARGET assignment epoch (`maybeReconcile(…, targetAssignmentEpoch,
    /// …)`), and the target is computed for the group epoch current when it
    /// runs (`updateTargetAssignment` … `groupEpoch`), so a bump whose
    /// "Computed a new target assignment for epoch E" never came (assignment
    /// batched, group.consumer.assignment.interval.ms) is an epoch no member
    /// reconciles to: it and the next bump are one round. Only when the log
    /// shows target lines at all (a grepped log of "Bumped" lines alone
    /// keeps one round per bump) and no member reached that epoch.
    fn superseded_bump(&self) -> bool {
        let Some(r) = self.round.as_ref() else {
            return false;
        };
        !self.targets.is_empty()
            && r.generation.is_some_and(|g| !self.targets.contains(&g))
            && r.completed_at.is_none()
            && r.synced.is_empty()
            && r.seen_in.contains("log")
    }

    /// Carries the open round on to `epoch` (see [`Self::superseded_bump`]):
    /// its causes stay first, the new bump's causes join them.
    fn fold_into_round(&mut self, ev: &'a GroupEvent, epoch: i32) {
        let pending = std::mem::take(&mut self.pending);
        let Some(r) = self.round.as_mut() else {
            return;
        };
        let skipped = r.generation.unwrap_or_default();
        absorb(r, pending);
        r.generation = Some(epoch);
        r.cite(ev);
        r.notes.push(format!(
            "the broker bumped the group epoch to {skipped} but computed no target assignment for it before bumping again to {epoch}: no member reconciles to epoch {skipped} (GroupMetadataManager `consumerGroupHeartbeat` reconciles members to the target assignment epoch only), so both bumps are this one round"
        ));
        self.epoch = Some(epoch);
        self.epochs.insert(epoch);
    }

    /// Notes a member gone: with none left that the inputs showed, the
    /// group is empty.
    fn removed(&mut self, at: Timestamp) {
        if self.epoch.is_some() && self.current.is_empty() && self.known.is_empty() {
            self.emptied.get_or_insert(at);
        }
    }

    /// Whether `epoch` moves the group on: above the epoch held, or below
    /// it in a group that was left empty. A consumer group's epoch only
    /// grows while the group lives (GroupMetadataManager.java bumps
    /// `groupEpoch + 1`); an empty group can be deleted (DeleteGroups, or
    /// its offsets expiring) and a group of the same name made again from
    /// epoch 0 (`getOrMaybeCreateConsumerGroup`), which Apache Kafka 4.4 did
    /// in the lab (`lab/ak_scenarios.py` `k848_recreated`: "Bumped group
    /// epoch to 5", both members gone, then 2 and 3 again). A lower epoch
    /// while members remain is a line or answer out of turn: ignored.
    fn is_newer(&mut self, ev: &'a GroupEvent, epoch: i32) -> bool {
        match self.epoch {
            None => true,
            Some(e) if epoch > e => true,
            Some(e) if self.emptied.is_some() => {
                self.made_again(ev, format!(
                    "the group's epochs started again at {epoch} after {e}, with every member gone: it was deleted and made again (a consumer group's epoch only grows while it lives)"
                ));
                true
            }
            Some(_) => false,
        }
    }

    /// "The following groups were deleted: …", or a DeleteGroups answer
    /// without error. Kafka deletes only a group without members
    /// (`GroupNotEmptyException` otherwise), so members the inputs still
    /// show had gone unseen (a log rotated, a capture started late) and
    /// the group ends here; but the same deletion seen a second time (the
    /// broker's line and the answer) after new members joined is only
    /// cited.
    fn deleted(&mut self, ev: &'a GroupEvent) {
        self.cite(ev);
        let again = super::same_deletion(self.deleted_at, ev.ts);
        if again && !(self.current.is_empty() && self.known.is_empty()) {
            return;
        }
        self.deleted_at = Some(ev.ts);
        let why = super::deletion(ev);
        self.made_again(ev, why.clone());
        self.deleted = Some(why);
        self.current.clear();
        self.known.clear();
        self.state(ev.ts, "Dead");
    }

    /// Ends the group's life before a new one of the same name: a round
    /// still open (its members all gone) ends as the group emptied, at its
    /// bump (ConsumerGroup.java `maybeUpdateGroupState`: no member, state
    /// EMPTY); causes from before the group emptied are the old group's
    /// (a capture sees no bump for the last leave: nobody is answered one);
    /// epochs start again.
    fn made_again(&mut self, ev: &'a GroupEvent, why: String) {
        if let Some(at) = self.emptied {
            self.pending.retain(|(c, _)| c.at > at);
        }
        if let Some(r) = self.round.as_mut() {
            r.cite(ev);
            if r.completed_at.is_none() && self.emptied.is_some() {
                r.completed_at = Some(r.join_completed_at.unwrap_or(r.started_at));
                r.notes.push(format!(
                    "every member had left, so the group was empty and this rebalance over at its epoch bump; then {why}"
                ));
            }
        }
        self.close();
        self.made_again_from = self.epoch.or(self.made_again_from);
        // Members' own epochs stay: the new group's members have ids of
        // their own (one may have been answered just now).
        self.epoch = None;
        self.targets.clear();
        self.emptied = None;
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
            BrokerLine::GroupEpochBumped { epoch } if self.is_newer(ev, *epoch) => {
                self.bump(ev, *epoch)
            }
            BrokerLine::GroupDead => self.deleted(ev),
            // GroupMetadataManager.java: a leave or a fence removes the
            // member and bumps the group epoch without a "Bumped group
            // epoch" line; the target assignment computed for the new epoch
            // shows it.
            BrokerLine::TargetAssignmentComputed { epoch, .. } => {
                // Computed for the group epoch of the moment: a group made
                // again shows first in its "Bumped group epoch" line.
                let newer = self.epoch.is_none_or(|e| *epoch > e);
                if newer {
                    self.bump(ev, *epoch);
                } else {
                    self.cite(ev);
                }
                self.targets.insert(*epoch);
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
                self.removed(ev.ts);
                self.suspect(ev, kind, Confidence::High, detail);
            }
            // KIP-394's first step ("Dynamic member with unknown member id
            // joins the consumer group. Created a new member id …"): the
            // member is answered MEMBER_ID_REQUIRED and is not in the group.
            BrokerLine::MemberJoined { pending: true, .. } => self.cite(ev),
            BrokerLine::MemberJoined { .. } => {
                let member = ev.member_id.as_deref().unwrap_or_default().to_string();
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
                self.removed(ev.ts);
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
                        if let Some(m) = ev.member_id.as_deref().map(String::from) {
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
                self.reconciles.push(ev);
                // Local epoch 0 is the member still joining: no group epoch yet.
                let Some(epoch) = ev.generation_id.filter(|e| *e > 0) else {
                    return self.cite(ev);
                };
                let member = ev.member_id.as_deref().unwrap_or_default().to_string();
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
                        r.assignment_after.insert(member, assigned.to_vec());
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

    fn summary(&self, group: &str, rebalances: &[Box<crate::report::Rebalance>]) -> GroupSummary {
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

/// The `protocol` of rows read from a KIP-848 client's log alone: their
/// numbers are the MEMBER's epochs, not group epochs.
pub const MEMBER_VIEW: &str = "consumer_member";

const MEMBER_VIEW_NOTE: &str = "only a KIP-848 client's log: each row is one reconciliation of one member (AbstractMembershipManager / ConsumerMembershipManager \"Reconciling assignment with local epoch E\"), numbered by the member's epoch as the client saw it, not the group epoch (the group may have bumped epochs this member skipped); the cause of each is the broker's (another member joining, leaving or fenced, a subscription or metadata change): its server.log or a capture of ConsumerGroupHeartbeat names it";

/// One round per reconciliation in a client log alone, per member in time
/// order: from the member's previous local epoch to the one it reconciled
/// to (epoch 0 is the member joining, not a reconciliation; the same epoch
/// reconciled again is evidence of its row). The member's first row after
/// joining is its own join; the others' causes are not in a client log.
fn member_rounds(reconciles: &[&GroupEvent]) -> Vec<Round> {
    let mut last: FastMap<String, (i32, Vec<String>, Option<usize>)> = FastMap::default();
    // When each member reconciled epoch 0 (joined): its first row starts there.
    let mut joined: FastMap<String, Timestamp> = FastMap::default();
    let mut rounds: Vec<Round> = Vec::new();
    for ev in reconciles {
        let EventKind::Client(ClientLine::Reconciling {
            assigned,
            added,
            revoked,
        }) = &ev.kind
        else {
            continue;
        };
        let Some(epoch) = ev.generation_id.filter(|e| *e >= 0) else {
            continue;
        };
        let member = ev.member_id.as_deref().unwrap_or_default().to_string();
        let (prev, before, row) = last.remove(&member).unwrap_or((-1, Vec::new(), None));
        if epoch == 0 {
            joined.insert(member.clone(), ev.ts);
        }
        if epoch == prev || epoch == 0 {
            if let Some(r) = row.and_then(|i| rounds.get_mut(i)) {
                r.cite(ev);
            }
            last.insert(member, (epoch, assigned.to_vec(), row));
            continue;
        }
        let start = joined.get(&member).filter(|_| prev == 0).copied();
        let mut r = Round::new(start.unwrap_or(ev.ts), (prev >= 0).then_some(prev));
        r.cite(ev);
        r.generation = Some(epoch);
        r.join_completed_at = Some(ev.ts);
        r.completed_at = Some(ev.ts);
        r.synced.insert(member.clone());
        r.assignment_before.insert(member.clone(), before);
        r.assignment_after.insert(member.clone(), assigned.to_vec());
        let (kind, confidence, detail) = if prev == 0 {
            (
                Kind::MemberJoined,
                Confidence::Medium,
                format!("client: the member's first reconciliation after joining (member epoch {epoch})"),
            )
        } else {
            (
                Kind::Unknown,
                Confidence::Low,
                format!(
                    "client: reconciled to member epoch {epoch}: added [{}], revoked [{}]; why the group moved is the broker's to say",
                    added.join(", "),
                    revoked.join(", ")
                ),
            )
        };
        r.suspect(Candidate {
            kind,
            confidence,
            member_id: Some(member.clone()).filter(|m| !m.is_empty()),
            client_id: ev.client.client_id.clone(),
            detail,
            at: ev.ts,
            deferred: Deferred::No,
        });
        r.notes.push(format!(
            "member epoch {} → {epoch} as the client saw it, not a group epoch",
            if prev >= 0 {
                prev.to_string()
            } else {
                "?".into()
            }
        ));
        rounds.push(r);
        last.insert(member, (epoch, assigned.to_vec(), Some(rounds.len() - 1)));
    }
    rounds.sort_by_key(|r| r.started_at);
    rounds
}

/// Moves the causes that waited for an epoch bump into round `r`: leaves
/// and fences name the members removed.
fn absorb(r: &mut Round, pending: VecDeque<(Candidate, &GroupEvent)>) {
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
}

/// Whether `ev` is a ConsumerGroupHeartbeat joining (member epoch 0).
fn is_wire_join(ev: &GroupEvent) -> bool {
    matches!(
        ev.kind,
        EventKind::ConsumerGroupHeartbeatRequest {
            member_epoch: 0,
            ..
        }
    )
}

/// A member of the group before a bump that nothing else explains, whose
/// heartbeats had stopped for longer than the interval the broker gave it
/// and that did not take part in the new epoch: the broker fenced it when
/// its session expired. GroupMetadataManager.java `consumerGroupHeartbeat`
/// reschedules the member's session timer at every heartbeat
/// (`scheduleConsumerGroupSessionTimeout`), and on expiry
/// `consumerGroupFenceMemberOperation(…, "the member session expired.")`
/// removes it and bumps the group epoch, a bump no line on the wire names.
/// GroupCoordinatorConfig requires group.consumer.heartbeat.interval.ms
/// below group.consumer.session.timeout.ms, so a silence shorter than the
/// heartbeat interval is no expiry. High when the member, back, was told
/// it is no longer a member (UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH).
fn fenced_by_silence(
    r: &mut Round,
    book: &MemberBook,
    heartbeat_ms: &FastMap<String, i32>,
    activity: &ActivityIndex<'_>,
) {
    if r.candidates
        .iter()
        .any(|c| c.confidence >= Confidence::Medium)
    {
        return;
    }
    let mut fenced = Vec::new();
    for s in &r.silences {
        let (Some(last), Some(hb)) = (s.last_seen, heartbeat_ms.get(&s.member_id)) else {
            continue;
        };
        let silent_ms = r.started_at.millis_since(last);
        if silent_ms <= f64::from(*hb)
            || r.synced.contains(&s.member_id)
            || r.removed.contains_key(&s.member_id)
        {
            continue;
        }
        let evicted = activity.member_after(ActivityKind::Evicted, &s.member_id, r.started_at);
        let closed = activity
            .member_after(ActivityKind::Close, &s.member_id, last)
            .filter(|at| *at <= r.started_at);
        let mut detail = format!(
            "no ConsumerGroupHeartbeat from this member for {:.1} s before the new epoch (heartbeat interval {hb} ms) and none in it: the broker fenced it when its session expired (group.consumer.session.timeout.ms)",
            silent_ms / 1000.0
        );
        detail.push_str(&super::resolve::how_it_went_quiet(
            closed,
            evicted,
            last,
            r.started_at,
        ));
        fenced.push(Candidate {
            kind: Kind::SessionTimeout,
            confidence: if evicted.is_some() {
                Confidence::High
            } else {
                Confidence::Medium
            },
            member_id: Some(s.member_id.clone()),
            client_id: book.client_id(&s.member_id),
            detail,
            at: r.started_at,
            deferred: Deferred::No,
        });
    }
    for c in fenced {
        if let Some(m) = &c.member_id {
            r.removed.insert(m.clone(), "session_timeout".into());
        }
        r.suspect(c);
    }
}

fn activity(ev: &GroupEvent, what: ActivityKind) -> Activity {
    Activity {
        at: ev.ts,
        client_key: client_key(ev),
        member_id: ev
            .member_id
            .as_deref()
            .filter(|m| !m.is_empty())
            .map(String::from),
        what,
    }
}
