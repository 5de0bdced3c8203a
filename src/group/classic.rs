//! The classic (JoinGroup/SyncGroup) group state machine, rebuilt from
//! events in time order.
//!
//! Takes: one group's events (wire and log) in time order. Gives: its
//! rounds ([`Round`]) and state changes, handed to [`super::finish`] which
//! resolves causes and writes the records. States use the broker's names
//! (`GroupState` in kafka's `GroupMetadata.scala`): Empty,
//! PreparingRebalance, CompletingRebalance, Stable, Dead.
//!
//! Real brokers are not the textbook: tansu answers one generation's
//! JoinGroups seconds apart and may repeat a generation after an eviction,
//! captures begin mid-rebalance, logs may see a round the capture missed.
//! So a round is opened by the first evidence of any kind and closed when
//! every member the leader was told about has synced, when a new cause
//! arrives, or at the end of the input; late answers of a closed round's
//! generation are attached to it.

use std::collections::BTreeSet;

use crate::event::{BrokerLine, ClientLine, ErrorCode, EventKind, GroupEvent};
use crate::fast_hash::FastMap;
use crate::report::StateChange;
use crate::time::Timestamp;

use super::members::{partition_names, MemberBook};
use super::round::{Candidate, ClientSilence, Deferred, Round, Silence};
use super::trigger::{self, Confidence, Kind};

/// Something a member did that later judgements need (a close, a rejoin).
#[derive(Clone, Debug)]
pub struct Activity {
    /// When.
    pub at: Timestamp,
    /// Client key (client id + host) of who did it.
    pub client_key: String,
    /// Member id, if known.
    pub member_id: Option<String>,
    /// What.
    pub what: ActivityKind,
}

/// Kinds of [`Activity`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActivityKind {
    /// The connection closed (FIN or RST).
    Close,
    /// A JoinGroup was sent.
    Join,
    /// A response told the member it was no longer known
    /// (UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION / FENCED_INSTANCE_ID).
    Evicted,
    /// An OffsetCommit was sent: the application is making progress.
    Commit,
}

/// A classic group's history while events arrive.
#[derive(Debug, Default)]
pub struct Classic {
    /// The group.
    pub group: String,
    /// Members ever seen.
    pub book: MemberBook,
    /// Current state.
    pub state: &'static str,
    /// Current generation.
    pub generation: Option<i32>,
    /// Every generation seen.
    pub generations_seen: BTreeSet<i32>,
    /// Current leader.
    pub leader: Option<String>,
    /// JoinGroup protocol_type.
    pub protocol_type: Option<String>,
    /// Assignors offered or chosen.
    pub assignors: BTreeSet<String>,
    /// Current members.
    pub current: BTreeSet<String>,
    /// The open round.
    pub round: Option<Round>,
    /// Closed rounds.
    pub done: super::round::ClosedRounds,
    /// State changes.
    pub states: Vec<StateChange>,
    /// Later-judgement material.
    pub activity: Vec<Activity>,
    /// The earliest JoinGroup of each client key, so that "joined before"
    /// is one lookup, not a scan of the activity log.
    first_join: FastMap<String, Timestamp>,
    /// Coordinator last seen.
    pub coordinator: Option<String>,
    /// Join requests awaiting their answers: exchange → (member id asked, client key).
    joins_in_flight: FastMap<u64, JoinAsked>,
    /// First and last event times.
    pub span: Option<(Timestamp, Timestamp)>,
    /// SyncGroups answered REBALANCE_IN_PROGRESS since the last round
    /// opened: their members' rejoins cause the next round.
    failed_syncs: Vec<Candidate>,
    /// Things worth saying about the group that are not rebalances.
    pub notes: Vec<String>,
    /// The member ids of the last leader's assignment map a client log
    /// showed ("Finished assignment for group at generation N"), with N.
    pub leader_members: Option<(i32, BTreeSet<String>)>,
    /// Evidence that starts no rebalance in Kafka, seen while no round was
    /// open: context for a round that opens soon after, never a round.
    context: Vec<Context>,
    /// Clients of this group by client key: their last group request or
    /// answer, for rounds whose members' ids were cut by a snap length.
    clients: FastMap<String, ClientSeen>,
    /// Each shared client's key (events of one connection share their
    /// [`crate::event::ClientRef`]), by its address, formatted once rather
    /// than per event. The events outlive this state, so an address is
    /// never reused while it is a key here.
    client_keys: FastMap<usize, String>,
    /// The generation the group had when every member was seen leaving
    /// (the broker then completes the join with nobody and the group is
    /// Empty: GroupCoordinator.scala `onCompleteJoin`), until the next
    /// round's first JoinGroup answer: one with a generation at or below it
    /// is a group made again ([`Classic::made_again`]).
    emptied_at: Option<i32>,
    /// A DeleteGroups answer deleted the group, as [`super::deletion`]
    /// words it, and the generation it had, until the next round's first
    /// JoinGroup answer notes it.
    deleted: Option<(String, Option<i32>)>,
    /// When a deletion or Dead line was last applied
    /// ([`super::SAME_DELETION_NS`]).
    deleted_at: Option<Timestamp>,
    /// The generation the group had when it was last Dead.
    dead_before: Option<i32>,
}

/// Clients remembered per group (more are not tracked).
const MAX_CLIENTS: usize = 1 << 12;

/// What a client of the group was last seen doing.
#[derive(Clone, Debug, Default)]
struct ClientSeen {
    client_id: Option<String>,
    last_seen: Option<Timestamp>,
    /// The generation of its last request or answer that carried one.
    generation: Option<i32>,
    session_timeout_ms: Option<i32>,
    /// Whether any of its events carried a member id (then the member's
    /// own silence is judged, not the client's).
    member_known: bool,
}

/// Context is attached to a round opening at most this long after it (ns).
const CONTEXT_NS: i64 = 30_000_000_000;
/// Context entries kept (older ones are dropped first).
const MAX_CONTEXT: usize = 64;

/// One piece of context: its event, and the cause it would suggest.
#[derive(Clone, Debug)]
struct Context {
    ev: GroupEvent,
    candidate: Option<Candidate>,
}

/// What a JoinGroup request asked, kept until its answer names the member.
#[derive(Clone, Debug, Default)]
struct JoinAsked {
    member_id: String,
    session_timeout_ms: i32,
    rebalance_timeout_ms: Option<i32>,
}

