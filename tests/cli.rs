//! The `kgtrace` binary as a user drives it: every subcommand, every
//! format, the exit codes (0 matched, 1 nothing matched, 2 error), pipes,
//! stdin, colour, completions and the man page. The filters have their own
//! module. Inputs are the committed lab captures and small files written to
//! a temporary directory (a broker log in Kafka's wording, a truncated
//! capture, garbage bytes).

mod filters;
mod flags;
mod hostile;
mod terminal;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

use crate::util::{
    check_markdown_tables, csv, json, kgtrace, lab, lab_captures, ndjson, rows, run, run_with_stdin,
};

const KILLED: &str = "fixtures/lab/ck_killed.pcap";
const VIEWS: [(&str, &str); 4] = [
    ("rebalances", "rebalances"),
    ("timeline", "timeline"),
    ("groups", "groups"),
    ("decode", "exchanges"),
];

/// A broker's server.log in the GroupCoordinator's own wording (Kafka 3.x):
/// `orders` forms with one member; `billing` loses a member to heartbeat
/// expiration and restabilises.
pub(crate) const SERVER_LOG: &str = "\
[2024-05-01 12:00:00,000] INFO [GroupCoordinator 1]: Preparing to rebalance group orders in state PreparingRebalance with old generation 0 (__consumer_offsets-12) (reason: Adding new member orders-1-0a1b2c3d with group instance id None; client reason: not provided) (kafka.coordinator.group.GroupCoordinator)
[2024-05-01 12:00:03,000] INFO [GroupCoordinator 1]: Stabilized group orders generation 1 (__consumer_offsets-12) with 1 members (kafka.coordinator.group.GroupCoordinator)
[2024-05-01 12:00:03,010] INFO [GroupCoordinator 1]: Assignment received from leader orders-1-0a1b2c3d for group orders for generation 1. The group has 1 members, 0 of which are static. (kafka.coordinator.group.GroupCoordinator)
[2024-05-01 12:02:00,000] INFO [GroupCoordinator 1]: Preparing to rebalance group billing in state PreparingRebalance with old generation 4 (__consumer_offsets-30) (reason: removing member billing-2-99aa88bb on heartbeat expiration) (kafka.coordinator.group.GroupCoordinator)
[2024-05-01 12:02:00,001] INFO [GroupCoordinator 1]: Member billing-2-99aa88bb in group billing has failed, removing it from the group (kafka.coordinator.group.GroupCoordinator)
[2024-05-01 12:02:03,000] INFO [GroupCoordinator 1]: Stabilized group billing generation 5 (__consumer_offsets-30) with 1 members (kafka.coordinator.group.GroupCoordinator)
";

/// Writes `bytes` to `name` in a fresh temporary directory.
fn temp_file(name: &str, bytes: &[u8]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = file_in(&dir, name, bytes);
    (dir, path)
}

/// Writes `bytes` to `name` in `dir`; its path.
fn file_in(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write temp input");
    path.to_str().expect("UTF-8 temp path").to_string()
}

fn fixture_bytes(path: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).expect("fixture")
}

