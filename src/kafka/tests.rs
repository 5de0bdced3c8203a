//! Decoder-level tests: typed messages → frames → stream events →
//! exchanges, for every group API and version, and for the ways real
//! streams go wrong (split frames, gaps, mid-stream starts, TLS, decoys).

use bytes::Bytes;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use super::apis::key;
use super::testkit::*;
use super::OpenByGroup;
use crate::diagnostic::DiagnosticKind;
use crate::event::EventKind;
use crate::tcp::Direction::{ToClient, ToServer};

/// What an exchange for one API version should show.
struct Case {
    api_key: i16,
    version: i16,
    request: Vec<u8>,
    response: Vec<u8>,
    group: Option<&'static str>,
    member: Option<&'static str>,
    generation: Option<i32>,
    error: Option<i16>,
}

fn gid() -> GroupId {
    GroupId(s("g"))
}

fn topic() -> TopicName {
    TopicName(s("orders"))
}

fn opt(yes: bool, text: &str) -> Option<StrBytes> {
    yes.then(|| s(text))
}

/// A ConsumerProtocolSubscription v1 for topic `orders`, version-prefixed.
fn subscription_bytes() -> Bytes {
    use kafka_protocol::protocol::Encodable;
    let mut b = bytes::BytesMut::new();
    b.extend_from_slice(&1i16.to_be_bytes());
    ConsumerProtocolSubscription::default()
        .with_topics(vec![s("orders")])
        .encode(&mut b, 1)
        .unwrap();
    b.freeze()
}

/// A ConsumerProtocolAssignment v0 of `orders` partition 0 and 1.
fn assignment_bytes() -> Bytes {
    use kafka_protocol::protocol::Encodable;
    let mut b = bytes::BytesMut::new();
    b.extend_from_slice(&0i16.to_be_bytes());
    ConsumerProtocolAssignment::default()
        .with_assigned_partitions(vec![consumer_protocol_assignment::TopicPartition::default(
        )
        .with_topic(topic())
        .with_partitions(vec![0, 1])])
        .encode(&mut b, 0)
        .unwrap();
    b.freeze()
}

fn join_group(v: i16) -> Case {
    let req = JoinGroupRequest::default()
        .with_group_id(gid())
        .with_session_timeout_ms(10_000)
        .with_rebalance_timeout_ms(300_000)
        .with_member_id(s("m-1"))
        .with_group_instance_id(opt(v >= 5, "i-1"))
        .with_protocol_type(s("consumer"))
        .with_protocols(vec![join_group_request::JoinGroupRequestProtocol::default(
        )
        .with_name(s("range"))
        .with_metadata(subscription_bytes())])
        .with_reason(opt(v >= 8, "rejoin"));
    let resp = JoinGroupResponse::default()
        .with_generation_id(3)
        .with_protocol_type(opt(v >= 7, "consumer"))
        .with_protocol_name(Some(s("range")))
        .with_leader(s("m-1"))
        .with_member_id(s("m-1"))
        .with_members(vec![join_group_response::JoinGroupResponseMember::default(
        )
        .with_member_id(s("m-1"))
        .with_group_instance_id(opt(v >= 5, "i-1"))
        .with_metadata(subscription_bytes())]);
    Case {
        api_key: key::JOIN_GROUP,
        version: v,
        request: request(key::JOIN_GROUP, v, 10 + v as i32, "app", &req),
        response: response(key::JOIN_GROUP, v, 10 + v as i32, &resp),
        group: Some("g"),
        member: Some("m-1"),
        generation: Some(3),
        error: Some(0),
    }
}

fn sync_group(v: i16) -> Case {
    let req = SyncGroupRequest::default()
        .with_group_id(gid())
        .with_generation_id(3)
        .with_member_id(s("m-1"))
        .with_group_instance_id(opt(v >= 3, "i-1"))
        .with_protocol_type(opt(v >= 5, "consumer"))
        .with_protocol_name(opt(v >= 5, "range"))
        .with_assignments(vec![
            sync_group_request::SyncGroupRequestAssignment::default()
                .with_member_id(s("m-1"))
                .with_assignment(assignment_bytes()),
        ]);
    let resp = SyncGroupResponse::default()
        .with_protocol_type(opt(v >= 5, "consumer"))
        .with_protocol_name(opt(v >= 5, "range"))
        .with_assignment(assignment_bytes());
    Case {
        api_key: key::SYNC_GROUP,
        version: v,
        request: request(key::SYNC_GROUP, v, 20, "app", &req),
        response: response(key::SYNC_GROUP, v, 20, &resp),
        group: Some("g"),
        member: Some("m-1"),
        generation: Some(3),
        error: Some(0),
    }
}

fn heartbeat(v: i16) -> Case {
    let req = HeartbeatRequest::default()
        .with_group_id(gid())
        .with_generation_id(4)
        .with_member_id(s("m-1"))
        .with_group_instance_id(opt(v >= 3, "i-1"));
    let resp = HeartbeatResponse::default().with_error_code(27);
    Case {
        api_key: key::HEARTBEAT,
        version: v,
        request: request(key::HEARTBEAT, v, 30, "app", &req),
        response: response(key::HEARTBEAT, v, 30, &resp),
        group: Some("g"),
        member: Some("m-1"),
        generation: Some(4),
        error: Some(27),
    }
}

fn leave_group(v: i16) -> Case {
    let mut req = LeaveGroupRequest::default().with_group_id(gid());
    let mut resp = LeaveGroupResponse::default();
    if v >= 3 {
        req = req.with_members(vec![leave_group_request::MemberIdentity::default()
            .with_member_id(s("m-1"))
            .with_group_instance_id(Some(s("i-1")))
            .with_reason(opt(v >= 5, "the consumer is being closed"))]);
        resp = resp.with_members(vec![leave_group_response::MemberResponse::default()
            .with_member_id(s("m-1"))
            .with_error_code(25)]);
    } else {
        req = req.with_member_id(s("m-1"));
    }
    Case {
        api_key: key::LEAVE_GROUP,
        version: v,
        request: request(key::LEAVE_GROUP, v, 40, "app", &req),
        response: response(key::LEAVE_GROUP, v, 40, &resp),
        group: Some("g"),
        member: Some("m-1"),
        generation: None,
        error: Some(if v >= 3 { 25 } else { 0 }),
    }
}

fn offset_commit(v: i16) -> Case {
    let req = OffsetCommitRequest::default()
        .with_group_id(gid())
        .with_generation_id_or_member_epoch(5)
        .with_member_id(s("m-1"))
        .with_group_instance_id(opt(v >= 7, "i-1"))
        .with_topics(vec![
            offset_commit_request::OffsetCommitRequestTopic::default()
                .with_name(topic())
                .with_partitions(vec![
                    offset_commit_request::OffsetCommitRequestPartition::default()
                        .with_partition_index(0)
                        .with_committed_offset(42),
                ]),
        ]);
    Case {
        api_key: key::OFFSET_COMMIT,
        version: v,
        request: request(key::OFFSET_COMMIT, v, 50, "app", &req),
        response: response(key::OFFSET_COMMIT, v, 50, &offset_commit_response(0)),
        group: Some("g"),
        member: Some("m-1"),
        generation: Some(5),
        error: Some(0),
    }
}

