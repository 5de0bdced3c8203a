//! `rebalances` of logs written as each record settles, against the batch
//! run (issue 12 item 1).
//!
//! Takes: every log of `fixtures/kafka` alone, the failover scenario's
//! three brokers' logs together, a generated rebalance-dense log of about
//! forty minutes, and the fixture broker logs played again after half an
//! hour of silence (written to a temporary folder). Gives: a check that
//! what `kgtrace::run` writes for `rebalances` in `ndjson` and `csv`
//! (records leaving the streaming engine as they become final, in start
//! order) is byte for byte what the batch run renders from its whole
//! report, with the same count and the same diagnostics (`--stream`:
//! asked for, since across a silence longer than the engine's windows a
//! group keeps only what its next rounds are judged from; without it the
//! batch run writes every format).

use std::path::{Path, PathBuf};

use kgtrace::options::Options;
use kgtrace::render::{Format, View};

use crate::util::{rendered_whole, through_run, Written};

fn options(inputs: &[PathBuf], format: Format) -> Options {
    let mut opts = Options::analyse(inputs.to_vec(), View::Rebalances, format);
    opts.stream = true;
    opts
}

/// Through `kgtrace::run`, which writes these records as they settle.
fn streamed(opts: &Options) -> Written {
    assert!(
        kgtrace::watch::settled::applies(opts),
        "{:?} would not be streamed",
        opts.inputs
    );
    through_run(opts).0
}

/// Through `kgtrace::analyse` (every event kept, every record rebuilt at
/// the end, sorted), rendered as the batch run renders it.
fn batch(opts: &Options) -> Written {
    rendered_whole(opts, View::Rebalances)
}