/// Client key: client id plus host (without port), so a consumer that
/// reconnects from a new port is still itself.
pub fn client_key(ev: &GroupEvent) -> String {
    let host = ev
        .client
        .address
        .as_deref()
        .map(|a| a.rsplit_once(':').map_or(a, |(h, _)| h))
        .unwrap_or("");
    format!("{}@{}", ev.client.client_id.as_deref().unwrap_or(""), host)
}

impl Classic {
    /// A new, unseen group.
    pub fn new(group: &str) -> Classic {
        Classic {
            group: group.to_string(),
            state: "Unknown",
            ..Classic::default()
        }
    }

    /// Applies one event.
    pub fn apply(&mut self, ev: &GroupEvent) {
        self.span = Some(match self.span {
            None => (ev.ts, ev.ts),
            Some((a, _)) => (a, ev.ts),
        });
        self.book.observe(ev);
        self.learn_from_request(ev);
        self.see_client(ev);
        match &ev.kind {
            EventKind::JoinGroupRequest { .. } => self.on_join_request(ev),
            EventKind::JoinGroupResponse { .. } => self.on_join_response(ev),
            EventKind::SyncGroupRequest { .. } => self.on_sync_request(ev),
            EventKind::SyncGroupResponse { .. } => self.on_sync_response(ev),
            EventKind::HeartbeatRequest { .. } => {}
            EventKind::HeartbeatResponse { error, .. }
            | EventKind::OffsetCommitResponse { error, .. } => self.on_error_answer(ev, *error),
            EventKind::OffsetCommitRequest { .. } => self.on_commit(ev),
            EventKind::LeaveGroupRequest { .. } => self.on_leave(ev),
            EventKind::FindCoordinatorResponse { .. } => self.on_find_coordinator(ev),
            EventKind::ConnectionClosed { .. } => self.note_activity(ev, ActivityKind::Close),
            EventKind::GroupDescribed { .. } => self.on_described(ev),
            EventKind::GroupDeleted { error: None, .. } => self.on_deleted(ev),
            // Refused (GROUP_NOT_EMPTY): evidence for a round open, no more.
            EventKind::GroupDeleted { .. } => {
                if let Some(r) = self.round.as_mut() {
                    r.cite(ev);
                }
            }
            EventKind::Broker(line) => self.on_broker(ev, line),
            EventKind::Client(line) => self.on_client(ev, line),
            _ => {}
        }
    }

    /// A capture that starts with the group Stable shows its generation and
    /// members only in the members' Heartbeat, SyncGroup and OffsetCommit
    /// requests: learn them, so the first rebalance has a "before".
    fn learn_from_request(&mut self, ev: &GroupEvent) {
        if self.round.is_some() || !self.done.is_empty() {
            return;
        }
        let Some(generation) = ev.generation_id.filter(|g| *g >= 0) else {
            return;
        };
        if !matches!(
            ev.kind,
            EventKind::HeartbeatRequest { .. } | EventKind::OffsetCommitRequest { .. }
        ) {
            return;
        }
        if self.generation.is_some_and(|g| g != generation) {
            return;
        }
        self.generation = Some(generation);
        self.generations_seen.insert(generation);
        if let Some(m) = ev
            .member_id
            .as_deref()
            .filter(|m| !m.is_empty())
            .map(String::from)
        {
            self.current.insert(m);
        }
        self.set_state(ev.ts, "Stable");
    }

    /// Remembers a client's group requests and answers by its connection,
    /// for when its member id is never seen (see [`ClientSilence`]).
    fn see_client(&mut self, ev: &GroupEvent) {
        let session = match &ev.kind {
            EventKind::JoinGroupRequest {
                session_timeout_ms, ..
            } => Some(*session_timeout_ms),
            EventKind::JoinGroupResponse { .. }
            | EventKind::SyncGroupRequest { .. }
            | EventKind::SyncGroupResponse { .. }
            | EventKind::HeartbeatRequest { .. }
            | EventKind::HeartbeatResponse { .. }
            | EventKind::OffsetCommitRequest { .. }
            | EventKind::OffsetCommitResponse { .. } => None,
            _ => return,
        };
        if ev.client.client_id.is_none() {
            return;
        }
        if self.client_keys.len() >= 4 * MAX_CLIENTS {
            // A cache: a capture of very many connections starts it again.
            self.client_keys.clear();
        }
        let key = self
            .client_keys
            .entry(std::sync::Arc::as_ptr(&ev.client) as usize)
            .or_insert_with(|| client_key(ev));
        if !self.clients.contains_key(key.as_str()) {
            if self.clients.len() >= MAX_CLIENTS {
                return;
            }
            self.clients.insert(key.clone(), ClientSeen::default());
        }
        let Some(c) = self.clients.get_mut(key.as_str()) else {
            return;
        };
        c.client_id.clone_from(&ev.client.client_id);
        c.last_seen = Some(ev.ts);
        c.session_timeout_ms = session.or(c.session_timeout_ms);
        c.generation = ev.generation_id.filter(|g| *g >= 0).or(c.generation);
        c.member_known |= ev.member_id.as_deref().is_some_and(|m| !m.is_empty());
    }

    /// The previous generation's clients whose member ids were never seen.
    fn client_silences(&self) -> Vec<ClientSilence> {
        let mut out: Vec<ClientSilence> = self
            .clients
            .iter()
            .filter(|(_, c)| {
                !c.member_known && c.generation.is_some() && c.generation == self.generation
            })
            .filter_map(|(key, c)| {
                Some(ClientSilence {
                    client_key: key.clone(),
                    client_id: c.client_id.clone(),
                    last_seen: c.last_seen?,
                    session_timeout_ms: c.session_timeout_ms,
                })
            })
            .collect();
        out.sort_by(|a, b| a.client_key.cmp(&b.client_key));
        out
    }

    pub(super) fn set_state(&mut self, at: Timestamp, state: &'static str) {
        if self.state != state {
            self.state = state;
            self.states.push(StateChange {
                at,
                state: state.to_string(),
                generation: self.generation,
            });
        }
    }

