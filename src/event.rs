//! Normalised group events: what was seen, never why.
//!
//! Takes nothing; this is the contract between the readers (capture →
//! [`crate::normalize`], [`crate::logs`]) and everything after them
//! ([`crate::timeline`], [`crate::group`], [`crate::report`]). A
//! [`GroupEvent`] states one observation (a JoinGroup request, a
//! "Preparing to rebalance" log line, a connection reset) with the evidence
//! that lets a person find it again: file and frame, or file and line.
//! Interpretation (state, triggers) belongs to [`crate::group`], as in Zeek's
//! split between the event engine and policy scripts.

use std::sync::Arc;

use serde::Serialize;

use crate::fast_hash::FastSet;
use crate::time::Timestamp;

/// A group, member or instance id as an event carries it: shared, not
/// copied, by every event that names it (issue 12: a coordinator's capture
/// names the same few thousand ids in millions of events).
pub type Id = arcstr::ArcStr;

/// A text an event carries (a state's name, a reason, a coordinator's
/// address): one pointer in the event where a `String` took three words,
/// so the kinds that carry texts stay within the event's size.
pub type Text = arcstr::ArcStr;

/// An input's name as its events' evidence carries it: one shared text
/// per input, a single pointer in each event.
pub type Source = arcstr::ArcStr;

/// Hands out one shared [`Id`] per distinct text, so the events of one input
/// hold each group and member id once. Each time it has doubled it forgets
/// the ids no event holds any more, so under `kgtrace watch`, which lets old
/// events go, it holds about the live ids, not every id seen in days of
/// member churn. At [`MAX_IDS`] new ids are handed out unshared (correct,
/// only not deduplicated) and it looks for ids to forget again only after
/// as many more: a hostile input cannot grow it, and a log whose every line
/// names a new member id does not pay a sweep per line. Each sweep is paid
/// for by as many new ids as it scans (amortised O(1)).
#[derive(Debug)]
pub struct Ids {
    known: FastSet<Id>,
    cap: usize,
    /// The size at which to sweep next (below the cap).
    next_sweep: usize,
    /// When full: new ids to hand out unshared before the next sweep.
    sweep_in: usize,
}

impl Default for Ids {
    fn default() -> Ids {
        Ids {
            known: FastSet::default(),
            cap: MAX_IDS,
            next_sweep: SWEEP_AT_LEAST,
            sweep_in: 0,
        }
    }
}

/// How many ids one [`Ids`] shares at most.
pub const MAX_IDS: usize = 256 * 1024;

/// No sweep before this many ids (a capture names a few thousand).
const SWEEP_AT_LEAST: usize = 4096;

impl Ids {
    /// The shared id for `text`.
    pub fn id(&mut self, text: &str) -> Id {
        if let Some(id) = self.known.get(text) {
            return id.clone();
        }
        let id: Id = Id::from(text);
        let len = self.known.len();
        if len >= self.cap {
            if self.sweep_in == 0 {
                self.sweep();
                self.sweep_in = self.cap;
            }
        } else if len >= self.next_sweep {
            self.sweep();
        }
        if self.known.len() < self.cap {
            self.known.insert(id.clone());
        } else {
            self.sweep_in -= 1;
        }
        id
    }

    /// Forgets the ids no event holds.
    fn sweep(&mut self) {
        self.known
            .retain(|id| Id::strong_count(id).is_none_or(|n| n > 1));
        self.next_sweep = (2 * self.known.len()).max(SWEEP_AT_LEAST);
    }

    /// [`Ids::id`] of an optional text.
    pub fn of(&mut self, text: Option<&str>) -> Option<Id> {
        text.map(|t| self.id(t))
    }
}

/// One observation about a consumer group (or about the connection of one of
/// its members).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupEvent {
    /// When it happened (UTC; log times already converted with `--log-tz`).
    pub ts: Timestamp,
    /// The group's `group_id`; `None` for events that name no group
    /// (a connection closing, a FindCoordinator for a transaction id).
    pub group: Option<Id>,
    /// The member this event is about, as Kafka writes it (`member_id`).
    pub member_id: Option<Id>,
    /// Static membership id (KIP-345 `group.instance.id`).
    pub group_instance_id: Option<Id>,
    /// Generation (classic) or epoch (KIP-848) the event carries.
    pub generation_id: Option<i32>,
    /// Who sent or received it on the wire, or who logged it: shared by the
    /// events of one connection (four strings per event were a quarter of a
    /// long capture's memory).
    pub client: Arc<ClientRef>,
    /// What was seen.
    pub kind: EventKind,
    /// Where it was seen.
    pub evidence: Evidence,
    /// Read from a message cut short (the capture's snaplen, lost bytes):
    /// fields past the cut are unknown (`None`, not empty) and lists hold
    /// only their whole entries, so a short list proves no absence.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// The client side of an event, as far as it is known.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct ClientRef {
    /// The request header's `client_id`, or the client log's `clientId=`.
    pub client_id: Option<String>,
    /// `ip:port` of the client end of the connection.
    pub address: Option<String>,
    /// KIP-511 `client_software_name/version` from ApiVersions, if seen.
    pub software: Option<String>,
    /// `ip:port` of the broker end of the connection, or `broker N` for logs.
    pub broker: Option<String>,
}

