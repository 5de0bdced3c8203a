//! A refused KIP-848 attempt (issue 11, point 8), from a scripted capture.
//!
//! Takes: a capture written here in which a client sends
//! ConsumerGroupHeartbeat (member epoch 0: a join), Apache Kafka answers
//! UNSUPPORTED_VERSION (KafkaApis `handleConsumerGroupHeartbeat` when its
//! coordinator does not run the consumer protocol), and the client then
//! joins with the classic JoinGroup. Gives: the group read as classic, with
//! the refusal said in words in its notes and in the rebalance after it.

use kafka_protocol::messages::{
    api_versions_response, ApiVersionsRequest, ApiVersionsResponse, ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse, GroupId, TopicName,
};

use crate::capture::synth::{Link, PcapOptions, PcapWriter, Side, TcpConversation};
use crate::kafka::testkit::{join_group_v5_frames, request, response, s};
use crate::options::Options;
use crate::render::{Format, View};

const CONSUMER_GROUP_HEARTBEAT: i16 = 68;
const API_VERSIONS: i16 = 18;

/// The capture: the refused heartbeat, then (`then_join`) a classic join
/// two seconds later.
fn capture(then_join: bool) -> Vec<u8> {
    let ask = ConsumerGroupHeartbeatRequest::default()
        .with_group_id(GroupId(s("g")))
        .with_member_id(s("Zq3aVJ7lQmWk9dHc1xR0bw"))
        .with_member_epoch(0)
        .with_rebalance_timeout_ms(300_000)
        .with_subscribed_topic_names(Some(vec![TopicName(s("t"))]))
        .with_topic_partitions(Some(vec![]));
    let refusal = ConsumerGroupHeartbeatResponse::default()
        .with_error_code(35)
        .with_error_message(Some(s(
            "The new group coordinator is not enabled. Please enable it to use the consumer group protocol.",
        )));
    let mut conv = TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092");
    conv.handshake()
        .client_sends(&request(CONSUMER_GROUP_HEARTBEAT, 0, 1, "app", &ask))
        .server_sends(&response(CONSUMER_GROUP_HEARTBEAT, 0, 1, &refusal));
    if then_join {
        let (join, answer) = join_group_v5_frames(2);
        conv.wait_nanos(2_000_000_000)
            .client_sends(&join)
            .server_sends(&answer);
    }
    conv.fin(Side::Client).fin(Side::Server);
    let mut pcap = PcapWriter::new(Vec::new(), Link::Ethernet, PcapOptions::default()).unwrap();
    conv.write_to(&mut pcap).unwrap();
    pcap.into_inner()
}

fn analyse(bytes: &[u8]) -> crate::report::Report {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("refused.pcap");
    std::fs::write(&path, bytes).unwrap();
    let opts = Options::analyse(vec![path], View::Report, Format::Json);
    crate::analyse(&opts).expect("the capture is read").0
}

#[test]
fn a_refused_consumer_group_heartbeat_then_a_join_is_a_classic_group_that_says_so() {
    let report = analyse(&capture(true));
    let g = report
        .groups
        .iter()
        .find(|g| g.group == "g")
        .expect("group g");
    assert_eq!(g.protocol, "classic");
    let said = g.notes.join("\n");
    assert!(
        said.contains("asked for the consumer protocol")
            && said.contains("the broker does not offer it (UNSUPPORTED_VERSION)")
            && said.contains("it fell back to classic (JoinGroup 2.0 s later)"),
        "{said}"
    );
    let r = report
        .rebalances
        .iter()
        .find(|r| r.group == "g")
        .expect("the classic join is a rebalance");
    assert!(
        r.notes.iter().any(|n| n.contains("fell back to classic")),
        "{:?}",
        r.notes
    );
}

#[test]
fn a_refused_consumer_group_heartbeat_alone_says_the_consumer_stopped() {
    let report = analyse(&capture(false));
    let g = report
        .groups
        .iter()
        .find(|g| g.group == "g")
        .expect("group g");
    let said = g.notes.join("\n");
    assert!(
        said.contains("does not offer it") && said.contains("no classic JoinGroup followed"),
        "{said}"
    );
}

