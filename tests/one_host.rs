//! One host's view (issue 11, point 6): only one member's connections were
//! captured, and another member left. The captured member's JoinGroup
//! answers still show who went (a member list without it, or a new leader
//! where it was the leader): kgtrace names that member, never a bare
//! `unknown`.
//!
//! Takes Apache Kafka lab captures in which g1-c2 (generation 1's leader)
//! is frozen or killed, keeps only one other member's TCP connections
//! (found by its client id in `kgtrace decode`, cut out by this file's own
//! small pcap filter) and checks the 1 → 2 rebalance against the truth.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util;

/// The client ports a client id used, from `kgtrace decode --format json`.
fn client_ports(capture: &str, client_id: &str) -> BTreeSet<u16> {
    let report = util::json(&util::run(&["decode", "--format", "json", capture]).stdout);
    util::rows(&report, "exchanges")
        .iter()
        .filter(|r| r["client_id"] == client_id)
        .filter_map(|r| {
            let from = r["connection"].as_str()?.split(" -> ").next()?;
            from.rsplit_once(':')?.1.parse().ok()
        })
        .collect()
}

/// `pcap` (classic libpcap, Ethernet, IPv4) with only the TCP packets to
/// or from one of `ports`.
fn keep_ports(pcap: &[u8], ports: &BTreeSet<u16>) -> Vec<u8> {
    assert_eq!(
        &pcap[..4],
        &[0xd4, 0xc3, 0xb2, 0xa1],
        "a little-endian pcap"
    );
    let mut out = pcap[..24].to_vec();
    let mut at = 24;
    while at + 16 <= pcap.len() {
        let caplen = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        let record = &pcap[at..at + 16 + caplen];
        let frame = &record[16..];
        let keep =
            frame.len() >= 14 + 20 + 4 && frame[12..14] == [0x08, 0x00] && frame[23] == 6 && {
                let tcp = 14 + usize::from(frame[14] & 0x0f) * 4;
                let port = |i: usize| u16::from_be_bytes([frame[tcp + i], frame[tcp + i + 1]]);
                ports.contains(&port(0)) || ports.contains(&port(2))
            };
        if keep {
            out.extend_from_slice(record);
        }
        at += 16 + caplen;
    }
    out
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The rebalance from generation `from` of group g1 in `capture`.
fn rebalance_from(capture: &Path, from: i64) -> Value {
    let run = util::run(&["rebalances", "--format", "json", capture.to_str().unwrap()]);
    let report = util::json(&run.stdout);
    util::rows(&report, "rebalances")
        .iter()
        .find(|r| r["group"] == "g1" && r["previous_generation"] == from)
        .cloned()
        .unwrap_or_else(|| panic!("no g1 rebalance from {from} in {}", run.stdout))
}

/// The truth's member that left g1 between generations 1 and 2.
fn truth_leaver(fixture: &str) -> (String, String) {
    let truth = util::json_file(&root().join(format!("fixtures/kafka/{fixture}.truth.json")));
    let r = truth["rebalances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["group"] == "g1" && r["from_generation"] == 1)
        .expect("the truth's 1 -> 2 rebalance")
        .clone();
    (
        r["trigger"].as_str().unwrap().to_string(),
        r["member_id"].as_str().unwrap().to_string(),
    )
}

#[test]
fn a_member_gone_from_one_hosts_join_answers_is_named_as_the_one_that_left() {
    let dir = std::env::temp_dir().join(format!("kgtrace-one-host-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut wrong = Vec::new();
    // g1-c3 leads generation 2 (its answer lists the members without
    // g1-c2); g1-c1 follows (its answers name a new leader).
    for fixture in ["ak4_java_session_timeout", "ak4_ck_killed"] {
        let (trigger, leaver) = truth_leaver(fixture);
        assert_eq!(trigger, "session_timeout", "{fixture}");
        let whole = format!("fixtures/kafka/{fixture}.pcap");
        let bytes = std::fs::read(root().join(&whole)).unwrap();
        for keep in ["g1-c1", "g1-c3"] {
            let ports = client_ports(&whole, keep);
            assert!(!ports.is_empty(), "{fixture}: {keep}'s connections");
            let view = dir.join(format!("{fixture}.{keep}.pcap"));
            std::fs::write(&view, keep_ports(&bytes, &ports)).unwrap();
            let r = rebalance_from(&view, 1);
            let t = &r["trigger"];
            let ok = t["kind"] == "session_timeout"
                && t["member_id"] == leaver.as_str()
                && t["confidence"] == "low"
                && t["detail"].as_str().unwrap_or("").contains("vanished");
            if !ok {
                wrong.push(format!("{fixture} seen from {keep}: {t}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