    fn note_activity(&mut self, ev: &GroupEvent, what: ActivityKind) {
        let client_key = client_key(ev);
        if what == ActivityKind::Join {
            let first = self.first_join.entry(client_key.clone()).or_insert(ev.ts);
            *first = (*first).min(ev.ts);
        }
        self.activity.push(Activity {
            at: ev.ts,
            client_key,
            member_id: ev
                .member_id
                .as_deref()
                .filter(|m| !m.is_empty())
                .map(String::from),
            what,
        });
    }

    /// Opens a round at `ev` unless one is open; returns it. `ev` is
    /// evidence that Kafka is rebalancing (a "Preparing" line, a member
    /// removed, a new member's JoinGroup, REBALANCE_IN_PROGRESS): it
    /// confirms the round. An unconfirmed round opened long before by weak
    /// evidence is closed first, so it cannot swallow this one.
    pub(super) fn round_at(&mut self, ev: &GroupEvent) -> &mut Round {
        let stale = self.round.as_ref().is_some_and(|r| {
            r.weak
                && !r.confirmed
                && r.generation.is_none()
                && ev.ts.0 - r.started_at.0 > CONTEXT_NS
        });
        if stale {
            self.close_round();
        }
        if self.round.is_none() {
            self.open_round(ev.ts);
        }
        let r = self.round.as_mut().expect("opened above");
        r.confirmed = true;
        r
    }

    /// Opens a round at `ev` unless one is open, without confirming it: a
    /// client asking to join, a known member's JoinGroup. Kafka may answer
    /// it with the current generation and no rebalance
    /// (GroupCoordinator.scala `doCurrentMemberJoinGroup`).
    pub(super) fn weak_round_at(&mut self, ev: &GroupEvent) -> &mut Round {
        if self.round.is_none() {
            self.open_round(ev.ts);
            self.round.as_mut().expect("opened above").weak = true;
        }
        self.round.as_mut().expect("opened above")
    }

    /// Keeps evidence that starts no rebalance (the KIP-394 first step, a
    /// static member replaced or fenced, a coordinator error) for the next
    /// round; cited in the open round if there is one.
    pub(super) fn context(&mut self, ev: &GroupEvent, candidate: Option<Candidate>) {
        if let Some(r) = self.round.as_mut() {
            r.cite(ev);
            if let Some(c) = candidate {
                r.suspect(c);
            }
            return;
        }
        self.context.retain(|c| ev.ts.0 - c.ev.ts.0 <= CONTEXT_NS);
        if self.context.len() >= MAX_CONTEXT {
            self.context.remove(0);
        }
        self.context.push(Context {
            ev: ev.clone(),
            candidate,
        });
    }

    fn open_round(&mut self, at: Timestamp) {
        let mut r = Round::new(at, self.generation);
        for c in self.context.drain(..) {
            if at.0 - c.ev.ts.0 > CONTEXT_NS {
                continue;
            }
            r.cite(&c.ev);
            if let Some(mut cand) = c.candidate {
                // Context explains a round only when nothing else does.
                cand.confidence = Confidence::Low;
                r.suspect(cand);
            }
        }
        r.state_before = self.state.to_string();
        // The first round after a deletion is the new group's, however it
        // opens (a JoinGroup, or the broker's line before the answers).
        if let Some((why, before)) = self.deleted.take() {
            r.made_again_from = before;
            r.notes.push(super::made_again_note(&why, "generation"));
        }
        r.members_before = self.current.iter().cloned().collect();
        r.client_silences = self.client_silences();
        r.leader_before.clone_from(&self.leader);
        for m in &self.current {
            let member = self.book.get(m);
            r.assignment_before.insert(
                m.clone(),
                member.map(|x| x.assignment.clone()).unwrap_or_default(),
            );
            r.silences.push(Silence {
                member_id: m.clone(),
                last_seen: member.and_then(|x| x.last_seen),
                session_timeout_ms: member.and_then(|x| x.session_timeout_ms),
            });
        }
        // A SyncGroup answered REBALANCE_IN_PROGRESS: the broker said it
        // is rebalancing, which confirms this round.
        r.confirmed = !self.failed_syncs.is_empty();
        for c in self.failed_syncs.drain(..) {
            r.suspect(c);
        }
        self.round = Some(r);
        self.set_state(at, "PreparingRebalance");
    }

    pub(super) fn close_round(&mut self) {
        let Some(mut r) = self.round.take() else {
            return;
        };
        if r.generation.is_some() || !r.tentative {
            let after = r.members_after();
            if !after.is_empty() && !r.saw_member_list {
                // only followers were answered: the others are still members.
                let book = &self.book;
                let at = r.join_completed_at.unwrap_or(r.started_at);
                self.current.retain(|m| {
                    let alive = book.get(m).is_some_and(|x| {
                        let st = i64::from(x.session_timeout_ms.unwrap_or(10_000)) * 1_000_000;
                        x.last_seen.is_some_and(|t| t.0 + st >= at.0)
                    });
                    !r.removed.contains_key(m) && alive
                });
                self.current.extend(after);
            } else if !after.is_empty() {
                self.current = after;
            } else {
                for m in r.removed.keys() {
                    self.current.remove(m);
                }
            }
        }
        if let Some(at) = r.completed_at {
            let state = if self.current.is_empty() {
                "Empty"
            } else {
                "Stable"
            };
            self.set_state(at, state);
        }
        r.members_final = Some(self.current.clone());
        self.done.push(r);
    }

