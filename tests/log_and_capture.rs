//! A broker log and a capture of the same rebalances become one history.
//!
//! The capture is a real lab fixture. The broker log is written here, in
//! Kafka 3.x's GroupCoordinator wording, from the rebalances kgtrace finds in
//! that capture, as a broker in Europe/Berlin whose clock runs 1.5 s behind
//! the capturing host would log them. Reading both must give one record per
//! rebalance with both kinds of evidence, and the clock offset.

use std::io::Write;
use std::path::PathBuf;

use kgtrace::options::Options;
use kgtrace::render::{Format, View};
use kgtrace::report::Rebalance;
use kgtrace::time::LogZone;

const SKEW_NS: i64 = 1_500_000_000;
/// Berlin is UTC+1 in December, when the lab fixtures were made.
const BERLIN_WINTER_NS: i64 = 3_600_000_000_000;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/lab")
        .join(name)
}

fn rebalances(inputs: Vec<PathBuf>, zone: &str) -> (Vec<Rebalance>, kgtrace::report::Report) {
    let mut opts = Options::analyse(inputs, View::Rebalances, Format::Json);
    opts.read.log_zone = LogZone::parse(zone).unwrap();
    opts.read.log_zone_name = zone.to_string();
    let (report, _, _) = kgtrace::analyse(&opts).unwrap();
    (report.rebalance_records().cloned().collect(), report)
}

/// Local Berlin wall-clock text of a capture instant, as the skewed broker writes it.
fn broker_time(ts: kgtrace::Timestamp) -> String {
    let local = ts.0 - SKEW_NS + BERLIN_WINTER_NS;
    let t = chrono::DateTime::from_timestamp(
        local.div_euclid(1_000_000_000),
        local.rem_euclid(1_000_000_000) as u32,
    )
    .unwrap();
    t.format("%Y-%m-%d %H:%M:%S,%3f").to_string()
}

fn line(ts: kgtrace::Timestamp, message: &str) -> String {
    format!(
        "[{}] INFO [GroupCoordinator 1]: {message} (kafka.coordinator.group.GroupCoordinator)\n",
        broker_time(ts)
    )
}

/// The lines a Kafka 3.x broker logs for one rebalance.
fn log_lines(r: &Rebalance) -> String {
    let (Some(old), Some(new)) = (r.previous_generation, r.generation) else {
        return String::new();
    };
    let member = r
        .trigger
        .member_id
        .clone()
        .or_else(|| r.joins.last().map(|j| j.member_id.clone()))
        .unwrap_or_default();
    let reason = match r.trigger.kind.as_str() {
        "member_left" => format!("Removing member {member} on LeaveGroup; client reason: the consumer is being closed"),
        _ => format!("Adding new member {member} with group instance id None; client reason: need to re-join with the given member-id: {member}"),
    };
    let n = r.members_after.len();
    let mut out = line(r.started_at, &format!("Preparing to rebalance group {} in state PreparingRebalance with old generation {old} (__consumer_offsets-7) (reason: {reason})", r.group));
    if let Some(t) = r.join_completed_at {
        out += &line(
            t,
            &format!(
                "Stabilized group {} generation {new} (__consumer_offsets-7) with {n} members",
                r.group
            ),
        );
    }
    if let Some(t) = r.completed_at {
        let leader = r
            .members_after
            .first()
            .map(|m| m.member_id.clone())
            .unwrap_or_default();
        out += &line(t, &format!("Assignment received from leader {leader} for group {} for generation {new}. The group has {n} members, 0 of which are static.", r.group));
    }
    out
}

