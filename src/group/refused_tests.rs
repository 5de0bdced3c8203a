//! A refused KIP-848 attempt (issue 11, point 8), from a scripted capture.
//!
//! Takes: a capture written here in which a client sends
//! ConsumerGroupHeartbeat (member epoch 0: a join), Apache Kafka answers
//! UNSUPPORTED_VERSION (KafkaApis `handleConsumerGroupHeartbeat` when its
//! coordinator does not run the consumer protocol), and the client then
//! joins with the classic JoinGroup; and a Java consumer's log of the same
//! story, written here from the lines kafka-clients logs (3.7-4.0 and 4.4).
//! Gives: the group read as classic, with the refusal said in words in its
//! notes and in the rebalance after it.

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

/// A Java consumer's own log of a refused KIP-848 attempt, in the lab's
/// log4j2 layout (`[%d{ISO8601}] %p %m (%c)`): the heartbeat failure
/// `failure` (the text after "ConsumerGroupHeartbeatRequest failed due
/// to"), then, 8 s later, the consumer restarted with
/// group.protocol=classic joining generation 1.
fn java_log(failure: &str) -> String {
    let c = "[Consumer clientId=g1-c1, groupId=g1]";
    let coordinator = "(org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)";
    let member = "g1-c1-5a0c2b54-0b3e-4a7f-9d4e-0d52f6b0c2a1";
    [
        format!("[2026-12-03T08:20:34,120] INFO {c} Subscribed to topic(s): lab (org.apache.kafka.clients.consumer.internals.AsyncKafkaConsumer)"),
        format!("[2026-12-03T08:20:34,512] ERROR {c} ConsumerGroupHeartbeatRequest failed due to {failure} (org.apache.kafka.clients.consumer.internals.ConsumerHeartbeatRequestManager)"),
        format!("[2026-12-03T08:20:42,401] INFO {c} (Re-)joining group {coordinator}"),
        format!("[2026-12-03T08:20:42,433] INFO {c} Request joining group due to: need to re-join with the given member-id: {member} {coordinator}"),
        format!("[2026-12-03T08:20:42,434] INFO {c} (Re-)joining group {coordinator}"),
        format!("[2026-12-03T08:20:45,440] INFO {c} Successfully joined group with generation Generation{{generationId=1, memberId='{member}', protocol='range'}} {coordinator}"),
        format!("[2026-12-03T08:20:45,452] INFO {c} Successfully synced group in generation Generation{{generationId=1, memberId='{member}', protocol='range'}} {coordinator}"),
    ]
    .join("\n")
        + "\n"
}

fn notes_of_log(text: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g1-c1.log");
    std::fs::write(&path, text).unwrap();
    let opts = Options::analyse(vec![path], View::Report, Format::Json);
    let report = crate::analyse(&opts).expect("the log is read").0;
    let g = report
        .groups
        .iter()
        .find(|g| g.group == "g1")
        .expect("group g1");
    (g.protocol.clone(), g.notes.join("\n"))
}

#[test]
fn a_java_consumer_log_of_the_refused_consumer_protocol_is_said_in_words() {
    // kafka-clients 4.4 (ConsumerHeartbeatRequestManager), broker answered
    // UNSUPPORTED_VERSION; the same client when the broker's ApiVersions
    // lacks the API; 3.7-4.0 (AbstractHeartbeatRequestManager) for both.
    for (failure, how) in [
        (
            "unsupported version response on broker side: The cluster does not support the new CONSUMER group protocol. Set group.protocol=classic on the consumer configs to revert to the CLASSIC protocol until the cluster is upgraded.",
            "the client logged \"The cluster does not support the new CONSUMER group protocol\"",
        ),
        (
            "unsupported version while sending request: The node does not support CONSUMER_GROUP_HEARTBEAT",
            "the client logged \"The node does not support CONSUMER_GROUP_HEARTBEAT\"",
        ),
        (
            "UNSUPPORTED_VERSION: The new group coordinator is not enabled. Please enable it to use the consumer group protocol.",
            "the client logged its heartbeat answered UNSUPPORTED_VERSION",
        ),
        (
            "fatal error: The node does not support CONSUMER_GROUP_HEARTBEAT",
            "the client logged \"The node does not support CONSUMER_GROUP_HEARTBEAT\"",
        ),
    ] {
        let (protocol, said) = notes_of_log(&java_log(failure));
        assert_eq!(protocol, "classic", "{failure}");
        assert!(
            said.contains("g1-c1 asked for the consumer protocol")
                && said.contains(how)
                && said.contains("it fell back to classic (JoinGroup 7.9 s later)"),
            "{failure}:\n{said}"
        );
    }
}

#[test]
fn a_java_consumer_log_of_another_heartbeat_failure_is_no_refusal() {
    let (_, said) = notes_of_log(&java_log(
        "FENCED_MEMBER_EPOCH: The member epoch is fenced by the group coordinator.",
    ));
    assert!(!said.contains("consumer protocol"), "{said}");
}
