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
    let capture = "fixtures/lab/ck_session_timeout.pcap";
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
        assert!(text.contains("session_timeout"), "{cols}\n{text}");
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
    let header = text.lines().nth(1).unwrap_or("");
    assert!(header.contains("evidence"), "{text}");
    // The file is named in the cell, or once under the table for `…`.
    assert!(
        text.contains("ck_max_poll.pcapng#")
            || (text.contains("…#")
                && text.contains("(evidence: … stands for ck_max_poll.pcapng)")),
        "{text}"
    );
    evidence_whole(&text);
}

/// Every `#` in a table is followed by its whole frame number, and no cell
/// ends in `#` or in a file name's `:` (a number cut off its file).
fn evidence_whole(text: &str) {
    for line in text.lines().filter(|l| l.starts_with('│')) {
        for cell in line.trim_matches('│').split('┆') {
            let cell = cell.trim();
            assert!(!cell.ends_with('#'), "{line}\n{text}");
            if let Some((_, after)) = cell.rsplit_once('#') {
                assert!(
                    after.chars().all(|c| c.is_ascii_digit()) && !after.is_empty(),
                    "{line}\n{text}"
                );
            }
            for ext in [".log:", ".pcap:", ".pcapng:"] {
                assert!(!cell.ends_with(ext), "{line}\n{text}");
            }
        }
    }
}

/// Inputs to measure the terminal tables on: the largest lab capture, a
/// capture with its broker log, a KIP-848 group, and three brokers' logs.
fn width_inputs() -> Vec<Vec<String>> {
    let kafka = |name: &str, logs: &[&str]| -> Vec<String> {
        std::iter::once(format!("fixtures/kafka/{name}.pcap"))
            .chain(logs.iter().map(|l| format!("fixtures/kafka/{name}.{l}")))
            .collect()
    };
    vec![
        vec![largest_capture()],
        kafka("ak4_java_max_poll", &["server.log"]),
        kafka("ak4_k848_slow_revoke", &["server.log"]),
        kafka(
            "ak4_java_failover",
            &[
                "broker1.server.log",
                "broker2.server.log",
                "broker3.server.log",
            ],
        ),
    ]
}

/// Trigger kinds and group names of the rebalances `inputs` give.
fn triggers_and_groups(inputs: &[String]) -> Vec<(String, String)> {
    let mut args = vec!["rebalances", "-q", "--format", "json"];
    args.extend(inputs.iter().map(String::as_str));
    let doc = crate::util::json(&run(&args).stdout);
    doc["rebalances"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| {
                    (
                        r["trigger"]["kind"].as_str().unwrap_or("").to_string(),
                        r["group"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_view_fits_80_100_and_200_columns_keeping_group_trigger_and_frame_numbers_whole() {
    let views: [&[&str]; 5] = [
        &["rebalances"],
        &["timeline"],
        &["groups"],
        &["decode"],
        &["report", "--format", "table"],
    ];
    for inputs in width_inputs() {
        let rounds = triggers_and_groups(&inputs);
        for view in views {
            for cols in [80u16, 100, 200] {
                let mut args: Vec<&str> = view.to_vec();
                args.push("-q");
                args.extend(inputs.iter().map(String::as_str));
                let Some(text) = in_a_terminal(cols, &args) else {
                    return;
                };
                let what = format!("{} at {cols}: {}", view.join(" "), inputs.join(" "));
                for line in text.lines() {
                    let boxed = line.starts_with(['┌', '│', '╞', '└']);
                    let note = line.starts_with('(');
                    if boxed || note {
                        assert!(
                            line.chars().count() <= usize::from(cols),
                            "{what}: {line}\n{text}"
                        );
                    }
                }
                evidence_whole(&text);
                let headers: Vec<&str> = text
                    .lines()
                    .zip(text.lines().skip(1))
                    .filter(|(above, _)| above.starts_with('┌'))
                    .map(|(_, header)| header)
                    .collect();
                if view[0] != "report" {
                    let first = headers.first().copied().unwrap_or("");
                    assert!(first.contains(" group "), "{what}\n{text}");
                }
                if matches!(view[0], "rebalances" | "report") {
                    for (trigger, group) in &rounds {
                        // Whole, with the padding of a cell on each side.
                        assert!(
                            text.contains(&format!(" {trigger} ")),
                            "{what}: {trigger}\n{text}"
                        );
                        assert!(
                            text.contains(&format!(" {group} ")),
                            "{what}: {group}\n{text}"
                        );
                    }
                }
            }
        }
    }
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