/// Where the two runs differ on `inputs`, one line per format.
fn differences(inputs: &[PathBuf]) -> Vec<String> {
    let mut differ = Vec::new();
    for format in [Format::Ndjson, Format::Csv] {
        let opts = options(inputs, format);
        let (got, want) = (streamed(&opts), batch(&opts));
        if let Some(d) = got.difference(&want) {
            differ.push(format!("{inputs:?} {format:?}: {d}"));
        }
    }
    differ
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture_logs() -> Vec<PathBuf> {
    let dir = root().join("fixtures/kafka");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixture folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs
}

#[test]
fn every_fixture_log_written_as_its_records_settle_gives_the_batch_rows_count_and_diagnostics() {
    let logs = fixture_logs();
    assert!(logs.len() >= 20, "{} logs", logs.len());
    let differ: Vec<String> = logs
        .iter()
        .flat_map(|log| differences(std::slice::from_ref(log)))
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn a_directory_of_three_brokers_logs_is_written_as_the_batch_run_lists_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    for n in 1..=3 {
        let name = format!("ak4_java_failover.broker{n}.server.log");
        std::fs::copy(
            root().join("fixtures/kafka").join(&name),
            dir.path().join(&name),
        )
        .expect("copy");
    }
    let differ = differences(&[dir.path().to_path_buf()]);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn three_brokers_logs_given_together_are_written_in_the_batch_order() {
    let brokers: Vec<PathBuf> = (1..=3)
        .map(|n| {
            root().join(format!(
                "fixtures/kafka/ak4_java_failover.broker{n}.server.log"
            ))
        })
        .collect();
    let differ = differences(&brokers);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// A generated rebalance-dense log of about forty minutes (60 MB, `seed`)
/// in `dir`, its lines from `cut` (a fraction of them) moved before the
/// rest when `cut` is given: a file whose time goes back there.
fn generated_log(dir: &Path, seed: u64, cut: Option<f64>) -> PathBuf {
    let mut text = Vec::new();
    kgtrace::logs::synth::write_synthetic_log(&mut text, 60 << 20, seed).expect("writes");
    let path = dir.join(format!("dense-{seed}.server.log"));
    let text = String::from_utf8(text).expect("utf-8");
    let text = match cut {
        None => text,
        Some(f) => {
            let lines: Vec<&str> = text.lines().collect();
            let at = (lines.len() as f64 * f) as usize;
            let mut moved = lines[at..].to_vec();
            moved.extend(&lines[..at]);
            moved.join("\n") + "\n"
        }
    };
    std::fs::write(&path, text).expect("write");
    path
}

#[test]
fn a_log_whose_time_goes_back_after_rows_were_written_still_gets_every_round_and_a_warning() {
    // Its last four fifths first (half an hour): the stream has written
    // rows when the first fifth comes; the batch run writes the rest.
    let dir = tempfile::tempdir().expect("tempdir");
    let inputs = vec![generated_log(dir.path(), 11, Some(0.2))];
    let opts = options(&inputs, Format::Ndjson);
    let (got, want) = (streamed(&opts), batch(&opts));
    // Every batch row is written, or a row of its round (its group and
    // start) was, judged by the stream before the line that went back, as
    // the warning says.
    let round = |line: &str| {
        let v: serde_json::Value = serde_json::from_str(line).expect("json");
        (v["group"].to_string(), v["started_at"].to_string())
    };
    let written: std::collections::BTreeSet<&str> = got.out.lines().collect();
    let rounds: std::collections::BTreeSet<(String, String)> = got.out.lines().map(round).collect();
    let told_otherwise: Vec<&str> = want.out.lines().filter(|l| !written.contains(l)).collect();
    assert!(
        told_otherwise.iter().all(|l| rounds.contains(&round(l))),
        "a round of the batch run is missing"
    );
    assert!(
        told_otherwise.len() * 100 < want.out.lines().count(),
        "{}",
        told_otherwise.len()
    );
    assert!(got.matched >= want.matched);
    assert!(
        got.diagnostics.contains("RowOrder")
            && got.diagnostics.contains("before lines read earlier"),
        "{}",
        got.diagnostics
    );
    let cli = crate::util::run(&[
        "rebalances",
        "--stream",
        "--format",
        "ndjson",
        &inputs[0].to_string_lossy(),
    ]);
    assert!(cli.stderr.contains("warning: rows: "), "{}", cli.stderr);
}

#[test]
fn a_log_whose_time_goes_back_before_any_row_was_written_gives_the_batch_rows_exactly() {
    // Its last tenth first: the time goes back four minutes into the log,
    // before any record is final.
    let dir = tempfile::tempdir().expect("tempdir");
    let inputs = vec![generated_log(dir.path(), 13, Some(0.9))];
    let differ = differences(&inputs);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn a_rebalance_dense_log_of_forty_minutes_is_written_while_read_and_gives_the_batch_rows() {
    // Mixed Kafka versions, 200 groups, classic and KIP-848 lines under
    // one group name: hundreds of rebalances a minute. Longer than the
    // engine's windows (15 minutes) and rebuild interval (as long), so
    // records leave the engine, and are written, before the log ends (a
    // record waits until every group's window has passed its start: those
    // of the log's last half hour are written at its end).
    let dir = tempfile::tempdir().expect("tempdir");
    let inputs = vec![generated_log(dir.path(), 7, None)];
    let differ = differences(&inputs);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    let opts = options(&inputs, Format::Ndjson);
    let mut rows = 0u64;
    let read = kgtrace::watch::settled::run(&opts, |handed| {
        rows += u64::from(matches!(handed, kgtrace::watch::settled::Handed::Record(_)));
        true
    })
    .expect("runs");
    assert!(rows > 10_000, "{rows} rows");
    assert!(
        read.before_end > rows / 10,
        "{} of {rows} rows written before the log ended",
        read.before_end
    );
}

/// `kgtrace ARGS` with the log `name` of `fixtures/kafka` last.
fn cli(args: &[&str], name: &str) -> crate::util::Run {
    let log = root().join("fixtures/kafka").join(name);
    let mut all = args.to_vec();
    let log = log.to_string_lossy();
    all.push(&log);
    crate::util::run(&all)
}

#[test]
fn a_group_filter_on_a_log_prints_as_ndjson_the_records_the_json_lists() {
    let args = ["rebalances", "--stream", "-q", "-g", "^g2$"];
    let streamed = cli(
        &[&args[..], &["--format", "ndjson"]].concat(),
        "ak4_java_max_poll.server.log",
    );
    let batch = cli(
        &[&args[..], &["--format", "json"]].concat(),
        "ak4_java_max_poll.server.log",
    );
    assert_eq!((streamed.code, batch.code), (0, 0), "{streamed:#?}");
    let listed: serde_json::Value = serde_json::from_str(&batch.stdout).expect("json");
    let lines: Vec<serde_json::Value> = streamed
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("ndjson"))
        .collect();
    assert!(!lines.is_empty());
    assert_eq!(Some(&lines), listed["rebalances"].as_array());
}

#[test]
fn a_filter_that_keeps_no_record_of_a_log_warns_and_exits_1_as_the_batch_run_does() {
    let args = ["rebalances", "--stream", "-q", "-g", "no-such-group"];
    let log = "ak4_java_max_poll.server.log";
    let streamed = cli(&[&args[..], &["--format", "ndjson"]].concat(), log);
    let batch = cli(&[&args[..], &["--format", "json"]].concat(), log);
    assert_eq!((streamed.code, batch.code), (1, 1), "{streamed:#?}");
    assert!(streamed.stdout.is_empty(), "{streamed:#?}");
    assert!(streamed.stderr.contains("warning"), "{streamed:#?}");
    assert_eq!(streamed.stderr, batch.stderr);
}

#[test]
fn without_stream_a_log_in_ndjson_is_written_by_the_batch_run() {
    let log = root().join("fixtures/kafka/ak4_java_max_poll.server.log");
    let mut opts = options(&[log], Format::Ndjson);
    assert!(kgtrace::watch::settled::applies(&opts));
    opts.stream = false;
    assert!(!kgtrace::watch::settled::applies(&opts));
}

/// One broker log of `fixtures/kafka` as (time, the line after its time
/// stamp with its continuation lines), its group names `g1` and `g2`
/// renamed `{prefix}g1` and `{prefix}g2`.
fn stamped_lines(log: &Path, prefix: &str) -> Vec<(chrono::NaiveDateTime, String)> {
    let stamp = regex::Regex::new(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]").expect("re");
    let group = regex::Regex::new(r"\bg([12])\b").expect("re");
    let text = std::fs::read_to_string(log).expect("fixture log");
    let mut entries: Vec<(chrono::NaiveDateTime, String)> = Vec::new();
    for line in text.lines() {
        let line = group.replace_all(line, format!("{prefix}g$1").as_str());
        match stamp.captures(&line) {
            Some(c) => {
                let at = chrono::NaiveDateTime::parse_from_str(&c[1], "%Y-%m-%d %H:%M:%S,%3f")
                    .expect("stamp");
                entries.push((at, line[c[0].len()..].to_string()));
            }
            None => {
                if let Some((_, last)) = entries.last_mut() {
                    last.push('\n');
                    last.push_str(&line);
                }
            }
        }
    }
    entries
}

/// `text` with new member ids (`by` > 0): every 22-character base64 token
/// holding a digit, `_` or `-` (a KIP-848 member id, `Uuid.toString`) and
/// every hex UUID (the tail of a classic member id) shifted within its
/// alphabet by `by` places, as a restarted client makes a new member id.
fn new_member_ids(text: &str, by: usize) -> String {
    let shift = |text: &str, alphabet: &str| -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        text.chars()
            .map(|c| match chars.iter().position(|a| *a == c) {
                Some(at) => chars[(at + by) % chars.len()],
                None => c,
            })
            .collect()
    };
    let uuid = regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        .expect("re");
    let token = regex::Regex::new(r"[A-Za-z0-9_-]+").expect("re");
    let text = uuid.replace_all(text, |c: &regex::Captures| shift(&c[0], "0123456789abcdef"));
    token
        .replace_all(&text, |c: &regex::Captures| {
            let t = &c[0];
            let id =
                t.len() == 22 && t.contains(|c: char| c.is_ascii_digit() || c == '_' || c == '-');
            if id {
                shift(
                    t,
                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                )
            } else {
                t.to_string()
            }
        })
        .into_owned()
}

/// Every broker log of `fixtures/kafka` (the i-th under group names
/// `s{i}g1`, `s{i}g2`), played once at each of `copies` (minutes), the logs
/// 20 s apart within a copy, each copy with new member ids (a restarted
/// client makes a new one): each group falls silent between copies. Around
/// them, `others` more copies, each under group names of its own (`f{k}`)
/// and 150 s after the one before: groups that come once, as on a busy
/// broker, whose lines move the log on. One log in time order.
pub(crate) fn repeated_after_silence(dir: &Path, copies: &[i64], others: usize) -> PathBuf {
    let start = chrono::NaiveDate::from_ymd_opt(2024, 3, 1)
        .and_then(|d| d.and_hms_opt(0, 1, 0))
        .expect("date");
    let brokers: Vec<PathBuf> = fixture_logs()
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".server.log"))
        .collect();
    // (time, order placed, text after the time stamp)
    let mut lines: Vec<(chrono::NaiveDateTime, usize, String)> = Vec::new();
    let mut place =
        |from: chrono::NaiveDateTime, entries: &[(chrono::NaiveDateTime, String)], by: usize| {
            let Some(first) = entries.first().map(|(at, _)| *at) else {
                return;
            };
            for (at, rest) in entries {
                let text = if by == 0 {
                    rest.clone()
                } else {
                    new_member_ids(rest, by)
                };
                lines.push((from + (*at - first), lines.len(), text));
            }
        };
    for (i, log) in brokers.iter().enumerate() {
        let entries = stamped_lines(log, &format!("s{i}"));
        for (n, minutes) in copies.iter().enumerate() {
            let from = start + chrono::Duration::seconds(20 * i as i64 + 60 * minutes);
            place(from, &entries, 7 * n);
        }
    }
    for k in 0..others {
        let entries = stamped_lines(&brokers[k % brokers.len()], &format!("f{k}"));
        place(
            start + chrono::Duration::seconds(150 * k as i64),
            &entries,
            7 * (k + 3),
        );
    }
    lines.sort();
    let mut out = String::new();
    for (at, _, rest) in lines {
        out.push_str(&format!("[{}]{rest}\n", at.format("%Y-%m-%d %H:%M:%S,%3f")));
    }
    let path = dir.join("repeated.server.log");
    std::fs::write(&path, out).expect("write");
    path
}