/// Where an event was seen, so a person can look it up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// The input file (`-` for stdin).
    pub source: Source,
    /// Frame numbers or line number inside it.
    #[serde(flatten)]
    pub at: Location,
}

/// A position inside an input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Location {
    /// 1-based frame number, as Wireshark counts, of the packet that
    /// completed the Kafka message.
    Frame {
        /// The frame (request or response) this event is about.
        frame: u64,
    },
    /// 1-based line number in a log file.
    Line {
        /// The line.
        line: u64,
    },
}

/// Partitions of one topic (a name, or a topic id for KIP-848 messages).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TopicPartitions {
    /// Topic name, or the topic id's UUID when only the id is on the wire.
    pub topic: String,
    /// Partition indexes.
    pub partitions: Vec<i32>,
}

/// A Kafka error code, named as Kafka names it (`REBALANCE_IN_PROGRESS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub i16);

impl ErrorCode {
    /// `None` for 0 (no error).
    pub fn from_code(code: i16) -> Option<ErrorCode> {
        (code != 0).then_some(ErrorCode(code))
    }

    /// Kafka's name for the code.
    pub fn name(self) -> &'static str {
        crate::kafka::error_name(self.0)
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// One protocol a member offers in JoinGroup (classic consumer: an assignor),
/// with its decoded ConsumerProtocolSubscription when it is one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OfferedProtocol {
    /// Assignor name (`range`, `cooperative-sticky`, ...).
    pub name: String,
    /// Subscribed topics from the embedded subscription.
    pub topics: Vec<String>,
    /// Owned partitions (subscription v1+, KIP-429).
    pub owned_partitions: Vec<TopicPartitions>,
}

/// One member in a JoinGroup response (only the leader receives the list).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct JoinedMember {
    /// The member's id.
    pub member_id: String,
    /// Its static id, if any.
    pub group_instance_id: Option<String>,
    /// Its subscribed topics, from its metadata.
    pub topics: Vec<String>,
}

/// One member leaving in a LeaveGroup request (v3+ batches them, KIP-345).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LeavingMember {
    /// The member's id.
    pub member_id: String,
    /// Its static id, if any.
    pub group_instance_id: Option<String>,
    /// KIP-800 reason (v5+), e.g. "consumer poll timeout has expired.".
    pub reason: Option<String>,
}

/// One member's assignment as the leader sends it in SyncGroup.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemberAssignment {
    /// The member's id.
    pub member_id: String,
    /// Its partitions (decoded ConsumerProtocolAssignment).
    pub partitions: Vec<TopicPartitions>,
}

/// A member as DescribeGroups or ConsumerGroupDescribe reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DescribedMember {
    /// The member's id.
    pub member_id: String,
    /// Its static id, if any.
    pub group_instance_id: Option<String>,
    /// Its client id.
    pub client_id: String,
    /// Its host as the broker saw it.
    pub client_host: String,
    /// Its current assignment.
    pub assignment: Vec<TopicPartitions>,
}