/// The ApiVersions exchange that opens a connection: the broker lists
/// JoinGroup, SyncGroup, Heartbeat and ApiVersions, and `with_consumer`
/// adds ConsumerGroupHeartbeat (key 68).
fn api_versions(corr: i32, with_consumer: bool) -> (Vec<u8>, Vec<u8>) {
    let ask = ApiVersionsRequest::default()
        .with_client_software_name(s("apache-kafka-java"))
        .with_client_software_version(s("4.4.0"));
    let mut keys: Vec<(i16, i16, i16)> = vec![(11, 0, 9), (12, 0, 4), (14, 0, 5), (18, 0, 4)];
    if with_consumer {
        keys.push((CONSUMER_GROUP_HEARTBEAT, 0, 1));
    }
    let answer = ApiVersionsResponse::default().with_api_keys(
        keys.into_iter()
            .map(|(k, min, max)| {
                api_versions_response::ApiVersion::default()
                    .with_api_key(k)
                    .with_min_version(min)
                    .with_max_version(max)
            })
            .collect(),
    );
    (
        request(API_VERSIONS, 3, corr, "app", &ask),
        response(API_VERSIONS, 3, corr, &answer),
    )
}

/// A client that sends ConsumerGroupHeartbeat to a broker whose ApiVersions
/// answer (`with_consumer` false) does not list it: the broker, which does
/// not know the API, closes the connection without an answer (Kafka's
/// SocketServer drops a connection whose request it cannot parse); the
/// client then joins with JoinGroup on a new connection.
fn unoffered_capture(with_consumer: bool) -> Vec<u8> {
    let ask = ConsumerGroupHeartbeatRequest::default()
        .with_group_id(GroupId(s("g")))
        .with_member_id(s("Zq3aVJ7lQmWk9dHc1xR0bw"))
        .with_member_epoch(0)
        .with_rebalance_timeout_ms(300_000)
        .with_subscribed_topic_names(Some(vec![TopicName(s("t"))]))
        .with_topic_partitions(Some(vec![]));
    let (versions, offer) = api_versions(1, with_consumer);
    let mut first = TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092");
    first
        .handshake()
        .client_sends(&versions)
        .server_sends(&offer)
        .client_sends(&request(CONSUMER_GROUP_HEARTBEAT, 0, 2, "app", &ask))
        .fin(Side::Server)
        .fin(Side::Client);
    let (versions, offer) = api_versions(1, with_consumer);
    let (join, answer) = join_group_v5_frames(2);
    let mut second = TcpConversation::new("10.0.0.1:50001", "10.0.0.2:9092");
    second
        .wait_nanos(3_000_000_000)
        .handshake()
        .client_sends(&versions)
        .server_sends(&offer)
        .client_sends(&join)
        .server_sends(&answer)
        .fin(Side::Client)
        .fin(Side::Server);
    let mut pcap = PcapWriter::new(Vec::new(), Link::Ethernet, PcapOptions::default()).unwrap();
    first.write_to(&mut pcap).unwrap();
    second.write_to(&mut pcap).unwrap();
    pcap.into_inner()
}

#[test]
fn a_consumer_group_heartbeat_never_offered_in_api_versions_then_a_join_says_so() {
    let report = analyse(&unoffered_capture(false));
    let g = report
        .groups
        .iter()
        .find(|g| g.group == "g")
        .expect("group g");
    assert_eq!(g.protocol, "classic");
    let said = g.notes.join("\n");
    assert!(
        said.contains("asked for the consumer protocol")
            && said.contains("its ApiVersions answer lists no ConsumerGroupHeartbeat, API key 68")
            && said.contains("it fell back to classic (JoinGroup"),
        "{said}"
    );
}

#[test]
fn a_consumer_group_heartbeat_the_broker_offers_is_no_refusal() {
    let report = analyse(&unoffered_capture(true));
    let said: String = report
        .groups
        .iter()
        .flat_map(|g| g.notes.iter().cloned())
        .collect();
    assert!(!said.contains("does not offer it"), "{said}");
}
