//! An input whose group events make no rebalance is never a silent empty
//! answer (issue 11): stderr and `--format json`'s `inputs` say, per input,
//! how many group events of which kinds and groups it gave and why no round
//! could be told. Captures are written here with
//! [`kgtrace::capture::synth`] and the benchmark's Kafka frames.

use kgtrace::capture::synth::{Link, PcapOptions, PcapWriter, TcpConversation};

use crate::brief_size::bench::frames::{self, Who, OLD_CLIENT};
use crate::util::{json, run};

fn who<'a>(group: &'a str, member_id: &'a str) -> Who<'a> {
    Who {
        client: "consumer-1",
        group,
        member_id,
        versions: &OLD_CLIENT,
    }
}

/// One connection: `member` of `group` heartbeats twice in generation 7
/// and commits once; with `join`, it first joins and syncs generation 7.
fn capture(group: &str, member: &str, join: bool) -> Vec<u8> {
    let w = who(group, member);
    let mut c = TcpConversation::new("10.0.1.20:50000", "10.0.0.9:9092");
    c.handshake();
    if join {
        let metadata = frames::subscription("orders", &[]);
        c.client_sends(&frames::join_request(&w, 1, metadata.clone()));
        c.server_sends(&frames::join_response(
            &w,
            1,
            0,
            7,
            member,
            &[(member.to_string(), metadata)],
        ));
        let mine = frames::assignment("orders", &[0]);
        let (req, resp) = frames::sync_group(&w, 2, 7, &[(member.to_string(), mine.clone())], mine);
        c.client_sends(&req).server_sends(&resp);
    }
    for corr in 3..5 {
        let (req, resp) = frames::heartbeat(&w, corr, 7, 0);
        c.client_sends(&req).server_sends(&resp);
    }
    let (req, resp) = frames::offset_commit(&w, 5, 7, "orders", &[0], 42, 0);
    c.client_sends(&req).server_sends(&resp);
    let mut pcap = PcapWriter::new(Vec::new(), Link::Ethernet, PcapOptions::default()).unwrap();
    c.write_to(&mut pcap).unwrap();
    pcap.into_inner()
}

const MEMBER: &str = "consumer-1-0f4c2a9e-77b1-4d0e-a3c5-1b2d3e4f5a6b";

/// [`capture`] of [`MEMBER`] in `group` written to `name` in `dir`; its path.
fn written(dir: &tempfile::TempDir, name: &str, group: &str, join: bool) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, capture(group, MEMBER, join)).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_capture_of_heartbeats_and_commits_without_a_join_names_its_group_and_says_why_there_is_no_rebalance(
) {
    let dir = tempfile::tempdir().unwrap();
    let p = &written(&dir, "mid.pcap", "orders", false);
    let out = run(&["rebalances", p]).expect_code(1);
    let said = format!(
        "{p}: 6 group events (Heartbeat, OffsetCommit) of group orders but no rebalance: \
         the capture holds no join (no JoinGroup, no ConsumerGroupHeartbeat at epoch 0)"
    );
    assert!(out.stderr.contains(&said), "{}", out.stderr);
    let report = json(
        &run(&["rebalances", "--format", "json", p])
            .expect_code(1)
            .stdout,
    );
    let warning = report["inputs"][0]["warning"].as_str().unwrap_or_default();
    assert!(format!("{p}: {warning}").starts_with(&said), "{warning}");
}

#[test]
fn a_capture_with_a_rebalance_gets_no_warning_while_one_beside_it_without_gets_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let j = &written(&dir, "joined.pcap", "orders", true);
    let q = &written(&dir, "quiet.pcap", "billing", false);
    let out = run(&["rebalances", "--format", "json", j, q]).expect_code(0);
    let report = json(&out.stdout);
    let inputs = report["inputs"].as_array().unwrap();
    let warning_of = |path: &str| {
        inputs
            .iter()
            .find(|i| i["path"] == path)
            .map(|i| i["warning"].clone())
            .unwrap()
    };
    assert!(warning_of(j).is_null(), "{inputs:#?}");
    let quiet_warning = warning_of(q);
    assert!(
        quiet_warning
            .as_str()
            .is_some_and(|w| w.contains("of group billing but no rebalance")),
        "{inputs:#?}"
    );
    assert!(
        out.stderr.contains(&format!("{q}: 6 group events")),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains(&format!("{j}:")), "{}", out.stderr);
}