#[test]
fn groups_silent_for_longer_than_the_engines_window_come_back_with_their_history() {
    // Silences of 35 minutes, more than twice a window. With the windows
    // keeping a superseded round only up to its start, and the round
    // before a round still to tell only up to its end, 7 of the 217 rows
    // were missing: KIP-848 rounds still open when their group fell
    // silent, merged on a later rebuild into the superseded round before
    // them, which had already become final (either span alone mends it).
    let dir = tempfile::tempdir().expect("tempdir");
    let inputs = vec![repeated_after_silence(dir.path(), &[0, 35, 70], 0)];
    let opts = options(&inputs, Format::Ndjson);
    let want = batch(&opts);
    assert!(want.matched > 150, "{} rows", want.matched);
    let open = want.out.matches("\"in_progress\"").count();
    assert!(open >= 3, "{open} rounds open at the end");
    let differ = differences(&inputs);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn a_storm_closed_by_a_group_that_comes_back_after_a_silence_is_still_a_storm() {
    // A group's storm (six rounds in half a minute) ends with a round still
    // open when it falls silent; the copy 30 minutes on closes it. The
    // storm's other rounds are final by then and gone from the window:
    // their starts are kept, and the round is told as part of the storm,
    // as the batch run tells it (without them it was told as none). The
    // other groups' lines move the log on, so the windows are rebuilt while
    // the group is silent.
    let dir = tempfile::tempdir().expect("tempdir");
    let inputs = vec![repeated_after_silence(dir.path(), &[0, 20, 50], 34)];
    let want = batch(&options(&inputs, Format::Ndjson));
    assert!(
        want.out.contains("\"storm\":true"),
        "no storm in the batch rows"
    );
    let differ = differences(&inputs);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn piping_a_dense_logs_records_into_head_ends_quietly_with_exit_code_0() {
    // Each output is far larger than a pipe's buffer: the writer (this
    // thread for `--stream`, the engine on another; or the batch run's
    // records rendered on every core) is still writing when the reader
    // goes away, and every thread must stop, not wait for the rest.
    use std::io::BufRead;
    use std::process::Stdio;
    let dir = tempfile::tempdir().expect("tempdir");
    let log = generated_log(dir.path(), 5, None);
    for args in [
        &["--stream", "--format", "ndjson"][..],
        &["--stream", "--format", "csv"],
        &["--format", "ndjson"],
        &["--format", "json"],
        &["--format", "csv"],
    ] {
        let mut child = crate::util::kgtrace()
            .args(["rebalances", "-q"])
            .args(args)
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawns");
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        stdout.read_line(&mut first).expect("a line");
        assert!(!first.trim().is_empty(), "{args:?}");
        drop(stdout);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while child.try_wait().expect("waits").is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("{args:?}: still running two minutes after its reader went away");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let out = child.wait_with_output().expect("output");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{args:?}: {stderr}"
        );
    }
}
