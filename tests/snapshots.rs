//! Snapshots of what users see: every format of every view on every lab
//! capture, run through the real binary from the crate root (so paths in
//! the output stay `fixtures/lab/…`). Snapshots live in
//! `tests/snapshots/`, one file per scenario, view and format, each
//! headed by the command line that produced it.
//!
//! A new capture under `fixtures/lab/` must be added to `scenarios!` below:
//! `every_lab_capture_has_snapshots` fails until it is.

use crate::util::{lab_captures, run};

/// Timeline kinds worth a snapshot: the group protocol without its
/// heartbeats, which would make the files long and say little.
const STORY_KINDS: [&str; 10] = [
    "--kind",
    "join",
    "--kind",
    "sync",
    "--kind",
    "leave",
    "--kind",
    "heartbeat_failed",
    "--kind",
    "close",
];

/// Runs `kgtrace args` (expecting exit 0) and compares stdout with the
/// snapshot `name`.
fn check(name: &str, args: &[&str]) {
    let out = run(args).expect_code(0);
    let command = format!("kgtrace {}", args.join(" "));
    insta::with_settings!({
        snapshot_path => "snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => command,
    }, {
        insta::assert_snapshot!(name, out.stdout);
    });
}

/// Snapshots of `view` for `capture` in each of `formats`.
fn views(scenario: &str, capture: &str, view: &str, formats: &[&str], extra: &[&str]) {
    for format in formats {
        let mut args = vec![view, "-q", capture, "--format", format];
        args.extend_from_slice(extra);
        check(&format!("{scenario}__{view}_{format}"), &args);
    }
}

/// Every snapshot of one lab capture.
fn scenario(scenario: &str, capture: &str) {
    let every = ["table", "json", "ndjson", "csv", "markdown"];
    views(scenario, capture, "rebalances", &every, &[]);
    views(scenario, capture, "groups", &["table", "json"], &[]);
    views(scenario, capture, "report", &["markdown"], &[]);
    story(scenario, &[capture]);
    views(
        scenario,
        capture,
        "timeline",
        &["table", "ndjson"],
        &STORY_KINDS,
    );
}

/// The story paragraphs that open the report, alone, so a reader can hold
/// each against the fixture's `.truth.json` (who, why, how long). Each was
/// read against its truth by hand: docs/story-truth.md has the table
/// (fixture → truth says → story says → verdict); a changed story snapshot
/// must be read again and that table kept true.
fn story(scenario: &str, inputs: &[&str]) {
    let mut args = vec!["report", "-q"];
    args.extend_from_slice(inputs);
    let out = run(&args).expect_code(0);
    let capture = inputs.join(" ");
    let story: Vec<&str> = out
        .stdout
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("- **"))
        .filter(|l| !l.is_empty())
        .collect();
    assert!(!story.is_empty(), "no story in the report of {capture}");
    insta::with_settings!({
        snapshot_path => "snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => format!("kgtrace report -q {capture} (the paragraphs before the summary)"),
    }, {
        insta::assert_snapshot!(format!("{scenario}__story"), story.join("\n\n"));
    });
}

macro_rules! scenarios {
    ($($name:ident => $file:literal),* $(,)?) => {
        /// The captures the macro covers, for the completeness check.
        const COVERED: &[&str] = &[$(concat!("fixtures/lab/", $file)),*];
        $(
            #[test]
            fn $name() {
                scenario(stringify!($name), concat!("fixtures/lab/", $file));
            }
        )*
    };
}

scenarios! {
    ck_cooperative_sticky => "ck_cooperative_sticky.pcap",
    ck_killed => "ck_killed.pcap",
    ck_max_poll => "ck_max_poll.pcapng",
    ck_midstream => "ck_midstream.pcap",
    ck_session_timeout => "ck_session_timeout.pcap",
    ck_static_expired => "ck_static_expired.pcap",
    ck_static_restart => "ck_static_restart.pcapng",
    kjs_clean_leave => "kjs_clean_leave.pcapng",
    kjs_join_one_by_one => "kjs_join_one_by_one.pcap",
    kjs_killed => "kjs_killed.pcap",
    kp_clean_leave => "kp_clean_leave.pcap",
    kp_max_poll => "kp_max_poll.pcap",
    kp_static_restart => "kp_static_restart.pcap",
    kp_ten_members => "kp_ten_members.pcap",
}

#[test]
fn every_lab_capture_has_snapshots() {
    let covered: Vec<String> = COVERED.iter().map(|c| c.to_string()).collect();
    assert_eq!(
        covered,
        lab_captures(),
        "update scenarios! in tests/snapshots.rs"
    );
}

#[test]
fn decode_of_a_small_capture_as_ndjson() {
    let capture = "fixtures/lab/kjs_clean_leave.pcapng";
    check(
        "kjs_clean_leave__decode_ndjson",
        &["decode", "-q", capture, "--format", "ndjson"],
    );
}

