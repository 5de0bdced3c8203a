//! grep-style selection through the binary: each filter must remove exactly
//! the rows it should and keep the others. Checked against the unfiltered
//! JSON of the same fixture, so a filter that did nothing (or everything)
//! fails.

use serde_json::Value;

use kgtrace::Timestamp;

use crate::util::{csv, json, ndjson, rows, run};

const KILLED: &str = "fixtures/lab/ck_killed.pcap";
const CLEAN_LEAVE: &str = "fixtures/lab/kp_clean_leave.pcap";

/// `kgtrace VIEW -q CAPTURE ARGS --format json`, its rows under `key`.
fn selected(view: &str, capture: &str, args: &[&str], key: &str) -> Vec<Value> {
    let mut all = vec![view, "-q", capture, "--format", "json"];
    all.extend_from_slice(args);
    let out = run(&all);
    assert!(out.code == 0 || out.code == 1, "{out:#?}");
    let report = json(&out.stdout);
    let found = rows(&report, key).clone();
    assert_eq!(
        out.code,
        if found.is_empty() { 1 } else { 0 },
        "exit code for {args:?}"
    );
    found
}

fn timeline(args: &[&str]) -> Vec<Value> {
    selected("timeline", KILLED, args, "timeline")
}

fn field<'a>(row: &'a Value, key: &str) -> &'a str {
    row[key].as_str().unwrap_or("")
}

fn ts(row: &Value, key: &str) -> Timestamp {
    Timestamp::parse_rfc3339(field(row, key)).expect("RFC 3339 time")
}

fn groups_of(rows: &[Value]) -> std::collections::BTreeSet<String> {
    rows.iter().map(|r| field(r, "group").to_string()).collect()
}

#[test]
fn repeated_group_patterns_keep_every_group_any_of_them_matches() {
    let all = timeline(&[]);
    assert_eq!(groups_of(&all), ["g1".to_string(), "g2".to_string()].into());
    let one = timeline(&["-g", "^g1$"]);
    assert_eq!(groups_of(&one), ["g1".to_string()].into());
    let both = timeline(&["-g", "^g1$", "--group", "2$"]);
    assert_eq!(both, all);
    assert!(one.len() < all.len());
}

#[test]
fn a_group_that_is_not_there_matches_nothing_and_exits_1() {
    for (view, key) in [
        ("timeline", "timeline"),
        ("rebalances", "rebalances"),
        ("groups", "groups"),
    ] {
        assert!(
            selected(view, KILLED, &["-g", "nosuchgroup"], key).is_empty(),
            "{view}"
        );
    }
}

#[test]
fn invert_match_shows_exactly_what_the_selection_hides() {
    let all = timeline(&[]);
    let g1 = timeline(&["-g", "^g1$"]);
    let not_g1 = timeline(&["-v", "-g", "^g1$"]);
    assert_eq!(g1.len() + not_g1.len(), all.len());
    assert!(
        not_g1.iter().all(|e| field(e, "group") != "g1"),
        "{not_g1:?}"
    );
    let inverted_rebalances = selected(
        "rebalances",
        KILLED,
        &["--invert-match", "--kind", "session_timeout"],
        "rebalances",
    );
    assert!(inverted_rebalances
        .iter()
        .all(|r| r["trigger"]["kind"] != "session_timeout"));
    assert!(!inverted_rebalances.is_empty());
}

#[test]
fn member_keeps_only_the_events_of_matching_members() {
    let all = timeline(&[]);
    let mine = timeline(&["--member", "^g1-c2-"]);
    assert!(!mine.is_empty() && mine.len() < all.len());
    assert!(
        mine.iter()
            .all(|e| field(e, "member_id").starts_with("g1-c2-")),
        "{mine:?}"
    );
    let expected = all
        .iter()
        .filter(|e| field(e, "member_id").starts_with("g1-c2-"))
        .count();
    assert_eq!(mine.len(), expected);
}