fn offset_commit_response(error: i16) -> OffsetCommitResponse {
    OffsetCommitResponse::default().with_topics(vec![
        offset_commit_response::OffsetCommitResponseTopic::default()
            .with_name(topic())
            .with_partitions(vec![
                offset_commit_response::OffsetCommitResponsePartition::default()
                    .with_partition_index(0)
                    .with_error_code(error),
            ]),
    ])
}

fn offset_fetch(v: i16) -> Case {
    let (req, resp) = if v >= 8 {
        let req = OffsetFetchRequest::default().with_groups(vec![
            offset_fetch_request::OffsetFetchRequestGroup::default()
                .with_group_id(gid())
                .with_member_id(opt(v >= 9, "m-1"))
                .with_member_epoch(if v >= 9 { 5 } else { -1 })
                .with_topics(None),
        ]);
        let resp = OffsetFetchResponse::default().with_groups(vec![
            offset_fetch_response::OffsetFetchResponseGroup::default()
                .with_group_id(gid())
                .with_error_code(16),
        ]);
        (req, resp)
    } else {
        let req = OffsetFetchRequest::default()
            .with_group_id(gid())
            .with_topics(Some(vec![
                offset_fetch_request::OffsetFetchRequestTopic::default()
                    .with_name(topic())
                    .with_partition_indexes(vec![0]),
            ]));
        let resp = OffsetFetchResponse::default()
            .with_error_code(if v >= 2 { 16 } else { 0 })
            .with_topics(vec![
                offset_fetch_response::OffsetFetchResponseTopic::default()
                    .with_name(topic())
                    .with_partitions(vec![
                        offset_fetch_response::OffsetFetchResponsePartition::default()
                            .with_partition_index(0)
                            .with_error_code(if v >= 2 { 0 } else { 16 }),
                    ]),
            ]);
        (req, resp)
    };
    Case {
        api_key: key::OFFSET_FETCH,
        version: v,
        request: request(key::OFFSET_FETCH, v, 60, "app", &req),
        response: response(key::OFFSET_FETCH, v, 60, &resp),
        group: Some("g"),
        member: (v >= 9).then_some("m-1"),
        generation: (v >= 9).then_some(5),
        error: Some(16),
    }
}

fn find_coordinator(v: i16) -> Case {
    let (req, resp) = if v >= 4 {
        let req = FindCoordinatorRequest::default().with_coordinator_keys(vec![s("g")]);
        let resp = FindCoordinatorResponse::default().with_coordinators(vec![
            find_coordinator_response::Coordinator::default()
                .with_key(s("g"))
                .with_node_id(BrokerId(1))
                .with_host(s("broker-1"))
                .with_port(9092)
                .with_error_code(15),
        ]);
        (req, resp)
    } else {
        let req = FindCoordinatorRequest::default().with_key(s("g"));
        let resp = FindCoordinatorResponse::default()
            .with_error_code(15)
            .with_node_id(BrokerId(1))
            .with_host(s("broker-1"))
            .with_port(9092);
        (req, resp)
    };
    Case {
        api_key: key::FIND_COORDINATOR,
        version: v,
        request: request(key::FIND_COORDINATOR, v, 70, "app", &req),
        response: response(key::FIND_COORDINATOR, v, 70, &resp),
        group: Some("g"),
        member: None,
        generation: None,
        error: Some(15),
    }
}

fn describe_groups(v: i16) -> Case {
    let req = DescribeGroupsRequest::default().with_groups(vec![gid()]);
    let resp = DescribeGroupsResponse::default().with_groups(vec![
        describe_groups_response::DescribedGroup::default()
            .with_group_id(gid())
            .with_group_state(s("Stable"))
            .with_protocol_type(s("consumer"))
            .with_protocol_data(s("range"))
            .with_members(vec![
                describe_groups_response::DescribedGroupMember::default()
                    .with_member_id(s("m-1"))
                    .with_group_instance_id(opt(v >= 4, "i-1"))
                    .with_client_id(s("app"))
                    .with_client_host(s("/10.0.0.1"))
                    .with_member_assignment(assignment_bytes()),
            ]),
    ]);
    Case {
        api_key: key::DESCRIBE_GROUPS,
        version: v,
        request: request(key::DESCRIBE_GROUPS, v, 80, "admin", &req),
        response: response(key::DESCRIBE_GROUPS, v, 80, &resp),
        group: Some("g"),
        member: None,
        generation: None,
        error: Some(0),
    }
}

fn delete_groups(v: i16) -> Case {
    let req = DeleteGroupsRequest::default().with_groups_names(vec![gid()]);
    let resp = DeleteGroupsResponse::default().with_results(vec![
        delete_groups_response::DeletableGroupResult::default().with_group_id(gid()),
    ]);
    Case {
        api_key: key::DELETE_GROUPS,
        version: v,
        request: request(key::DELETE_GROUPS, v, 95, "admin", &req),
        response: response(key::DELETE_GROUPS, v, 95, &resp),
        group: Some("g"),
        member: None,
        generation: None,
        error: Some(0),
    }
}

fn list_groups(v: i16) -> Case {
    let resp = ListGroupsResponse::default().with_groups(vec![
        list_groups_response::ListedGroup::default()
            .with_group_id(gid())
            .with_protocol_type(s("consumer"))
            .with_group_state(if v >= 4 { s("Stable") } else { s("") })
            .with_group_type(if v >= 5 { s("classic") } else { s("") }),
    ]);
    Case {
        api_key: key::LIST_GROUPS,
        version: v,
        request: request(
            key::LIST_GROUPS,
            v,
            90,
            "admin",
            &ListGroupsRequest::default(),
        ),
        response: response(key::LIST_GROUPS, v, 90, &resp),
        group: None,
        member: None,
        generation: None,
        error: Some(0),
    }
}

fn consumer_group_heartbeat(v: i16) -> Case {
    let req = ConsumerGroupHeartbeatRequest::default()
        .with_group_id(gid())
        .with_member_id(s("m-1"))
        .with_member_epoch(5)
        .with_rebalance_timeout_ms(300_000)
        .with_subscribed_topic_names(Some(vec![topic()]))
        .with_server_assignor(Some(s("uniform")))
        .with_topic_partitions(Some(vec![]));
    let resp = ConsumerGroupHeartbeatResponse::default()
        .with_member_id(Some(s("m-1")))
        .with_member_epoch(6)
        .with_heartbeat_interval_ms(5000)
        .with_assignment(Some(
            consumer_group_heartbeat_response::Assignment::default().with_topic_partitions(vec![
                consumer_group_heartbeat_response::TopicPartitions::default()
                    .with_partitions(vec![0, 1]),
            ]),
        ));
    Case {
        api_key: key::CONSUMER_GROUP_HEARTBEAT,
        version: v,
        request: request(key::CONSUMER_GROUP_HEARTBEAT, v, 100, "app", &req),
        response: response(key::CONSUMER_GROUP_HEARTBEAT, v, 100, &resp),
        group: Some("g"),
        member: Some("m-1"),
        generation: Some(5),
        error: Some(0),
    }
}

