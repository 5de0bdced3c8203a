//! Real Kafka frames for the benchmark capture, encoded with kafka-protocol.
//!
//! Takes: what a consumer, producer or coordinator says (group id, member
//! id, generation, partitions, payload size). Gives: complete wire frames
//! (4-byte size, request or response header of the version the API uses,
//! body) built from kafka-protocol's typed messages with its `Encodable`, so
//! the decoder under test sees exactly what a Java client and broker would
//! send. Like the test kits, this is generator code outside `src/`: the
//! house rule "kafka-protocol only in src/kafka/" is about the library.

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition as AssignedTopic;
use kafka_protocol::messages::consumer_protocol_subscription::TopicPartition as OwnedTopic;
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::leave_group_response::MemberResponse;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, StrBytes};

mod records;

pub use records::{fetch, produce};

/// Kafka error codes the scenario answers with (`Errors.java`).
pub const REBALANCE_IN_PROGRESS: i16 = 27;
/// KIP-394: the first JoinGroup of a new member is answered with its id.
pub const MEMBER_ID_REQUIRED: i16 = 79;

/// Which API versions a client speaks: an older (2.x) or a newer (3.x) one.
#[derive(Clone, Copy, Debug)]
pub struct Versions {
    pub join: i16,
    pub sync: i16,
    pub heartbeat: i16,
    pub commit: i16,
    pub leave: i16,
    pub find: i16,
    pub api_versions: i16,
    pub fetch: i16,
    pub produce: i16,
}

/// A Kafka 2.8 Java client.
pub const OLD_CLIENT: Versions = Versions {
    join: 7,
    sync: 5,
    heartbeat: 4,
    commit: 8,
    leave: 4,
    find: 3,
    api_versions: 3,
    fetch: 12,
    produce: 9,
};

/// A Kafka 3.7 Java client.
pub const NEW_CLIENT: Versions = Versions {
    join: 9,
    sync: 5,
    heartbeat: 4,
    commit: 9,
    leave: 5,
    find: 4,
    api_versions: 3,
    fetch: 15,
    produce: 9,
};

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

fn framed(buf: BytesMut) -> Vec<u8> {
    let mut f = Vec::with_capacity(buf.len() + 4);
    f.extend_from_slice(&(buf.len() as u32).to_be_bytes());
    f.extend_from_slice(&buf);
    f
}

/// A request frame: size, header (the version the API uses), body.
pub fn request<T: Encodable>(
    key: ApiKey,
    version: i16,
    corr: i32,
    client: &str,
    body: &T,
) -> Vec<u8> {
    let header = RequestHeader::default()
        .with_request_api_key(key as i16)
        .with_request_api_version(version)
        .with_correlation_id(corr)
        .with_client_id(Some(s(client)));
    let mut buf = BytesMut::new();
    let hv = key.request_header_version(version);
    header.encode(&mut buf, hv).expect("request header encodes");
    body.encode(&mut buf, version)
        .expect("request body encodes");
    framed(buf)
}

/// A response frame answering `key` at `version`.
pub fn response<T: Encodable>(key: ApiKey, version: i16, corr: i32, body: &T) -> Vec<u8> {
    let mut buf = BytesMut::new();
    let hv = key.response_header_version(version);
    ResponseHeader::default()
        .with_correlation_id(corr)
        .encode(&mut buf, hv)
        .expect("response header encodes");
    body.encode(&mut buf, version)
        .expect("response body encodes");
    framed(buf)
}

/// ApiVersions as a Java client opens every connection (KIP-511 names).
pub fn api_versions(v: &Versions, corr: i32, client: &str, software: &str) -> (Vec<u8>, Vec<u8>) {
    let req = ApiVersionsRequest::default()
        .with_client_software_name(s("apache-kafka-java"))
        .with_client_software_version(s(software));
    let keys = [0i16, 1, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 68, 69];
    let resp = ApiVersionsResponse::default().with_api_keys(
        keys.iter()
            .map(|&k| ApiVersion::default().with_api_key(k).with_max_version(9))
            .collect(),
    );
    (
        request(ApiKey::ApiVersions, v.api_versions, corr, client, &req),
        response(ApiKey::ApiVersions, v.api_versions, corr, &resp),
    )
}