    fn on_join_request(&mut self, ev: &GroupEvent) {
        let EventKind::JoinGroupRequest {
            exchange,
            session_timeout_ms,
            rebalance_timeout_ms,
            protocol_type,
            protocols,
            reason,
            identity_cut,
        } = &ev.kind
        else {
            return;
        };
        // Cut by the capture inside its member id or static id: whether it
        // is a new member's join (an empty id, which opens a round in
        // GroupCoordinator.scala `doNewMemberJoinGroup`), a static
        // member's or a known member's rejoin cannot be told, so the join
        // weighs in no round (as if not captured); `see_client` has kept
        // its session timeout and time.
        if *identity_cut {
            return;
        }
        let member_id = ev.member_id.as_deref().unwrap_or_default().to_string();
        if !member_id.is_empty() {
            let m = self.book.entry(&member_id);
            m.session_timeout_ms = Some(*session_timeout_ms);
            m.rebalance_timeout_ms = *rebalance_timeout_ms;
        }
        if !protocol_type.is_empty() {
            self.protocol_type = Some(protocol_type.to_string());
        }
        self.assignors
            .extend(protocols.iter().map(|p| p.name.clone()));
        let topics: Vec<String> = protocols
            .first()
            .map(|p| p.topics.clone())
            .unwrap_or_default();
        let asked = JoinAsked {
            member_id: member_id.clone(),
            session_timeout_ms: *session_timeout_ms,
            rebalance_timeout_ms: *rebalance_timeout_ms,
        };
        self.joins_in_flight.insert(*exchange, asked);
        self.note_activity(ev, ActivityKind::Join);
        if self.joins_after_join_phase(&member_id) {
            // A member the round did not know joins after the generation was
            // decided: the broker starts the next round (a join in
            // CompletingRebalance sends the group back to
            // PreparingRebalance), and this join is its cause.
            self.close_round();
        }
        let opening = self.round.is_none();
        let candidate = self.classify_join(ev, &member_id, &topics, reason.as_deref(), opening);
        if !member_id.is_empty() {
            self.book.entry(&member_id).topics = topics;
        }
        // A known member other than the leader, with unchanged metadata,
        // is answered the current generation without a rebalance
        // (GroupCoordinator.scala `doCurrentMemberJoinGroup`): its JoinGroup
        // alone confirms nothing.
        let weak = candidate.as_ref().is_some_and(|c| {
            c.kind == Kind::LeaderRejoined && self.leader.as_deref() != Some(member_id.as_str())
        });
        let r = if weak {
            self.weak_round_at(ev)
        } else {
            self.round_at(ev)
        };
        r.cite(ev);
        if member_id.is_empty() && ev.group_instance_id.is_some() {
            r.static_join = ev.group_instance_id.as_deref().map(String::from);
        }
        if let Some(reason) = reason {
            if trigger::is_cooperative_follow_up(reason) && opening {
                r.expected_reason = Some(format!(
                    "cooperative follow-up round (KIP-429): \"{reason}\""
                ));
            }
        }
        if let Some(c) = candidate {
            r.suspect(c);
        }
    }

    /// What a JoinGroup says about why the group rebalances.
    fn classify_join(
        &self,
        ev: &GroupEvent,
        member_id: &str,
        topics: &[String],
        reason: Option<&str>,
        opening: bool,
    ) -> Option<Candidate> {
        let client_id = ev.client.client_id.clone();
        let make = |kind, confidence, member: Option<String>, detail: String| Candidate {
            kind,
            confidence,
            member_id: member,
            client_id: client_id.clone(),
            detail,
            at: ev.ts,
            deferred: Deferred::No,
        };
        let instance = ev.group_instance_id.as_deref();
        if member_id.is_empty() {
            let holder = instance
                .and_then(|i| self.book.by_instance(i, ""))
                .filter(|old| self.current.contains(&old.member_id));
            if let Some(old) = holder {
                return Some(make(
                    Kind::StaticMemberReplaced,
                    Confidence::High,
                    Some(old.member_id.clone()),
                    format!(
                        "static member {} rejoined with an empty member id (a new process), replacing {}",
                        instance.unwrap_or(""),
                        old.member_id
                    ),
                ));
            }
            // A JoinGroup with an empty member id is a new member whatever
            // its reason says: the reason is context only. The Java client
            // keeps the text of its own earlier leave as the next join's
            // reason (AbstractCoordinator.java `maybeLeaveGroup` ->
            // `resetGenerationOnLeaveGroup` -> `resetStateAndRejoin("consumer
            // pro-actively leaving the group")` sets `rejoinReason`, sent by
            // `sendJoinGroupRequest`), and the broker answers the empty id
            // MEMBER_ID_REQUIRED and adds a new member
            // (GroupMetadataManager.java `classicGroupJoinNewDynamicMember`,
            // GroupCoordinator.scala `doNewMemberJoinGroup`).
            let reason_text = reason
                .map(|r| format!(", reason \"{r}\""))
                .unwrap_or_default();
            // A client seen joining before comes back (after an eviction or
            // a lost member id): a join, but a consequence more often than a
            // cause, so it yields to a client never seen before.
            if self.joined_before(ev) {
                return Some(make(
                    Kind::MemberJoined,
                    Confidence::Medium,
                    None,
                    format!("a client that had joined before rejoined with an empty member_id{reason_text}"),
                ));
            }
            return Some(make(
                Kind::MemberJoined,
                Confidence::High,
                None,
                format!("new member joined (JoinGroup with empty member_id{reason_text})"),
            ));
        }
        if let Some(k) = reason.and_then(trigger::from_client_reason) {
            return Some(make(
                k,
                Confidence::High,
                Some(member_id.to_string()),
                format!("JoinGroup reason: \"{}\"", reason.unwrap_or("")),
            ));
        }
        if !opening {
            // A known member answering an ongoing round is not a cause.
            return (!self.current.contains(member_id) && !self.in_round(member_id)).then(|| {
                make(
                    Kind::MemberJoined,
                    Confidence::Medium,
                    Some(member_id.to_string()),
                    "member joined during the rebalance".into(),
                )
            });
        }
        let Some(known) = self
            .book
            .get(member_id)
            .filter(|_| self.current.contains(member_id))
        else {
            return Some(make(
                Kind::MemberJoined,
                Confidence::High,
                Some(member_id.to_string()),
                "member joined (member id not in the group before)".into(),
            ));
        };
        if !known.topics.is_empty() && !topics.is_empty() && known.topics != topics {
            return Some(make(
                Kind::SubscriptionChanged,
                Confidence::Medium,
                Some(member_id.to_string()),
                format!(
                    "subscription changed from [{}] to [{}]",
                    known.topics.join(","),
                    topics.join(",")
                ),
            ));
        }
        let (kind, who) = if self.leader.as_deref() == Some(member_id) {
            (Kind::LeaderRejoined, "the leader")
        } else {
            (Kind::LeaderRejoined, "a known member")
        };
        Some(make(kind, Confidence::Medium, Some(member_id.to_string()), format!("{who} rejoined while {} with unchanged subscription (metadata change or client-side restart of the join)", self.state)))
    }

    /// True when this event's client sent a JoinGroup before this one.
    fn joined_before(&self, ev: &GroupEvent) -> bool {
        self.first_join
            .get(&client_key(ev))
            .is_some_and(|first| *first < ev.ts)
    }