/// What was seen. Wire events come in request/response pairs sharing
/// `exchange`; log events carry the fields their line states.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// FindCoordinator request (key type 0 = group, 1 = transaction).
    FindCoordinatorRequest {
        /// Links request and response.
        exchange: u64,
        /// 0 = group, 1 = transaction.
        key_type: i8,
    },
    /// FindCoordinator answer for one key.
    FindCoordinatorResponse {
        /// Links request and response.
        exchange: u64,
        /// Coordinator broker id.
        node_id: i32,
        /// `host:port` of the coordinator.
        coordinator: Text,
        /// Error, if any (e.g. COORDINATOR_NOT_AVAILABLE).
        error: Option<ErrorCode>,
    },
    /// JoinGroup request.
    JoinGroupRequest {
        /// Links request and response.
        exchange: u64,
        /// Member's session timeout.
        session_timeout_ms: i32,
        /// Member's rebalance timeout (v1+; max.poll.interval.ms).
        rebalance_timeout_ms: Option<i32>,
        /// `consumer`, `connect`, ...
        protocol_type: Text,
        /// Offered protocols (assignors) with subscriptions.
        protocols: Vec<OfferedProtocol>,
        /// KIP-800 reason (v8+).
        reason: Option<Text>,
        /// The capture cut the request inside its member id or static id
        /// (`group.instance.id`): who joined is not known whole, so the
        /// event's `member_id` or `group_instance_id` being none says
        /// nothing (not Kafka's empty id of a new member, not a dynamic
        /// member). The group id and timeouts before the cut are whole.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        identity_cut: bool,
    },
    /// JoinGroup response.
    JoinGroupResponse {
        /// Links request and response.
        exchange: u64,
        /// Error, if any (MEMBER_ID_REQUIRED is the KIP-394 two-step).
        error: Option<ErrorCode>,
        /// Chosen protocol (assignor).
        protocol_name: Option<Text>,
        /// The leader's member id.
        leader: Text,
        /// Member list (leader only).
        members: Box<[JoinedMember]>,
        /// Milliseconds the request was parked at the broker (response ts
        /// minus request ts).
        parked_ms: Option<f64>,
    },
    /// SyncGroup request (the leader's carries assignments).
    SyncGroupRequest {
        /// Links request and response.
        exchange: u64,
        /// Assignments (leader only).
        assignments: Vec<MemberAssignment>,
    },
    /// SyncGroup response.
    SyncGroupResponse {
        /// Links request and response.
        exchange: u64,
        /// Error, if any.
        error: Option<ErrorCode>,
        /// This member's assignment.
        assignment: Vec<TopicPartitions>,
    },
    /// Heartbeat request.
    HeartbeatRequest {
        /// Links request and response.
        exchange: u64,
    },
    /// Heartbeat response.
    HeartbeatResponse {
        /// Links request and response.
        exchange: u64,
        /// Error, if any (REBALANCE_IN_PROGRESS tells a member to rejoin).
        error: Option<ErrorCode>,
    },
    /// LeaveGroup request.
    LeaveGroupRequest {
        /// Links request and response.
        exchange: u64,
        /// Members leaving.
        members: Vec<LeavingMember>,
    },
    /// LeaveGroup response.
    LeaveGroupResponse {
        /// Links request and response.
        exchange: u64,
        /// Error, if any.
        error: Option<ErrorCode>,
    },
    /// OffsetCommit request.
    OffsetCommitRequest {
        /// Links request and response.
        exchange: u64,
        /// Partitions committed.
        partitions: usize,
        /// Each partition's `committed_offset` (at most
        /// [`MAX_OFFSETS`] kept).
        offsets: Vec<PartitionOffset>,
    },
    /// OffsetCommit response.
    OffsetCommitResponse {
        /// Links request and response.
        exchange: u64,
        /// First partition error, if any.
        error: Option<ErrorCode>,
        /// The partitions answered with an error (`offset` is -1; `error`
        /// its error); a partition not listed was committed, or was past
        /// a cut in the capture.
        partitions: Vec<PartitionOffset>,
    },
    /// OffsetFetch request or response.
    OffsetFetch {
        /// Links request and response.
        exchange: u64,
        /// Error, if any.
        error: Option<ErrorCode>,
        /// Response: each partition's committed offset (-1: none).
        offsets: Vec<PartitionOffset>,
    },
    /// DescribeGroups (or ConsumerGroupDescribe) answer for one group.
    GroupDescribed {
        /// Links request and response.
        exchange: u64,
        /// State as the broker names it.
        state: Text,
        /// Protocol (assignor) in use.
        protocol: Text,
        /// Members.
        members: Vec<DescribedMember>,
        /// Error, if any.
        error: Option<ErrorCode>,
    },
    /// ListGroups answer entry.
    GroupListed {
        /// Links request and response.
        exchange: u64,
        /// State, if the version carries it.
        state: Option<Text>,
        /// `consumer`, `connect`, ...
        protocol_type: Text,
    },
    /// DeleteGroups answer for one group (an admin's `kafka-consumer-groups
    /// --delete`): without error, the group and its offsets are gone, and a
    /// group of the same name starts again from generation or epoch 0.
    GroupDeleted {
        /// Links request and response.
        exchange: u64,
        /// Error, if any (GROUP_NOT_EMPTY: it still has members).
        error: Option<ErrorCode>,
    },
    /// KIP-848 ConsumerGroupHeartbeat request.
    ConsumerGroupHeartbeatRequest {
        /// Links request and response.
        exchange: u64,
        /// 0 = join, -1 = leave, -2 = static member leaving temporarily.
        member_epoch: i32,
        /// Rebalance timeout (-1 = unchanged).
        rebalance_timeout_ms: i32,
        /// New subscription (None = unchanged).
        subscribed_topic_names: Option<Box<[String]>>,
        /// Server assignor requested.
        server_assignor: Option<Text>,
        /// Partitions the member owns (None = unchanged).
        owned: Option<Box<[TopicPartitions]>>,
        /// Whether the broker listed ConsumerGroupHeartbeat (API key 68) in
        /// its ApiVersions answer on this connection (`None`: that answer
        /// was not captured). A judgement aid, not printed.
        #[serde(skip)]
        broker_offers: Option<bool>,
    },
    /// KIP-848 ConsumerGroupHeartbeat response.
    ConsumerGroupHeartbeatResponse {
        /// Links request and response.
        exchange: u64,
        /// Error, if any (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID...).
        error: Option<ErrorCode>,
        /// Error message text.
        error_message: Option<Text>,
        /// Member epoch granted.
        member_epoch: i32,
        /// Heartbeat interval the broker asks for.
        heartbeat_interval_ms: i32,
        /// New target assignment (None = unchanged).
        assignment: Option<Vec<TopicPartitions>>,
    },
    /// The member's TCP connection ended (FIN or RST seen).
    ConnectionClosed {
        /// `true` for RST, `false` for FIN.
        reset: bool,
    },
    /// A broker's group-coordinator log line.
    Broker(BrokerLine),
    /// A Java client's group-membership log line.
    Client(ClientLine),
}