/// Snapshots of one Apache Kafka fixture (fixtures/kafka): the rebalances
/// (table and JSON), groups and the story timeline from the capture; the
/// rebalances from the brokers' server.log alone; and from both together.
fn kafka_scenario(scenario: &str, capture: &str, logs: &[&str]) {
    views(scenario, capture, "rebalances", &["table", "json"], &[]);
    views(scenario, capture, "groups", &["table"], &[]);
    views(scenario, capture, "timeline", &["table"], &STORY_KINDS);
    let mut args = vec!["rebalances", "-q"];
    args.extend_from_slice(logs);
    args.extend_from_slice(&["--format", "table"]);
    check(&format!("{scenario}__rebalances_log_table"), &args);
    let mut args = vec!["rebalances", "-q", capture];
    args.extend_from_slice(logs);
    args.extend_from_slice(&["--format", "table"]);
    check(&format!("{scenario}__rebalances_both_table"), &args);
    let mut inputs = vec![capture];
    inputs.extend_from_slice(logs);
    story(scenario, &inputs);
}

macro_rules! kafka_scenarios {
    ($($name:ident => $file:literal, [$($log:literal),*]),* $(,)?) => {
        /// The Apache Kafka captures the macro covers.
        const KAFKA_COVERED: &[&str] = &[$(concat!("fixtures/kafka/", $file)),*];
        $(
            #[test]
            fn $name() {
                kafka_scenario(
                    stringify!($name),
                    concat!("fixtures/kafka/", $file),
                    &[$(concat!("fixtures/kafka/", $log)),*],
                );
            }
        )*
    };
}

kafka_scenarios! {
    // (generated list start)
    ak39_ck_fifty => "ak39_ck_fifty.pcap", ["ak39_ck_fifty.server.log"],
    ak39_ck_join_delay => "ak39_ck_join_delay.pcap", ["ak39_ck_join_delay.server.log"],
    ak39_ck_midstream => "ak39_ck_midstream.pcap", ["ak39_ck_midstream.server.log"],
    ak39_java4_k848_refused => "ak39_java4_k848_refused.pcap", ["ak39_java4_k848_refused.server.log"],
    ak39_java_clean_leave => "ak39_java_clean_leave.pcap", ["ak39_java_clean_leave.server.log"],
    ak39_java_session_timeout => "ak39_java_session_timeout.pcap", ["ak39_java_session_timeout.server.log"],
    ak39_java_static_restart => "ak39_java_static_restart.pcap", ["ak39_java_static_restart.server.log"],
    ak39_kjs_killed => "ak39_kjs_killed.pcap", ["ak39_kjs_killed.server.log"],
    ak4_ck_k848_join_leave => "ak4_ck_k848_join_leave.pcap", ["ak4_ck_k848_join_leave.server.log"],
    ak4_ck_killed => "ak4_ck_killed.pcap", ["ak4_ck_killed.server.log"],
    ak4_java_cooperative_sticky => "ak4_java_cooperative_sticky.pcap", ["ak4_java_cooperative_sticky.server.log"],
    ak4_java_failover => "ak4_java_failover.pcap", ["ak4_java_failover.broker1.server.log", "ak4_java_failover.broker2.server.log", "ak4_java_failover.broker3.server.log"],
    ak4_java_killed => "ak4_java_killed.pcap", ["ak4_java_killed.server.log"],
    ak4_java_max_poll => "ak4_java_max_poll.pcap", ["ak4_java_max_poll.server.log"],
    ak4_java_processed_twice => "ak4_java_processed_twice.pcap", ["ak4_java_processed_twice.server.log"],
    ak4_java_recreated => "ak4_java_recreated.pcap", ["ak4_java_recreated.server.log"],
    ak4_java_session_timeout => "ak4_java_session_timeout.pcap", ["ak4_java_session_timeout.server.log"],
    ak4_java_session_timeout_s128 => "ak4_java_session_timeout_s128.pcap", ["ak4_java_session_timeout_s128.server.log"],
    ak4_java_session_timeout_s200 => "ak4_java_session_timeout_s200.pcap", ["ak4_java_session_timeout_s200.server.log"],
    ak4_java_static_expired => "ak4_java_static_expired.pcap", ["ak4_java_static_expired.server.log"],
    ak4_java_upgrade => "ak4_java_upgrade.pcap", ["ak4_java_upgrade.server.log"],
    ak4_k848_join_leave => "ak4_k848_join_leave.pcap", ["ak4_k848_join_leave.server.log"],
    ak4_k848_killed => "ak4_k848_killed.pcap", ["ak4_k848_killed.server.log"],
    ak4_k848_recreated => "ak4_k848_recreated.pcap", ["ak4_k848_recreated.server.log"],
    ak4_k848_session_timeout => "ak4_k848_session_timeout.pcap", ["ak4_k848_session_timeout.server.log"],
    ak4_k848_slow_revoke => "ak4_k848_slow_revoke.pcap", ["ak4_k848_slow_revoke.server.log"],
    ak4_kp_clean_leave => "ak4_kp_clean_leave.pcap", ["ak4_kp_clean_leave.server.log"],
    // (generated list end)
}

#[test]
fn every_kafka_capture_has_snapshots() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/kafka");
    let mut on_disk: Vec<String> = std::fs::read_dir(dir)
        .expect("fixtures/kafka is committed")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".pcap") || n.ends_with(".pcapng"))
        .map(|n| format!("fixtures/kafka/{n}"))
        .collect();
    on_disk.sort();
    let mut covered: Vec<String> = KAFKA_COVERED.iter().map(|c| c.to_string()).collect();
    covered.sort();
    assert_eq!(
        covered, on_disk,
        "update kafka_scenarios! in tests/snapshots.rs"
    );
}