    /// True when `member_id` is new to an open round whose join phase is over.
    fn joins_after_join_phase(&self, member_id: &str) -> bool {
        let Some(r) = self.round.as_ref().filter(|r| r.generation.is_some()) else {
            return false;
        };
        member_id.is_empty()
            || !(r.expected.contains(member_id)
                || r.joins.contains_key(member_id)
                || self.current.contains(member_id))
    }

    fn in_round(&self, member_id: &str) -> bool {
        self.round
            .as_ref()
            .is_some_and(|r| r.joins.contains_key(member_id) || r.expected.contains(member_id))
    }

    fn on_join_response(&mut self, ev: &GroupEvent) {
        let EventKind::JoinGroupResponse {
            exchange,
            error,
            leader,
            members,
            parked_ms,
            protocol_name,
        } = &ev.kind
        else {
            return;
        };
        let asked = self.joins_in_flight.remove(exchange);
        let member_id = ev.member_id.as_deref().unwrap_or_default().to_string();
        if let Some(e) = error {
            return self.on_join_error(ev, *e, asked.map(|a| a.member_id));
        }
        let Some(generation) = ev.generation_id else {
            return;
        };
        // A first join asks with an empty member_id: its timeouts belong to
        // the id the answer gives.
        if let (Some(a), false) = (&asked, member_id.is_empty()) {
            let m = self.book.entry(&member_id);
            m.session_timeout_ms = Some(a.session_timeout_ms);
            m.rebalance_timeout_ms = a.rebalance_timeout_ms;
        }
        if let Some(p) = protocol_name {
            self.assignors.insert(p.to_string());
        }
        // A late answer for a round already closed with this generation.
        // also while a newer round waits for its generation, when the
        // member was in the closed round's member list.
        let fresh = self.round.as_ref().is_none_or(|r| r.generation.is_none());
        let asked_at = request_ts(ev, *parked_ms);
        if fresh && self.generation == Some(generation) {
            if let Some(last) = self.done.last_mut().filter(|r| {
                r.generation == Some(generation)
                    && (self.round.is_none()
                        || r.expected.contains(&member_id)
                            && r.join_completed_at.is_some_and(|d| asked_at <= d))
            }) {
                if !member_id.is_empty() {
                    last.record_join(
                        &member_id,
                        ev.client.client_id.clone(),
                        request_ts(ev, *parked_ms),
                        *parked_ms,
                    );
                }
                last.cite(ev);
                return;
            }
        }
        if fresh && self.joined_without_rebalance(generation, ev.ts) {
            if let Some(last) = self.done.last_mut() {
                if !member_id.is_empty() {
                    last.record_join(
                        &member_id,
                        ev.client.client_id.clone(),
                        asked_at,
                        *parked_ms,
                    );
                }
                last.cite(ev);
            }
            return;
        }
        // the leader, already answered this generation in this round,
        // is answered it again with another member list: the broker re-formed
        // the generation (tansu repeats numbers): a new round.
        let listed: BTreeSet<String> = members.iter().map(|m| m.member_id.clone()).collect();
        // A list cut by the snaplen proves no one's absence.
        let reformed = !ev.truncated
            && self.round.as_ref().is_some_and(|r| {
                r.generation == Some(generation)
                    && !listed.is_empty()
                    && r.joins.contains_key(&member_id)
                    && r.saw_member_list
                    && listed != r.expected
            });
        if reformed
            || self
                .round
                .as_ref()
                .is_some_and(|r| r.generation.is_some_and(|g| g != generation))
        {
            self.close_round();
        }
        let opened = self.round.is_none();
        let current_state = self.state;
        let r = self.weak_round_at(ev);
        r.broker_repeated |= reformed;
        if opened {
            r.needs_cause = true;
            if current_state == "Unknown" {
                r.opened_mid_round = true;
                r.notes.push(
                    "the inputs begin inside this rebalance (first seen: a JoinGroup answer)"
                        .into(),
                );
            } else {
                r.notes.push(format!("no request opened this round: first seen is a JoinGroup answer while {current_state}"));
            }
        }
        r.cite(ev);
        if r.generation.is_none() {
            r.generation = Some(generation);
            r.join_completed_at = Some(ev.ts);
            self.made_again(generation);
        }
        let Some(r) = self.round.as_mut() else {
            return;
        };
        r.protocol_name = protocol_name
            .as_ref()
            .map(|p| p.to_string())
            .or(r.protocol_name.take());
        // A successful answer always names its member (Kafka assigns the id
        // before answering: GroupCoordinator.doNewMemberJoinGroup); none here
        // means a first join whose answer the capture's snaplen cut before
        // the id, and the member stays unknown rather than "".
        if !member_id.is_empty() {
            r.record_join(
                &member_id,
                ev.client.client_id.clone(),
                request_ts(ev, *parked_ms),
                *parked_ms,
            );
            r.expected.insert(member_id.clone());
        }
        r.list_cut |= ev.truncated;
        if !members.is_empty() {
            r.saw_member_list |= !ev.truncated;
            r.expected
                .extend(members.iter().map(|m| m.member_id.clone()));
            for m in members {
                let b = self.book.entry(&m.member_id);
                if m.group_instance_id.is_some() {
                    b.group_instance_id = m.group_instance_id.clone();
                }
            }
        }
        self.leader = Some(leader.to_string())
            .filter(|l| !l.is_empty())
            .or(self.leader.take());
        if let Some(r) = self.round.as_mut().filter(|_| !leader.is_empty()) {
            r.leader_after = Some(leader.to_string());
        }
        self.generation = Some(generation);
        self.generations_seen.insert(generation);
        self.set_state(ev.ts, "CompletingRebalance");
    }

    fn on_join_error(&mut self, ev: &GroupEvent, error: ErrorCode, asked: Option<String>) {
        let name = error.name();
        match name {
            "MEMBER_ID_REQUIRED" => {
                // KIP-394: the first half of a normal join, not a cause.
                if let Some(r) = self.round.as_mut() {
                    r.cite(ev);
                    if r.candidates.len() == 1 && r.joins.is_empty() && asked.as_deref() == Some("")
                    {
                        r.tentative = true;
                    }
                }
            }
            "UNKNOWN_MEMBER_ID" | "ILLEGAL_GENERATION" | "FENCED_INSTANCE_ID" => {
                self.note_activity(ev, ActivityKind::Evicted);
                if let Some(r) = self.round.as_mut() {
                    r.cite(ev);
                }
            }
            _ => {
                if let Some(r) = self.round.as_mut() {
                    r.cite(ev);
                }
                self.coordinator_error(ev, name);
            }
        }
    }

