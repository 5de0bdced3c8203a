//! Captures cut by a small snap length (issue 11): the cut decode against
//! the whole one.
//!
//! Takes each `fixtures/snaplen/<name>.s<N>` capture and the whole
//! `fixtures/lab/<name>` capture it was cut from (the whole decode is
//! checked against tshark in tshark_agreement). Gives tests that every
//! group-API exchange of the whole capture is still an exchange of the cut
//! one, that every group field the cut decode gives equals the whole one's
//! (a cut never invents or changes a field), that at 200 bytes every field
//! of every group exchange is still decoded (at 128 the group id is), and
//! that the run says once how many packets were cut and at what length.

use std::collections::HashMap;

use kgtrace::render::View;
use kgtrace::report::ExchangeRow;

use crate::util;

/// The group APIs whose fields lead their bodies (OffsetCommit to
/// SyncGroup, keys 8 to 14, as the stored tshark decodes list them).
fn is_group_api(row: &ExchangeRow) -> bool {
    (8..=14).contains(&row.api_key)
}

/// (name, value in the whole decode, value in the cut decode) per field.
fn fields(whole: &ExchangeRow, cut: &ExchangeRow) -> Vec<(&'static str, String, String)> {
    let show = |v: &dyn std::fmt::Debug| format!("{v:?}");
    vec![
        ("api_key", show(&whole.api_key), show(&cut.api_key)),
        (
            "api_version",
            show(&whole.api_version),
            show(&cut.api_version),
        ),
        (
            "correlation_id",
            show(&whole.correlation_id),
            show(&cut.correlation_id),
        ),
        (
            "response_frame",
            show(&whole.response_frame),
            show(&cut.response_frame),
        ),
        ("client_id", show(&whole.client_id), show(&cut.client_id)),
        ("group_id", show(&whole.group_id), show(&cut.group_id)),
        ("member_id", show(&whole.member_id), show(&cut.member_id)),
        (
            "generation_id",
            show(&whole.generation_id),
            show(&cut.generation_id),
        ),
        ("error_code", show(&whole.error_code), show(&cut.error_code)),
    ]
}

/// Group-API exchanges of the whole and the cut capture, by request frame.
fn pairs(name: &str, snap: u32) -> Vec<(ExchangeRow, Option<ExchangeRow>)> {
    let whole = util::analyse(name, View::Decode).exchanges;
    let cut = util::analyse_path(&util::snaplen_capture_of(name, snap), View::Decode).exchanges;
    let mut by_frame: HashMap<u64, ExchangeRow> = cut
        .into_iter()
        .filter_map(|e| e.request_frame.map(|f| (f, e)))
        .collect();
    whole
        .into_iter()
        .filter(|e| is_group_api(e) && e.request_frame.is_some())
        .map(|e| {
            let c = e.request_frame.and_then(|f| by_frame.remove(&f));
            (e, c)
        })
        .collect()
}

/// Every problem with the cut decode of `name` at `snap`; `all_fields`
/// asks that every field be decoded, else that none differ and the group
/// id be decoded.
fn problems(name: &str, snap: u32, all_fields: bool) -> (usize, Vec<String>) {
    let pairs = pairs(name, snap);
    let mut out = Vec::new();
    for (whole, cut) in &pairs {
        let frame = whole.request_frame.unwrap_or_default();
        let Some(cut) = cut else {
            out.push(format!(
                "frame {frame} ({}): no exchange in the cut decode",
                whole.api
            ));
            continue;
        };
        for (field, w, c) in fields(whole, cut) {
            let unread = c == "None" && w != "None";
            // OffsetFetch's error codes follow its whole partition list
            // (OffsetFetchResponse.json): not in a cut answer's bytes.
            let at_the_end = whole.api_key == 9 && field == "error_code";
            let required = !at_the_end
                && (all_fields
                    || field != "member_id" && field != "generation_id" && field != "error_code");
            if (unread && required) || (!unread && w != c) {
                out.push(format!(
                    "frame {frame} ({}): {field} whole {w}, cut {c}",
                    whole.api
                ));
            }
        }
    }
    (pairs.len(), out)
}

fn check(name: &str, snap: u32, all_fields: bool) {
    let (compared, problems) = problems(name, snap, all_fields);
    println!("{name}.s{snap}: {compared} group exchanges compared");
    assert!(
        compared > 50,
        "{name}: too few group exchanges to mean anything"
    );
    assert!(
        problems.is_empty(),
        "{name}.s{snap} against the whole capture:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn captures_cut_at_200_bytes_decode_every_group_field_of_the_whole_capture() {
    for name in [
        "ck_cooperative_sticky",
        "ck_killed",
        "ck_session_timeout",
        "kjs_clean_leave",
        "kjs_killed",
        "kp_clean_leave",
    ] {
        check(name, 200, true);
    }
}

#[test]
fn captures_cut_at_128_bytes_decode_every_group_id_and_never_a_wrong_field() {
    for name in ["ck_killed", "kjs_killed"] {
        check(name, 128, false);
    }
}

#[test]
fn a_cut_capture_is_one_snap_length_note_with_the_length_and_the_advice() {
    let run = util::run(&[
        "rebalances",
        "--format",
        "json",
        "fixtures/snaplen/kjs_killed.s200.pcap",
    ])
    .expect_code(0);
    let report = util::json(&run.stdout);
    let notes: Vec<&serde_json::Value> = util::rows(&report, "diagnostics")
        .iter()
        .filter(|d| d["kind"] == "snap_length")
        .collect();
    assert_eq!(notes.len(), 1, "{report}");
    let detail = notes[0]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("a snap length of 200 bytes"), "{detail}");
    assert!(detail.contains("tcpdump -s 0"), "{detail}");
    let kinds = &report["diagnostic_counts"];
    assert!(
        kinds.get("stream_gap").is_none(),
        "cut packets are not lost: {kinds}"
    );
    assert!(
        kinds.get("malformed_packet").is_none(),
        "nor malformed: {kinds}"
    );
}

#[test]
fn a_whole_capture_has_no_snap_length_note() {
    let run = util::run(&[
        "rebalances",
        "--format",
        "json",
        "fixtures/lab/kjs_killed.pcap",
    ]);
    let report = util::json(&run.expect_code(0).stdout);
    assert!(report["diagnostic_counts"].get("snap_length").is_none());
}

/// Rebalances of one `kgtrace rebalances --format json PATH` run.
fn rebalance_rows(path: &str) -> Vec<serde_json::Value> {
    let report = util::json(&util::run(&["rebalances", "--format", "json", path]).stdout);
    util::rows(&report, "rebalances")
        .iter()
        .map(|r| {
            serde_json::json!([
                r["group"],
                r["previous_generation"],
                r["generation"],
                r["trigger"]["kind"],
                r["trigger"]["member_id"]
            ])
        })
        .collect()
}

#[test]
fn a_gzipped_cut_capture_gives_the_same_rebalances_as_the_cut_capture() {
    use std::io::Write as _;
    let cut = "fixtures/snaplen/kjs_killed.s200.pcap";
    let want = rebalance_rows(cut);
    assert!(want.len() >= 3, "{want:?}");
    let bytes = std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(cut))
        .expect("the cut capture");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&bytes).expect("gzip in memory");
    let path = std::env::temp_dir().join(format!("kgtrace-snap-{}.pcap.gz", std::process::id()));
    std::fs::write(&path, gz.finish().expect("gzip ends")).expect("written");
    let got = rebalance_rows(path.to_str().expect("UTF-8 temp path"));
    let _ = std::fs::remove_file(&path);
    assert_eq!(got, want);
}