fn consumer_group_describe(v: i16) -> Case {
    let req = ConsumerGroupDescribeRequest::default().with_group_ids(vec![gid()]);
    let resp = ConsumerGroupDescribeResponse::default().with_groups(vec![
        consumer_group_describe_response::DescribedGroup::default()
            .with_group_id(gid())
            .with_group_state(s("Stable"))
            .with_group_epoch(6)
            .with_assignor_name(s("uniform"))
            .with_members(vec![consumer_group_describe_response::Member::default()
                .with_member_id(s("m-1"))
                .with_client_id(s("app"))
                .with_client_host(s("/10.0.0.1"))]),
    ]);
    Case {
        api_key: key::CONSUMER_GROUP_DESCRIBE,
        version: v,
        request: request(key::CONSUMER_GROUP_DESCRIBE, v, 110, "admin", &req),
        response: response(key::CONSUMER_GROUP_DESCRIBE, v, 110, &resp),
        group: Some("g"),
        member: None,
        generation: None,
        error: Some(0),
    }
}

fn api_versions(v: i16) -> Case {
    let req = ApiVersionsRequest::default()
        .with_client_software_name(if v >= 3 { s("kgtrace-test") } else { s("") })
        .with_client_software_version(if v >= 3 { s("1.0") } else { s("") });
    let resp = ApiVersionsResponse::default().with_api_keys(vec![
        api_versions_response::ApiVersion::default()
            .with_api_key(11)
            .with_min_version(0)
            .with_max_version(9),
    ]);
    Case {
        api_key: key::API_VERSIONS,
        version: v,
        request: request(key::API_VERSIONS, v, 1, "app", &req),
        response: response(key::API_VERSIONS, v, 1, &resp),
        group: None,
        member: None,
        generation: None,
        error: Some(0),
    }
}

/// A case builder and the versions it covers.
type Builder = (fn(i16) -> Case, std::ops::RangeInclusive<i16>);

/// Every version of every decoded API the crate can encode.
fn all_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let builders: [Builder; 13] = [
        (join_group, 0..=9),
        (sync_group, 0..=5),
        (heartbeat, 0..=4),
        (leave_group, 0..=5),
        (offset_commit, 2..=9),
        (offset_fetch, 1..=9),
        (find_coordinator, 0..=6),
        (describe_groups, 0..=6),
        (list_groups, 0..=5),
        (delete_groups, 0..=2),
        (consumer_group_heartbeat, 0..=1),
        (consumer_group_describe, 0..=1),
        (api_versions, 0..=4),
    ];
    for (build, versions) in builders {
        cases.extend(versions.map(build));
    }
    cases
}

#[test]
fn decodes_every_version_of_every_group_api_and_pairs_it() {
    for case in all_cases() {
        let mut sim = Sim::new();
        sim.open(1, true);
        let req_frame = sim.send(1, ToServer, &case.request);
        let resp_frame = sim.send(1, ToClient, &case.response);
        let what = format!("{} v{}", super::api_name(case.api_key), case.version);
        assert_eq!(sim.diags.total(), 0, "{what}: {:#?}", sim.diags);
        assert_eq!(sim.out.len(), 1, "{what}");
        let ex = sim.only();
        assert_eq!(
            (ex.api_key, ex.api_version),
            (case.api_key, case.version),
            "{what}"
        );
        assert_eq!(
            (ex.request_frame, ex.response_frame),
            (Some(req_frame), Some(resp_frame)),
            "{what}"
        );
        assert_eq!(ex.latency_ms, Some(1.0), "{what}");
        assert_eq!(ex.group_id.as_deref(), case.group, "{what}");
        assert_eq!(ex.member_id.as_deref(), case.member, "{what}");
        assert_eq!(ex.generation_id, case.generation, "{what}");
        assert_eq!(ex.error_code, case.error, "{what}");
        assert_eq!(
            ex.client_id.as_deref(),
            Some(
                if case.api_key == key::DESCRIBE_GROUPS
                    || case.api_key == key::LIST_GROUPS
                    || case.api_key == key::DELETE_GROUPS
                    || case.api_key == key::CONSUMER_GROUP_DESCRIBE
                {
                    "admin"
                } else {
                    "app"
                }
            ),
            "{what}"
        );
        let has_events = !matches!(case.api_key, key::API_VERSIONS);
        assert_eq!(ex.response.is_some(), has_events, "{what}");
    }
}

fn heartbeat_exchange(corr: i32) -> (Vec<u8>, Vec<u8>) {
    let req = HeartbeatRequest::default()
        .with_group_id(gid())
        .with_generation_id(4)
        .with_member_id(s("m-1"));
    let resp = HeartbeatResponse::default();
    (
        request(key::HEARTBEAT, 4, corr, "app", &req),
        response(key::HEARTBEAT, 4, corr, &resp),
    )
}

/// A Produce v9 request with an opaque body of `len` bytes (never decoded).
fn produce(corr: i32, len: usize) -> Vec<u8> {
    let mut body = vec![0u8; len];
    for (i, b) in body.iter_mut().enumerate() {
        *b = (i * 7 + 3) as u8;
    }
    raw_request(0, 9, corr, "app", &body)
}

#[test]
fn reassembles_a_frame_split_over_many_packets() {
    let case = join_group(5);
    let mut sim = Sim::new();
    sim.open(1, true);
    let last = sim.send_chunked(1, ToServer, &case.request, 1);
    sim.send_chunked(1, ToClient, &case.response, 3);
    let ex = sim.only();
    assert_eq!(ex.request_frame, Some(last));
    assert_eq!(ex.group_id.as_deref(), Some("g"));
    assert!(matches!(
        ex.request,
        Some(EventKind::JoinGroupRequest { .. })
    ));
}

#[test]
fn splits_several_frames_sent_in_one_packet() {
    let mut sim = Sim::new();
    sim.open(1, true);
    let (mut reqs, mut resps) = (Vec::new(), Vec::new());
    for corr in 1..=5 {
        let (q, r) = heartbeat_exchange(corr);
        reqs.extend(q);
        resps.extend(r);
    }
    sim.send(1, ToServer, &reqs);
    sim.send(1, ToClient, &resps);
    let corrs: Vec<i32> = sim.out.iter().map(|e| e.correlation_id).collect();
    assert_eq!(corrs, vec![1, 2, 3, 4, 5]);
    assert_eq!(sim.diags.total(), 0);
}

/// A heartbeat's request and answer bytes.
type Exchanged = (Vec<u8>, Vec<u8>);

/// A connection whose first heartbeat (correlation id 1) was answered,
/// and the requests and answers of heartbeats 2 and 3, not yet sent.
fn after_one_heartbeat() -> (Sim, [Exchanged; 2]) {
    let mut sim = Sim::new();
    sim.open(1, true);
    let (q1, r1) = heartbeat_exchange(1);
    sim.send(1, ToServer, &q1);
    sim.send(1, ToClient, &r1);
    (sim, [heartbeat_exchange(2), heartbeat_exchange(3)])
}