impl EventKind {
    /// The id linking a wire request and its response, if this kind has
    /// one (inputs read apart renumber theirs when joined).
    pub fn exchange_mut(&mut self) -> Option<&mut u64> {
        match self {
            EventKind::FindCoordinatorRequest { exchange, .. }
            | EventKind::FindCoordinatorResponse { exchange, .. }
            | EventKind::JoinGroupRequest { exchange, .. }
            | EventKind::JoinGroupResponse { exchange, .. }
            | EventKind::SyncGroupRequest { exchange, .. }
            | EventKind::SyncGroupResponse { exchange, .. }
            | EventKind::HeartbeatRequest { exchange, .. }
            | EventKind::HeartbeatResponse { exchange, .. }
            | EventKind::LeaveGroupRequest { exchange, .. }
            | EventKind::LeaveGroupResponse { exchange, .. }
            | EventKind::OffsetCommitRequest { exchange, .. }
            | EventKind::OffsetCommitResponse { exchange, .. }
            | EventKind::OffsetFetch { exchange, .. }
            | EventKind::GroupDescribed { exchange, .. }
            | EventKind::GroupListed { exchange, .. }
            | EventKind::GroupDeleted { exchange, .. }
            | EventKind::ConsumerGroupHeartbeatRequest { exchange, .. }
            | EventKind::ConsumerGroupHeartbeatResponse { exchange, .. } => Some(exchange),
            _ => None,
        }
    }
}