    fn on_sync_request(&mut self, ev: &GroupEvent) {
        let EventKind::SyncGroupRequest { assignments, .. } = &ev.kind else {
            return;
        };
        if let Some(r) = self.round.as_mut() {
            r.cite(ev);
            for a in assignments {
                r.expected.insert(a.member_id.clone());
            }
        } else if let Some(r) = self.done.last_mut().filter(|r| {
            r.members_cut() && r.generation.is_some() && r.generation == ev.generation_id
        }) {
            // A late SyncGroup of a round a successful SyncGroup answer
            // ended (its member list cut): evidence of that round.
            r.cite(ev);
        }
    }

    fn on_sync_response(&mut self, ev: &GroupEvent) {
        let EventKind::SyncGroupResponse {
            error, assignment, ..
        } = &ev.kind
        else {
            return;
        };
        if let Some(e) = error {
            if e.name() == "REBALANCE_IN_PROGRESS" {
                let c = Candidate {
                    kind: Kind::PreviousRebalanceFailed,
                    confidence: Confidence::Medium,
                    member_id: ev.member_id.as_deref().map(String::from),
                    client_id: ev.client.client_id.clone(),
                    detail: format!(
                        "the previous round did not complete: {}'s SyncGroup was answered REBALANCE_IN_PROGRESS and it rejoined",
                        ev.client.client_id.as_deref().unwrap_or("a member")
                    ),
                    at: ev.ts,
                    deferred: Deferred::No,
                };
                // The failed generation's round is still open: the failure
                // explains the next one. A newer round is already open: it
                // explains that one.
                match self.round.as_mut() {
                    Some(r) if r.generation != ev.generation_id => r.suspect(c),
                    _ => self.failed_syncs.push(c),
                }
            }
            return self.on_error_answer(ev, Some(*e));
        }
        let member_id = ev.member_id.as_deref().unwrap_or_default().to_string();
        let names = partition_names(assignment);
        // A cut answer's assignment is unknown, not empty.
        if !ev.truncated {
            self.book.entry(&member_id).assignment = names.clone();
        }
        if self.previous_generation_synced(ev) {
            return;
        }
        let target = match self.round.as_mut() {
            Some(r) => Some(r),
            None => self.done.last_mut().filter(|r| {
                r.generation.is_some() && r.generation == ev.generation_id.or(r.generation)
            }),
        };
        let Some(r) = target else { return };
        r.cite(ev);
        r.synced.insert(member_id.clone());
        if !ev.truncated {
            r.assignment_after.insert(member_id, names);
        }
        r.completed_at = Some(ev.ts);
        // A SyncGroup answered without error means the leader's assignment
        // was stored and the group is Stable in this generation
        // (GroupCoordinator.scala `doSyncGroup` / GroupMetadataManager.java
        // `classicGroupSyncToLeader`: the assignment is propagated to every
        // member waiting in SyncGroup as the group turns Stable). Members
        // are counted by the leader's list; when the snap length cut it,
        // this answer is the round's end.
        let ended = self.round.as_ref().is_some_and(|r| {
            r.all_synced()
                || r.members_cut() && r.generation.is_some() && r.generation == ev.generation_id
        });
        if ended {
            self.close_round();
        }
    }

    /// A JoinGroup answered with the generation of the round just closed,
    /// whose member list the snap length cut, while a newer round opened by
    /// JoinGroup requests alone waits: Apache Kafka ends every rebalance in
    /// a new generation (GroupCoordinator.scala / ClassicGroup.java
    /// `initNextGeneration`) and answers a join that starts none with the
    /// current one (`doCurrentMemberJoinGroup`), so the newer round was no
    /// rebalance and is dropped (noted). A broker that re-forms a generation
    /// under the same number (tansu) shows it only by the member list,
    /// which is cut; a REBALANCE_IN_PROGRESS answer, a LeaveGroup or a log
    /// line keeps the round.
    fn joined_without_rebalance(&mut self, generation: i32, at: Timestamp) -> bool {
        let last_cut = self
            .done
            .last()
            .is_some_and(|r| r.members_cut() && r.generation == Some(generation));
        let joins_only = self.round.as_ref().is_some_and(|r| {
            !r.needs_cause
                && r.removed.is_empty()
                && r.candidates
                    .iter()
                    .all(|c| matches!(c.kind, Kind::MemberJoined | Kind::LeaderRejoined))
        });
        if !(last_cut && joins_only && self.generation == Some(generation)) {
            return false;
        }
        if let Some(r) = self.round.take() {
            self.notes.push(format!(
                "{}: a JoinGroup was answered with generation {generation} again: no rebalance (its member list was cut by the snap length)",
                r.started_at
            ));
        }
        self.set_state(at, "Stable");
        true
    }

    /// A SyncGroup answered without error in the generation of the round
    /// just closed, while a newer round waits for its generation: Kafka
    /// answers SyncGroup REBALANCE_IN_PROGRESS once a rebalance is under
    /// way (GroupCoordinator.scala `doSyncGroup`, case PreparingRebalance;
    /// GroupMetadataManager.java `classicGroupSync`), so the newer round's
    /// opener started none. Only read so when the closed round's member
    /// list was cut by the snap length (whole lists say who is in it).
    /// Returns whether the answer was given to the closed round.
    fn previous_generation_synced(&mut self, ev: &GroupEvent) -> bool {
        let waiting = self
            .round
            .as_ref()
            .is_some_and(|r| r.generation.is_none() && !r.disproved);
        let Some(last) = self.done.last_mut().filter(|r| {
            waiting && r.members_cut() && r.generation.is_some() && r.generation == ev.generation_id
        }) else {
            return false;
        };
        last.cite(ev);
        last.synced
            .insert(ev.member_id.as_deref().unwrap_or_default().to_string());
        if let Some(r) = self.round.as_mut() {
            r.disproved = true;
        }
        true
    }