/// Each exchange so far: its correlation id, and whether it was answered.
fn seen(sim: &Sim) -> Vec<(i32, bool)> {
    sim.out
        .iter()
        .map(|e| (e.correlation_id, e.response.is_some()))
        .collect()
}

#[test]
fn keeps_sync_across_a_gap_inside_a_frame() {
    let (mut sim, [(q2, _), (q3, r3)]) = after_one_heartbeat();
    // Lose the middle of request 2 (its header with it): the frame's size
    // is known, so the splitter skips to its end and stays in sync.
    sim.send(1, ToServer, &q2[..6]);
    sim.gap(1, ToServer, 10);
    let mut rest = q2[16..].to_vec();
    rest.extend(&q3);
    sim.send(1, ToServer, &rest);
    sim.send(1, ToClient, &r3);
    sim.finish();
    assert_eq!(sim.count(DiagnosticKind::Resynced), 0, "{:#?}", sim.diags);
    assert_eq!(sim.count(DiagnosticKind::UndecodableMessage), 1);
    assert_eq!(seen(&sim), [(1, true), (3, true)]);
}

#[test]
fn a_request_whose_answer_was_lost_is_given_up_when_a_later_one_is_answered() {
    let (mut sim, [(q2, _), (q3, r3)]) = after_one_heartbeat();
    let lost = sim.send(1, ToServer, &q2);
    sim.send(1, ToServer, &q3);
    assert_eq!(sim.dec.oldest_open().map(|(_, f)| f), Some(lost));
    // Answers come in the order asked: once 3's comes, 2's never will.
    sim.send(1, ToClient, &r3);
    assert_eq!(sim.dec.oldest_open(), None, "nothing waits any more");
    assert_eq!(sim.count(DiagnosticKind::UnansweredRequest), 1);
    assert_eq!(seen(&sim), [(1, true), (2, false), (3, true)]);
    sim.finish();
    assert_eq!(sim.count(DiagnosticKind::UnansweredRequest), 1, "once");
}

#[test]
fn resyncs_after_a_gap_across_frames_and_reports_the_skipped_bytes() {
    let mut sim = Sim::new();
    sim.open(1, true);
    let (q2, _) = heartbeat_exchange(2);
    let (q3, _) = heartbeat_exchange(3);
    let (q4, r4) = heartbeat_exchange(4);
    // The hole takes the end of request 2 and the start of request 3.
    sim.send(1, ToServer, &q2[..20]);
    sim.gap(1, ToServer, (q2.len() - 20 + 5) as u64);
    let mut rest = q3[5..].to_vec();
    rest.extend(&q4);
    sim.send(1, ToServer, &rest);
    sim.send(1, ToClient, &r4);
    sim.finish();
    assert_eq!(sim.count(DiagnosticKind::Resynced), 1, "{:#?}", sim.diags);
    let detail = &sim
        .diags
        .examples
        .iter()
        .find(|d| d.kind == DiagnosticKind::Resynced)
        .unwrap()
        .detail;
    assert!(
        detail.contains(&format!(
            "after a gap after skipping {} bytes",
            q3.len() - 5
        )),
        "{detail}"
    );
    // Request 2's header arrived before the hole: it is still reported,
    // given up as 4 (sent after it) is answered.
    assert_eq!(seen(&sim), [(2, false), (4, true)]);
}

#[test]
fn a_gap_inside_a_skipped_body_keeps_sync() {
    let mut sim = Sim::new();
    sim.open(1, true);
    let big = produce(1, 10_000);
    let (q2, r2) = heartbeat_exchange(2);
    sim.send(1, ToServer, &big[..1000]);
    sim.gap(1, ToServer, 5000);
    sim.send(1, ToServer, &big[6000..]);
    sim.send(1, ToServer, &q2);
    sim.send(1, ToClient, &raw_response(1, &[0; 20]));
    sim.send(1, ToClient, &r2);
    assert_eq!(sim.count(DiagnosticKind::Resynced), 0);
    let apis: Vec<&str> = sim.out.iter().map(|e| e.api).collect();
    assert_eq!(apis, vec!["Produce", "Heartbeat"]);
}

#[test]
fn picks_up_a_connection_captured_from_the_middle_of_a_frame() {
    let mut sim = Sim::new();
    sim.open(1, false);
    let case = sync_group(3);
    let (q, r) = heartbeat_exchange(8);
    let mut stream = case.request[9..].to_vec(); // the capture starts inside a frame
    stream.extend(&q);
    sim.send(1, ToServer, &stream);
    let mut answers = case.response[5..].to_vec();
    answers.extend(&r);
    sim.send(1, ToClient, &answers);
    assert_eq!(sim.count(DiagnosticKind::Resynced), 2, "{:#?}", sim.diags);
    let ex = sim.only();
    assert_eq!(
        (ex.api, ex.correlation_id, ex.error_code),
        ("Heartbeat", 8, Some(0))
    );
}

#[test]
fn reports_a_response_whose_request_was_not_captured_and_guesses_its_api() {
    let mut sim = Sim::new();
    sim.open(1, true);
    sim.send(1, ToClient, &join_group(7).response);
    assert_eq!(sim.count(DiagnosticKind::UnmatchedResponse), 1);
    assert!(
        sim.diags.examples[0]
            .detail
            .contains("looks like a JoinGroup response"),
        "{:?}",
        sim.diags.examples[0]
    );
    let ex = sim.only();
    assert_eq!(
        (ex.api, ex.request_frame, ex.response_frame),
        ("JoinGroup", None, Some(2))
    );
    assert_eq!(ex.ts, crate::time::Timestamp(2_000_000));
    assert!(matches!(
        ex.response,
        Some(EventKind::JoinGroupResponse { .. })
    ));
}

#[test]
fn an_unknown_api_key_is_a_diagnostic_and_the_stream_goes_on() {
    let mut sim = Sim::new();
    sim.open(1, true);
    let mut stream = raw_request(4000, 0, 1, "app", &[1, 2, 3]);
    let (q, r) = heartbeat_exchange(2);
    stream.extend(&q);
    sim.send(1, ToServer, &stream);
    sim.send(1, ToClient, &raw_response(1, &[0, 0]));
    sim.send(1, ToClient, &r);
    assert_eq!(sim.count(DiagnosticKind::UndecodableMessage), 1);
    let apis: Vec<(&str, i16)> = sim.out.iter().map(|e| (e.api, e.api_key)).collect();
    assert_eq!(apis, vec![("Unknown", 4000), ("Heartbeat", 12)]);
}

#[test]
fn an_unknown_version_is_a_diagnostic_not_a_crash() {
    let mut sim = Sim::new();
    sim.open(1, true);
    sim.send(
        1,
        ToServer,
        &raw_request(key::HEARTBEAT, 42, 1, "app", &[0; 12]),
    );
    sim.send(1, ToClient, &raw_response(1, &[0; 6]));
    assert_eq!(sim.count(DiagnosticKind::UndecodableMessage), 1);
    let ex = sim.only();
    assert_eq!(
        (ex.api, ex.api_version, ex.response_frame),
        ("Heartbeat", 42, Some(3))
    );
    assert_eq!(ex.request, None);
}