#[test]
fn member_keeps_the_rebalances_a_member_caused_or_took_part_in() {
    let all = selected("rebalances", KILLED, &[], "rebalances");
    let mine = selected("rebalances", KILLED, &["--member", "^g1-c2-"], "rebalances");
    assert!(mine.iter().all(|r| r["group"] == "g1"), "{mine:?}");
    assert!(mine
        .iter()
        .any(|r| r["trigger"]["kind"] == "session_timeout"));
    assert!(mine.len() < all.len());
}

#[test]
fn client_keeps_only_the_events_of_matching_clients() {
    let all = timeline(&[]);
    let mine = timeline(&["--client", "^g2-c1$"]);
    assert!(!mine.is_empty());
    assert!(mine.iter().all(|e| field(e, "client_id") == "g2-c1"));
    assert_eq!(
        mine.len(),
        all.iter()
            .filter(|e| field(e, "client_id") == "g2-c1")
            .count()
    );
}

#[test]
fn host_keeps_only_the_events_from_matching_client_addresses() {
    let all = timeline(&[]);
    let host = field(&all[0], "client_host").to_string();
    assert!(!host.is_empty(), "{:?}", all[0]);
    let pattern = format!("^{}$", regex_escape(&host));
    let mine = timeline(&["--host", &pattern]);
    assert!(!mine.is_empty() && mine.len() < all.len());
    assert!(mine.iter().all(|e| field(e, "client_host") == host));
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_ascii_alphanumeric() || c == ':' {
                vec![c]
            } else {
                vec!['\\', c]
            }
        })
        .collect()
}

#[test]
fn since_and_until_with_rfc3339_times_keep_that_window_inclusive() {
    let all = timeline(&[]);
    let (from, to) = (field(&all[100], "ts"), field(&all[200], "ts"));
    let window = timeline(&["--since", from, "--until", to]);
    let (a, b) = (ts(&all[100], "ts"), ts(&all[200], "ts"));
    let expected: Vec<Value> = all
        .iter()
        .filter(|e| (a..=b).contains(&ts(e, "ts")))
        .cloned()
        .collect();
    assert_eq!(window, expected);
    assert!(window.len() >= 101 && window.len() < all.len());
}

#[test]
fn since_and_until_relative_to_the_first_event() {
    let all = timeline(&[]);
    let first = all.iter().map(|e| ts(e, "ts")).min().unwrap();
    let later = timeline(&["--since", "+10s"]);
    let cut = first.offset_by(10_000_000_000);
    let expected: Vec<Value> = all.iter().filter(|e| ts(e, "ts") >= cut).cloned().collect();
    assert_eq!(later, expected);
    assert!(!later.is_empty() && later.len() < all.len());
    let early = timeline(&["--until", "+500ms"]);
    let cut = first.offset_by(500_000_000);
    assert!(!early.is_empty() && early.iter().all(|e| ts(e, "ts") <= cut));
    assert_eq!(
        early.len(),
        all.iter().filter(|e| ts(e, "ts") <= cut).count()
    );
}

#[test]
fn since_selects_rebalances_by_their_start() {
    let all = selected("rebalances", KILLED, &[], "rebalances");
    let last = field(all.last().unwrap(), "started_at");
    let late = selected("rebalances", KILLED, &["--since", last], "rebalances");
    assert_eq!(late, all[all.len() - 1..]);
}

#[test]
fn kind_selects_rebalances_by_trigger() {
    let timeouts = selected(
        "rebalances",
        KILLED,
        &["--kind", "session_timeout"],
        "rebalances",
    );
    assert_eq!(timeouts.len(), 1);
    assert_eq!(timeouts[0]["trigger"]["client_id"], "g1-c2");
    let either = selected(
        "rebalances",
        KILLED,
        &["--kind", "session_timeout", "--kind", "member_joined"],
        "rebalances",
    );
    assert_eq!(
        either.len(),
        selected("rebalances", KILLED, &[], "rebalances").len()
    );
}

