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
    // Written into this thread's scratch, then copied at its length (none
    // when empty): grown from nothing, the detail was reallocated as it
    // grew.
    let (w, detail) = DETAIL.with_borrow_mut(|t| {
        t.clear();
        let w = write_words(ev, t);
        (w, String::from(t.as_str()))
    });
    Described {
        kind: w.kind,
        mark: w.mark,
        error: w.error,
        detail,
    }
}

thread_local! {
    /// The detail [`describe`] writes before copying it out.
    static DETAIL: RefCell<String> = const { RefCell::new(String::new()) };
}

/// An event's words but its detail, which [`write_words`] writes.
struct Words {
    kind: Cow<'static, str>,
    mark: &'static str,
    error: Option<&'static str>,
}

/// Writes the event's detail into `t` (empty: its checks for a first part
/// read `t` whole) and gives the rest of its words. Written in place, not
/// formatted into pieces and joined: describing was a tenth of a rebalance
/// storm's instructions, most of it in the pieces' allocations.
fn write_words(ev: &GroupEvent, t: &mut String) -> Words {
    match &ev.kind {
        EventKind::Broker(line) => broker_words(line, t),
        EventKind::Client(line) => client_words(line, t),
        kind => wire_words(kind, t),
    }
}

fn w(kind: impl Into<Cow<'static, str>>, mark: &'static str, error: Option<&'static str>) -> Words {
    Words {
        kind: kind.into(),
        mark,
        error,
    }
}

/// `t` ready for one more space-separated part.
fn part(t: &mut String) -> &mut String {
    if !t.is_empty() {
        t.push(' ');
    }
    t
}

/// `items` joined by `sep`.
fn join_into<S: AsRef<str>>(t: &mut String, items: &[S], sep: &str) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            t.push_str(sep);
        }
        t.push_str(item.as_ref());
    }
}