/// FindCoordinator for `group`, answered with broker 1 at `broker`.
pub fn find_coordinator(v: &Versions, corr: i32, client: &str, group: &str) -> (Vec<u8>, Vec<u8>) {
    let mut req = FindCoordinatorRequest::default();
    let mut resp = FindCoordinatorResponse::default();
    if v.find >= 4 {
        req = req.with_coordinator_keys(vec![s(group)]);
        resp = resp.with_coordinators(vec![Coordinator::default()
            .with_key(s(group))
            .with_node_id(BrokerId(1))
            .with_host(s("10.0.0.9"))
            .with_port(9092)]);
    } else {
        req = req.with_key(s(group));
        resp = resp
            .with_node_id(BrokerId(1))
            .with_host(s("10.0.0.9"))
            .with_port(9092);
    }
    (
        request(ApiKey::FindCoordinator, v.find, corr, client, &req),
        response(ApiKey::FindCoordinator, v.find, corr, &resp),
    )
}

/// A ConsumerProtocolSubscription (v1: topics and owned partitions),
/// prefixed with its version as JoinGroup metadata carries it.
pub fn subscription(topic: &str, owned: &[i32]) -> Bytes {
    let sub = ConsumerProtocolSubscription::default()
        .with_topics(vec![s(topic)])
        .with_owned_partitions(vec![OwnedTopic::default()
            .with_topic(TopicName(s(topic)))
            .with_partitions(owned.to_vec())]);
    versioned(&sub, 1)
}

/// A ConsumerProtocolAssignment (v1) of `partitions` of `topic`.
pub fn assignment(topic: &str, partitions: &[i32]) -> Bytes {
    let a = ConsumerProtocolAssignment::default().with_assigned_partitions(vec![
        AssignedTopic::default()
            .with_topic(TopicName(s(topic)))
            .with_partitions(partitions.to_vec()),
    ]);
    versioned(&a, 1)
}

fn versioned<T: Encodable>(body: &T, version: i16) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_i16(version);
    body.encode(&mut buf, version)
        .expect("consumer protocol encodes");
    buf.freeze()
}

/// Who is asking, for every group request.
#[derive(Clone, Copy, Debug)]
pub struct Who<'a> {
    pub client: &'a str,
    pub group: &'a str,
    pub member_id: &'a str,
    pub versions: &'a Versions,
}

/// A JoinGroup request offering the range assignor with `metadata`.
pub fn join_request(w: &Who<'_>, corr: i32, metadata: Bytes) -> Vec<u8> {
    let mut req = JoinGroupRequest::default()
        .with_group_id(GroupId(s(w.group)))
        .with_session_timeout_ms(45_000)
        .with_rebalance_timeout_ms(300_000)
        .with_member_id(s(w.member_id))
        .with_protocol_type(s("consumer"))
        .with_protocols(vec![JoinGroupRequestProtocol::default()
            .with_name(s("range"))
            .with_metadata(metadata)]);
    if w.versions.join >= 8 && !w.member_id.is_empty() {
        req = req.with_reason(Some(s("rebalance in progress")));
    }
    request(ApiKey::JoinGroup, w.versions.join, corr, w.client, &req)
}

/// The JoinGroup answer; `members` (id, metadata) only for the leader.
pub fn join_response(
    w: &Who<'_>,
    corr: i32,
    error: i16,
    generation: i32,
    leader: &str,
    members: &[(String, Bytes)],
) -> Vec<u8> {
    let resp = JoinGroupResponse::default()
        .with_error_code(error)
        .with_generation_id(generation)
        .with_protocol_type(Some(s("consumer")))
        .with_protocol_name(Some(s("range")))
        .with_leader(s(leader))
        .with_member_id(s(w.member_id))
        .with_members(
            members
                .iter()
                .map(|(id, meta)| {
                    JoinGroupResponseMember::default()
                        .with_member_id(s(id))
                        .with_metadata(meta.clone())
                })
                .collect(),
        );
    response(ApiKey::JoinGroup, w.versions.join, corr, &resp)
}