fn triggers(report: &serde_json::Value) -> Vec<(String, String)> {
    rows(report, "rebalances")
        .iter()
        .map(|r| {
            let t = &r["trigger"];
            let who = t["client_id"].as_str().or(t["member_id"].as_str());
            (
                t["kind"].as_str().unwrap().to_string(),
                who.unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn rebalances_of_a_killed_consumer_name_a_session_timeout() {
    let out = run(&["rebalances", "-q", KILLED, "--format", "json"]).expect_code(0);
    let found = triggers(&json(&out.stdout));
    assert!(
        found.contains(&("session_timeout".into(), "g1-c2".into())),
        "{found:?}"
    );
}

#[test]
fn every_analysing_subcommand_prints_something_and_exits_0_on_a_fixture() {
    for sub in ["rebalances", "timeline", "groups", "decode", "report"] {
        let out = run(&[sub, "-q", KILLED]).expect_code(0);
        assert!(out.stdout.lines().count() > 2, "{sub}:\n{}", out.stdout);
        assert!(out.stderr.is_empty(), "{sub} with -q: {}", out.stderr);
    }
}

#[test]
fn the_table_of_rebalances_shows_the_trigger_and_the_generations() {
    // Unlimited width: every column.
    let out = run(&["rebalances", "-q", KILLED, "--width", "0"]).expect_code(0);
    let header = out.stdout.lines().nth(1).unwrap();
    for column in ["started", "group", "generation", "trigger", "straggler"] {
        assert!(header.contains(column), "{header}");
    }
    let row = out
        .stdout
        .lines()
        .find(|l| l.contains("session_timeout"))
        .expect("a session_timeout row");
    assert!(row.contains("g1") && row.contains("g1-c2"), "{row}");
}

#[test]
fn json_of_every_view_parses_and_holds_that_views_rows() {
    for (sub, key) in VIEWS {
        let out = run(&[sub, "-q", KILLED, "--format", "json"]).expect_code(0);
        let report = json(&out.stdout);
        assert_eq!(report["format_version"], 1, "{sub}");
        assert!(!rows(&report, key).is_empty(), "{sub}: no {key}");
        assert_eq!(report["inputs"][0]["path"], KILLED, "{sub}");
    }
}

#[test]
fn ndjson_is_one_object_per_row_and_agrees_with_json() {
    for (sub, key) in VIEWS {
        let whole = json(&run(&[sub, "-q", KILLED, "--format", "json"]).stdout);
        let lines = ndjson(
            &run(&[sub, "-q", KILLED, "--format", "ndjson"])
                .expect_code(0)
                .stdout,
        );
        assert_eq!(&lines, rows(&whole, key), "{sub}");
    }
}

#[test]
fn the_ndjson_report_tags_each_line_with_its_type() {
    let out = run(&["report", "-q", KILLED, "--format", "ndjson"]).expect_code(0);
    let lines = ndjson(&out.stdout);
    let types: std::collections::BTreeSet<&str> =
        lines.iter().filter_map(|l| l["type"].as_str()).collect();
    assert!(lines
        .iter()
        .all(|l| l["type"].is_string() && l.get("data").is_some()));
    for t in ["input", "group", "rebalance", "event", "diagnostic_count"] {
        assert!(types.contains(t), "no '{t}' line: {types:?}");
    }
}

#[test]
fn csv_has_a_header_and_as_many_fields_on_every_row() {
    for (sub, key) in VIEWS {
        let out = run(&[sub, "-q", KILLED, "--format", "csv"]).expect_code(0);
        let table = csv(&out.stdout);
        let expected = json(&run(&[sub, "-q", KILLED, "--format", "json"]).stdout);
        assert_eq!(table.len(), rows(&expected, key).len() + 1, "{sub}");
        let width = table[0].len();
        assert!(width >= 5, "{sub} header: {:?}", table[0]);
        assert!(table[0].iter().all(|h| !h.is_empty() && !h.contains(' ')));
        for row in &table {
            assert_eq!(row.len(), width, "{sub}: {row:?}");
        }
    }
}

#[test]
fn csv_of_rebalances_puts_the_trigger_in_its_column() {
    let table = csv(&run(&["rebalances", "-q", KILLED, "--format", "csv"]).stdout);
    let col = table[0]
        .iter()
        .position(|h| h == "trigger")
        .expect("trigger column");
    let kinds: Vec<&str> = table[1..].iter().map(|r| r[col].as_str()).collect();
    assert!(kinds.contains(&"session_timeout"), "{kinds:?}");
}

#[test]
fn markdown_tables_have_a_separator_the_same_pipes_on_every_line_and_fit_120_columns() {
    for sub in ["rebalances", "timeline", "groups", "decode", "report"] {
        let out = run(&[sub, "-q", KILLED, "--format", "markdown"]).expect_code(0);
        let tables = check_markdown_tables(&out.stdout);
        // A table wider than 120 columns is written as a list instead.
        let listed = out.stdout.lines().any(|l| l.starts_with("- **"));
        assert!(
            !tables.is_empty() || listed,
            "{sub}: no table or list in\n{}",
            out.stdout
        );
        for line in out.stdout.lines().filter(|l| l.starts_with('|')) {
            assert!(line.chars().count() <= 120, "{sub}: {line}");
        }
    }
}

#[test]
fn every_capture_gives_well_formed_output_in_every_format() {
    for capture in lab_captures() {
        let out = run(&["report", "-q", &capture, "--format", "json"]).expect_code(0);
        assert!(
            !rows(&json(&out.stdout), "rebalances").is_empty(),
            "{capture}"
        );
        let md = run(&["report", "-q", &capture]).expect_code(0).stdout;
        check_markdown_tables(&md);
        let table = csv(&run(&["timeline", "-q", &capture, "--format", "csv"]).stdout);
        assert!(table.iter().all(|r| r.len() == table[0].len()), "{capture}");
    }
}

#[test]
fn the_report_is_markdown_with_a_summary_and_one_section_per_rebalance() {
    let out = run(&["report", "-q", KILLED]).expect_code(0);
    let count = rows(
        &json(&run(&["rebalances", "-q", KILLED, "--format", "json"]).stdout),
        "rebalances",
    )
    .len();
    assert!(out.stdout.starts_with("# "), "{}", &out.stdout[..80]);
    assert!(out.stdout.contains("## Group `g1`") && out.stdout.contains("## Group `g2`"));
    let sections = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("### Rebalance "))
        .count();
    assert_eq!(sections, count);
    assert!(
        out.stdout.contains(&format!("`{KILLED}#")),
        "evidence names file#frame"
    );
}

#[test]
fn report_html_writes_one_self_contained_file_with_an_svg_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("incident.html");
    let out = run(&["report", "-q", KILLED, "--html", html.to_str().unwrap()]).expect_code(0);
    assert!(
        out.stdout.starts_with("# "),
        "Markdown still goes to stdout"
    );
    let page = std::fs::read_to_string(&html).expect("the HTML file is written");
    assert!(page
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("<!doctype html"));
    assert!(page.contains("<svg") && page.contains("</html>"));
    assert!(page.contains("session_timeout") && page.contains("g1-c2"));
    let lower = page.to_ascii_lowercase();
    for external in [
        "<script src",
        "<link",
        "@import",
        "url(http",
        "src=\"http",
        "href=\"http",
    ] {
        assert!(!lower.contains(external), "external asset: {external}");
    }
}

#[test]
fn decode_lists_exchanges_with_api_latency_and_frames() {
    let out = run(&["decode", "-q", KILLED, "--format", "json"]).expect_code(0);
    let exchanges = json(&out.stdout);
    let apis: std::collections::BTreeSet<&str> = rows(&exchanges, "exchanges")
        .iter()
        .filter_map(|x| x["api"].as_str())
        .collect();
    for api in ["JoinGroup", "SyncGroup", "Heartbeat", "FindCoordinator"] {
        assert!(apis.contains(api), "{apis:?}");
    }
}

#[test]
fn coordinator_of_demo_group_is_partition_15_of_50() {
    let out = run(&["coordinator", "demo-group"]).expect_code(0);
    assert!(
        out.stdout.contains("__consumer_offsets-15"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("of 50"), "{}", out.stdout);
}

#[test]
fn coordinator_follows_the_partition_count_and_names_the_broker_it_saw() {
    // Java: "demo-group".hashCode() = 1762578965; % 100 = 65.
    let out = run(&["coordinator", "demo-group", "--partitions", "100"]).expect_code(0);
    assert!(
        out.stdout.contains("__consumer_offsets-65 (of 100"),
        "{}",
        out.stdout
    );
    let seen = run(&["coordinator", "g1", "-q", KILLED]).expect_code(0);
    assert!(seen.stdout.contains("127.0.0.1:9092"), "{}", seen.stdout);
}

#[test]
fn completions_for_bash_and_the_man_page_come_from_the_clap_definition() {
    let bash = run(&["completions", "bash"]).expect_code(0).stdout;
    assert!(bash.contains("_kgtrace()") || bash.contains("_kgtrace ()"));
    for word in ["rebalances", "coordinator", "--since", "--invert-match"] {
        assert!(bash.contains(word), "completion lacks {word}");
    }
    let man = run(&["man"]).expect_code(0).stdout;
    assert!(
        man.starts_with(".ie") || man.contains(".TH kgtrace"),
        "{}",
        &man[..200]
    );
    assert!(man.contains("rebalances"));
}

#[test]
fn nothing_matched_exits_1_with_an_empty_result() {
    let out = run(&[
        "rebalances",
        "-q",
        KILLED,
        "-g",
        "nosuchgroup",
        "--format",
        "json",
    ]);
    let out = out.expect_code(1);
    assert!(rows(&json(&out.stdout), "rebalances").is_empty());
    let count = run(&["timeline", "-q", KILLED, "-g", "nosuchgroup", "-c"]).expect_code(1);
    assert_eq!(count.stdout.trim(), "0");
    // As grep: no line at all, not a frame of headers that reads as a result.
    for view in ["rebalances", "timeline", "groups", "decode"] {
        let table = run(&[view, "-q", KILLED, "-g", "nosuchgroup"]).expect_code(1);
        assert_eq!(table.stdout, "", "{view}");
    }
}

#[test]
fn quiet_still_says_why_an_answer_is_empty_but_nothing_when_something_matched() {
    let empty = run(&["rebalances", "-q", KILLED, "-g", "nosuchgroup"]).expect_code(1);
    assert!(
        empty.stderr.contains("none matched --group 'nosuchgroup'"),
        "{}",
        empty.stderr
    );
    assert!(!empty.stderr.contains("diagnostics:"), "{}", empty.stderr);
    let dir = tempfile::tempdir().unwrap();
    let blank = dir.path().join("blank.log");
    std::fs::write(&blank, "").unwrap();
    let out = run(&["rebalances", "-q", blank.to_str().unwrap()]).expect_code(1);
    assert!(out.stderr.contains("blank.log"), "{}", out.stderr);
    let found = run(&["rebalances", "-q", KILLED]).expect_code(0);
    assert_eq!(found.stderr, "");
}

#[test]
fn a_missing_file_is_an_error_with_exit_code_2_naming_it() {
    let out = run(&["rebalances", "fixtures/lab/no-such.pcap"]).expect_code(2);
    assert!(
        out.stderr.contains("fixtures/lab/no-such.pcap"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_bad_regex_is_an_error_with_exit_code_2_naming_the_flag() {
    for flag in ["--group", "--member", "--client", "--host"] {
        let out = run(&["timeline", KILLED, flag, "("]).expect_code(2);
        assert!(out.stderr.contains(flag), "{flag}: {}", out.stderr);
        assert!(out.stderr.contains("regular expression"), "{}", out.stderr);
    }
}

#[test]
fn a_bad_time_or_zone_is_an_error_with_exit_code_2_naming_the_flag() {
    for (flag, value) in [
        ("--since", "yesterday"),
        ("--until", "+5x"),
        ("--log-tz", "Mars/Olympus"),
    ] {
        let out = run(&["rebalances", KILLED, flag, value]).expect_code(2);
        assert!(
            out.stderr.contains(flag) && out.stderr.contains(value),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn no_input_at_all_is_a_usage_error_not_an_empty_result() {
    let out = run(&["rebalances"]).expect_code(2);
    assert!(out.stderr.contains("INPUT"), "{}", out.stderr);
}

#[test]
fn garbage_bytes_are_an_error_with_exit_code_2_naming_the_file() {
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let (_dir, path) = temp_file("garbage.bin", &garbage);
    let out = run(&["rebalances", &path]).expect_code(2);
    assert!(out.stderr.contains("garbage.bin"), "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"));
    let piped = run_with_stdin(&["rebalances", "-"], &garbage).expect_code(2);
    assert!(piped.stderr.contains("'-'"), "{}", piped.stderr);
}

#[test]
fn a_truncated_capture_keeps_what_it_read_and_says_so() {
    let bytes = fixture_bytes(KILLED);
    let (_dir, path) = temp_file("cut.pcap", &bytes[..20_000]);
    let out = run(&["timeline", &path]).expect_code(0);
    assert!(out.stdout.contains("JoinGroup"), "{}", out.stdout);
    assert!(out.stderr.contains("truncated_capture"), "{}", out.stderr);
    let quiet = run(&["timeline", "-q", &path]).expect_code(0);
    assert!(quiet.stderr.is_empty(), "{}", quiet.stderr);
}

#[test]
fn a_broker_log_in_kafkas_wording_names_its_rebalances() {
    let (_dir, path) = temp_file("server.log", SERVER_LOG.as_bytes());
    let out = run(&["rebalances", "-q", &path, "--format", "json"]).expect_code(0);
    let report = json(&out.stdout);
    let found: Vec<(&str, &str)> = rows(&report, "rebalances")
        .iter()
        .map(|r| {
            (
                r["group"].as_str().unwrap(),
                r["trigger"]["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [("orders", "member_joined"), ("billing", "session_timeout")]
    );
    assert_eq!(
        rows(&report, "rebalances")[0]["started_at"],
        "2024-05-01T12:00:00.000000Z"
    );
}

/// A broker log of `n` "Stabilized" lines of group `orders`, one a second
/// from 12:00:00, then a "Preparing" line of group `billing` `back`
/// seconds before the last of them. More lines than a log hands its
/// window at once, so the lines before the last are let go (or not) as
/// it is read.
fn log_with_a_late_line(n: u32, back: u32) -> String {
    let at = |s: u32| {
        format!(
            "2024-05-01 {:02}:{:02}:{:02},000",
            12 + s / 3600,
            s / 60 % 60,
            s % 60
        )
    };
    let mut log: String = (1..=n)
        .map(|g| {
            format!(
                "[{}] INFO [GroupCoordinator 1]: Stabilized group orders generation {g} \
                 (__consumer_offsets-12) with 1 members (kafka.coordinator.group.GroupCoordinator)\n",
                at(g)
            )
        })
        .collect();
    log.push_str(&format!(
        "[{}] INFO [GroupCoordinator 1]: Preparing to rebalance group billing in state \
         PreparingRebalance with old generation 4 (__consumer_offsets-30) (reason: removing \
         member billing-2-99aa88bb on heartbeat expiration) (kafka.coordinator.group.GroupCoordinator)\n",
        at(n - back)
    ));
    log
}

/// The time line of `paths` as `timeline --format json` lists it (sorted
/// whole).
fn timeline_json_list(paths: &[&str]) -> Vec<serde_json::Value> {
    let args = [&["timeline", "--format", "json"][..], paths].concat();
    rows(&json(&run(&args).expect_code(0).stdout), "timeline").to_vec()
}

#[test]
fn a_log_named_alone_has_its_timeline_written_in_time_order_as_read_though_lines_come_a_little_late(
) {
    // The last line is 30 s late: within the minute a log's events wait
    // for before they are written (3,072 lines: it comes alone, after the
    // window let the lines before go three times).
    let (_dir, path) = temp_file("server.log", log_with_a_late_line(3072, 30).as_bytes());
    let streamed = run(&["timeline", "--format", "ndjson", &path]).expect_code(0);
    let events = ndjson(&streamed.stdout);
    assert_eq!(events.len(), 3073);
    assert_eq!(events, timeline_json_list(&[&path]));
    assert_eq!(events[3042]["group"], "billing");
    assert!(
        !streamed.stderr.contains("row_order"),
        "{}",
        streamed.stderr
    );
}

#[test]
fn a_log_line_more_than_a_minute_late_is_written_when_it_comes_and_said() {
    // The last line is 2,000 s late: rows after its time were written
    // already, so it is written after them.
    let (_dir, path) = temp_file("server.log", log_with_a_late_line(3000, 2000).as_bytes());
    let streamed = run(&["timeline", "--format", "ndjson", &path]).expect_code(0);
    let events = ndjson(&streamed.stdout);
    let late = events.iter().position(|e| e["group"] == "billing").unwrap();
    assert!(late > 1000, "written after rows later than it: {late}");
    assert!(events[late - 1]["ts"].as_str() > events[late]["ts"].as_str());
    assert!(
        streamed.stderr.contains("1 row_order"),
        "{}",
        streamed.stderr
    );
    assert!(
        streamed
            .stderr
            .contains("a log line came more than 60 s of log time after later lines"),
        "{}",
        streamed.stderr
    );
    assert_eq!(
        timeline_json_list(&[&path])[1000]["group"],
        "billing",
        "the JSON list is sorted whole"
    );
    let counted = run(&["timeline", "-c", &path]).expect_code(0);
    assert!(counted.stderr.contains("1 row_order"), "{}", counted.stderr);
}

#[test]
fn several_brokers_logs_have_their_timeline_merged_as_they_are_read_as_the_json_list_sorts_them() {
    // Broker 2's log ([`SERVER_LOG`]) falls within broker 1's first
    // minutes, one of its lines at the very time of one of broker 1's.
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| file_in(&dir, name, text.as_bytes());
    let broker1 = write("broker1.log", &log_with_a_late_line(3072, 30));
    let broker2 = write("broker2.log", SERVER_LOG);
    let streamed = run(&["timeline", "--format", "ndjson", &broker2, &broker1]).expect_code(0);
    let events = ndjson(&streamed.stdout);
    assert_eq!(events.len(), 3073 + 6);
    assert_eq!(events, timeline_json_list(&[&broker2, &broker1]));
    let at_three: Vec<&str> = events
        .iter()
        .filter(|e| e["ts"] == "2024-05-01T12:00:03.000000Z")
        .map(|e| e["source"].as_str().unwrap())
        .collect();
    assert_eq!(
        at_three,
        [broker1.as_str(), broker2.as_str()],
        "ties by source"
    );
    let counted = run(&["timeline", "-c", &broker2, &broker1]).expect_code(0);
    assert_eq!(counted.stdout.trim(), "3079");
    assert_eq!(counted.stderr, streamed.stderr);
}

#[test]
fn a_log_listed_newest_first_has_its_timeline_sorted_whole_not_written_backwards() {
    // A log export listed newest first (Kibana's default order).
    let newest_first: String = log_with_a_late_line(3072, 30)
        .lines()
        .rev()
        .map(|l| format!("{l}\n"))
        .collect();
    let (_dir, path) = temp_file("export.log", newest_first.as_bytes());
    let streamed = run(&["timeline", "--format", "ndjson", &path]).expect_code(0);
    assert_eq!(ndjson(&streamed.stdout), timeline_json_list(&[&path]));
    assert!(
        !streamed.stderr.contains("row_order"),
        "{}",
        streamed.stderr
    );
}

#[test]
fn a_quiet_log_beside_a_log_too_large_to_keep_is_still_said_to_make_no_rebalance() {
    // Past 20,000 events a log's are not kept for the check; the quiet
    // log's are, and its group is not one the large log named.
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| file_in(&dir, name, text.as_bytes());
    let large = write("large.log", &log_with_a_late_line(20_500, 0));
    // The last member's expiry and its group empty: kgtrace tells no round
    // from these two lines alone (it reads them as a departure that
    // leaves the group empty).
    let quiet = write(
        "quiet.log",
        "[2024-05-01 12:00:30,000] INFO [GroupCoordinator 1]: Member payments-1-77 in group \
         payments has failed, removing it from the group (kafka.coordinator.group.GroupCoordinator)
[2024-05-01 12:00:30,001] INFO [GroupCoordinator 1]: Group payments with generation 5 is now \
         empty (__consumer_offsets-30) (kafka.coordinator.group.GroupCoordinator)\n",
    );
    let said = format!(
        "{quiet}: 2 group events (broker: GroupEmpty, broker: MemberFailed) of group payments \
         but no rebalance"
    );
    for how in [&["--format", "table"][..], &["--format", "ndjson"], &["-c"]] {
        let args: Vec<&str> = ["timeline"]
            .into_iter()
            .chain(how.iter().copied())
            .chain([large.as_str(), quiet.as_str()])
            .collect();
        let out = run(&args).expect_code(0);
        assert!(out.stderr.contains(&said), "{how:?}: {}", out.stderr);
        assert!(
            !out.stderr.contains("large.log: "),
            "{how:?}: {}",
            out.stderr
        );
    }
}

#[test]
fn log_tz_reads_log_times_in_that_zone() {
    let (_dir, path) = temp_file("server.log", SERVER_LOG.as_bytes());
    let args = [
        "rebalances",
        "-q",
        &path,
        "--format",
        "json",
        "--log-tz",
        "+02:00",
    ];
    let report = json(&run(&args).expect_code(0).stdout);
    assert_eq!(
        rows(&report, "rebalances")[0]["started_at"],
        "2024-05-01T10:00:00.000000Z"
    );
    assert_eq!(report["log_time_zone"], "+02:00");
}

/// `rebalances` and `groups` of one capture fold its plain heartbeats as
/// it is read (`timeline::HeartbeatFold`), and every run of them rebuilds
/// and costs one group at a time, letting each group's events go;
/// `report` keeps every event for its time line and runs each stage over
/// all groups at once. Their records, groups, input warnings and
/// diagnostics are the same, for every lab, fixture and snap-length capture
/// and log, the lab directory (a rotation set), the snap-length directory
/// (captures of other hours: times go back, so it is read again without
/// the fold), a capture beside its broker's log, and two captures.
#[test]
fn records_and_groups_of_one_capture_are_the_reports_which_keeps_every_event() {
    let mut inputs: Vec<Vec<String>> = lab_captures().into_iter().map(|c| vec![c]).collect();
    inputs.extend([
        vec!["fixtures/lab".to_string()],
        vec!["fixtures/snaplen".to_string()],
    ]);
    for dir in ["fixtures/snaplen", "fixtures/kafka"] {
        inputs.extend(
            std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path().to_string_lossy().into_owned())
                .filter(|p| p.contains(".pcap") || p.ends_with(".log"))
                .map(|p| vec![p]),
        );
    }
    inputs.push(vec![
        "fixtures/kafka/ak39_java_clean_leave.pcap".to_string(),
        "fixtures/kafka/ak39_java_clean_leave.server.log".to_string(),
    ]);
    inputs.push(vec![
        "fixtures/lab/ck_killed.pcap".to_string(),
        "fixtures/kafka/ak4_ck_killed.pcap".to_string(),
    ]);
    for input in &inputs {
        let with = |view: &str| {
            let mut args = vec![view, "-q", "--format", "json"];
            args.extend(input.iter().map(String::as_str));
            json(&run(&args).stdout)
        };
        let report = with("report");
        // Not a vacuous comparison (a failover's second broker logs no group).
        if !input[0].ends_with(".log") {
            assert!(!rows(&report, "groups").is_empty(), "{input:?}");
        }
        for (view, key) in [("rebalances", "rebalances"), ("groups", "groups")] {
            let alone = with(view);
            assert!(
                rows(&alone, key) == rows(&report, key),
                "{view} of {input:?}: other {key} than the report's"
            );
            for part in ["inputs", "diagnostics", "diagnostic_counts"] {
                assert!(
                    alone[part] == report[part],
                    "{view} of {input:?}: other {part} than the report's"
                );
            }
        }
    }
}

#[test]
fn a_capture_on_stdin_reads_like_the_file() {
    let from_file = run(&["rebalances", "-q", KILLED, "--format", "csv"]).expect_code(0);
    let piped = run_with_stdin(
        &["rebalances", "-q", "-", "--format", "csv"],
        &fixture_bytes(KILLED),
    );
    let piped = piped.expect_code(0);
    // Same rows; only the input's name differs and rebalances do not show it.
    assert_eq!(piped.stdout, from_file.stdout);
}

#[test]
fn a_log_on_stdin_reads_like_the_file() {
    let piped = run_with_stdin(&["rebalances", "-q", "-", "-c"], SERVER_LOG.as_bytes());
    assert_eq!(piped.expect_code(0).stdout.trim(), "2");
    let timeline = run_with_stdin(
        &["timeline", "-q", "-", "--format", "ndjson"],
        SERVER_LOG.as_bytes(),
    );
    let entries = ndjson(&timeline.expect_code(0).stdout);
    assert_eq!(entries.len(), 6);
    assert!(entries.iter().all(|e| e["source"] == "-"), "{entries:?}");
}

#[test]
fn piping_into_head_ends_quietly_with_exit_code_0() {
    // Each output is far larger than a pipe's buffer, so kgtrace is still
    // writing when the reader goes away.
    for (sub, format) in [
        ("timeline", "table"),
        ("timeline", "csv"),
        ("decode", "ndjson"),
        ("decode", "json"),
        ("decode", "markdown"),
    ] {
        let mut child = kgtrace()
            .args([sub, "fixtures/lab/kp_ten_members.pcap", "--format", format])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut first).unwrap();
        assert!(!first.trim().is_empty(), "{sub} {format}");
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{sub} {format}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{stderr}"
        );
    }
}

fn has_ansi(text: &str) -> bool {
    text.contains("\x1b[")
}

#[test]
fn colour_only_with_color_always_when_stdout_is_a_pipe() {
    let args = |c: &'static str| ["rebalances", "-q", KILLED, "--color", c];
    assert!(has_ansi(&run(&args("always")).stdout));
    assert!(!has_ansi(&run(&args("never")).stdout));
    assert!(!has_ansi(&run(&args("auto")).stdout));
    let mut no_color = kgtrace();
    no_color.args(args("auto")).env("NO_COLOR", "1");
    assert!(!has_ansi(
        &crate::util::run_command(&mut no_color, b"").stdout
    ));
}

#[test]
fn on_a_terminal_colour_is_on_unless_no_color_or_never() {
    // util-linux `script` gives the binary a pseudo-terminal.
    if !Path::new("/usr/bin/script").exists() {
        eprintln!("skipped: /usr/bin/script (util-linux) is not installed");
        return;
    }
    let tty = |no_color: Option<&str>, color: &str| {
        let cmd = format!(
            "{} rebalances -q {KILLED} --color {color}",
            env!("CARGO_BIN_EXE_kgtrace")
        );
        let mut script = std::process::Command::new("/usr/bin/script");
        script
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["-qec", &cmd, "/dev/null"]);
        script.env_remove("NO_COLOR");
        if let Some(v) = no_color {
            script.env("NO_COLOR", v);
        }
        crate::util::run_command(&mut script, b"")
            .expect_code(0)
            .stdout
    };
    assert!(has_ansi(&tty(None, "auto")));
    assert!(!has_ansi(&tty(Some("1"), "auto")));
    assert!(!has_ansi(&tty(None, "never")));
    assert!(has_ansi(&tty(Some("1"), "always")));
}

#[test]
fn quiet_silences_the_diagnostics_summary() {
    let loud = run(&["rebalances", KILLED]).expect_code(0);
    assert!(
        loud.stderr.starts_with("kgtrace: diagnostics: "),
        "{}",
        loud.stderr
    );
    assert_eq!(loud.stderr.lines().count(), 1);
    let quiet = run(&["rebalances", "-q", KILLED]).expect_code(0);
    assert!(quiet.stderr.is_empty());
}

#[test]
fn extra_ports_do_not_change_what_a_capture_on_9092_shows() {
    let out = run(&[
        "rebalances",
        "-q",
        KILLED,
        "--port",
        "9092",
        "--port",
        "19092",
        "-c",
    ]);
    let plain = run(&["rebalances", "-q", KILLED, "-c"]);
    assert_eq!(out.expect_code(0).stdout, plain.expect_code(0).stdout);
}

#[test]
fn two_captures_read_together_show_both_inputs() {
    let other = lab("kjs_killed.pcap");
    let out = run(&["groups", "-q", KILLED, &other, "--format", "json"]).expect_code(0);
    let report = json(&out.stdout);
    let paths: Vec<&str> = rows(&report, "inputs")
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, [KILLED, other.as_str()]);
}

#[test]
fn decode_lists_exchanges_in_time_order() {
    let out = run(&["decode", "-q", KILLED, "--format", "ndjson"]).expect_code(0);
    let times: Vec<kgtrace::Timestamp> = ndjson(&out.stdout)
        .iter()
        .map(|x| kgtrace::Timestamp::parse_rfc3339(x["ts"].as_str().unwrap()).unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn decode_rows_written_while_reading_are_the_sorted_list_on_every_lab_capture() {
    // ndjson, csv and -c are written while the capture is read (in request
    // order through a window); JSON gathers every row and sorts it. Both
    // must give the same rows, on every capture and on the directory of
    // them all (one rotation set: one unit).
    let mut inputs = lab_captures();
    inputs.push(crate::util::LAB.to_string());
    for input in &inputs {
        let whole = json(&run(&["decode", "-q", input, "--format", "json"]).stdout);
        let listed = rows(&whole, "exchanges");
        let streamed = ndjson(&run(&["decode", "-q", input, "--format", "ndjson"]).stdout);
        assert_eq!(&streamed, listed, "{input}");
        let counted = run(&["decode", "-q", "-c", input]).stdout;
        assert_eq!(counted.trim(), listed.len().to_string(), "{input}");
        let table = csv(&run(&["decode", "-q", input, "--format", "csv"]).stdout);
        assert_eq!(table.len(), listed.len() + 1, "{input}: header and rows");
    }
}

#[test]
fn decode_written_while_reading_from_stdin_gives_what_the_file_gives() {
    let bytes = fixture_bytes(KILLED);
    let piped = run_with_stdin(&["decode", "-q", "-", "--format", "ndjson"], &bytes).expect_code(0);
    let named = run(&["decode", "-q", KILLED, "--format", "ndjson"]).expect_code(0);
    assert_eq!(piped.stdout, named.stdout);
}

#[test]
fn the_time_line_of_one_capture_written_while_reading_is_the_sorted_one_on_every_lab_capture() {
    // ndjson, csv and -c of one capture file, or of a directory of
    // captures (a rotation set), are written while it is read (in the time
    // line's order through a window); JSON gathers every event and sorts
    // it. Both must give the same rows.
    let mut inputs = lab_captures();
    inputs.push(crate::util::LAB.to_string());
    for input in inputs {
        let whole = json(&run(&["timeline", "-q", &input, "--format", "json"]).stdout);
        let listed = rows(&whole, "timeline");
        let streamed = ndjson(&run(&["timeline", "-q", &input, "--format", "ndjson"]).stdout);
        assert!(&streamed == listed, "{input}");
        let counted = run(&["timeline", "-q", "-c", &input]).stdout;
        assert_eq!(counted.trim(), listed.len().to_string(), "{input}");
        let table = csv(&run(&["timeline", "-q", &input, "--format", "csv"]).stdout);
        assert_eq!(table.len(), listed.len() + 1, "{input}: header and rows");
    }
}
