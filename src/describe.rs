//! One line of words for one event.
//!
//! Takes: a [`GroupEvent`]. Gives: its short kind (`JoinGroup request`), a
//! category mark for pictures and `--kind` filters, its error name, and a
//! detail line. Shared by the timeline and the evidence of rebalances so the
//! same event reads the same everywhere.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt::Write as _;

use crate::event::{BrokerLine, ClientLine, EventKind, GroupEvent, Location, RequestCompleted};
use crate::report::{EvidenceLine, TimelineEntry};

/// The words for an event.
pub struct Described {
    /// Short kind, e.g. `JoinGroup request` (nearly always a fixed word:
    /// not an allocation per event described).
    pub kind: Cow<'static, str>,
    /// Category: join, sync, heartbeat, heartbeat_failed, leave, commit,
    /// coordinator, state, close, other.
    pub mark: &'static str,
    /// Error name, if any.
    pub error: Option<&'static str>,
    /// The rest.
    pub detail: String,
}

/// Describes one event.
pub fn describe(ev: &GroupEvent) -> Described {
    match &ev.kind {
        EventKind::Broker(line) => describe_broker(line),
        EventKind::Client(line) => describe_client(line),
        kind => describe_wire(kind),
    }
}

fn d(
    kind: impl Into<Cow<'static, str>>,
    mark: &'static str,
    error: Option<&'static str>,
    detail: String,
) -> Described {
    Described {
        kind: kind.into(),
        mark,
        error,
        detail,
    }
}

fn describe_wire(kind: &EventKind) -> Described {
    use EventKind as K;
    let err = |e: &Option<crate::event::ErrorCode>| e.map(|e| e.name());
    match kind {
        K::FindCoordinatorRequest { key_type, .. } => d(
            "FindCoordinator request",
            "coordinator",
            None,
            format!("key_type={key_type}"),
        ),
        K::FindCoordinatorResponse {
            node_id,
            coordinator,
            error,
            ..
        } => d(
            "FindCoordinator response",
            "coordinator",
            err(error),
            format!("coordinator {coordinator} (node {node_id})"),
        ),
        K::JoinGroupRequest {
            session_timeout_ms,
            rebalance_timeout_ms,
            protocols,
            reason,
            identity_cut,
            ..
        } => {
            let names: Vec<&str> = protocols.iter().map(|p| p.name.as_str()).collect();
            let mut s = format!("session.timeout={session_timeout_ms}ms");
            if let Some(r) = rebalance_timeout_ms {
                s.push_str(&format!(" rebalance.timeout={r}ms"));
            }
            if *identity_cut {
                s.push_str(" member=(cut)");
                return d("JoinGroup request", "join", None, s);
            }
            s.push_str(&format!(" protocols=[{}]", names.join(",")));
            if let Some(r) = reason {
                s.push_str(&format!(" reason=\"{r}\""));
            }
            d("JoinGroup request", "join", None, s)
        }
        K::JoinGroupResponse {
            error,
            leader,
            members,
            parked_ms,
            protocol_name,
            ..
        } => {
            // Error answers (MEMBER_ID_REQUIRED...) carry an empty leader.
            let mut parts = Vec::new();
            if !leader.is_empty() {
                parts.push(format!("leader={leader}"));
            }
            if let Some(p) = protocol_name {
                parts.push(format!("protocol={p}"));
            }
            if !members.is_empty() {
                parts.push(format!("members={}", members.len()));
            }
            if let Some(p) = parked_ms {
                parts.push(format!("parked={p:.0}ms"));
            }
            d("JoinGroup response", "join", err(error), parts.join(" "))
        }
        K::SyncGroupRequest { assignments, .. } => d(
            "SyncGroup request",
            "sync",
            None,
            if assignments.is_empty() {
                String::new()
            } else {
                format!("assignments for {} members (leader)", assignments.len())
            },
        ),
        K::SyncGroupResponse {
            error, assignment, ..
        } => {
            let n: usize = assignment.iter().map(|t| t.partitions.len()).sum();
            d(
                "SyncGroup response",
                "sync",
                err(error),
                format!("{n} partitions assigned"),
            )
        }
        K::HeartbeatRequest { .. } => d("Heartbeat request", "heartbeat", None, String::new()),
        K::HeartbeatResponse { error, .. } => d(
            "Heartbeat response",
            if error.is_some() {
                "heartbeat_failed"
            } else {
                "heartbeat"
            },
            err(error),
            String::new(),
        ),
        K::LeaveGroupRequest { members, .. } => {
            let parts: Vec<String> = members
                .iter()
                .map(|m| match &m.reason {
                    Some(r) => format!("{} reason=\"{r}\"", m.member_id),
                    None => m.member_id.clone(),
                })
                .collect();
            d("LeaveGroup request", "leave", None, parts.join("; "))
        }
        K::LeaveGroupResponse { error, .. } => {
            d("LeaveGroup response", "leave", err(error), String::new())
        }
        K::OffsetCommitRequest { partitions, .. } => d(
            "OffsetCommit request",
            "commit",
            None,
            format!("{partitions} partitions"),
        ),
        K::OffsetCommitResponse { error, .. } => d(
            "OffsetCommit response",
            if error.is_some() {
                "heartbeat_failed"
            } else {
                "commit"
            },
            err(error),
            String::new(),
        ),
        K::OffsetFetch { error, .. } => d("OffsetFetch", "commit", err(error), String::new()),
        K::GroupDescribed {
            state,
            protocol,
            members,
            error,
            ..
        } => d(
            "DescribeGroups response",
            "state",
            err(error),
            format!(
                "state={state} protocol={protocol} members={}",
                members.len()
            ),
        ),
        K::GroupListed {
            state,
            protocol_type,
            ..
        } => d(
            "ListGroups response",
            "state",
            None,
            format!(
                "state={} protocol_type={protocol_type}",
                state.as_deref().unwrap_or("?")
            ),
        ),
        K::GroupDeleted { error, .. } => d(
            "DeleteGroups response",
            "state",
            err(error),
            if error.is_none() {
                "group deleted".to_string()
            } else {
                "group not deleted".to_string()
            },
        ),
        K::ConsumerGroupHeartbeatRequest {
            member_epoch,
            subscribed_topic_names,
            ..
        } => {
            let mut s = format!("member_epoch={member_epoch}");
            if let Some(t) = subscribed_topic_names {
                s.push_str(&format!(" subscribe=[{}]", t.join(",")));
            }
            let mark = match member_epoch {
                0 => "join",
                e if *e < 0 => "leave",
                _ => "heartbeat",
            };
            d("ConsumerGroupHeartbeat request", mark, None, s)
        }
        K::ConsumerGroupHeartbeatResponse {
            error,
            member_epoch,
            assignment,
            error_message,
            ..
        } => {
            let mut s = format!("member_epoch={member_epoch}");
            if let Some(a) = assignment {
                let n: usize = a.iter().map(|t| t.partitions.len()).sum();
                s.push_str(&format!(" assignment={n} partitions"));
            }
            if let Some(m) = error_message {
                s.push_str(&format!(" message=\"{m}\""));
            }
            d(
                "ConsumerGroupHeartbeat response",
                if error.is_some() {
                    "heartbeat_failed"
                } else {
                    "heartbeat"
                },
                err(error),
                s,
            )
        }
        K::ConnectionClosed { reset } => d(
            if *reset {
                "connection reset (RST)"
            } else {
                "connection closed (FIN)"
            },
            "close",
            None,
            String::new(),
        ),
        K::Broker(_) | K::Client(_) => d("log", "other", None, String::new()),
    }
}

