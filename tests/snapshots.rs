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
    story(scenario, capture);
    views(
        scenario,
        capture,
        "timeline",
        &["table", "ndjson"],
        &STORY_KINDS,
    );
}

/// The story paragraphs that open the report, alone, so a reader can hold
/// each against the fixture's `.truth.json` (who, why, how long).
fn story(scenario: &str, capture: &str) {
    let out = run(&["report", "-q", capture]).expect_code(0);
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
