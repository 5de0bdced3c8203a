//! Flags that say what they accept (issue 13): `--kind` names its kinds,
//! `--since` takes the times the tables show, `--html -` and unwritable
//! paths, `--partitions 0`, and the man page.

use crate::util::{csv, run};

const MAX_POLL: &str = "fixtures/lab/ck_max_poll.pcapng";

#[test]
fn an_unknown_kind_is_an_error_that_lists_the_kinds() {
    let out = run(&["rebalances", "-q", MAX_POLL, "--kind", "bogus"]).expect_code(2);
    assert!(out.stderr.contains("--kind 'bogus'"), "{}", out.stderr);
    assert!(
        out.stderr.contains("poll_timeout, session_timeout"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_kebab_case_kind_matches_like_its_snake_case_name() {
    let kebab = run(&[
        "rebalances",
        "-q",
        MAX_POLL,
        "--kind",
        "poll-timeout",
        "--format",
        "csv",
    ])
    .expect_code(0);
    let rows = csv(&kebab.stdout);
    assert_eq!(rows.len(), 2, "{}", kebab.stdout);
    assert!(rows[1].contains(&"poll_timeout".to_string()));
}

#[test]
fn help_lists_the_trigger_kinds_and_exit_codes() {
    let out = run(&["rebalances", "--help"]).expect_code(0);
    assert!(
        out.stdout.contains("previous_rebalance_failed"),
        "{}",
        out.stdout
    );
    let top = run(&["--help"]).expect_code(0);
    assert!(top.stdout.contains("Exit codes"), "{}", top.stdout);
}

#[test]
fn since_accepts_a_time_of_day_on_the_inputs_first_day() {
    // ck_max_poll's rounds start 19:00:36 … 19:00:59 (UTC).
    let out = run(&[
        "rebalances",
        "-q",
        MAX_POLL,
        "--since",
        "19:00:55",
        "--format",
        "csv",
    ])
    .expect_code(0);
    let rows = csv(&out.stdout);
    assert_eq!(rows.len(), 2, "{}", out.stdout);
    assert!(rows[1][0].starts_with("2026-12-03T19:00:59"));
    // The same instant typed in another zone.
    let local = run(&[
        "rebalances",
        "-q",
        MAX_POLL,
        "--since",
        "20:00:55",
        "--log-tz",
        "+01:00",
        "--format",
        "csv",
    ])
    .expect_code(0);
    assert_eq!(local.stdout, out.stdout);
    let bad = run(&["rebalances", "-q", MAX_POLL, "--since", "25:00"]).expect_code(2);
    assert!(bad.stderr.contains("time of day"), "{}", bad.stderr);
}

#[test]
fn html_dash_writes_the_page_to_stdout_and_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::util::kgtrace()
        .current_dir(dir.path())
        .args(["report", "-q", "--html", "-"])
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(MAX_POLL))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with("<!DOCTYPE html>"), "{stdout}");
    assert!(!dir.path().join("-").exists());
}

#[test]
fn an_html_path_that_cannot_be_created_says_cannot_write_before_any_report() {
    let out = run(&[
        "report",
        "-q",
        MAX_POLL,
        "--html",
        "/nonexistent/dir/x.html",
    ])
    .expect_code(2);
    assert!(
        out.stderr
            .contains("cannot write '/nonexistent/dir/x.html'"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "", "no Markdown before the failure");
}

#[test]
fn html_to_a_device_such_as_dev_null_is_written_not_refused() {
    run(&["report", "-q", MAX_POLL, "--html", "/dev/null"]).expect_code(0);
}

#[test]
fn a_report_that_fails_leaves_no_empty_html_file_and_an_old_one_intact() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.pcap");
    let new = dir.path().join("new.html");
    run(&[
        "report",
        missing.to_str().unwrap(),
        "--html",
        new.to_str().unwrap(),
    ])
    .expect_code(2);
    assert!(!new.exists(), "the file it made is removed");
    let old = dir.path().join("old.html");
    std::fs::write(&old, "yesterday's report").unwrap();
    run(&[
        "report",
        missing.to_str().unwrap(),
        "--html",
        old.to_str().unwrap(),
    ])
    .expect_code(2);
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "yesterday's report");
}

#[test]
fn zero_partitions_is_an_error() {
    let out = run(&["coordinator", "g", "--partitions", "0"]).expect_code(2);
    assert!(out.stderr.contains("--partitions"), "{}", out.stderr);
}

#[test]
fn a_capture_only_report_does_not_mention_a_log_time_zone() {
    let out = run(&["report", "-q", MAX_POLL]).expect_code(0);
    assert!(!out.stdout.contains("Log time zone"), "{}", out.stdout);
}