fn describe_broker(line: &BrokerLine) -> Described {
    use BrokerLine as B;
    let s = |k: &'static str, mark, detail: String| d(k, mark, None, detail);
    match line {
        B::PreparingRebalance {
            state,
            old_generation,
            reason,
            ..
        } => s(
            "broker: PreparingRebalance",
            "state",
            format!(
                "from {state}, old generation {old_generation}; reason: {}",
                reason.as_deref().unwrap_or("-")
            ),
        ),
        B::Stabilized {
            generation,
            members,
            leader,
            ..
        } => s("broker: Stabilized", "state", {
            let mut t = format!("generation {generation}");
            if let Some(m) = members {
                let _ = write!(t, " with {m} members");
            }
            if let Some(l) = leader {
                let _ = write!(t, ", leader {l}");
            }
            t
        }),
        B::AssignmentReceived {
            generation,
            members,
        } => s("broker: AssignmentReceived", "sync", {
            let mut t = format!("generation {generation}");
            if let Some(m) = members {
                let _ = write!(t, ", {m} members");
            }
            t
        }),
        B::MemberJoined { pending, .. } => s(
            "broker: MemberJoined",
            "join",
            if *pending {
                "new member id created (KIP-394)".into()
            } else {
                String::new()
            },
        ),
        B::MemberFailed => s(
            "broker: MemberFailed",
            "heartbeat_failed",
            "removed on heartbeat expiration".into(),
        ),
        B::MemberLeft { client_reason } => s(
            "broker: MemberLeft",
            "leave",
            client_reason
                .as_ref()
                .map(|r| format!("client reason: {r}"))
                .unwrap_or_default(),
        ),
        B::PendingMemberExpired => s(
            "broker: PendingMemberExpired",
            "leave",
            "pending member removed after session timeout".into(),
        ),
        B::StaticMemberReplaced { old_member_id } => s(
            "broker: StaticMemberReplaced",
            "join",
            old_member_id
                .as_ref()
                .map(|o| format!("replaced {o}"))
                .unwrap_or_default(),
        ),
        B::GroupEmpty => s("broker: GroupEmpty", "state", String::new()),
        B::GroupDead => s("broker: GroupDead", "state", String::new()),
        B::CoordinatorLoaded { partition, epoch } => s(
            "broker: CoordinatorLoaded",
            "coordinator",
            format!("partition {} epoch {}", opt(partition), opt(epoch)),
        ),
        B::CoordinatorUnloaded { partition } => s(
            "broker: CoordinatorUnloaded",
            "coordinator",
            format!("partition {}", opt(partition)),
        ),
        B::OffsetsExpired { count } => s(
            "broker: OffsetsExpired",
            "commit",
            format!("{count} offsets"),
        ),
        B::GroupEpochBumped { epoch } => s(
            "broker: GroupEpochBumped",
            "state",
            format!("epoch {epoch}"),
        ),
        B::MemberFenced { reason } => s("broker: MemberFenced", "heartbeat_failed", reason.clone()),
        B::MemberAssignmentState {
            epoch,
            previous_epoch,
            state,
        } => s(
            "broker: MemberAssignmentState",
            "sync",
            format!("epoch {previous_epoch}→{epoch} {state}"),
        ),
        B::SubscriptionChanged { detail } => {
            s("broker: SubscriptionChanged", "state", detail.clone())
        }
        B::Other { message } => s("broker: Other", "other", message.clone()),
        B::RebalanceTimeoutRemoved { members } => s(
            "broker: RebalanceTimeoutRemoved",
            "leave",
            format!(
                "removed for not rejoining within the rebalance timeout: {}",
                members.join(", ")
            ),
        ),
        B::PendingSyncRemoved { members } => s(
            "broker: PendingSyncRemoved",
            "leave",
            format!(
                "removed for not sending SyncGroup in time: {}",
                members.join(", ")
            ),
        ),
        B::StaticMemberFenced {
            current_member_id,
            operation,
        } => s("broker: StaticMemberFenced", "heartbeat_failed", {
            let mut t = current_member_id
                .as_deref()
                .unwrap_or("static member")
                .to_string();
            t.push_str(" fenced");
            if let Some(o) = operation {
                let _ = write!(t, " on {o}");
            }
            t
        }),
        B::StaticMemberTemporarilyLeft => s(
            "broker: StaticMemberTemporarilyLeft",
            "leave",
            String::new(),
        ),
        B::TargetAssignmentComputed { epoch, assignor } => {
            s("broker: TargetAssignmentComputed", "sync", {
                let mut t = format!("epoch {epoch}");
                if let Some(a) = assignor {
                    let _ = write!(t, " by {a}");
                }
                t
            })
        }
        B::RequestCompleted(rc) => {
            let RequestCompleted {
                api,
                api_version,
                error,
                total_time_ms,
                remote_time_ms,
                reason,
                ..
            } = rc.as_ref();
            d(
                format!("broker: request log: {api}"),
                if api == "JoinGroup" {
                    "join"
                } else if api == "SyncGroup" {
                    "sync"
                } else if api == "LeaveGroup" {
                    "leave"
                } else {
                    "heartbeat"
                },
                None,
                {
                    let mut t = format!(
                        "v{api_version} total={total_time_ms:.0}ms remote={remote_time_ms:.0}ms"
                    );
                    if let Some(e) = error {
                        let _ = write!(t, " error={e}");
                    }
                    if let Some(r) = reason {
                        let _ = write!(t, " reason=\"{r}\"");
                    }
                    t
                },
            )
        }
    }
}

