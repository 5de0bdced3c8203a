//! What the lab-fixture tests share: where the committed fixtures live, how
//! to run kgtrace's library pipeline over one of them, and how to read the
//! small JSON and TSV files stored next to each capture.
//!
//! Takes fixture names (`ck_killed`, `ak4_java_session_timeout`); gives
//! kgtrace [`Report`]s, the parsed `<name>.truth.json`, the rows of
//! `<name>.tshark.tsv` and, for Apache Kafka fixtures, the brokers'
//! `server.log` excerpts. Everything is read from
//! `CARGO_MANIFEST_DIR/fixtures/lab` (tansu) or `fixtures/kafka` (Apache
//! Kafka, names starting `ak`), never from ../shared.

use std::collections::HashMap;
use std::path::PathBuf;

use kgtrace::options::Options;
use kgtrace::render::{Format, View};
use kgtrace::report::Report;

/// Every lab fixture, by name. A test checks that this list and the
/// `fixtures/lab/*.truth.json` files on disk are the same set, so a new
/// fixture cannot go unchecked.
pub const LAB_FIXTURES: [&str; 14] = [
    "ck_cooperative_sticky",
    "ck_killed",
    "ck_max_poll",
    "ck_midstream",
    "ck_session_timeout",
    "ck_static_expired",
    "ck_static_restart",
    "kjs_clean_leave",
    "kjs_join_one_by_one",
    "kjs_killed",
    "kp_clean_leave",
    "kp_max_poll",
    "kp_static_restart",
    "kp_ten_members",
];

/// Every Apache Kafka lab fixture (`fixtures/kafka`), by name; checked
/// against the `*.truth.json` files on disk like [`LAB_FIXTURES`].
pub const KAFKA_FIXTURES: &[&str] = &[
    // (generated list start)
    "ak39_ck_fifty",
    "ak39_ck_join_delay",
    "ak39_ck_midstream",
    "ak39_java4_k848_refused",
    "ak39_java_clean_leave",
    "ak39_java_session_timeout",
    "ak39_java_static_restart",
    "ak39_kjs_killed",
    "ak4_ck_k848_join_leave",
    "ak4_ck_killed",
    "ak4_java_cooperative_sticky",
    "ak4_java_failover",
    "ak4_java_killed",
    "ak4_java_max_poll",
    "ak4_java_processed_twice",
    "ak4_java_recreated",
    "ak4_java_session_timeout",
    "ak4_java_session_timeout_s128",
    "ak4_java_session_timeout_s200",
    "ak4_java_static_expired",
    "ak4_java_upgrade",
    "ak4_k848_join_leave",
    "ak4_k848_killed",
    "ak4_k848_recreated",
    "ak4_k848_session_timeout",
    "ak4_k848_slow_revoke",
    "ak4_kp_clean_leave",
    // (generated list end)
];

/// Apache Kafka fixtures whose capture was made with a snap length
/// (`tcpdump -s 200` / `-s 128`): frames are cut, so their capture is for the
/// partial-evidence work, not for the decode and truth checks that need
/// whole PDUs (their server.log is checked as usual).
pub fn snapped(name: &str) -> bool {
    let truth = truth_of(name);
    let cmd = truth["capture"]["command"].as_str().unwrap_or_default();
    !cmd.contains(" -s 0 ")
}

/// `fixtures/lab` in this checkout.
pub fn lab_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("lab")
}

/// `fixtures/kafka` in this checkout.
pub fn kafka_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("kafka")
}

/// The folder of fixture `name`: Apache Kafka fixtures are named `ak…`.
pub fn fixture_dir(name: &str) -> PathBuf {
    if name.starts_with("ak") {
        kafka_dir()
    } else {
        lab_dir()
    }
}

/// The brokers' `server.log` excerpts of an Apache Kafka fixture
/// (`<name>.server.log`, or `<name>.brokerN.server.log` with three nodes).
pub fn server_logs_of(name: &str) -> Vec<PathBuf> {
    let dir = fixture_dir(name);
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixture folder is readable")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.strip_prefix(name).is_some_and(|rest| {
                    rest.ends_with(".server.log")
                        && (rest == ".server.log" || rest.starts_with(".broker"))
                })
            })
        })
        .collect();
    logs.sort();
    logs
}