    fn on_commit(&mut self, ev: &GroupEvent) {
        if let Some(m) = ev.member_id.as_deref().filter(|m| !m.is_empty()) {
            self.book.entry(m).last_commit = Some(ev.ts);
        }
        self.note_activity(ev, ActivityKind::Commit);
    }

    fn on_error_answer(&mut self, ev: &GroupEvent, error: Option<ErrorCode>) {
        let Some(error) = error else {
            return self.confirm_member(ev);
        };
        match error.name() {
            "REBALANCE_IN_PROGRESS" if self.stale_after_cut_round(ev) => {
                self.context(ev, None);
            }
            "REBALANCE_IN_PROGRESS" => {
                let opened = self.round.is_none();
                let r = self.round_at(ev);
                if opened {
                    r.needs_cause = true;
                }
                r.cite(ev);
            }
            "UNKNOWN_MEMBER_ID" | "ILLEGAL_GENERATION" | "FENCED_INSTANCE_ID" => {
                self.note_activity(ev, ActivityKind::Evicted);
                if let Some(r) = self.round.as_mut() {
                    r.cite(ev);
                }
            }
            name => self.coordinator_error(ev, name),
        }
    }

    /// A REBALANCE_IN_PROGRESS answer to a request of a generation older
    /// than the one the last round produced, while no round is open and
    /// that round's member list was cut by the snap length: Apache Kafka
    /// answers such a request ILLEGAL_GENERATION, whatever the group's
    /// state (GroupCoordinator.scala `validateHeartbeat` and
    /// `validateCurrentMember` before the state match, 2.4+;
    /// GroupMetadataManager.java `validateClassicGroupHeartbeat`), so it
    /// says the member is behind, not that a new rebalance began (tansu
    /// answers it so). The round is still found by what follows (a new
    /// generation, a REBALANCE_IN_PROGRESS in the current one). With whole
    /// member lists the old reading stands.
    fn stale_after_cut_round(&self, ev: &GroupEvent) -> bool {
        let Some(asked) = ev.generation_id.filter(|g| *g >= 0) else {
            return false;
        };
        self.round.is_none()
            && self
                .done
                .last()
                .is_some_and(|r| r.members_cut() && r.generation.is_some_and(|g| asked < g))
    }

    /// A member answered without error in the generation the last round
    /// produced is in the group, even if the round did not show it rejoin
    /// (tansu lets members keep their generation without rejoining).
    fn confirm_member(&mut self, ev: &GroupEvent) {
        let Some(m) = ev.member_id.as_deref().filter(|m| !m.is_empty()) else {
            return;
        };
        if self.round.is_some() {
            return;
        }
        let Some(last) = self.done.last_mut() else {
            return;
        };
        let listed = last.members_final.as_ref().is_some_and(|f| f.contains(m));
        if last.generation.is_some() && last.generation == ev.generation_id && !listed {
            last.removed.remove(m);
            last.expected.insert(m.to_string());
            if let Some(f) = last.members_final.as_mut() {
                f.insert(m.to_string());
            }
            self.current.insert(m.to_string());
        }
    }

    fn coordinator_error(&mut self, ev: &GroupEvent, name: &str) {
        if matches!(
            name,
            "NOT_COORDINATOR" | "COORDINATOR_NOT_AVAILABLE" | "COORDINATOR_LOAD_IN_PROGRESS"
        ) {
            let detail = format!(
                "{name} answered to {}",
                ev.client.client_id.as_deref().unwrap_or("a member")
            );
            self.suspect_coordinator(ev, detail);
        }
    }

    fn suspect_coordinator(&mut self, ev: &GroupEvent, detail: String) {
        let c = Candidate {
            kind: Kind::CoordinatorChanged,
            confidence: Confidence::Medium,
            member_id: None,
            client_id: None,
            detail,
            at: ev.ts,
            deferred: Deferred::No,
        };
        // NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE / LOAD_IN_PROGRESS:
        // the new coordinator loads the group at the same generation
        // (GroupMetadataManager `loadGroupsAndOffsets`) and heartbeats go
        // on; only a round that opens for its own reason is explained by it.
        self.context(ev, Some(c));
    }

    fn on_find_coordinator(&mut self, ev: &GroupEvent) {
        let EventKind::FindCoordinatorResponse {
            coordinator, error, ..
        } = &ev.kind
        else {
            return;
        };
        if error.is_some() || coordinator.is_empty() {
            return;
        }
        let moved = self.coordinator.as_ref().is_some_and(|c| c != coordinator);
        let before = self.coordinator.replace(coordinator.to_string());
        if moved && self.round.is_some() {
            let detail = format!(
                "FindCoordinator now names {coordinator} (was {})",
                before.unwrap_or_default()
            );
            self.suspect_coordinator(ev, detail);
        }
    }

    fn on_leave(&mut self, ev: &GroupEvent) {
        let EventKind::LeaveGroupRequest { members, .. } = &ev.kind else {
            return;
        };
        let key = client_key(ev);
        let leavers: Vec<_> = if members.is_empty() {
            vec![(
                ev.member_id.as_deref().unwrap_or_default().to_string(),
                None,
            )]
        } else {
            members
                .iter()
                .map(|m| (m.member_id.clone(), m.reason.clone()))
                .collect()
        };
        if self.round.as_ref().is_some_and(|r| r.generation.is_some()) {
            // a LeaveGroup once the generation is decided sends the
            // group back to PreparingRebalance: it causes the next round.
            self.close_round();
        }
        // Everyone: the members of the group this leave and the open
        // round's earlier leaves name (each LeaveGroup names one member in
        // clients before KIP-345's batches).
        let gone: BTreeSet<&str> = self
            .round
            .as_ref()
            .map(|r| {
                r.removed
                    .iter()
                    .filter(|(_, how)| *how == "left")
                    .map(|(m, _)| m.as_str())
                    .collect()
            })
            .unwrap_or_default();
        let everyone_leaves = leavers.iter().all(|(m, _)| self.current.contains(m))
            && self
                .current
                .iter()
                .all(|m| gone.contains(m.as_str()) || leavers.iter().any(|(l, _)| l == m));
        for (member_id, reason) in leavers {
            let client_id = self
                .book
                .client_id(&member_id)
                .or(ev.client.client_id.clone());
            let (kind, confidence, deferred, detail) =
                match reason.as_deref().and_then(trigger::from_client_reason) {
                    Some(k) => (
                        k,
                        Confidence::High,
                        Deferred::No,
                        format!("LeaveGroup reason: \"{}\"", reason.unwrap_or_default()),
                    ),
                    None => (
                        Kind::MemberLeft,
                        Confidence::Low,
                        Deferred::Leave {
                            client_key: key.clone(),
                        },
                        "LeaveGroup without a reason".to_string(),
                    ),
                };
            let r = self.round_at(ev);
            r.cite(ev);
            r.removed.insert(member_id.clone(), "left".into());
            r.suspect(Candidate {
                kind,
                confidence,
                member_id: Some(member_id),
                client_id,
                detail,
                at: ev.ts,
                deferred,
            });
        }
        if everyone_leaves {
            // The last member leaving empties the group; nobody is stopped.
            if let Some(r) = self.round.as_mut() {
                r.completed_at = Some(ev.ts);
                r.emptied = true;
                r.notes
                    .push("every member left: the group became Empty".into());
            }
            self.emptied_at = self.generation;
            self.close_round();
            self.current.clear();
            self.set_state(ev.ts, "Empty");
        }
    }