fn describe_client(line: &ClientLine) -> Described {
    use ClientLine as C;
    let s = |k: &'static str, mark, detail: String| d(k, mark, None, detail);
    match line {
        C::Joining { reason } => s(
            "client: Joining",
            "join",
            reason
                .as_ref()
                .map(|r| format!("due to: {r}"))
                .unwrap_or_default(),
        ),
        C::Joined { protocol } => s(
            "client: Joined",
            "join",
            protocol
                .as_ref()
                .map(|p| format!("protocol {p}"))
                .unwrap_or_default(),
        ),
        C::Synced => s("client: Synced", "sync", String::new()),
        C::PartitionsAssigned { partitions } => {
            s("client: PartitionsAssigned", "sync", partitions.join(", "))
        }
        C::PartitionsRevoked { partitions } => {
            s("client: PartitionsRevoked", "sync", partitions.join(", "))
        }
        C::PartitionsLost { partitions } => {
            s("client: PartitionsLost", "sync", partitions.join(", "))
        }
        C::HeartbeatFailed { error } => {
            s("client: HeartbeatFailed", "heartbeat_failed", error.clone())
        }
        C::Leaving { reason } => s(
            "client: Leaving",
            "leave",
            reason
                .as_ref()
                .map(|r| format!("due to {r}"))
                .unwrap_or_default(),
        ),
        C::CoordinatorDiscovered { coordinator } => s(
            "client: CoordinatorDiscovered",
            "coordinator",
            coordinator.clone(),
        ),
        C::CoordinatorUnavailable { detail } => s(
            "client: CoordinatorUnavailable",
            "coordinator",
            detail.clone(),
        ),
        C::Other { message } => s("client: Other", "other", message.clone()),
        C::RejoinRequested { reason } => s(
            "client: RejoinRequested",
            "join",
            format!("due to: {reason}"),
        ),
        C::AssignmentFinished { members, .. } => s(
            "client: AssignmentFinished",
            "sync",
            format!("leader assigned {members} members"),
        ),
        C::AssignmentReceived { partitions } => {
            s("client: AssignmentReceived", "sync", partitions.join(", "))
        }
        C::GenerationReset { reason } => s("client: GenerationReset", "leave", reason.clone()),
        C::PollTimeoutExpired { exceeded_ms } => s(
            "client: PollTimeoutExpired",
            "leave",
            exceeded_ms
                .map(|ms| format!("poll timeout exceeded by {ms} ms"))
                .unwrap_or_default(),
        ),
        C::RequestFailed { request, error } => s(
            "client: RequestFailed",
            "heartbeat_failed",
            format!("{request}: {error}"),
        ),
        C::MemberStateChanged { from, to } => s(
            "client: MemberStateChanged",
            "state",
            format!("{from} → {to}"),
        ),
        C::Reconciling {
            assigned,
            added,
            revoked,
        } => s(
            "client: Reconciling",
            "sync",
            format!(
                "assigned {} (added {}, revoked {})",
                assigned.len(),
                added.len(),
                revoked.len()
            ),
        ),
    }
}