#[test]
fn a_truncated_body_is_reported_with_the_header_still_paired() {
    let full = join_group(5).request;
    // Keep the header and half the body, and fix the size to match.
    let mut cut = full[..full.len() / 2].to_vec();
    let size = (cut.len() - 4) as u32;
    cut[..4].copy_from_slice(&size.to_be_bytes());
    let mut sim = Sim::new();
    sim.open(1, true);
    sim.send(1, ToServer, &cut);
    sim.send(1, ToClient, &join_group(5).response);
    assert_eq!(sim.count(DiagnosticKind::UndecodableMessage), 1);
    let ex = sim.only();
    assert_eq!(
        (ex.api, ex.correlation_id, ex.generation_id),
        ("JoinGroup", 15, Some(3))
    );
    assert_eq!(ex.request, None);
}

#[test]
fn tls_on_a_kafka_port_gives_one_diagnostic_and_nothing_else() {
    let mut sim = Sim::new();
    sim.open(1, true);
    sim.send(1, ToServer, &[0x16, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00]);
    sim.send(1, ToClient, &[0x16, 0x03, 0x03, 0x00, 0x5a, 0x02]);
    sim.send(1, ToServer, &heartbeat_exchange(1).0);
    sim.finish();
    assert_eq!(sim.count(DiagnosticKind::Encrypted), 1);
    assert_eq!(
        sim.diags.examples[0].detail,
        "encrypted: use the broker logs"
    );
    assert!(sim.out.is_empty());
    assert_eq!(sim.diags.total(), 1);
}