/// SyncGroup: the leader sends every member's assignment, others none;
/// the answer carries this member's assignment.
pub fn sync_group(
    w: &Who<'_>,
    corr: i32,
    generation: i32,
    assignments: &[(String, Bytes)],
    mine: Bytes,
) -> (Vec<u8>, Vec<u8>) {
    let req = SyncGroupRequest::default()
        .with_group_id(GroupId(s(w.group)))
        .with_generation_id(generation)
        .with_member_id(s(w.member_id))
        .with_protocol_type(Some(s("consumer")))
        .with_protocol_name(Some(s("range")))
        .with_assignments(
            assignments
                .iter()
                .map(|(id, a)| {
                    SyncGroupRequestAssignment::default()
                        .with_member_id(s(id))
                        .with_assignment(a.clone())
                })
                .collect(),
        );
    let resp = SyncGroupResponse::default()
        .with_protocol_type(Some(s("consumer")))
        .with_protocol_name(Some(s("range")))
        .with_assignment(mine);
    let v = w.versions.sync;
    (
        request(ApiKey::SyncGroup, v, corr, w.client, &req),
        response(ApiKey::SyncGroup, v, corr, &resp),
    )
}

/// A Heartbeat and its answer (`error` 0 or REBALANCE_IN_PROGRESS).
pub fn heartbeat(w: &Who<'_>, corr: i32, generation: i32, error: i16) -> (Vec<u8>, Vec<u8>) {
    let req = HeartbeatRequest::default()
        .with_group_id(GroupId(s(w.group)))
        .with_generation_id(generation)
        .with_member_id(s(w.member_id));
    let resp = HeartbeatResponse::default().with_error_code(error);
    let v = w.versions.heartbeat;
    (
        request(ApiKey::Heartbeat, v, corr, w.client, &req),
        response(ApiKey::Heartbeat, v, corr, &resp),
    )
}

/// An OffsetCommit of `partitions` of `topic` at `offset`.
pub fn offset_commit(
    w: &Who<'_>,
    corr: i32,
    generation: i32,
    topic: &str,
    partitions: &[i32],
    offset: i64,
    error: i16,
) -> (Vec<u8>, Vec<u8>) {
    let req = OffsetCommitRequest::default()
        .with_group_id(GroupId(s(w.group)))
        .with_generation_id_or_member_epoch(generation)
        .with_member_id(s(w.member_id))
        .with_topics(vec![OffsetCommitRequestTopic::default()
            .with_name(TopicName(s(topic)))
            .with_partitions(
                partitions
                    .iter()
                    .map(|&p| {
                        OffsetCommitRequestPartition::default()
                            .with_partition_index(p)
                            .with_committed_offset(offset + i64::from(p) * 7)
                    })
                    .collect(),
            )]);
    let resp =
        OffsetCommitResponse::default().with_topics(vec![OffsetCommitResponseTopic::default()
            .with_name(TopicName(s(topic)))
            .with_partitions(
                partitions
                    .iter()
                    .map(|&p| {
                        OffsetCommitResponsePartition::default()
                            .with_partition_index(p)
                            .with_error_code(error)
                    })
                    .collect(),
            )]);
    let v = w.versions.commit;
    (
        request(ApiKey::OffsetCommit, v, corr, w.client, &req),
        response(ApiKey::OffsetCommit, v, corr, &resp),
    )
}

/// A LeaveGroup of this member (v3+ batch layout, KIP-345).
pub fn leave_group(w: &Who<'_>, corr: i32) -> (Vec<u8>, Vec<u8>) {
    let mut me = MemberIdentity::default().with_member_id(s(w.member_id));
    if w.versions.leave >= 5 {
        me = me.with_reason(Some(s("the consumer is being closed")));
    }
    let req = LeaveGroupRequest::default()
        .with_group_id(GroupId(s(w.group)))
        .with_members(vec![me]);
    let resp = LeaveGroupResponse::default().with_members(vec![
        MemberResponse::default().with_member_id(s(w.member_id))
    ]);
    let v = w.versions.leave;
    (
        request(ApiKey::LeaveGroup, v, corr, w.client, &req),
        response(ApiKey::LeaveGroup, v, corr, &resp),
    )
}