/// A broker log line's meaning (classic Scala coordinator, new Java
/// coordinator, KIP-848 groups). Fields are what the line states.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "line", rename_all = "snake_case")]
pub enum BrokerLine {
    /// "Preparing to rebalance group G in state S with old generation N ...
    /// (reason: R)".
    PreparingRebalance {
        /// State named in the line.
        state: Text,
        /// Generation before.
        old_generation: i32,
        /// The coordinator's reason text, verbatim.
        reason: Option<Text>,
        /// KIP-800 client reason inside it, if any.
        client_reason: Option<Text>,
    },
    /// "Stabilized group G generation N (...) with K members".
    Stabilized {
        /// New generation.
        generation: i32,
        /// Member count, if the version logs it.
        members: Option<u32>,
        /// Protocol, if logged.
        protocol: Option<Text>,
        /// Leader, if logged.
        leader: Option<Text>,
    },
    /// "Assignment received from leader M for group G for generation N".
    AssignmentReceived {
        /// Generation.
        generation: i32,
        /// Member count, if logged.
        members: Option<u32>,
    },
    /// A member was added (Dynamic/Static member joins, Pending member ...).
    MemberJoined {
        /// KIP-394 "unknown member id ... Created a new member id".
        pending: bool,
        /// The line says the group was Empty when the member came ("joins
        /// group G in Empty state", logged before the member is added:
        /// GroupCoordinator.scala `doNewMemberJoinGroup` /
        /// `doPendingMemberJoinGroup`, GroupMetadataManager.java
        /// `classicGroupJoinNewMember` / `classicGroupJoinExistingMember`):
        /// this join forms the group.
        from_empty: bool,
    },
    /// "Member M in group G has failed, removing it from the group" / heartbeat expiration.
    MemberFailed,
    /// "... has left group G through explicit `LeaveGroup` request".
    MemberLeft {
        /// KIP-800 client reason.
        client_reason: Option<String>,
    },
    /// "Pending member M in group G has been removed after session timeout expiration".
    PendingMemberExpired,
    /// "Static member ... Replacing previously mapped member".
    StaticMemberReplaced {
        /// The member id replaced.
        old_member_id: Option<String>,
    },
    /// "Group G with generation N is now empty".
    GroupEmpty,
    /// "Group G is dead" / "Group G transitioned to Dead".
    GroupDead,
    /// Coordinator took over a partition ("Elected as the group coordinator",
    /// "Loading group metadata", "Loaded ...").
    CoordinatorLoaded {
        /// `__consumer_offsets` partition, if stated.
        partition: Option<i32>,
        /// Leader epoch, if stated.
        epoch: Option<i32>,
    },
    /// Coordinator gave up a partition ("Resigned", "Unloading").
    CoordinatorUnloaded {
        /// `__consumer_offsets` partition, if stated.
        partition: Option<i32>,
    },
    /// "Removed N expired offsets".
    OffsetsExpired {
        /// How many.
        count: u64,
    },
    /// KIP-848: "Bumped group epoch to E".
    GroupEpochBumped {
        /// New epoch.
        epoch: i32,
    },
    /// KIP-848: member fenced (session expired, failed to transition, ...).
    MemberFenced {
        /// Why, as logged.
        reason: String,
    },
    /// KIP-848: "Member M new assignment state: epoch=.., previousEpoch=.., state=..".
    MemberAssignmentState {
        /// Member epoch.
        epoch: i32,
        /// Previous epoch.
        previous_epoch: i32,
        /// STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS...
        state: String,
    },
    /// KIP-848: subscription or subscription metadata changed.
    SubscriptionChanged {
        /// The logged detail.
        detail: String,
    },
    /// A group line the reader recognised as group-related but carries only
    /// its text (kept so that nothing is lost).
    Other {
        /// A short name for the message.
        message: String,
    },
    /// "Group G removed dynamic members who haven't joined: Set(a, b)": the
    /// rebalance timeout evicted members that did not rejoin (2.6.1+).
    RebalanceTimeoutRemoved {
        /// The evicted member ids, as listed.
        members: Vec<String>,
    },
    /// "Group G removed members who haven't sent their sync request(s): M"
    /// (DEBUG; Scala 2.8.1+ "request", Java 3.7+ "requests"): members that
    /// never sent SyncGroup were dropped before the next round.
    PendingSyncRemoved {
        /// The dropped member ids, as listed.
        members: Vec<String>,
    },
    /// A static member's request was fenced ("Request memberId=M for static
    /// member ... is fenced by current memberId=C", KIP-345; KIP-848 "Static
    /// member M with instance id I is fenced by existing member C").
    StaticMemberFenced {
        /// The member id currently mapped to the instance id.
        current_member_id: Option<Text>,
        /// The operation that was fenced (`join-group`, `heartbeat`, ...).
        operation: Option<Text>,
    },
    /// KIP-848: "Static member M with instance id I temporarily left the
    /// consumer group." (member epoch -2: a restart within the session).
    StaticMemberTemporarilyLeft,
    /// KIP-848: "Computed a new target assignment for epoch E ...".
    TargetAssignmentComputed {
        /// Target assignment epoch.
        epoch: i32,
        /// Server assignor, if logged (3.7+).
        assignor: Option<String>,
    },
    /// A group request in `kafka-request.log` ("Completed request:{JSON}",
    /// `kafka.request.logger` at DEBUG); the line's time is the response's.
    /// Boxed: the largest line by far, it made every event of every input
    /// 32 bytes larger (boxing every broker line instead costs a log more
    /// than it saves).
    RequestCompleted(Box<RequestCompleted>),
}