fn wire_words(kind: &EventKind, t: &mut String) -> Words {
    use EventKind as K;
    let err = |e: &Option<crate::event::ErrorCode>| e.map(|e| e.name());
    match kind {
        K::FindCoordinatorRequest { key_type, .. } => {
            let _ = write!(t, "key_type={key_type}");
            w("FindCoordinator request", "coordinator", None)
        }
        K::FindCoordinatorResponse {
            node_id,
            coordinator,
            error,
            ..
        } => {
            let _ = write!(t, "coordinator {coordinator} (node {node_id})");
            w("FindCoordinator response", "coordinator", err(error))
        }
        K::JoinGroupRequest {
            session_timeout_ms,
            rebalance_timeout_ms,
            protocols,
            reason,
            identity_cut,
            ..
        } => {
            let _ = write!(t, "session.timeout={session_timeout_ms}ms");
            if let Some(r) = rebalance_timeout_ms {
                let _ = write!(t, " rebalance.timeout={r}ms");
            }
            if *identity_cut {
                t.push_str(" member=(cut)");
                return w("JoinGroup request", "join", None);
            }
            t.push_str(" protocols=[");
            for (i, p) in protocols.iter().enumerate() {
                if i > 0 {
                    t.push(',');
                }
                t.push_str(&p.name);
            }
            t.push(']');
            if let Some(r) = reason {
                let _ = write!(t, " reason=\"{r}\"");
            }
            w("JoinGroup request", "join", None)
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
            if !leader.is_empty() {
                let _ = write!(part(t), "leader={leader}");
            }
            if let Some(p) = protocol_name {
                let _ = write!(part(t), "protocol={p}");
            }
            if !members.is_empty() {
                let _ = write!(part(t), "members={}", members.len());
            }
            if let Some(p) = parked_ms {
                let _ = write!(part(t), "parked={p:.0}ms");
            }
            w("JoinGroup response", "join", err(error))
        }
        K::SyncGroupRequest { assignments, .. } => {
            if !assignments.is_empty() {
                let _ = write!(t, "assignments for {} members (leader)", assignments.len());
            }
            w("SyncGroup request", "sync", None)
        }
        K::SyncGroupResponse {
            error, assignment, ..
        } => {
            let n: usize = assignment.iter().map(|t| t.partitions.len()).sum();
            let _ = write!(t, "{n} partitions assigned");
            w("SyncGroup response", "sync", err(error))
        }
        K::HeartbeatRequest { .. } => w("Heartbeat request", "heartbeat", None),
        K::HeartbeatResponse { error, .. } => w(
            "Heartbeat response",
            if error.is_some() {
                "heartbeat_failed"
            } else {
                "heartbeat"
            },
            err(error),
        ),
        K::LeaveGroupRequest { members, .. } => {
            for (i, m) in members.iter().enumerate() {
                if i > 0 {
                    t.push_str("; ");
                }
                t.push_str(&m.member_id);
                if let Some(r) = &m.reason {
                    let _ = write!(t, " reason=\"{r}\"");
                }
            }
            w("LeaveGroup request", "leave", None)
        }
        K::LeaveGroupResponse { error, .. } => w("LeaveGroup response", "leave", err(error)),
        K::OffsetCommitRequest { partitions, .. } => {
            let _ = write!(t, "{partitions} partitions");
            w("OffsetCommit request", "commit", None)
        }
        K::OffsetCommitResponse { error, .. } => w(
            "OffsetCommit response",
            if error.is_some() {
                "heartbeat_failed"
            } else {
                "commit"
            },
            err(error),
        ),
        K::OffsetFetch { error, .. } => w("OffsetFetch", "commit", err(error)),
        K::GroupDescribed {
            state,
            protocol,
            members,
            error,
            ..
        } => {
            let _ = write!(
                t,
                "state={state} protocol={protocol} members={}",
                members.len()
            );
            w("DescribeGroups response", "state", err(error))
        }
        K::GroupListed {
            state,
            protocol_type,
            ..
        } => {
            let _ = write!(
                t,
                "state={} protocol_type={protocol_type}",
                state.as_deref().unwrap_or("?")
            );
            w("ListGroups response", "state", None)
        }
        K::GroupDeleted { error, .. } => {
            t.push_str(if error.is_none() {
                "group deleted"
            } else {
                "group not deleted"
            });
            w("DeleteGroups response", "state", err(error))
        }
        K::ConsumerGroupHeartbeatRequest {
            member_epoch,
            subscribed_topic_names,
            ..
        } => {
            let _ = write!(t, "member_epoch={member_epoch}");
            if let Some(names) = subscribed_topic_names {
                t.push_str(" subscribe=[");
                join_into(t, names, ",");
                t.push(']');
            }
            let mark = match member_epoch {
                0 => "join",
                e if *e < 0 => "leave",
                _ => "heartbeat",
            };
            w("ConsumerGroupHeartbeat request", mark, None)
        }
        K::ConsumerGroupHeartbeatResponse {
            error,
            member_epoch,
            assignment,
            error_message,
            ..
        } => {
            let _ = write!(t, "member_epoch={member_epoch}");
            if let Some(a) = assignment {
                let n: usize = a.iter().map(|t| t.partitions.len()).sum();
                let _ = write!(t, " assignment={n} partitions");
            }
            if let Some(m) = error_message {
                let _ = write!(t, " message=\"{m}\"");
            }
            w(
                "ConsumerGroupHeartbeat response",
                if error.is_some() {
                    "heartbeat_failed"
                } else {
                    "heartbeat"
                },
                err(error),
            )
        }
        K::ConnectionClosed { reset } => w(
            if *reset {
                "connection reset (RST)"
            } else {
                "connection closed (FIN)"
            },
            "close",
            None,
        ),
        K::Broker(_) | K::Client(_) => w("log", "other", None),
    }
}