    /// A JoinGroup answered generation `generation` after the group was
    /// seen emptied at a generation at or above it: generations only grow
    /// while a group lives (`initNextGeneration`), so the empty group was
    /// deleted (DeleteGroups, or its offsets expired) and made again from
    /// generation 0 (Apache Kafka 4.4 in the lab: "Group g1 with generation
    /// 2 is now empty", "The following groups were deleted: g1", then
    /// "old generation 0"). The round starts the new group's history.
    fn made_again(&mut self, generation: i32) {
        // The first answer after the group emptied decides: a later one
        // belongs to the group it made.
        let Some(before) = self.emptied_at.take().filter(|e| generation <= *e) else {
            return;
        };
        if let Some(r) = self.round.as_mut() {
            if r.previous_generation == Some(before) {
                r.previous_generation = None;
                r.made_again_from = Some(before);
                r.notes.push(format!(
                    "the group's generations started again at {generation} after every member had left at generation {before}: it was deleted and made again"
                ));
            }
        }
    }

    /// A DeleteGroups answer without error: Kafka deletes only a group
    /// without members (GROUP_NOT_EMPTY otherwise; GroupMetadataManager
    /// `deleteGroups`), and one of the same name is made again at
    /// generation 0 (`GroupCoordinator.handleJoinGroup` on an unknown
    /// group). Members the inputs still show had gone unseen, and a round
    /// still open was over with the group empty. The same deletion seen
    /// again within [`super::SAME_DELETION_NS`] (the broker's line beside
    /// the answer, clocks lined up only so closely) ends nothing more: it
    /// only names who deleted, if the new group's first round has not
    /// taken the words yet.
    fn on_deleted(&mut self, ev: &GroupEvent) {
        if let Some(r) = self.round.as_mut() {
            r.cite(ev);
        }
        if self.deleted_recently(ev.ts) {
            let why = super::deletion(ev);
            match (self.deleted.as_mut(), self.round.as_mut()) {
                (Some((words, _)), _) => *words = why,
                (None, Some(r)) if r.made_again_from.is_none() && r.generation.is_none() => {
                    r.made_again_from = self.dead_before;
                    r.notes.push(super::made_again_note(&why, "generation"));
                }
                // The broker's line came first: no round since.
                (None, None) if self.state == "Dead" => {
                    self.deleted = Some((why, self.dead_before));
                }
                _ => {}
            }
            return;
        }
        let why = super::deletion(ev);
        if let Some(r) = self.round.as_mut().filter(|r| r.completed_at.is_none()) {
            r.completed_at = Some(r.join_completed_at.unwrap_or(r.started_at));
            r.emptied = true;
            r.notes.push(format!(
                "every member had left (not all seen leaving), so the group was empty and this rebalance over; then {why}"
            ));
        }
        self.dead(ev.ts);
        self.deleted = Some((why, self.dead_before));
    }

    /// Whether a deletion (or the broker's Dead line) was applied less than
    /// [`super::SAME_DELETION_NS`] before `at`.
    pub(super) fn deleted_recently(&self, at: Timestamp) -> bool {
        super::same_deletion(self.deleted_at, at)
    }

    /// The group is Dead at `at` (deleted, or the broker's "transitioned to
    /// Dead"): its history goes on from generation 0, its last generation
    /// kept for the new group's first round ([`Classic::dead_before`]).
    pub(super) fn dead(&mut self, at: Timestamp) {
        self.close_round();
        self.current.clear();
        let generation = self.generation.take();
        self.dead_before = self.emptied_at.take().or(generation);
        self.deleted_at = Some(at);
        self.set_state(at, "Dead");
    }

    fn on_described(&mut self, ev: &GroupEvent) {
        let EventKind::GroupDescribed { members, state, .. } = &ev.kind else {
            return;
        };
        if self.current.is_empty() && self.round.is_none() {
            self.current = members.iter().map(|m| m.member_id.clone()).collect();
            for m in members {
                let b = self.book.entry(&m.member_id);
                b.client.client_id.get_or_insert(m.client_id.clone());
                b.client.address.get_or_insert(m.client_host.clone());
                b.assignment = partition_names(&m.assignment);
            }
            if state == "Stable" || state == "Empty" || state == "Dead" {
                self.set_state(ev.ts, static_state(state));
            }
        }
    }

    fn on_broker(&mut self, ev: &GroupEvent, line: &BrokerLine) {
        super::classic_log::on_broker(self, ev, line)
    }

    fn on_client(&mut self, ev: &GroupEvent, line: &ClientLine) {
        super::classic_log::on_client(self, ev, line)
    }

    /// Records a generation (for log handlers).
    pub fn saw_generation(&mut self, generation: i32) {
        self.generation = Some(generation);
        self.generations_seen.insert(generation);
    }
}

fn static_state(state: &str) -> &'static str {
    match state {
        "Stable" => "Stable",
        "Empty" => "Empty",
        _ => "Dead",
    }
}

/// When the request of an answered JoinGroup was sent.
fn request_ts(ev: &GroupEvent, parked_ms: Option<f64>) -> Timestamp {
    match parked_ms {
        Some(ms) => ev.ts.offset_by(-((ms * 1e6) as i64)),
        None => ev.ts,
    }
}