/// What a `kafka-request.log` line about a group request states.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RequestCompleted {
    /// `JoinGroup`, `SyncGroup`, `Heartbeat` or `LeaveGroup`.
    pub api: String,
    /// Request version.
    pub api_version: i16,
    /// Request header correlation id.
    pub correlation_id: i32,
    /// Response error name, if not NONE.
    pub error: Option<String>,
    /// `totalTimeMs`.
    pub total_time_ms: f64,
    /// `remoteTimeMs`: for JoinGroup, the time parked in purgatory.
    pub remote_time_ms: f64,
    /// `requestQueueTimeMs`.
    pub request_queue_time_ms: f64,
    /// `localTimeMs`.
    pub local_time_ms: f64,
    /// KIP-800 reason (JoinGroup v8+, LeaveGroup v5+ members).
    pub reason: Option<String>,
    /// JoinGroup response leader, if any.
    pub leader: Option<String>,
}

/// A Java client log line's meaning (AbstractCoordinator,
/// ConsumerCoordinator, KIP-848 membership manager).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "line", rename_all = "snake_case")]
pub enum ClientLine {
    /// "(Re-)joining group".
    Joining {
        /// "Request joining group due to: R", if logged just before.
        reason: Option<String>,
    },
    /// "Successfully joined group with generation Generation{generationId=N, ...}".
    Joined {
        /// Assignor.
        protocol: Option<String>,
    },
    /// "Successfully synced group in generation ...".
    Synced,
    /// "Notifying assignor about the new Assignment(partitions=[...])" /
    /// "Adding newly assigned partitions".
    PartitionsAssigned {
        /// Partitions as written (`topic-0, topic-1`).
        partitions: Vec<String>,
    },
    /// "Revoke previously assigned partitions".
    PartitionsRevoked {
        /// Partitions as written.
        partitions: Vec<String>,
    },
    /// "Lost previously assigned partitions".
    PartitionsLost {
        /// Partitions as written.
        partitions: Vec<String>,
    },
    /// Heartbeat or commit failed (REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID...).
    HeartbeatFailed {
        /// Error as logged.
        error: String,
    },
    /// "Member ... sending LeaveGroup request to coordinator ... due to R".
    Leaving {
        /// Reason, e.g. "consumer poll timeout has expired".
        reason: Option<String>,
    },
    /// "Discovered group coordinator host:port (id: N ...)".
    CoordinatorDiscovered {
        /// `host:port (id: N)` as logged.
        coordinator: String,
    },
    /// "Group coordinator ... is unavailable or invalid".
    CoordinatorUnavailable {
        /// The logged detail.
        detail: String,
    },
    /// Any other recognised membership line.
    Other {
        /// A short name for the message.
        message: String,
    },
    /// "Request joining group due to: R" (3.0+; R is the KIP-800 reason).
    RejoinRequested {
        /// The reason, verbatim.
        reason: String,
    },
    /// "Finished assignment for group at generation N: {...}" (the leader).
    AssignmentFinished {
        /// Members in the assignment map.
        members: u32,
        /// Their member ids, as the map's keys (at most
        /// `MAX_ASSIGNED_MEMBER_IDS`).
        member_ids: Vec<String>,
    },
    /// "Notifying assignor about the new Assignment(partitions=[...])": the
    /// member's whole new assignment after SyncGroup.
    AssignmentReceived {
        /// Partitions as written.
        partitions: Vec<String>,
    },
    /// "Resetting generation (and member id) due to: R".
    GenerationReset {
        /// The reason, verbatim.
        reason: String,
    },
    /// "consumer poll timeout has expired ..." (max.poll.interval.ms).
    PollTimeoutExpired {
        /// KIP-848 client: "exceeded approximately by N ms".
        exceeded_ms: Option<u64>,
    },
    /// "JoinGroup failed: ...", "SyncGroup failed: ...".
    RequestFailed {
        /// `JoinGroup` or `SyncGroup`.
        request: Text,
        /// The error text as logged.
        error: Text,
    },
    /// KIP-848 client: "Member M with epoch E transitioned from A to B.".
    MemberStateChanged {
        /// State before (`JOINING`, `RECONCILING`, ...).
        from: String,
        /// State after.
        to: String,
    },
    /// KIP-848 client: "Reconciling assignment with local epoch ..." and its
    /// continuation lines (3.8 swaps member id and epoch; both orders read).
    Reconciling {
        /// "Assigned partitions".
        assigned: Box<[String]>,
        /// "Added partitions (assigned - owned)".
        added: Box<[String]>,
        /// "Revoked partitions (owned - assigned)".
        revoked: Box<[String]>,
    },
}