fn broker_words(line: &BrokerLine, t: &mut String) -> Words {
    use BrokerLine as B;
    let s = |k: &'static str, mark| w(k, mark, None);
    match line {
        B::PreparingRebalance {
            state,
            old_generation,
            reason,
            ..
        } => {
            let _ = write!(
                t,
                "from {state}, old generation {old_generation}; reason: {}",
                reason.as_deref().unwrap_or("-")
            );
            s("broker: PreparingRebalance", "state")
        }
        B::Stabilized {
            generation,
            members,
            leader,
            ..
        } => {
            let _ = write!(t, "generation {generation}");
            if let Some(m) = members {
                let _ = write!(t, " with {m} members");
            }
            if let Some(l) = leader {
                let _ = write!(t, ", leader {l}");
            }
            s("broker: Stabilized", "state")
        }
        B::AssignmentReceived {
            generation,
            members,
        } => {
            let _ = write!(t, "generation {generation}");
            if let Some(m) = members {
                let _ = write!(t, ", {m} members");
            }
            s("broker: AssignmentReceived", "sync")
        }
        B::MemberJoined { pending, .. } => {
            if *pending {
                t.push_str("new member id created (KIP-394)");
            }
            s("broker: MemberJoined", "join")
        }
        B::MemberFailed => {
            t.push_str("removed on heartbeat expiration");
            s("broker: MemberFailed", "heartbeat_failed")
        }
        B::MemberLeft { client_reason } => {
            if let Some(r) = client_reason {
                let _ = write!(t, "client reason: {r}");
            }
            s("broker: MemberLeft", "leave")
        }
        B::PendingMemberExpired => {
            t.push_str("pending member removed after session timeout");
            s("broker: PendingMemberExpired", "leave")
        }
        B::StaticMemberReplaced { old_member_id } => {
            if let Some(o) = old_member_id {
                let _ = write!(t, "replaced {o}");
            }
            s("broker: StaticMemberReplaced", "join")
        }
        B::GroupEmpty => s("broker: GroupEmpty", "state"),
        B::GroupDead => s("broker: GroupDead", "state"),
        B::CoordinatorLoaded { partition, epoch } => {
            t.push_str("partition ");
            opt(t, partition);
            t.push_str(" epoch ");
            opt(t, epoch);
            s("broker: CoordinatorLoaded", "coordinator")
        }
        B::CoordinatorUnloaded { partition } => {
            t.push_str("partition ");
            opt(t, partition);
            s("broker: CoordinatorUnloaded", "coordinator")
        }
        B::OffsetsExpired { count } => {
            let _ = write!(t, "{count} offsets");
            s("broker: OffsetsExpired", "commit")
        }
        B::GroupEpochBumped { epoch } => {
            let _ = write!(t, "epoch {epoch}");
            s("broker: GroupEpochBumped", "state")
        }
        B::MemberFenced { reason } => {
            t.push_str(reason);
            s("broker: MemberFenced", "heartbeat_failed")
        }
        B::MemberAssignmentState {
            epoch,
            previous_epoch,
            state,
        } => {
            let _ = write!(t, "epoch {previous_epoch}→{epoch} {state}");
            s("broker: MemberAssignmentState", "sync")
        }
        B::SubscriptionChanged { detail } => {
            t.push_str(detail);
            s("broker: SubscriptionChanged", "state")
        }
        B::Other { message } => {
            t.push_str(message);
            s("broker: Other", "other")
        }
        B::RebalanceTimeoutRemoved { members } => {
            t.push_str("removed for not rejoining within the rebalance timeout: ");
            join_into(t, members, ", ");
            s("broker: RebalanceTimeoutRemoved", "leave")
        }
        B::PendingSyncRemoved { members } => {
            t.push_str("removed for not sending SyncGroup in time: ");
            join_into(t, members, ", ");
            s("broker: PendingSyncRemoved", "leave")
        }
        B::StaticMemberFenced {
            current_member_id,
            operation,
        } => {
            t.push_str(current_member_id.as_deref().unwrap_or("static member"));
            t.push_str(" fenced");
            if let Some(o) = operation {
                let _ = write!(t, " on {o}");
            }
            s("broker: StaticMemberFenced", "heartbeat_failed")
        }
        B::StaticMemberTemporarilyLeft => s("broker: StaticMemberTemporarilyLeft", "leave"),
        B::TargetAssignmentComputed { epoch, assignor } => {
            let _ = write!(t, "epoch {epoch}");
            if let Some(a) = assignor {
                let _ = write!(t, " by {a}");
            }
            s("broker: TargetAssignmentComputed", "sync")
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
            let _ = write!(
                t,
                "v{api_version} total={total_time_ms:.0}ms remote={remote_time_ms:.0}ms"
            );
            if let Some(e) = error {
                let _ = write!(t, " error={e}");
            }
            if let Some(r) = reason {
                let _ = write!(t, " reason=\"{r}\"");
            }
            w(
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
            )
        }
    }
}