#[test]
fn kind_selects_timeline_events_by_kind_or_mark() {
    let all = selected("timeline", CLEAN_LEAVE, &[], "timeline");
    let leaves = selected("timeline", CLEAN_LEAVE, &["--kind", "leave"], "timeline");
    assert!(!leaves.is_empty() && leaves.len() < all.len());
    let is_leave = |e: &Value| {
        field(e, "kind").to_ascii_lowercase().contains("leave")
            || field(e, "mark").contains("leave")
    };
    assert!(leaves.iter().all(is_leave), "{leaves:?}");
    assert_eq!(leaves.len(), all.iter().filter(|e| is_leave(e)).count());
}

#[test]
fn kind_selects_decoded_exchanges_by_api() {
    let joins = selected("decode", KILLED, &["--kind", "JoinGroup"], "exchanges");
    assert!(!joins.is_empty());
    assert!(joins.iter().all(|x| x["api"] == "JoinGroup"), "{joins:?}");
}

#[test]
fn different_flags_must_all_match() {
    let g1 = selected(
        "rebalances",
        KILLED,
        &["-g", "^g1$", "--kind", "session_timeout"],
        "rebalances",
    );
    assert_eq!(g1.len(), 1);
    assert!(selected(
        "rebalances",
        KILLED,
        &["-g", "^g2$", "--kind", "session_timeout"],
        "rebalances"
    )
    .is_empty());
}

#[test]
fn groups_filters_by_group_and_member() {
    let g2 = selected("groups", KILLED, &["-g", "g2"], "groups");
    assert_eq!(groups_of(&g2), ["g2".to_string()].into());
    let with_c3 = selected("groups", KILLED, &["--client", "^g1-c1$"], "groups");
    assert_eq!(groups_of(&with_c3), ["g1".to_string()].into());
}

#[test]
fn count_prints_how_many_rows_the_same_selection_shows() {
    for (view, args) in [
        ("timeline", vec!["-g", "^g1$"]),
        ("rebalances", vec!["--member", "g1-c2"]),
        ("groups", vec![]),
        ("decode", vec!["--kind", "Heartbeat"]),
    ] {
        let mut base = vec![view, "-q", KILLED];
        base.extend(args);
        let rows = ndjson(&run(&[&base[..], &["--format", "ndjson"]].concat()).stdout).len();
        let count = run(&[&base[..], &["-c"]].concat()).expect_code(0);
        assert_eq!(count.stdout, format!("{rows}\n"), "{view}");
        assert!(rows > 0);
    }
}

/// `kgtrace ARGS` (not quiet): its exit code and stderr.
fn warned(args: &[&str]) -> (i32, String) {
    let out = run(args);
    (out.code, out.stderr)
}

#[test]
fn a_group_filter_that_leaves_nothing_says_so_in_every_view_naming_the_groups_seen() {
    for (view, rows) in [
        ("rebalances", "rebalances"),
        ("timeline", "group events"),
        ("groups", "groups"),
        ("decode", "exchanges"),
        ("report", "group events"),
        ("watch", "rebalances"),
    ] {
        let (code, stderr) = warned(&[view, KILLED, "-g", "nosuchgroup"]);
        assert_eq!(code, 1, "{view}: {stderr}");
        let said = format!(
            "{rows} in the inputs; none matched --group 'nosuchgroup' (groups seen: g1, g2)"
        );
        assert!(stderr.contains(&said), "{view}: {stderr}");
        assert!(stderr.contains("1 nothing_matched"), "{view}: {stderr}");
    }
}