fn opt(v: &Option<i32>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "?".into())
}

/// The event as a timeline entry.
pub fn timeline_entry(ev: &GroupEvent) -> TimelineEntry {
    let words = describe(ev);
    let (frame, line) = location(&ev.evidence.at);
    TimelineEntry {
        ts: ev.ts,
        group: ev.group.as_deref().map(String::from),
        member_id: ev.member_id.as_deref().map(String::from),
        group_instance_id: ev.group_instance_id.as_deref().map(String::from),
        client_id: ev.client.client_id.clone(),
        client_host: ev.client.address.clone(),
        generation: ev.generation_id,
        kind: words.kind.into_owned(),
        mark: words.mark.to_string(),
        error: words.error.map(String::from),
        detail: words.detail,
        source: ev.evidence.source.to_string(),
        frame,
        line,
    }
}

thread_local! {
    /// The line [`evidence_line`] writes before copying it out (kept at the
    /// longest line written on this thread).
    static SCRATCH: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The event as one line of evidence.
pub fn evidence_line(ev: &GroupEvent) -> EvidenceLine {
    let words = describe(ev);
    let (frame, line) = location(&ev.evidence.at);
    // Written into this thread's scratch line, then copied once into a
    // string of its exact length: a record keeps its evidence to the end
    // of the run (with the evidence lists' own room, a tenth of a
    // rebalance-dense log's peak), and room guessed then given back was a
    // reallocation per line cited.
    let text = SCRATCH.with_borrow_mut(|text| {
        text.clear();
        text.push_str(&words.kind);
        // Pushed, not `write!`: the formatting machinery per part was a
        // fifth of citing.
        if let Some(m) = ev.member_id.as_deref().filter(|m| !m.is_empty()) {
            text.push_str(" member=");
            text.push_str(m);
        }
        if let Some(c) = &ev.client.client_id {
            text.push_str(" client=");
            text.push_str(c);
        }
        if let Some(g) = ev.generation_id {
            let _ = write!(text, " generation={g}");
        }
        if let Some(e) = words.error {
            text.push_str(" error=");
            text.push_str(e);
        }
        if !words.detail.is_empty() {
            text.push(' ');
            text.push_str(&words.detail);
        }
        String::from(text.as_str())
    });
    EvidenceLine {
        source: ev.evidence.source.clone(),
        frame,
        line,
        ts: ev.ts,
        text,
    }
}

fn location(at: &Location) -> (Option<u64>, Option<u64>) {
    match at {
        Location::Frame { frame } => (Some(*frame), None),
        Location::Line { line } => (None, Some(*line)),
    }
}