#[test]
fn a_broker_log_and_a_capture_of_the_same_rebalances_give_one_record_each_with_both_kinds_of_evidence(
) {
    let pcap = fixture("ck_midstream.pcap");
    let (wire_only, _) = rebalances(vec![pcap.clone()], "UTC");
    let described: Vec<&Rebalance> = wire_only
        .iter()
        .filter(|r| r.group == "g1" && r.previous_generation.is_some())
        .collect();
    assert!(
        described.len() >= 2,
        "the fixture has joins and a leave after the group formed: {wire_only:#?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let mut f = std::fs::File::create(&log).unwrap();
    for r in &described {
        f.write_all(log_lines(r).as_bytes()).unwrap();
    }
    drop(f);

    let (both, report) = rebalances(vec![pcap, log.clone()], "Europe/Berlin");
    let offset = report
        .inputs
        .iter()
        .find(|i| i.kind == "log")
        .and_then(|i| i.clock_offset_ms)
        .expect("offset estimated");
    assert!((offset - 1500.0).abs() < 2.0, "clock offset {offset} ms");
    assert_eq!(report.log_time_zone, "Europe/Berlin");
    let g1: Vec<&Rebalance> = both.iter().filter(|r| r.group == "g1").collect();
    let g1_wire: Vec<&Rebalance> = wire_only.iter().filter(|r| r.group == "g1").collect();
    assert_eq!(
        g1.len(),
        g1_wire.len(),
        "the log adds no rebalance of its own: {g1:#?}"
    );
    for r in g1.iter().filter(|r| r.previous_generation.is_some()) {
        assert_eq!(
            r.seen_in,
            vec!["capture", "log"],
            "{:?}→{:?}",
            r.previous_generation,
            r.generation
        );
        assert!(
            r.evidence.iter().any(|e| e.line.is_some())
                && r.evidence.iter().any(|e| e.frame.is_some())
        );
    }
    let leave = g1
        .iter()
        .find(|r| r.trigger.kind == "member_left")
        .expect("the clean leave");
    assert_eq!(leave.trigger.confidence, "high");
    assert_eq!(leave.trigger.client_id.as_deref(), Some("g1-c1"));
}

#[test]
fn a_log_read_in_the_wrong_zone_is_still_lined_up_by_its_offset() {
    let pcap = fixture("ck_midstream.pcap");
    let (wire_only, _) = rebalances(vec![pcap.clone()], "UTC");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let text: String = wire_only
        .iter()
        .filter(|r| r.group == "g1")
        .map(log_lines)
        .collect();
    std::fs::write(&log, text).unwrap();
    // Read as UTC, the Berlin log is 59 min 58.5 s ahead: matched rebalances
    // still line it up, and a diagnostic asks whether --log-tz is right.
    let (both, report) = rebalances(vec![pcap, log], "UTC");
    let offset = report
        .inputs
        .iter()
        .find(|i| i.kind == "log")
        .and_then(|i| i.clock_offset_ms)
        .expect("offset estimated");
    assert!((offset + 3_598_500.0).abs() < 2.0, "offset {offset}");
    assert!(
        report
            .diagnostics
            .iter()
            .any(|d| d.detail.contains("--log-tz")),
        "{:#?}",
        report.diagnostics
    );
    assert!(both
        .iter()
        .filter(|r| r.group == "g1")
        .all(|r| r.previous_generation.is_none() || r.seen_in.len() == 2));
}

/// Two brokers' logs in one directory: broker 1 (Kafka 2.8, Scala
/// coordinator) coordinates the group, resigns; broker 2 (Kafka 3.7, Java
/// coordinator) loads it and later removes a member whose heartbeats stopped.
#[test]
fn logs_of_two_brokers_of_different_versions_tell_one_story_in_time_order() {
    let dir = tempfile::tempdir().unwrap();
    let b1 = "\
[2024-03-01 10:00:00,000] INFO [GroupCoordinator 1]: Preparing to rebalance group orders in state PreparingRebalance with old generation 3 (__consumer_offsets-12) (reason: Adding new member consumer-orders-2-0a8c2f4e-1b2c-4d5e-8f90-123456789abc with group instance id None) (kafka.coordinator.group.GroupCoordinator)
[2024-03-01 10:00:03,000] INFO [GroupCoordinator 1]: Stabilized group orders generation 4 (__consumer_offsets-12) (kafka.coordinator.group.GroupCoordinator)
[2024-03-01 10:00:03,050] INFO [GroupCoordinator 1]: Assignment received from leader for group orders for generation 4 (kafka.coordinator.group.GroupCoordinator)
[2024-03-01 10:05:00,000] INFO [GroupCoordinator 1]: Resigned as the group coordinator for partition 12 in epoch Some(7) (kafka.coordinator.group.GroupCoordinator)
[2024-03-01 10:05:00,010] INFO [GroupCoordinator 1]: Unloading group metadata for orders with generation 4 (kafka.coordinator.group.GroupCoordinator)
";
    let b2 = "\
[2024-03-01 10:05:00,200] INFO [GroupCoordinator id=2] Elected as the group coordinator for partition 12 in epoch 8 (org.apache.kafka.coordinator.group.GroupCoordinatorService)
[2024-03-01 10:05:00,300] INFO [GroupCoordinator id=2 topic=__consumer_offsets partition=12] Loaded classic group orders with 2 members. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2024-03-01 10:07:00,000] INFO [GroupCoordinator id=2 topic=__consumer_offsets partition=12] Member consumer-orders-2-0a8c2f4e-1b2c-4d5e-8f90-123456789abc in group orders has failed, removing it from the group. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2024-03-01 10:07:00,001] INFO [GroupCoordinator id=2 topic=__consumer_offsets partition=12] Preparing to rebalance group orders in state PreparingRebalance with old generation 4 (reason: removing member consumer-orders-2-0a8c2f4e-1b2c-4d5e-8f90-123456789abc on heartbeat expiration). (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2024-03-01 10:07:02,500] INFO [GroupCoordinator id=2 topic=__consumer_offsets partition=12] Stabilized group orders generation 5 with 1 members. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2024-03-01 10:07:02,550] INFO [GroupCoordinator id=2 topic=__consumer_offsets partition=12] Assignment received from leader consumer-orders-1-7d1e2f3a-4b5c-4d6e-9f01-abcdefabcdef for group orders for generation 5. The group has 1 members, 0 of which are static. (org.apache.kafka.coordinator.group.GroupMetadataManager)
";
    std::fs::write(dir.path().join("server.log.2024-03-01-10"), b1).unwrap();
    std::fs::write(dir.path().join("server.log"), b2).unwrap();
    let mut opts = Options::analyse(vec![dir.path().to_path_buf()], View::Report, Format::Json);
    opts.quiet = true;
    let (full, _, _) = kgtrace::analyse(&opts).unwrap();
    assert_eq!(
        full.groups[0].coordinator.as_deref(),
        Some("broker 2"),
        "{:#?}",
        full.groups[0]
    );
    let (rebalances, report) = rebalances(vec![dir.path().to_path_buf()], "UTC");
    let got: Vec<(Option<i32>, Option<i32>, &str)> = rebalances
        .iter()
        .map(|r| (r.previous_generation, r.generation, r.trigger.kind.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (Some(3), Some(4), "member_joined"),
            (Some(4), Some(5), "session_timeout")
        ],
        "{rebalances:#?}"
    );
    assert_eq!(
        rebalances[1].trigger.client_id.as_deref(),
        Some("consumer-orders-2"),
        "the client id read from the Java member id"
    );
    assert_eq!(rebalances[1].duration_ms, Some(2550.0));
    let unknown = report
        .diagnostic_counts
        .iter()
        .find(|c| format!("{:?}", c.kind) == "UnknownLogLine")
        .map_or(0, |c| c.count);
    assert_eq!(unknown, 0, "{:#?}", report.diagnostics);
}
