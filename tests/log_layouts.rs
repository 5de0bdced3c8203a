//! The same broker log pasted or shipped in other shapes (issue 11): each
//! gives the same rebalances as the plain log.
//!
//! Takes a committed Apache Kafka `server.log` excerpt and writes, from its
//! own lines, the shapes incidents arrive in: indented, quoted (`> `), with
//! line numbers, as a Markdown list, as docker's json-file records, as
//! logback/log4j2 JSON records (the message without its log4j time, the
//! time in `@timestamp`), as journald `-o json`, as Elasticsearch hits and
//! as Kibana "Share → CSV" exports (quoted fields with commas, doubled
//! quotes and embedded newlines; ISO or Kibana display times; newest first).
//! Gives one test that runs `kgtrace rebalances` on each and compares the
//! rebalances (group, generations, trigger, member) with the plain log's.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::util;

const PLAIN: &str = "fixtures/kafka/ak4_java_session_timeout.server.log";

/// `[2026-12-03 02:35:41,496] INFO msg (logger)` → (ISO time with `Z`,
/// the rest after the bracket). kgtrace reads zone-less log times as UTC
/// unless told otherwise, so `Z` is the same instant.
fn split_time(line: &str) -> Option<(String, &str)> {
    let rest = line.strip_prefix('[')?;
    let (time, after) = rest.split_once("] ")?;
    let (date, clock) = time.split_once(' ')?;
    Some((format!("{date}T{}Z", clock.replace(',', ".")), after))
}

fn micros(iso: &str) -> String {
    let t = chrono::DateTime::parse_from_rfc3339(iso).expect("an RFC 3339 time");
    t.timestamp_micros().to_string()
}

/// Every variant's name and text, written from the plain log's lines.
fn variants(plain: &str) -> Vec<(&'static str, String)> {
    let lines: Vec<&str> = plain.lines().collect();
    let each = |f: &dyn Fn(usize, &str) -> String| -> String {
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| f(i, l) + "\n")
            .collect()
    };
    let record = |l: &str, f: &dyn Fn(&str, &str) -> Value| -> String {
        match split_time(l) {
            Some((iso, msg)) => f(&iso, msg).to_string(),
            None => l.to_string(),
        }
    };
    vec![
        ("indented", each(&|_, l| format!("    {l}"))),
        ("quoted", each(&|_, l| format!("> {l}"))),
        ("numbered", each(&|i, l| format!("{:>5}: {l}", i + 1))),
        ("listed", each(&|_, l| format!(" * {l}"))),
        (
            "docker json-file",
            each(&|_, l| {
                let time = split_time(l).map_or("2026-12-03T00:00:00Z".into(), |t| t.0);
                json!({"log": format!("{l}\n"), "stream": "stdout", "time": time}).to_string()
            }),
        ),
        (
            "logback JSON",
            each(&|_, l| {
                record(l, &|iso, msg| {
                    let (level, text) = msg.split_once(' ').unwrap_or(("INFO", msg));
                    json!({"@timestamp": iso, "level": level, "thread_name": "main",
                           "logger_name": "kafka", "message": text})
                })
            }),
        ),
        (
            "journald JSON",
            each(&|_, l| {
                record(l, &|iso, msg| {
                    json!({"__REALTIME_TIMESTAMP": micros(iso), "_HOSTNAME": "kafka1",
                           "MESSAGE": msg})
                })
            }),
        ),
        (
            "Kibana CSV, ISO times, newest first",
            kibana_csv(
                &lines,
                "\"@timestamp\",message,\"host.name\"",
                true,
                &|iso, msg, i| {
                    let text = if i % 7 == 0 {
                        format!("{msg}\n\tat kafka.server.KafkaApis.handle(KafkaApis.scala:{i})")
                    } else {
                        msg.to_string()
                    };
                    vec![iso.to_string(), text, "kafka1".into()]
                },
            ),
        ),
        (
            "Kibana CSV, display times and levels",
            kibana_csv(
                &lines,
                "\"@timestamp\",\"log.level\",\"message\"",
                false,
                &|iso, msg, _| {
                    let (level, text) = msg.split_once(' ').unwrap_or(("INFO", msg));
                    vec![kibana_time(iso), level.into(), text.into()]
                },
            ),
        ),
        (
            "Elasticsearch hits",
            each(&|_, l| json!({"_index": "logs", "_source": {"message": l}}).to_string()),
        ),
    ]
}

/// A field as Kibana's CSV writer quotes it: always, quotes doubled.
fn csv_field(f: &str) -> String {
    format!("\"{}\"", f.replace('"', "\"\""))
}