fn client_words(line: &ClientLine, t: &mut String) -> Words {
    use ClientLine as C;
    let s = |k: &'static str, mark| w(k, mark, None);
    match line {
        C::Joining { reason } => {
            if let Some(r) = reason {
                let _ = write!(t, "due to: {r}");
            }
            s("client: Joining", "join")
        }
        C::Joined { protocol } => {
            if let Some(p) = protocol {
                let _ = write!(t, "protocol {p}");
            }
            s("client: Joined", "join")
        }
        C::Synced => s("client: Synced", "sync"),
        C::PartitionsAssigned { partitions } => {
            join_into(t, partitions, ", ");
            s("client: PartitionsAssigned", "sync")
        }
        C::PartitionsRevoked { partitions } => {
            join_into(t, partitions, ", ");
            s("client: PartitionsRevoked", "sync")
        }
        C::PartitionsLost { partitions } => {
            join_into(t, partitions, ", ");
            s("client: PartitionsLost", "sync")
        }
        C::HeartbeatFailed { error } => {
            t.push_str(error);
            s("client: HeartbeatFailed", "heartbeat_failed")
        }
        C::Leaving { reason } => {
            if let Some(r) = reason {
                let _ = write!(t, "due to {r}");
            }
            s("client: Leaving", "leave")
        }
        C::CoordinatorDiscovered { coordinator } => {
            t.push_str(coordinator);
            s("client: CoordinatorDiscovered", "coordinator")
        }
        C::CoordinatorUnavailable { detail } => {
            t.push_str(detail);
            s("client: CoordinatorUnavailable", "coordinator")
        }
        C::Other { message } => {
            t.push_str(message);
            s("client: Other", "other")
        }
        C::RejoinRequested { reason } => {
            let _ = write!(t, "due to: {reason}");
            s("client: RejoinRequested", "join")
        }
        C::AssignmentFinished { members, .. } => {
            let _ = write!(t, "leader assigned {members} members");
            s("client: AssignmentFinished", "sync")
        }
        C::AssignmentReceived { partitions } => {
            join_into(t, partitions, ", ");
            s("client: AssignmentReceived", "sync")
        }
        C::GenerationReset { reason } => {
            t.push_str(reason);
            s("client: GenerationReset", "leave")
        }
        C::PollTimeoutExpired { exceeded_ms } => {
            if let Some(ms) = exceeded_ms {
                let _ = write!(t, "poll timeout exceeded by {ms} ms");
            }
            s("client: PollTimeoutExpired", "leave")
        }
        C::RequestFailed { request, error } => {
            let _ = write!(t, "{request}: {error}");
            s("client: RequestFailed", "heartbeat_failed")
        }
        C::MemberStateChanged { from, to } => {
            let _ = write!(t, "{from} → {to}");
            s("client: MemberStateChanged", "state")
        }
        C::Reconciling {
            assigned,
            added,
            revoked,
        } => {
            let _ = write!(
                t,
                "assigned {} (added {}, revoked {})",
                assigned.len(),
                added.len(),
                revoked.len()
            );
            s("client: Reconciling", "sync")
        }
    }
}

/// A number, or `?` when unknown.
fn opt(t: &mut String, v: &Option<i32>) {
    match v {
        Some(v) => {
            let _ = write!(t, "{v}");
        }
        None => t.push('?'),
    }
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
    /// The line [`evidence_line`] writes before copying it out, and the
    /// detail it writes first (each kept at the longest written on this
    /// thread).
    static SCRATCH: RefCell<(String, String)> = const { RefCell::new((String::new(), String::new())) };
}