#[test]
fn the_warning_has_its_own_diagnostic_kind_no_rebalance_not_skipped_input() {
    let dir = tempfile::tempdir().unwrap();
    let p = &written(&dir, "mid.pcap", "orders", false);
    let out = run(&["rebalances", "--format", "json", p]).expect_code(1);
    let report = json(&out.stdout);
    let kinds: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"no_rebalance"), "{kinds:?}");
    assert!(!kinds.contains(&"skipped_input"), "{kinds:?}");
    assert!(out.stderr.contains("1 no_rebalance"), "{}", out.stderr);
}

#[test]
fn watch_on_a_capture_without_a_join_says_why_there_is_no_rebalance_as_rebalances_does() {
    let dir = tempfile::tempdir().unwrap();
    let p = &written(&dir, "mid.pcap", "orders", false);
    let out = run(&["watch", p]).expect_code(1);
    let said = format!(
        "{p}: 6 group events (Heartbeat, OffsetCommit) of group orders but no rebalance: \
         the capture holds no join"
    );
    assert!(out.stderr.contains(&said), "{}", out.stderr);
    let joined = written(&dir, "joined.pcap", "orders", true);
    let out = run(&["watch", &joined]).expect_code(0);
    assert!(!out.stderr.contains("no rebalance"), "{}", out.stderr);
}

#[test]
fn timeline_and_decode_written_as_read_say_why_there_is_no_rebalance_as_their_tables_do() {
    // In a format whose rows stand alone (or counted), `timeline` and
    // `decode` write their rows while the capture is read and keep no
    // event; the warning comes from the few they keep for the check.
    let dir = tempfile::tempdir().unwrap();
    let quiet = &written(&dir, "mid.pcap", "orders", false);
    let joined = &written(&dir, "joined.pcap", "orders", true);
    let said = format!(
        "{quiet}: 6 group events (Heartbeat, OffsetCommit) of group orders but no rebalance: \
         the capture holds no join"
    );
    for view in ["timeline", "decode"] {
        let table = run(&[view, "--format", "table", quiet]).expect_code(0);
        assert!(table.stderr.contains(&said), "{view}: {}", table.stderr);
        for how in [&["--format", "ndjson"][..], &["--format", "csv"], &["-c"]] {
            let args: Vec<&str> = [view].into_iter().chain(how.iter().copied()).collect();
            let streamed = run(&[&args[..], &[quiet.as_str()]].concat()).expect_code(0);
            assert_eq!(streamed.stderr, table.stderr, "{args:?}");
            let streamed = run(&[&args[..], &[joined.as_str()]].concat()).expect_code(0);
            assert!(
                !streamed.stderr.contains("no rebalance"),
                "{args:?}: {}",
                streamed.stderr
            );
        }
    }
}

#[test]
fn a_markdown_report_counts_the_group_events_it_does_not_list() {
    // The Markdown report does not list the group events: it keeps their
    // count (what decides the exit code) and their span, not the events.
    let dir = tempfile::tempdir().unwrap();
    let p = &written(&dir, "mid.pcap", "orders", false);
    let listed = json(
        &run(&["report", "--format", "json", p])
            .expect_code(0)
            .stdout,
    );
    let events = listed["timeline"].as_array().unwrap();
    assert_eq!(events.len(), 6, "{events:#?}");
    let markdown = run(&["report", "--format", "markdown", p]).expect_code(0);
    for ts in [&events[0]["ts"], &events[5]["ts"]] {
        let clock = ts.as_str().unwrap().get(11..19).unwrap();
        assert!(
            markdown.stdout.contains(clock),
            "{clock}: {}",
            markdown.stdout
        );
    }
    // Filtered away, they no longer count.
    let none = run(&["report", "--format", "markdown", "--group", "billing", p]).expect_code(1);
    assert!(none.stderr.contains("billing"), "{}", none.stderr);
}
