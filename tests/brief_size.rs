//! `report --brief` under 30,000 characters on the biggest inputs (issue
//! 13): every input of the Apache Kafka lab (fixtures/kafka) at once, and a
//! generated capture of 500 rebalances, each saying what it left out and
//! how to get it.
//!
//! The capture is written here with [`kgtrace::capture::synth`]'s TCP
//! conversations and the throughput benchmark's Kafka frames
//! (benches/throughput/frames.rs, kafka-protocol's encoders): two
//! consumers of one group rejoin 500 times, each round a JoinGroup from
//! both, the answers with the next generation, and SyncGroup.

use std::path::PathBuf;

use kgtrace::capture::synth::{Link, PcapOptions, PcapWriter, TcpConversation};
use kgtrace::time::Timestamp;

use crate::util::run;

/// The benchmark's frames module, whose own `mod records;` resolves beside it.
#[allow(dead_code, unused_imports)]
#[path = "../benches/throughput"]
pub(crate) mod bench {
    pub mod frames;
}

use bench::frames::{self, Who, OLD_CLIENT};

/// The brief report's budget (src/render/brief.rs).
const BUDGET: usize = 30_000;

/// Every file of fixtures/kafka kgtrace reads (captures and logs).
fn apache_kafka_lab_inputs() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/kafka");
    let mut inputs: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures/kafka")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".pcap") || name.ends_with(".pcapng") || name.ends_with(".log")
        })
        .map(|p| p.display().to_string())
        .collect();
    inputs.sort();
    inputs
}

/// A capture in which `consumer-a` and `consumer-b` of group `storm`
/// rebalance `rounds` times, 10 s apart.
fn storm_capture(rounds: i32) -> Vec<u8> {
    let start = Timestamp::from_secs_nanos(1_714_564_800, 0);
    let members = [
        (
            "consumer-a",
            "consumer-a-0f4c2a9e-77b1-4d0e-a3c5-1b2d3e4f5a6b",
        ),
        (
            "consumer-b",
            "consumer-b-5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b",
        ),
    ];
    let mut convs: Vec<TcpConversation> = (0..2)
        .map(|i| {
            TcpConversation::new(&format!("10.0.1.{}:5000{i}", 20 + i), "10.0.0.9:9092")
                .starting_at(start)
        })
        .collect();
    let mut pcap = PcapWriter::new(Vec::new(), Link::Ethernet, PcapOptions::default()).unwrap();
    for c in &mut convs {
        c.handshake();
    }
    for c in &mut convs {
        c.drain_to(&mut pcap).unwrap();
    }
    let who = |i: usize| Who {
        client: members[i].0,
        group: "storm",
        member_id: members[i].1,
        versions: &OLD_CLIENT,
    };
    let metadata = frames::subscription("orders", &[]);
    let joined: Vec<(String, bytes::Bytes)> = members
        .iter()
        .map(|(_, id)| (id.to_string(), metadata.clone()))
        .collect();
    let mut corr = 0;
    for round in 1..=rounds {
        let t = start.offset_by(i64::from(round) * 10_000_000_000);
        let at = |ms: i64| t.offset_by(ms * 1_000_000);
        corr += 2;
        for (i, c) in convs.iter_mut().enumerate() {
            c.set_time(at(i as i64 * 100));
            c.client_sends(&frames::join_request(&who(i), corr, metadata.clone()));
            c.drain_to(&mut pcap).unwrap();
        }
        for (i, c) in convs.iter_mut().enumerate() {
            let listed: &[(String, bytes::Bytes)] = if i == 0 { &joined } else { &[] };
            c.set_time(at(300 + i as i64));
            c.server_sends(&frames::join_response(
                &who(i),
                corr,
                0,
                round,
                members[0].1,
                listed,
            ));
            c.drain_to(&mut pcap).unwrap();
        }
        for (i, c) in convs.iter_mut().enumerate() {
            let assignments: Vec<(String, bytes::Bytes)> = if i == 0 {
                (0..2)
                    .map(|m| {
                        (
                            members[m].1.to_string(),
                            frames::assignment("orders", &[m as i32]),
                        )
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let (req, resp) = frames::sync_group(
                &who(i),
                corr + 1,
                round,
                &assignments,
                frames::assignment("orders", &[i as i32]),
            );
            c.set_time(at(400 + i as i64 * 10));
            c.client_sends(&req).server_sends(&resp);
            c.drain_to(&mut pcap).unwrap();
        }
    }
    pcap.into_inner()
}

/// Asserts the brief report fits and says what it left out and how to get it.
fn assert_fits(what: &str, text: &str) {
    let chars = text.chars().count();
    eprintln!("{what}: {chars} characters");
    assert!(chars < BUDGET, "{what}: {chars} characters");
    assert!(
        text.contains("Left out of this brief report"),
        "{what}: says what it left out\n{text}"
    );
    assert!(
        text.contains("without") && text.contains("--brief") && text.contains("has everything"),
        "{what}: says how to get it\n{text}"
    );
    assert!(!text.contains("Evidence"), "{what}: no evidence lists");
}

#[test]
fn brief_report_of_every_apache_kafka_lab_input_at_once_fits_a_ticket_comment() {
    let inputs = apache_kafka_lab_inputs();
    assert!(inputs.len() > 20, "{inputs:?}");
    for format in ["markdown", "table"] {
        let mut args = vec!["report", "-q", "--brief", "--format", format];
        args.extend(inputs.iter().map(String::as_str));
        let out = run(&args).expect_code(0);
        assert_fits(&format!("fixtures/kafka {format}"), &out.stdout);
    }
    let mut args = vec!["report", "-q", "--format", "markdown"];
    args.extend(inputs.iter().map(String::as_str));
    let full = run(&args).expect_code(0);
    assert!(
        full.stdout.chars().count() > BUDGET,
        "the full report of every input is larger than the brief one's budget, so the brief one really cut"
    );
}

#[test]
fn brief_report_of_a_capture_with_500_rebalances_fits_a_ticket_comment() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("storm.pcap");
    std::fs::write(&capture, storm_capture(500)).unwrap();
    let capture = capture.display().to_string();
    let json = run(&["rebalances", "-q", "--format", "json", &capture]).expect_code(0);
    let report = crate::util::json(&json.stdout);
    let found = crate::util::rows(&report, "rebalances").len();
    assert!(
        found >= 499,
        "the generated capture holds ~500 rebalances: {found}"
    );
    for format in ["markdown", "table"] {
        let out = run(&["report", "-q", "--brief", "--format", format, &capture]).expect_code(0);
        assert_fits(&format!("500 rebalances {format}"), &out.stdout);
        assert!(
            out.stdout.contains("rebalance rows"),
            "{format}: counts the rebalance rows it left out\n{}",
            out.stdout
        );
    }
}