/// The event as one line of evidence.
pub fn evidence_line(ev: &GroupEvent) -> EvidenceLine {
    let (frame, line) = location(&ev.evidence.at);
    // Written into this thread's scratch line, then copied once into a
    // string of its exact length: a record keeps its evidence to the end
    // of the run (with the evidence lists' own room, a tenth of a
    // rebalance-dense log's peak), and room guessed then given back was a
    // reallocation per line cited.
    let text = SCRATCH.with_borrow_mut(|(text, detail)| {
        detail.clear();
        let words = write_words(ev, detail);
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
        if !detail.is_empty() {
            text.push(' ');
            text.push_str(detail);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{
        ClientRef, Evidence, JoinedMember, LeavingMember, OfferedProtocol, RequestCompleted,
    };

    fn ev(kind: EventKind) -> GroupEvent {
        GroupEvent {
            ts: crate::time::Timestamp(0),
            group: Some("g".into()),
            member_id: Some("m-1".into()),
            group_instance_id: None,
            generation_id: Some(3),
            client: ClientRef {
                client_id: Some("c".into()),
                ..ClientRef::default()
            }
            .into(),
            kind,
            truncated: false,
            evidence: Evidence {
                source: crate::event::Source::from("server.log"),
                at: Location::Line { line: 7 },
            },
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// Every kind the fixtures do not reach, and the optional parts of
    /// those they do, in words and as evidence.
    fn kinds() -> Vec<EventKind> {
        use BrokerLine as B;
        use ClientLine as C;
        use EventKind as K;
        vec![
            K::JoinGroupRequest {
                exchange: 1,
                session_timeout_ms: 45_000,
                rebalance_timeout_ms: Some(300_000),
                protocol_type: "consumer".into(),
                protocols: vec![
                    OfferedProtocol {
                        name: "range".into(),
                        ..OfferedProtocol::default()
                    },
                    OfferedProtocol {
                        name: "cooperative-sticky".into(),
                        ..OfferedProtocol::default()
                    },
                ],
                reason: Some("rebalance failed".into()),
                identity_cut: false,
            },
            K::JoinGroupRequest {
                exchange: 1,
                session_timeout_ms: 10_000,
                rebalance_timeout_ms: None,
                protocol_type: "consumer".into(),
                protocols: vec![],
                reason: None,
                identity_cut: true,
            },
            K::JoinGroupResponse {
                exchange: 1,
                error: Some(crate::event::ErrorCode(79)),
                protocol_name: Some("range".into()),
                leader: "m-1".into(),
                members: vec![JoinedMember::default(), JoinedMember::default()].into(),
                parked_ms: Some(2_999.6),
            },
            K::JoinGroupResponse {
                exchange: 1,
                error: None,
                protocol_name: None,
                leader: "".into(),
                members: Box::new([]),
                parked_ms: Some(12.0),
            },
            K::LeaveGroupRequest {
                exchange: 2,
                members: vec![
                    LeavingMember {
                        member_id: "a".into(),
                        group_instance_id: None,
                        reason: Some("the consumer is being closed".into()),
                    },
                    LeavingMember {
                        member_id: "b".into(),
                        group_instance_id: None,
                        reason: None,
                    },
                ],
            },
            K::GroupListed {
                exchange: 3,
                state: None,
                protocol_type: "consumer".into(),
            },
            K::GroupDeleted {
                exchange: 3,
                error: Some(crate::event::ErrorCode(69)),
            },
            K::ConsumerGroupHeartbeatRequest {
                exchange: 4,
                member_epoch: -1,
                rebalance_timeout_ms: 300_000,
                subscribed_topic_names: Some(strings(&["a", "b"]).into()),
                server_assignor: None,
                owned: None,
                broker_offers: None,
            },
            K::ConsumerGroupHeartbeatResponse {
                exchange: 4,
                error: Some(crate::event::ErrorCode(110)),
                error_message: Some("fenced".into()),
                member_epoch: 5,
                heartbeat_interval_ms: 5_000,
                assignment: Some(vec![]),
            },
            K::ConnectionClosed { reset: true },
            K::Broker(B::PreparingRebalance {
                state: "Stable".into(),
                old_generation: 4,
                reason: None,
                client_reason: None,
            }),
            K::Broker(B::Stabilized {
                generation: 5,
                members: Some(3),
                protocol: None,
                leader: Some("m-1".into()),
            }),
            K::Broker(B::AssignmentReceived {
                generation: 5,
                members: None,
            }),
            K::Broker(B::MemberLeft {
                client_reason: None,
            }),
            K::Broker(B::PendingMemberExpired),
            K::Broker(B::StaticMemberReplaced {
                old_member_id: None,
            }),
            K::Broker(B::CoordinatorLoaded {
                partition: None,
                epoch: Some(9),
            }),
            K::Broker(B::CoordinatorUnloaded { partition: None }),
            K::Broker(B::OffsetsExpired { count: 12 }),
            K::Broker(B::SubscriptionChanged {
                detail: "topics [a] -> [a, b]".into(),
            }),
            K::Broker(B::RebalanceTimeoutRemoved {
                members: strings(&["a", "b"]),
            }),
            K::Broker(B::PendingSyncRemoved {
                members: strings(&["c"]),
            }),
            K::Broker(B::StaticMemberFenced {
                current_member_id: Some("m-2".into()),
                operation: Some("JoinGroup".into()),
            }),
            K::Broker(B::StaticMemberFenced {
                current_member_id: None,
                operation: None,
            }),
            K::Broker(B::StaticMemberTemporarilyLeft),
            K::Broker(B::TargetAssignmentComputed {
                epoch: 6,
                assignor: Some("uniform".into()),
            }),
            K::Broker(B::TargetAssignmentComputed {
                epoch: 6,
                assignor: None,
            }),
            K::Broker(B::RequestCompleted(Box::new(RequestCompleted {
                api: "JoinGroup".into(),
                api_version: 9,
                correlation_id: 4,
                error: Some("MEMBER_ID_REQUIRED".into()),
                total_time_ms: 3_000.4,
                remote_time_ms: 2_999.5,
                request_queue_time_ms: 0.1,
                local_time_ms: 0.2,
                reason: Some("need to re-join".into()),
                leader: None,
            }))),
            K::Client(C::Joining {
                reason: Some("group is already rebalancing".into()),
            }),
            K::Client(C::Joined { protocol: None }),
            K::Client(C::PartitionsLost {
                partitions: strings(&["t-0", "t-1"]),
            }),
            K::Client(C::HeartbeatFailed {
                error: "REBALANCE_IN_PROGRESS".into(),
            }),
            K::Client(C::Leaving { reason: None }),
            K::Client(C::CoordinatorUnavailable {
                detail: "broker 1 is unavailable".into(),
            }),
            K::Client(C::PollTimeoutExpired {
                exceeded_ms: Some(1_200),
            }),
            K::Client(C::PollTimeoutExpired { exceeded_ms: None }),
            K::Client(C::RequestFailed {
                request: "SyncGroup".into(),
                error: "UNKNOWN_MEMBER_ID".into(),
            }),
            K::Client(C::MemberStateChanged {
                from: "STABLE".into(),
                to: "RECONCILING".into(),
            }),
            K::Client(C::Reconciling {
                assigned: strings(&["t-0"]).into(),
                added: strings(&[]).into(),
                revoked: strings(&["t-1", "t-2"]).into(),
            }),
        ]
    }

    /// Pins the words (which the timeline's JSON and every evidence line
    /// carry) of each kind the fixtures' snapshots do not reach; the
    /// snapshot was taken from the words as they were formatted piece by
    /// piece, before they were written in place.
    #[test]
    fn every_kind_reads_as_it_did_in_words_and_in_evidence() {
        let mut out = String::new();
        for kind in kinds() {
            let e = ev(kind);
            let d = describe(&e);
            let _ = writeln!(out, "{}|{}|{:?}|{}", d.kind, d.mark, d.error, d.detail);
            let _ = writeln!(out, "  {}", evidence_line(&e).text);
        }
        insta::assert_snapshot!(out);
    }
}