#[test]
fn of_several_flags_only_the_one_that_left_nothing_is_named() {
    let (code, stderr) = warned(&["rebalances", KILLED, "-g", "g1", "--kind", "poll_timeout"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("none matched --kind poll_timeout (kinds seen: "),
        "{stderr}"
    );
    assert!(!stderr.contains("none matched --group"), "{stderr}");
}

#[test]
fn a_time_window_after_the_inputs_gives_the_time_they_span() {
    let (code, stderr) = warned(&["timeline", KILLED, "--since", "2100-01-01T00:00:00Z"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("none matched --since 2100-01-01T00:00:00.000000Z (they span "),
        "{stderr}"
    );
}

#[test]
fn invert_that_leaves_nothing_says_every_row_matched_the_other_flags() {
    let (code, stderr) = warned(&["rebalances", KILLED, "-v", "-g", "g"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("all match --group 'g', so -v leaves none"),
        "{stderr}"
    );
}

#[test]
fn a_filter_that_keeps_something_adds_no_warning() {
    let (code, stderr) = warned(&["rebalances", KILLED, "-g", "^g1$"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("nothing_matched"), "{stderr}");
    assert!(!stderr.contains("none matched"), "{stderr}");
}

#[test]
fn json_lists_what_the_filters_removed_as_a_nothing_matched_diagnostic() {
    let out = run(&[
        "rebalances",
        KILLED,
        "-g",
        "nosuchgroup",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = json(&out.stdout);
    let said: Vec<&Value> = rows(&report, "diagnostics")
        .iter()
        .filter(|d| d["kind"] == "nothing_matched")
        .collect();
    assert_eq!(said.len(), 1, "{report:#}");
    assert!(
        said[0]["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("none matched --group 'nosuchgroup'"),
        "{report:#}"
    );
}

#[test]
fn coordinator_of_a_group_the_inputs_do_not_hold_warns_and_names_the_groups_they_do() {
    let (code, stderr) = warned(&["coordinator", "nosuchgroup", KILLED]);
    assert_eq!(code, 0, "the partition is still an answer: {stderr}");
    assert!(
        stderr.contains("group 'nosuchgroup' is in none of the inputs (groups seen: g1, g2)"),
        "{stderr}"
    );
    let (_, stderr) = warned(&["coordinator", "g1", KILLED]);
    assert!(!stderr.contains("in none of the inputs"), "{stderr}");
}

#[test]
fn decode_of_logs_alone_says_exchanges_come_from_captures() {
    let log = "fixtures/kafka/ak4_java_session_timeout.server.log";
    let (code, stderr) = warned(&["decode", log]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("but no captured request/response exchange to decode"),
        "{stderr}"
    );
    let (code, stderr) = warned(&["decode", KILLED]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("exchange to decode"), "{stderr}");
}

/// `kgtrace timeline -q KILLED ARGS`: its output and exit code.
fn timeline_as(args: &[&str]) -> (String, i32) {
    let mut all = vec!["timeline", "-q", KILLED];
    all.extend_from_slice(args);
    let out = run(&all);
    (out.stdout, out.code)
}

#[test]
fn timeline_rows_written_as_they_are_made_are_the_json_documents_rows_in_order() {
    for filter in [&[][..], &["-g", "^g1$"][..], &["-v", "-g", "^g1$"][..]] {
        let whole = timeline(filter);
        assert!(!whole.is_empty(), "{filter:?}");
        let (text, code) = timeline_as(&[filter, &["--format", "ndjson"][..]].concat());
        assert_eq!(
            (ndjson(&text), code),
            (whole.clone(), 0),
            "ndjson {filter:?}"
        );
        let (text, code) = timeline_as(&[filter, &["--format", "csv"][..]].concat());
        let table = csv(&text);
        assert_eq!((table.len(), code), (whole.len() + 1, 0), "csv {filter:?}");
        let at = table[0]
            .iter()
            .position(|h| h == "ts")
            .expect("a ts column");
        let times: Vec<&str> = table[1..].iter().map(|r| r[at].as_str()).collect();
        let expected: Vec<&str> = whole.iter().map(|r| field(r, "ts")).collect();
        assert_eq!(times, expected, "csv {filter:?}");
        let (text, code) = timeline_as(&[filter, &["-c"][..]].concat());
        assert_eq!((text.trim(), code), (whole.len().to_string().as_str(), 0));
    }
}

#[test]
fn a_timeline_csv_that_matches_nothing_is_its_header_alone_and_exits_1() {
    let (text, code) = timeline_as(&["--format", "csv", "-g", "^no-such-group$"]);
    let table = csv(&text);
    assert_eq!((table.len(), code), (1, 1), "{text}");
    assert!(table[0].iter().any(|h| h == "ts"), "{text}");
    let (text, code) = timeline_as(&["--format", "ndjson", "-g", "^no-such-group$"]);
    assert_eq!((text.as_str(), code), ("", 1));
}
