//! What the lab-fixture tests share: where the committed fixtures live, how
//! to run kgtrace's library pipeline over one of them, and how to read the
//! small JSON and TSV files stored next to each capture.
//!
//! Takes fixture names (`ck_killed`); gives kgtrace [`Report`]s, the parsed
//! `<name>.truth.json` and the rows of `<name>.tshark.tsv`. Everything is read
//! from `CARGO_MANIFEST_DIR/fixtures/lab`, never from ../shared.

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

/// `fixtures/lab` in this checkout.
pub fn lab_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("lab")
}

/// The capture of fixture `name` (`.pcap` or `.pcapng`).
pub fn capture_of(name: &str) -> PathBuf {
    let dir = lab_dir();
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
    let path = lab_dir().join(format!("{name}.truth.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad JSON in {}: {e}", path.display()))
}

/// One row of a stored tshark field decode: column name → value (empty
/// string when tshark printed nothing).
pub type TsvRow = HashMap<String, String>;

/// The rows of `<name>.tshark.tsv` (header line first in the file).
pub fn tshark_rows(name: &str) -> Vec<TsvRow> {
    let path = lab_dir().join(format!("{name}.tshark.tsv"));
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