/// Per-partition offsets kept per message; the rest are dropped.
pub const MAX_OFFSETS: usize = 4096;

/// One observation on a consumer's data path (Fetch, ListOffsets) or of the
/// cluster's topic ids (Metadata): what [`crate::stops`] needs to say where
/// each consumer was reading. These name no group: a consumer fetches from
/// partition leaders, usually over other connections than its coordinator's,
/// so they are matched to members later by client id and host.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DataEvent {
    /// Request time (requests) or response time (responses).
    pub ts: Timestamp,
    /// Who sent or received it (shared by every event of a connection).
    pub client: Arc<ClientRef>,
    /// What was seen.
    pub kind: DataKind,
    /// Where it was seen.
    pub evidence: Evidence,
}

/// A partition named by topic and index. The topic is a name, or (Fetch
/// v13+) the topic id's UUID until a Metadata answer names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartitionOffset {
    /// Topic name or id.
    pub topic: Id,
    /// Partition index.
    pub partition: i32,
    /// The offset stated (Fetch `fetch_offset`, OffsetCommit
    /// `committed_offset`, OffsetFetch answer, ListOffsets answer; ListOffsets
    /// requests: the timestamp asked, -2 earliest, -1 latest).
    pub offset: i64,
    /// Per-partition error, if any.
    pub error: Option<ErrorCode>,
}

impl PartitionOffset {
    /// Whether this is the partition named `topic-N`, compared without
    /// formatting the name (it runs once per offset per stopped partition).
    pub fn is(&self, name: &str) -> bool {
        name.strip_prefix(&*self.topic)
            .and_then(|rest| rest.strip_prefix('-'))
            .filter(|n| {
                n.bytes().all(|b| b.is_ascii_digit()) && (n.len() == 1 || !n.starts_with('0'))
            })
            .and_then(|n| n.parse::<i32>().ok())
            == Some(self.partition)
    }
}

/// One partition's header in a Fetch response (the record batches after it
/// are skipped by length, never read).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartitionWatermark {
    /// Topic name or id.
    pub topic: Id,
    /// Partition index.
    pub partition: i32,
    /// Error, if any (OFFSET_OUT_OF_RANGE, NOT_LEADER_OR_FOLLOWER...).
    pub error: Option<ErrorCode>,
    /// `high_watermark`.
    pub high_watermark: i64,
    /// `last_stable_offset` (v4+; -1 when unknown).
    pub last_stable_offset: i64,
    /// The last offset of the last whole record batch delivered (read from
    /// the batch headers; the records themselves are skipped); `None` when
    /// nothing was delivered.
    pub last_offset: Option<i64>,
}

/// What a data-path exchange showed.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DataKind {
    /// Fetch request: each partition's `fetch_offset` (the consumer's
    /// position). Incremental fetch sessions (KIP-227) list only partitions
    /// whose position changed.
    FetchRequest {
        /// Links request and response.
        exchange: u64,
        /// Partitions and positions.
        partitions: Vec<PartitionOffset>,
    },
    /// Fetch response partition headers.
    FetchResponse {
        /// Links request and response.
        exchange: u64,
        /// Per-partition headers.
        partitions: Vec<PartitionWatermark>,
    },
    /// ListOffsets request: per partition, the timestamp asked.
    ListOffsetsRequest {
        /// Links request and response.
        exchange: u64,
        /// `offset` holds the timestamp (-2 earliest, -1 latest).
        partitions: Vec<PartitionOffset>,
    },
    /// ListOffsets response: per partition, the offset found.
    ListOffsetsResponse {
        /// Links request and response.
        exchange: u64,
        /// Offsets found.
        partitions: Vec<PartitionOffset>,
    },
    /// Metadata response: topic names and their ids (v10+).
    TopicIds {
        /// `(name, id)` pairs.
        topics: Vec<(String, String)>,
    },
}