/// `2026-12-03T02:35:41.496Z` as Kibana displays it by default
/// (`MMM D, YYYY @ HH:mm:ss.SSS`, the browser's zone: UTC here).
fn kibana_time(iso: &str) -> String {
    let t = chrono::DateTime::parse_from_rfc3339(iso).expect("an RFC 3339 time");
    t.format("%b %-d, %Y @ %H:%M:%S%.3f").to_string()
}

/// A Kibana "Share → CSV" export of the lines that carry a time: a header,
/// then one row per line (`newest_first` as Discover sorts by default);
/// `row` gives a line's fields from its time, its text after the time and
/// its index.
fn kibana_csv(
    lines: &[&str],
    header: &str,
    newest_first: bool,
    row: &dyn Fn(&str, &str, usize) -> Vec<String>,
) -> String {
    let mut rows: Vec<String> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let (iso, msg) = split_time(l)?;
            let fields: Vec<String> = row(&iso, msg, i).iter().map(|f| csv_field(f)).collect();
            Some(fields.join(",") + "\n")
        })
        .collect();
    if newest_first {
        rows.reverse();
    }
    std::iter::once(format!("{header}\n")).chain(rows).collect()
}

fn rebalances(path: &str) -> Vec<(String, Value, Value, Value, Value)> {
    let run = util::run(&["rebalances", "--format", "json", path]);
    let report = util::json(&run.stdout);
    util::rows(&report, "rebalances")
        .iter()
        .map(|r| {
            (
                r["group"].as_str().unwrap_or_default().to_string(),
                r["previous_generation"].clone(),
                r["generation"].clone(),
                r["trigger"]["kind"].clone(),
                r["trigger"]["member_id"].clone(),
            )
        })
        .collect()
}

#[test]
fn a_broker_log_pasted_or_shipped_in_other_shapes_gives_the_same_rebalances() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let plain = std::fs::read_to_string(root.join(PLAIN)).expect("the plain log");
    let want = rebalances(PLAIN);
    assert!(want.len() >= 3, "the plain log shows rebalances: {want:?}");
    let dir = std::env::temp_dir().join(format!("kgtrace-log-layouts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let mut differ = Vec::new();
    for (name, text) in variants(&plain) {
        let path = dir.join(format!("{}.log", name.replace(' ', "_")));
        std::fs::write(&path, text).expect("the variant is written");
        let got = rebalances(path.to_str().expect("a UTF-8 temp path"));
        if got != want {
            differ.push(format!("{name}: {got:?}"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        differ.is_empty(),
        "plain: {want:?}\nvariants that differ:\n{}",
        differ.join("\n")
    );
}

/// Logs kgtrace does not read: a tansu broker's (Rust `tracing` layout) and
/// a kafka-python client's (Python `logging`, with and without times).
/// Each yields no event, so each gets a warning naming it; never a silent
/// empty answer.
#[test]
fn a_tansu_broker_log_and_a_kafka_python_client_log_each_get_a_warning_naming_them() {
    let tansu = "\
2026-12-03T02:35:41.496123Z  INFO tansu_server::coordinator::group::administrator: join group_id=\"g1\" member_id=\"\" session_timeout_ms=6000\n\
2026-12-03T02:35:41.501877Z  INFO tansu_server::coordinator::group::administrator: sync group_id=\"g1\" generation_id=1\n\
2026-12-03T02:35:47.002311Z DEBUG tansu_server::coordinator::group::administrator: heartbeat group_id=\"g1\" generation_id=1\n";
    let kafka_python = "\
2026-12-03 02:35:41,496 INFO kafka.coordinator (Re-)joining group g1\n\
2026-12-03 02:35:41,520 INFO kafka.coordinator Elected group leader -- performing partition assignments using range\n\
INFO:kafka.coordinator:Successfully joined group g1 with generation 1\n\
INFO:kafka.coordinator.consumer:Updated partition assignment: [TopicPartition(topic='lab', partition=0)]\n";
    let dir = std::env::temp_dir().join(format!("kgtrace-unread-logs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let (t, k) = (dir.join("tansu.log"), dir.join("consumer.log"));
    std::fs::write(&t, tansu).expect("written");
    std::fs::write(&k, kafka_python).expect("written");
    let out = util::run(&[
        "rebalances",
        "--format",
        "json",
        t.to_str().unwrap(),
        k.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.code, 1, "nothing matched: {out:#?}");
    for name in [
        "tansu.log: a tansu broker log: not a Kafka server.log format",
        "consumer.log: a kafka-python client log",
    ] {
        assert!(out.stderr.contains(name), "{name}: {}", out.stderr);
    }
    let report = util::json(&out.stdout);
    assert!(util::rows(&report, "inputs")
        .iter()
        .all(|i| i["warning"].is_string()));
}