/// kgtrace's library pipeline over any inputs, as `kgtrace VIEW FILES…`.
pub fn analyse_inputs(inputs: Vec<PathBuf>, view: View) -> Report {
    let opts = Options::analyse(inputs.clone(), view, Format::Json);
    let (report, _, _) =
        kgtrace::analyse(&opts).unwrap_or_else(|e| panic!("kgtrace failed on {inputs:?}: {e}"));
    report
}

/// The capture of fixture `name` (`.pcap` or `.pcapng`).
pub fn capture_of(name: &str) -> PathBuf {
    let dir = fixture_dir(name);
    ["pcap", "pcapng"]
        .iter()
        .map(|ext| dir.join(format!("{name}.{ext}")))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no capture for fixture {name} in {}", dir.display()))
}

/// kgtrace's library pipeline over fixture `name`, as `kgtrace VIEW FILE`
/// with no filter would compute it.
pub fn analyse(name: &str, view: View) -> Report {
    let opts = Options::analyse(vec![capture_of(name)], view, Format::Json);
    let (report, _, _) =
        kgtrace::analyse(&opts).unwrap_or_else(|e| panic!("kgtrace failed on {name}: {e}"));
    report
}

/// kgtrace's library pipeline over the capture at `path`, with no filter.
pub fn analyse_path(path: &std::path::Path, view: View) -> Report {
    let opts = Options::analyse(vec![path.to_path_buf()], view, Format::Json);
    let (report, _, _) = kgtrace::analyse(&opts)
        .unwrap_or_else(|e| panic!("kgtrace failed on {}: {e}", path.display()));
    report
}

/// The report's rebalance records, out of their boxes, to compare.
pub fn records(report: Report) -> Vec<kgtrace::report::Rebalance> {
    report.rebalances.into_iter().map(|r| *r).collect()
}

/// `fixtures/snaplen` in this checkout: lab captures cut with `editcap -s N`.
pub fn snaplen_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("snaplen")
}

/// The cut capture `<name>.s<snap>.pcap[ng]` of lab fixture `name`.
pub fn snaplen_capture_of(name: &str, snap: u32) -> PathBuf {
    let dir = snaplen_dir();
    ["pcap", "pcapng"]
        .iter()
        .map(|ext| dir.join(format!("{name}.s{snap}.{ext}")))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no s{snap} capture of {name} in {}", dir.display()))
}

/// The parsed JSON file at `path`.
pub fn json_file(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad JSON in {}: {e}", path.display()))
}

/// The parsed `<name>.truth.json`.
pub fn truth_of(name: &str) -> serde_json::Value {
    let path = fixture_dir(name).join(format!("{name}.truth.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad JSON in {}: {e}", path.display()))
}

/// One row of a stored tshark field decode: column name → value (empty
/// string when tshark printed nothing).
pub type TsvRow = HashMap<String, String>;

/// The rows of `<name>.tshark.tsv` (header line first in the file).
pub fn tshark_rows(name: &str) -> Vec<TsvRow> {
    let path = fixture_dir(name).join(format!("{name}.tshark.tsv"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            header
                .iter()
                .zip(l.split('\t').chain(std::iter::repeat("")))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn every_lab_fixture_on_disk_is_in_the_checked_list() {
    let mut on_disk: Vec<String> = std::fs::read_dir(lab_dir())
        .expect("fixtures/lab is readable")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".truth.json"))
                .map(str::to_string)
        })
        .collect();
    on_disk.sort();
    let listed: Vec<String> = LAB_FIXTURES.iter().map(|s| s.to_string()).collect();
    assert_eq!(on_disk, listed, "tests/util LAB_FIXTURES is out of date");
}

#[test]
fn every_kafka_fixture_on_disk_is_in_the_checked_list() {
    let mut on_disk: Vec<String> = std::fs::read_dir(kafka_dir())
        .expect("fixtures/kafka is readable")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".truth.json"))
                .map(str::to_string)
        })
        .collect();
    on_disk.sort();
    let listed: Vec<String> = KAFKA_FIXTURES.iter().map(|s| s.to_string()).collect();
    assert_eq!(on_disk, listed, "tests/util KAFKA_FIXTURES is out of date");
}