#[test]
fn a_non_kafka_decoy_on_another_port_produces_nothing() {
    let mut sim = Sim::new();
    sim.open_between(1, "10.0.0.1:40000", "10.0.0.3:8080", true);
    sim.send(1, ToServer, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    sim.send(1, ToClient, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    let mut rng = Rng(99);
    let noise: Vec<u8> = (0..5000).map(|_| rng.next() as u8).collect();
    sim.open_between(2, "10.0.0.1:40001", "10.0.0.3:5432", false);
    sim.send(2, ToServer, &noise);
    sim.send(2, ToClient, &noise[100..]);
    sim.close(1, false);
    sim.finish();
    assert!(sim.out.is_empty());
    assert!(sim.closed.is_empty());
    assert_eq!(sim.diags.total(), 0, "{:#?}", sim.diags);
}

#[test]
fn flips_roles_when_requests_flow_towards_the_guessed_client() {
    let mut sim = Sim::new();
    // TCP guessed the broker (port 9092) as the client.
    sim.open_between(1, BROKER, CLIENT, false);
    let (q, r) = heartbeat_exchange(1);
    sim.send(1, ToClient, &q);
    sim.send(1, ToServer, &r);
    let ex = sim.only();
    assert_eq!(*ex.connection, *format!("{CLIENT} -> {BROKER}"));
    assert_eq!(ex.client.to_string(), CLIENT);
}

#[test]
fn detects_kafka_on_an_unconfigured_port_from_the_traffic() {
    let mut sim = Sim::new();
    sim.open_between(1, "10.0.0.5:36333", "10.0.0.1:51000", false);
    let (q, r) = heartbeat_exchange(1);
    // Requests flow towards the port TCP took for the client: flipped too.
    sim.send(1, ToClient, &q);
    assert!(sim.out.is_empty());
    sim.send(1, ToServer, &r);
    let ex = sim.only();
    assert_eq!(&*ex.connection, "10.0.0.1:51000 -> 10.0.0.5:36333");
    assert_eq!((ex.request_frame, ex.response_frame), (Some(2), Some(3)));
}

#[test]
fn does_not_look_at_other_ports_when_detection_is_off() {
    let config = super::KafkaConfig {
        ports: vec![19092],
        detect_ports: false,
        ..Default::default()
    };
    let mut sim = Sim::with(config);
    let (q, r) = heartbeat_exchange(1);
    sim.open_between(1, "10.0.0.1:50000", "10.0.0.2:9092", true);
    sim.send(1, ToServer, &q);
    sim.send(1, ToClient, &r);
    assert!(sim.out.is_empty());
    sim.open_between(2, "10.0.0.1:50001", "10.0.0.2:19092", true);
    sim.send(2, ToServer, &q);
    sim.send(2, ToClient, &r);
    assert_eq!(&*sim.only().connection, "10.0.0.1:50001 -> 10.0.0.2:19092");
}

#[test]
fn skips_produce_and_fetch_bodies_without_buffering_them() {
    let mut sim = Sim::new();
    sim.open(1, true);
    let big = produce(1, 2_000_000);
    let mut peak = 0;
    for chunk in big.chunks(1448) {
        sim.send(1, ToServer, chunk);
        peak = peak.max(sim.dec.buffered_bytes());
    }
    let fetch_like = raw_response(1, &vec![9u8; 3_000_000]);
    for chunk in fetch_like.chunks(1448) {
        sim.send(1, ToClient, chunk);
        peak = peak.max(sim.dec.buffered_bytes());
    }
    assert!(peak <= 64, "peak buffered {peak} bytes");
    let ex = sim.only();
    assert_eq!(
        (ex.api, ex.api_version, ex.latency_ms.is_some()),
        ("Produce", 9, true)
    );
}

#[test]
fn decodes_offset_commit_v0_and_v1_with_the_hand_written_decoder() {
    for version in 0..=1i16 {
        let mut body = Vec::new();
        body.extend([0, 1, b'g']);
        if version == 1 {
            body.extend(7i32.to_be_bytes());
            body.extend([0, 3, b'm', b'-', b'1']);
        }
        body.extend(1i32.to_be_bytes());
        body.extend([0, 1, b't']);
        body.extend(1i32.to_be_bytes());
        body.extend(0i32.to_be_bytes());
        body.extend(99i64.to_be_bytes());
        if version == 1 {
            body.extend((-1i64).to_be_bytes());
        }
        body.extend((-1i16).to_be_bytes());
        let mut sim = Sim::new();
        sim.open(1, true);
        sim.send(
            1,
            ToServer,
            &raw_request(key::OFFSET_COMMIT, version, 5, "old", &body),
        );
        // v0/v1 answers are laid out as v2.
        let mut resp = response(key::OFFSET_COMMIT, 2, 5, &offset_commit_response(22));
        resp[4..8].copy_from_slice(&5i32.to_be_bytes());
        sim.send(1, ToClient, &resp);
        assert_eq!(sim.diags.total(), 0, "v{version}: {:#?}", sim.diags);
        let ex = sim.only();
        assert_eq!(ex.group_id.as_deref(), Some("g"));
        assert_eq!(ex.member_id.as_deref(), (version == 1).then_some("m-1"));
        assert_eq!(ex.generation_id, (version == 1).then_some(7));
        assert_eq!(
            (ex.error_code, ex.error),
            (Some(22), Some("ILLEGAL_GENERATION"))
        );
        assert_eq!(
            ex.request,
            Some(EventKind::OffsetCommitRequest {
                exchange: 1,
                partitions: 1,
                offsets: Vec::new(),
            })
        );
    }
}

#[test]
fn decodes_offset_fetch_v0_as_v1() {
    let req = OffsetFetchRequest::default()
        .with_group_id(gid())
        .with_topics(Some(vec![]));
    let mut q = request(key::OFFSET_FETCH, 1, 3, "old", &req);
    q[6..8].copy_from_slice(&0i16.to_be_bytes()); // claim v0
    let mut sim = Sim::new();
    sim.open(1, true);
    sim.send(1, ToServer, &q);
    sim.send(
        1,
        ToClient,
        &response(key::OFFSET_FETCH, 1, 3, &OffsetFetchResponse::default()),
    );
    assert_eq!(sim.diags.total(), 0, "{:#?}", sim.diags);
    assert_eq!(
        (sim.only().api_version, sim.only().group_id.as_deref()),
        (0, Some("g"))
    );
}

#[test]
fn reads_a_subscription_of_a_newer_version_than_known() {
    let mut meta = bytes::BytesMut::new();
    meta.extend_from_slice(&9i16.to_be_bytes()); // a future version
    {
        use kafka_protocol::protocol::Encodable;
        ConsumerProtocolSubscription::default()
            .with_topics(vec![s("orders"), s("payments")])
            .with_generation_id(2)
            .with_rack_id(Some(s("r1")))
            .encode(&mut meta, 3)
            .unwrap();
    }
    meta.extend_from_slice(&[0, 0, 0, 1]); // a field we do not know
    let req = JoinGroupRequest::default()
        .with_group_id(gid())
        .with_protocol_type(s("consumer"))
        .with_protocols(vec![join_group_request::JoinGroupRequestProtocol::default(
        )
        .with_name(s("cooperative-sticky"))
        .with_metadata(meta.freeze())]);
    let mut sim = Sim::new();
    sim.open(1, true);
    sim.send(1, ToServer, &request(key::JOIN_GROUP, 5, 1, "app", &req));
    sim.finish();
    let Some(EventKind::JoinGroupRequest { protocols, .. }) = &sim.only().request else {
        panic!("no join")
    };
    assert_eq!(protocols[0].topics, vec!["orders", "payments"]);
    assert_eq!(sim.count(DiagnosticKind::UndecodableMessage), 0);
}

#[test]
fn trusts_fields_only_in_versions_that_have_them() {
    // A v4 JoinGroup cannot carry a static id or a reason: nothing on the
    // wire may invent them, whatever the struct defaults hold.
    let ex = {
        let mut sim = Sim::new();
        sim.open(1, true);
        sim.send(1, ToServer, &join_group(4).request);
        sim.finish();
        sim.out.remove(0)
    };
    assert_eq!(ex.group_instance_id, None);
    let Some(EventKind::JoinGroupRequest {
        reason,
        rebalance_timeout_ms,
        ..
    }) = ex.request
    else {
        panic!()
    };
    assert_eq!((reason, rebalance_timeout_ms), (None, Some(300_000)));
    let ex0 = {
        let mut sim = Sim::new();
        sim.open(1, true);
        sim.send(1, ToServer, &join_group(0).request);
        sim.finish();
        sim.out.remove(0)
    };
    let Some(EventKind::JoinGroupRequest {
        rebalance_timeout_ms,
        ..
    }) = ex0.request
    else {
        panic!()
    };
    assert_eq!(rebalance_timeout_ms, None);
}

#[test]
fn remembers_the_client_software_for_later_exchanges() {
    let mut sim = Sim::new();
    sim.open(1, true);
    let av = api_versions(3);
    sim.send(1, ToServer, &av.request);
    sim.send(1, ToClient, &av.response);
    let (q, r) = heartbeat_exchange(2);
    sim.send(1, ToServer, &q);
    sim.send(1, ToClient, &r);
    let software: Vec<Option<&str>> = sim
        .out
        .iter()
        .map(|e| e.client_software.as_deref())
        .collect();
    assert_eq!(software, vec![Some("kgtrace-test/1.0"); 2]);
}

#[test]
fn emits_unanswered_requests_at_the_end() {
    let mut sim = Sim::new();
    sim.open(1, true);
    sim.send(1, ToServer, &heartbeat_exchange(1).0);
    sim.send(1, ToServer, &produce(2, 100));
    assert!(sim.out.is_empty());
    sim.finish();
    assert_eq!(sim.out.len(), 2);
    assert!(sim
        .out
        .iter()
        .all(|e| e.response_frame.is_none() && e.latency_ms.is_none()));
    assert_eq!(sim.count(DiagnosticKind::UnansweredRequest), 2);
}

#[test]
fn reports_the_close_of_a_connection_that_carried_group_traffic() {
    let mut sim = Sim::new();
    sim.open(1, true);
    let (q, r) = heartbeat_exchange(1);
    sim.send(1, ToServer, &q);
    sim.send(1, ToClient, &r);
    sim.close(1, true);
    sim.open(2, true);
    sim.send(2, ToServer, &produce(1, 10));
    sim.close(2, false);
    assert_eq!(sim.closed.len(), 1);
    let c = &sim.closed[0];
    assert_eq!(
        (c.group_id.as_deref(), c.member_id.as_deref(), c.reset),
        (Some("g"), Some("m-1"), true)
    );
    assert_eq!(c.client_id.as_deref(), Some("app"));
}

#[test]
fn finds_the_group_of_a_batched_find_coordinator() {
    let case = find_coordinator(6);
    let mut sim = Sim::new();
    sim.open(1, true);
    sim.send(1, ToServer, &case.request);
    sim.send(1, ToClient, &case.response);
    let ex = sim.only();
    let Some(EventKind::FindCoordinatorResponse {
        coordinator,
        node_id,
        ..
    }) = &ex.response
    else {
        panic!()
    };
    assert_eq!((coordinator.as_str(), *node_id), ("broker-1:9092", 1));
    assert_eq!(ex.error, Some("COORDINATOR_NOT_AVAILABLE"));
}

/// A small deterministic PRNG (xorshift64) so failures replay.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn never_panics_on_random_or_mangled_streams() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let valid: Vec<u8> = all_cases().into_iter().flat_map(|c| c.request).collect();
    let answers: Vec<u8> = all_cases().into_iter().flat_map(|c| c.response).collect();
    let mut sim = Sim::new();
    for conn in 0..300u64 {
        sim.open(conn, conn % 2 == 0);
        let mut reqs = valid.clone();
        let mut resps = answers.clone();
        for _ in 0..(rng.next() % 20) {
            let i = (rng.next() as usize) % reqs.len();
            reqs[i] = rng.next() as u8;
            let j = (rng.next() as usize) % resps.len();
            resps[j] = rng.next() as u8;
        }
        if conn % 3 == 0 {
            reqs = (0..4000).map(|_| rng.next() as u8).collect();
        }
        let (mut a, mut b) = (0, 0);
        while a < reqs.len() || b < resps.len() {
            let n = 1 + (rng.next() as usize) % 700;
            if rng.next().is_multiple_of(2) && a < reqs.len() {
                let end = (a + n).min(reqs.len());
                sim.send(conn, ToServer, &reqs[a..end]);
                a = end;
            } else if b < resps.len() {
                let end = (b + n).min(resps.len());
                sim.send(conn, ToClient, &resps[b..end]);
                b = end;
            } else {
                a = reqs.len();
            }
            if rng.next().is_multiple_of(50) {
                sim.gap(
                    conn,
                    if rng.next().is_multiple_of(2) {
                        ToServer
                    } else {
                        ToClient
                    },
                    rng.next() % 100,
                );
            }
        }
        if conn % 5 == 0 {
            sim.close(conn, conn % 2 == 0);
        }
    }
    sim.finish();
    assert!(!sim.out.is_empty());
    assert_eq!(sim.dec.buffered_bytes(), 0);
}

#[test]
fn reports_responses_at_the_start_of_a_mid_stream_capture_as_unmatched() {
    // The capture begins between frames: two answers whose requests came
    // before it started, then a full exchange.
    let mut sim = Sim::new();
    sim.open(1, false);
    let (_, r1) = heartbeat_exchange(140);
    let (_, r2) = heartbeat_exchange(141);
    let (q3, r3) = heartbeat_exchange(142);
    sim.send(1, ToClient, &r1);
    sim.send(1, ToClient, &r2);
    sim.send(1, ToServer, &q3);
    sim.send(1, ToClient, &r3);
    assert_eq!(sim.count(DiagnosticKind::UnmatchedResponse), 2);
    assert_eq!(sim.count(DiagnosticKind::Resynced), 0);
    let corrs: Vec<(i32, bool)> = sim
        .out
        .iter()
        .map(|e| (e.correlation_id, e.request_frame.is_some()))
        .collect();
    assert_eq!(corrs, vec![(140, false), (141, false), (142, true)]);
}

#[test]
fn stops_guessing_after_many_answers_without_requests() {
    // A capture that lost the client's direction: every answer is unmatched.
    let mut sim = Sim::new();
    sim.open(1, true);
    for corr in 0..40i32 {
        let mut r = join_group(7).response;
        r[4..8].copy_from_slice(&corr.to_be_bytes());
        sim.send(1, ToClient, &r);
    }
    assert_eq!(sim.count(DiagnosticKind::UnmatchedResponse), 40);
    let guessed = sim.out.iter().filter(|e| e.api == "JoinGroup").count();
    assert_eq!(guessed, 32);
    assert_eq!(sim.out.len(), 40);
}

#[test]
fn answers_batched_find_coordinator_keys_one_group_at_a_time() {
    let coordinator = |key: &str, node: i32| {
        find_coordinator_response::Coordinator::default()
            .with_key(s(key))
            .with_node_id(BrokerId(node))
            .with_host(s("b"))
            .with_port(9092)
    };
    let resp = FindCoordinatorResponse::default()
        .with_coordinators(vec![coordinator("g1", 1), coordinator("g2", 2)]);
    for key_type in [0i8, 1] {
        let req = FindCoordinatorRequest::default()
            .with_key_type(key_type)
            .with_coordinator_keys(vec![s("g1"), s("g2")]);
        let mut sim = Sim::new();
        sim.open(1, true);
        sim.send(
            1,
            ToServer,
            &request(key::FIND_COORDINATOR, 4, 1, "app", &req),
        );
        sim.send(1, ToClient, &response(key::FIND_COORDINATOR, 4, 1, &resp));
        let ex = sim.only();
        let events = crate::normalize::events_from_exchange(
            &mut ex.clone(),
            &crate::event::Source::from("t"),
            &mut Default::default(),
        );
        let groups: Vec<Option<&str>> = events.iter().map(|e| e.group.as_deref()).collect();
        if key_type == 0 {
            assert_eq!(groups, vec![Some("g1"), Some("g1"), Some("g2")]);
        } else {
            // Transactional ids are not groups.
            assert_eq!(groups, vec![None, None]);
        }
    }
}

#[test]
fn never_panics_while_detecting_kafka_in_random_traffic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut valid = heartbeat_exchange(1).0;
    valid.extend(heartbeat_exchange(1).1);
    let mut sim = Sim::new();
    for conn in 0..500u64 {
        let port = 1024 + (rng.next() % 60_000) as u16;
        sim.open_between(
            conn,
            "10.1.0.1:40000",
            &format!("10.1.0.2:{port}"),
            rng.next().is_multiple_of(2),
        );
        for _ in 0..(1 + rng.next() % 6) {
            let dir = if rng.next().is_multiple_of(2) {
                ToServer
            } else {
                ToClient
            };
            let mut bytes: Vec<u8> = if rng.next().is_multiple_of(3) {
                valid.clone()
            } else {
                (0..rng.next() % 3000).map(|_| rng.next() as u8).collect()
            };
            if let Some(b) = bytes.get_mut((rng.next() % 40) as usize) {
                *b = rng.next() as u8;
            }
            sim.send(conn, dir, &bytes);
            if rng.next().is_multiple_of(7) {
                sim.gap(conn, dir, rng.next() % 50);
            }
        }
        if rng.next().is_multiple_of(2) {
            sim.close(conn, false);
        }
    }
    sim.finish();
    assert_eq!(sim.dec.buffered_bytes(), 0);
}