impl DataKind {
    /// The id linking a wire request and its response, if this kind has
    /// one (inputs read apart renumber theirs when joined).
    pub fn exchange_mut(&mut self) -> Option<&mut u64> {
        match self {
            DataKind::FetchRequest { exchange, .. }
            | DataKind::FetchResponse { exchange, .. }
            | DataKind::ListOffsetsRequest { exchange, .. }
            | DataKind::ListOffsetsResponse { exchange, .. } => Some(exchange),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PartitionOffset;

    #[test]
    fn a_partition_offset_matches_exactly_its_topic_dash_number_name() {
        let o = PartitionOffset {
            topic: "orders-eu".into(),
            partition: 12,
            offset: 0,
            error: None,
        };
        assert!(o.is("orders-eu-12"));
        for other in [
            "orders-eu-1",
            "orders-eu-012",
            "orders-eu-+12",
            "orders-12",
            "orders-eu12",
            "orders-eu-12x",
        ] {
            assert!(!o.is(other), "{other}");
        }
    }
}

#[cfg(test)]
mod ids_tests {
    use super::*;

    fn capped(cap: usize) -> Ids {
        Ids {
            cap,
            ..Ids::default()
        }
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn an_event_stays_small_enough_to_hold_millions() {
        // Every event of a capture is held until the reconstruction (issue
        // 12): 272 bytes before ids were shared and the request log's line
        // boxed, 216 after, 152 since ids, sources and the kinds' texts are
        // one pointer each and the largest kinds' lists boxed slices, 144
        // since a client's reconciliation line (three lists, the largest
        // kind by 8 bytes) holds boxed slices too. A new field or kind that
        // grows it should be a decision, not an accident.
        assert!(std::mem::size_of::<GroupEvent>() <= 144);
        assert!(std::mem::size_of::<EventKind>() <= 64);
    }

    #[test]
    fn the_same_text_is_one_shared_id() {
        let mut ids = Ids::default();
        let a = ids.id("consumer-1-7f3e");
        let b = ids.id("consumer-1-7f3e");
        assert!(Id::ptr_eq(&a, &b));
        assert!(!Id::ptr_eq(&a, &ids.id("consumer-2-0c1d")));
        assert_eq!(ids.of(None), None);
        assert_eq!(ids.of(Some("g1")).as_deref(), Some("g1"));
    }

    #[test]
    fn at_the_cap_ids_no_event_holds_are_forgotten_and_the_rest_stay_shared() {
        let mut ids = capped(2);
        let held = ids.id("held");
        drop(ids.id("dropped"));
        // Full: "dropped" is held by nobody, so it is forgotten to make room.
        let third = ids.id("third");
        assert_eq!(ids.known.len(), 2);
        assert!(Id::ptr_eq(&held, &ids.id("held")));
        assert!(Id::ptr_eq(&third, &ids.id("third")));
        // Full of held ids: new ones are handed out, right but unshared,
        // without a sweep each ...
        let fourth = ids.id("fourth");
        assert_eq!(&*fourth, "fourth");
        assert!(!Id::ptr_eq(&fourth, &ids.id("fourth")));
        assert_eq!(ids.known.len(), 2);
        // ... until `cap` of them went by: then ids let go are forgotten.
        drop(third);
        let fifth = ids.id("fifth");
        assert!(Id::ptr_eq(&fifth, &ids.id("fifth")));
        assert!(Id::ptr_eq(&held, &ids.id("held")));
    }

    #[test]
    fn ids_let_go_are_forgotten_each_time_the_table_doubles() {
        let mut ids = Ids {
            next_sweep: 3,
            ..Ids::default()
        };
        let held = ids.id("held");
        drop((ids.id("gone-1"), ids.id("gone-2")));
        // Three known: the fourth new id sweeps the two no event holds.
        let fourth = ids.id("fourth");
        assert_eq!(ids.known.len(), 2);
        assert_eq!(ids.next_sweep, SWEEP_AT_LEAST);
        assert!(Id::ptr_eq(&held, &ids.id("held")));
        assert!(Id::ptr_eq(&fourth, &ids.id("fourth")));
    }

    #[test]
    fn a_new_id_on_every_line_does_not_sweep_on_every_line() {
        let mut ids = capped(4);
        let held: Vec<Id> = (0..4).map(|i| ids.id(&format!("m-{i}"))).collect();
        // Full of held ids: the fifth sweeps once and finds nothing ...
        let fifth = ids.id("m-4");
        assert_eq!(ids.sweep_in, 3);
        // ... and the next new ids are handed out without another sweep.
        let more: Vec<Id> = (5..8).map(|i| ids.id(&format!("m-{i}"))).collect();
        assert_eq!(ids.sweep_in, 0);
        assert_eq!(ids.known.len(), 4);
        assert_eq!((&*held[3], &*fifth, &*more[2]), ("m-3", "m-4", "m-7"));
    }
}
