//! The Markdown report's Mermaid chart, parsed by the real Mermaid parser:
//! the npm `mermaid` package under node (`tests/mermaid/check.mjs`, versions
//! pinned in `tests/mermaid/package-lock.json`; `.ci/run` installs them with
//! `npm ci`). Every lab fixture (tansu and Apache Kafka) and a report with
//! hostile group and partition names. Outside CI the test says it skipped
//! when node or the package is missing; with `CI=true` it fails instead.

use std::path::{Path, PathBuf};
use std::process::Command;

use kgtrace::render::{render, Format, RenderOptions, View};
use kgtrace::report::Report;

use crate::util::{analyse_inputs, capture_of, server_logs_of, KAFKA_FIXTURES, LAB_FIXTURES};

fn checker_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("mermaid")
}

/// The ```mermaid blocks of a Markdown text.
fn mermaid_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line) {
            (None, "```mermaid") => current = Some(String::new()),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some(block), line) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

fn markdown(report: &Report, brief: bool) -> String {
    let opts = RenderOptions {
        brief,
        ..RenderOptions::default()
    };
    let mut out = Vec::new();
    render(report, View::Report, Format::Markdown, &opts, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// A fixture's report from its capture and, for Apache Kafka fixtures, its
/// brokers' logs.
fn fixture_report(name: &str) -> Report {
    let mut inputs = vec![capture_of(name)];
    inputs.extend(server_logs_of(name));
    analyse_inputs(inputs, View::Report)
}

/// A fixture's report with a group and partitions named to break a gantt
/// line: colons, `#`, semicolons, `%%`, a fence, braces.
fn hostile_names(mut report: Report) -> Report {
    let group = "orders: #1; 50%% {init} ```x``` <b>".to_string();
    for r in &mut report.rebalances {
        r.group = group.clone();
        for p in &mut r.partitions {
            p.partition = format!("topic:with;odd#chars%%-{}", p.partition);
        }
    }
    for g in &mut report.groups {
        g.group = group.clone();
    }
    report
}

/// Whether node and the pinned `mermaid` package are there; with `CI=true`
/// their absence fails the test.
fn checker_ready() -> bool {
    let node = Command::new("node").arg("--version").output().is_ok();
    let package = checker_dir()
        .join("node_modules")
        .join("mermaid")
        .join("package.json")
        .is_file();
    if node && package {
        return true;
    }
    let missing = if node {
        "tests/mermaid/node_modules (run `npm ci` in tests/mermaid)"
    } else {
        "node"
    };
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true but {missing} is missing: the Mermaid parser test cannot run"
    );
    eprintln!("note: {missing} missing; skipping the Mermaid parser test");
    false
}

fn write_block(dir: &Path, name: &str, block: &str) -> PathBuf {
    let path = dir.join(format!("{name}.mmd"));
    std::fs::write(&path, block).unwrap();
    path
}

#[test]
fn every_fixture_s_mermaid_chart_parses_with_the_real_mermaid_parser() {
    if !checker_ready() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("kgtrace-mermaid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    let names = LAB_FIXTURES.iter().chain(KAFKA_FIXTURES.iter());
    for name in names {
        let report = fixture_report(name);
        let has_rounds = !report.rebalances.is_empty();
        let blocks = mermaid_blocks(&markdown(&report, false));
        assert_eq!(
            blocks.len(),
            usize::from(has_rounds),
            "{name}: one chart when there are rebalances"
        );
        assert_eq!(
            mermaid_blocks(&markdown(&report, true)),
            blocks,
            "{name}: the brief report has the same chart"
        );
        for block in blocks {
            files.push(write_block(&dir, name, &block));
        }
        if *name == "ak4_java_processed_twice" || *name == "ck_killed" {
            for block in mermaid_blocks(&markdown(&hostile_names(report), false)) {
                files.push(write_block(&dir, &format!("{name}_hostile"), &block));
            }
        }
    }
    assert!(files.len() > 20, "only {} charts", files.len());
    let out = Command::new("node")
        .arg(checker_dir().join("check.mjs"))
        .args(&files)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!("{} charts", files.len())),
        "{stdout}"
    );
}

#[test]
fn the_checker_catches_a_name_cut_at_a_colon() {
    if !checker_ready() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("kgtrace-mermaid-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = "gantt\n    dateFormat YYYY-MM-DD HH:mm:ss.SSS\n    section g\n    Stop a:b :crit, 2024-05-01 15:04:31.000, 2024-05-01 15:04:32.000\n";
    let file = write_block(&dir, "bad", bad);
    let out = Command::new("node")
        .arg(checker_dir().join("check.mjs"))
        .arg(&file)
        .output()
        .expect("node runs");
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains("name parsed as"), "{stdout}");
}