#[test]
fn does_not_report_the_close_of_an_admin_connection() {
    let mut sim = Sim::new();
    sim.open(1, true);
    let case = describe_groups(5);
    sim.send(1, ToServer, &case.request);
    sim.send(1, ToClient, &case.response);
    sim.close(1, false);
    assert!(sim.closed.is_empty());
}

#[test]
fn reads_an_api_versions_refusal_sent_in_the_v0_layout() {
    let refusal = ApiVersionsResponse::default().with_error_code(35);
    let mut sim = Sim::new();
    sim.open(1, true);
    sim.send(1, ToServer, &api_versions(4).request);
    sim.send(1, ToClient, &response(key::API_VERSIONS, 0, 1, &refusal));
    assert_eq!(sim.diags.total(), 0, "{:#?}", sim.diags);
    assert_eq!(sim.only().error, Some("UNSUPPORTED_VERSION"));
}

#[test]
fn does_not_wait_for_answers_to_produce_requests_with_acks_zero() {
    let mut sim = Sim::new();
    sim.open(1, true);
    // Produce v3: null transactional id, acks 0, timeout, then records.
    let mut body = vec![0xff, 0xff, 0, 0, 0, 0, 0x75, 0x30];
    body.extend([7u8; 5000]);
    sim.send_chunked(1, ToServer, &raw_request(0, 3, 1, "app", &body), 1000);
    let (q, r) = heartbeat_exchange(2);
    sim.send(1, ToServer, &q);
    sim.send(1, ToClient, &r);
    sim.finish();
    assert_eq!(
        sim.count(DiagnosticKind::UnansweredRequest),
        0,
        "{:#?}",
        sim.diags
    );
    let apis: Vec<(&str, bool)> = sim
        .out
        .iter()
        .map(|e| (e.api, e.response_frame.is_some()))
        .collect();
    assert_eq!(apis, vec![("Produce", false), ("Heartbeat", true)]);
}

