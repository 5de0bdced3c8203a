//! Reports that fit: `report --brief` under 30,000 characters, and tables
//! at the real width of a terminal, run through a pseudo-terminal
//! (util-linux `script`) so kgtrace asks the tty for its size.

use std::process::Command;

use crate::util::{lab_captures, run};

/// The largest lab capture (by bytes).
fn largest_capture() -> String {
    lab_captures()
        .into_iter()
        .max_by_key(|c| {
            std::fs::metadata(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(c))
                .map(|m| m.len())
                .unwrap_or(0)
        })
        .expect("lab captures")
}

#[test]
fn brief_reports_of_every_lab_capture_fit_a_ticket_comment() {
    let largest = largest_capture();
    for capture in lab_captures() {
        for format in ["markdown", "table"] {
            let out =
                run(&["report", "-q", "--brief", "--format", format, &capture]).expect_code(0);
            let chars = out.stdout.chars().count();
            assert!(chars < 30_000, "{capture} {format}: {chars}");
            assert!(out.stdout.contains("Left out of this brief report"));
            assert!(!out.stdout.contains("Evidence"), "{capture}");
        }
    }
    let full = run(&["report", "-q", &largest]).expect_code(0);
    assert!(
        full.stdout.contains("Evidence"),
        "the full report keeps everything"
    );
}

/// stdout of `kgtrace args` run in a pseudo-terminal `cols` wide, or
/// `None` when `script` is missing outside CI.
fn in_a_terminal(cols: u16, args: &[&str]) -> Option<String> {
    let script_found = Command::new("script").arg("--version").output().is_ok();
    if !script_found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs util-linux `script` for the pseudo-terminal tests"
        );
        eprintln!("skipped: no `script` for a pseudo-terminal");
        return None;
    }
    let bin = env!("CARGO_BIN_EXE_kgtrace");
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    // The pty's size is set inside it, then kgtrace asks the tty.
    let inner = format!("stty cols {cols} rows 50; '{bin}' {}", quoted.join(" "));
    let out = Command::new("script")
        .args(["-qfec", &inner, "/dev/null"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("COLUMNS")
        .env("NO_COLOR", "1")
        .output()
        .expect("script runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"))
}

#[test]
fn tables_fit_a_terminal_of_80_100_and_200_columns_keeping_group_and_trigger() {
    let capture = "fixtures/lab/kjs_join_one_by_one.pcap";
    for cols in [80u16, 100, 200] {
        let Some(text) = in_a_terminal(cols, &["rebalances", "-q", capture]) else {
            return;
        };
        let table: Vec<&str> = text.lines().filter(|l| !l.starts_with('(')).collect();
        let widest = table.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(widest <= usize::from(cols), "{cols}: {widest}\n{text}");
        assert!(
            widest > usize::from(cols) / 2,
            "{cols}: uses the width\n{text}"
        );
        assert!(
            table[1].contains("group") && table[1].contains("trigger"),
            "{text}"
        );
        // Each group and trigger whole on its row.
        assert!(text.contains("previous_rebalance_failed"), "{cols}\n{text}");
        assert!(table.iter().any(|l| l.contains("┆ g2 ")), "{cols}\n{text}");
        if cols == 200 {
            assert!(!text.contains("(hidden"), "{text}");
        }
    }
}

#[test]
fn timeline_evidence_never_wraps_inside_a_frame_number_at_80_columns() {
    let capture = "fixtures/lab/ck_max_poll.pcapng";
    let Some(text) = in_a_terminal(80, &["timeline", "-q", capture, "--kind", "leave"]) else {
        return;
    };
    assert!(text.contains("ck_max_poll.pcapng#"), "{text}");
    for line in text.lines().filter(|l| l.contains(".pcapng#")) {
        let cell = line.rsplit('┆').next().unwrap_or("");
        let number = cell.trim().trim_end_matches('│').trim();
        assert!(
            number
                .rsplit('#')
                .next()
                .unwrap()
                .chars()
                .all(|c| c.is_ascii_digit()),
            "{line}"
        );
    }
    // No line starts a cell with the tail of a frame number.
    assert!(
        !text.lines().any(|l| l.trim_end().ends_with(".pcapng#")),
        "{text}"
    );
}

#[test]
fn wide_keeps_every_column_whatever_the_terminal() {
    let capture = "fixtures/lab/ck_max_poll.pcapng";
    let Some(text) = in_a_terminal(80, &["rebalances", "-q", capture, "--wide"]) else {
        return;
    };
    let header = text.lines().nth(1).unwrap_or("");
    for column in ["confidence", "straggler", "flags", "evidence"] {
        assert!(header.contains(column), "{text}");
    }
}