#[test]
fn continues_exchange_ids_across_decoders() {
    let mut first = Sim::new();
    first.open(1, true);
    first.send(1, ToServer, &heartbeat_exchange(1).0);
    first.finish();
    let mut second = Sim::new();
    second
        .dec
        .continue_exchange_ids(first.dec.last_exchange_id());
    second.open(1, true);
    second.send(1, ToServer, &heartbeat_exchange(1).0);
    second.finish();
    let id = |sim: &Sim| match sim.out[0].request {
        Some(EventKind::HeartbeatRequest { exchange }) => exchange,
        _ => panic!(),
    };
    assert_eq!((id(&first), id(&second)), (1, 2));
}

/// A Fetch v12 exchange: positions 42 and 7 asked, high watermarks 100 and
/// 9 answered after 5000 bytes of records each.
fn fetch_v12_frames(corr: i32) -> (Vec<u8>, Vec<u8>) {
    use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
    use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
    let req = FetchRequest::default().with_topics(vec![FetchTopic::default()
        .with_topic(topic())
        .with_partitions(
            [(0, 42), (3, 7)]
                .iter()
                .map(|&(p, o)| {
                    FetchPartition::default()
                        .with_partition(p)
                        .with_fetch_offset(o)
                })
                .collect(),
        )]);
    let records = Some(Bytes::from(vec![0xab; 5000]));
    let resp = FetchResponse::default().with_responses(vec![FetchableTopicResponse::default()
        .with_topic(topic())
        .with_partitions(
            [(0, 100), (3, 9)]
                .iter()
                .map(|&(p, hw)| {
                    PartitionData::default()
                        .with_partition_index(p)
                        .with_high_watermark(hw)
                        .with_last_stable_offset(hw)
                        .with_records(records.clone())
                })
                .collect(),
        )]);
    (
        request(1, 12, corr, "consumer-1", &req),
        response(1, 12, corr, &resp),
    )
}

#[test]
fn reads_fetch_positions_and_watermarks_without_buffering_records() {
    use crate::event::DataKind;
    for chunk in [1, 13, 1460, 100_000] {
        let mut sim = Sim::new();
        sim.open(1, true);
        let (q, r) = fetch_v12_frames(4);
        sim.send_chunked(1, ToServer, &q, chunk);
        sim.send_chunked(1, ToClient, &r, chunk);
        let ex = sim.only();
        let Some(DataKind::FetchRequest { partitions, .. }) = &ex.request_data else {
            panic!("{ex:?}")
        };
        let got: Vec<(i32, i64)> = partitions.iter().map(|p| (p.partition, p.offset)).collect();
        assert_eq!(got, vec![(0, 42), (3, 7)], "chunk {chunk}");
        let Some(DataKind::FetchResponse { partitions, .. }) = &ex.response_data else {
            panic!("{ex:?}")
        };
        let got: Vec<(i32, i64)> = partitions
            .iter()
            .map(|p| (p.partition, p.high_watermark))
            .collect();
        assert_eq!(got, vec![(0, 100), (3, 9)], "chunk {chunk}");
        assert!(sim.dec.buffered_bytes() < 1024);
        assert!(ex.request.is_none() && ex.group_id.is_none());
    }
}

#[test]
fn a_gap_inside_a_fetch_response_drops_its_headers_but_keeps_the_pairing() {
    let mut sim = Sim::new();
    sim.open(1, true);
    let (q, r) = fetch_v12_frames(4);
    sim.send(1, ToServer, &q);
    sim.send(1, ToClient, &r[..3000]);
    sim.gap(1, ToClient, 1000);
    sim.send(1, ToClient, &r[4000..]);
    let ex = sim.only();
    assert!(ex.response_frame.is_some());
    assert!(ex.response_data.is_none());
}

#[test]
fn an_api_versions_answer_gives_the_api_keys_the_broker_offers() {
    let case = api_versions(3);
    let body = case.response[4..].to_vec();
    let d = super::decode_response::response(body, key::API_VERSIONS, 3, 1).unwrap();
    let offered = d.offered.expect("an accepted answer lists its keys");
    assert_eq!(offered.keys, vec![(11, 0, 9)]);
    assert!(offered.offers(11) && !offered.offers(key::CONSUMER_GROUP_HEARTBEAT));
    // A refusal (UNSUPPORTED_VERSION) says nothing of what is offered.
    let refusal = ApiVersionsResponse::default().with_error_code(35);
    let body = response(key::API_VERSIONS, 3, 1, &refusal)[4..].to_vec();
    let d = super::decode_response::response(body, key::API_VERSIONS, 3, 1).unwrap();
    assert_eq!(d.offered, None);
}

#[test]
fn requests_waiting_for_their_answer_are_told_apart_by_the_one_group_they_name() {
    let mut sim = Sim::new();
    sim.open(1, true);
    sim.open(2, true);
    // A JoinGroup parked for its rebalance timeout: its events name its
    // group, "g", alone.
    let join = sim.send(1, ToServer, &join_group(9).request);
    assert_eq!(
        sim.dec.open_by_group(),
        OpenByGroup {
            ungrouped: None,
            groups: [(Box::from("g"), sim.dec.oldest_open().unwrap())]
                .into_iter()
                .collect(),
        }
    );
    assert_eq!(sim.dec.oldest_open().map(|(_, f)| f), Some(join));
    // A DescribeGroups may name any group (its answer lists several).
    let describe = sim.send(2, ToServer, &describe_groups(5).request);
    let open = sim.dec.open_by_group();
    assert_eq!(open.ungrouped.map(|(_, f)| f), Some(describe));
    assert_eq!(open.groups.len(), 1);
    sim.send(1, ToClient, &join_group(9).response);
    let open = sim.dec.open_by_group();
    assert!(open.groups.is_empty(), "{open:?}");
    assert_eq!(open.ungrouped.map(|(_, f)| f), Some(describe));
}

#[test]
fn a_connection_on_a_kafka_port_makes_its_state_at_its_first_byte_and_decodes_as_one_made_at_its_syn(
) {
    // Three connections opened on the broker's port; one carries a
    // JoinGroup, one only closes, one is still open at the end.
    let mut sim = Sim::new();
    for conn in 1..=3 {
        sim.open(conn, true);
    }
    let quiet = |sim: &Sim| {
        sim.dec
            .conns
            .values()
            .filter(|c| matches!(c, super::Conn::Quiet(_)))
            .count()
    };
    assert_eq!(quiet(&sim), 3, "no state made at the SYN");
    assert_eq!(sim.dec.buffered_bytes(), 0);
    assert_eq!(sim.dec.oldest_open(), None);
    let (request, response) = join_group_v5_frames(7);
    sim.send(1, ToServer, &request);
    assert_eq!(quiet(&sim), 2, "made at its first byte");
    assert!(sim.dec.oldest_open().is_some(), "the request waits");
    sim.send(1, ToClient, &response);
    sim.close(2, false);
    sim.finish();
    let x = sim.only();
    assert_eq!((x.api, x.correlation_id), ("JoinGroup", 7));
    assert!(x.response_frame.is_some() && x.request_frame.is_some());
    assert_eq!(x.connection.as_ref(), "10.0.0.1:50000 -> 10.0.0.2:9092");
    assert!(sim.diags.examples.is_empty(), "{:#?}", sim.diags);
    assert!(sim.dec.conns.is_empty());
}
