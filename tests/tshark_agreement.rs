//! kgtrace's `decode` against Debian tshark 4.0.17's decode of the same
//! captures (issue 2's done criterion).
//!
//! Takes each lab fixture's capture and its stored `<name>.tshark.tsv` (the
//! group APIs 8–14, one row per Kafka PDU, columns in fixtures/README.md).
//! Gives one test per fixture that checks:
//!
//! - every exchange tshark decoded without `_ws.malformed` (request row and
//!   its paired response row) is an exchange of kgtrace's with the same
//!   request frame, response frame, api_key, api_version, correlation_id,
//!   group id, member id, generation and error code;
//! - every exchange tshark could not decode (malformed, or its response
//!   never paired) is still decoded by kgtrace, with its group id;
//! - kgtrace reports no group-API exchange that tshark saw no PDU of.
//!
//! Where tshark is wrong on a row it did not flag, the row goes in
//! [`EXCEPTIONS`] with the reason; a listed exception that no longer
//! disagrees fails the test too. Run with `-- --show-output` for the counts.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use kgtrace::render::View;
use kgtrace::report::ExchangeRow;

use crate::util::{self, TsvRow};

/// A row where tshark decoded without flagging it malformed, yet is wrong.
struct Exception {
    fixture: &'static str,
    /// tshark's frame number of the request.
    frame: u64,
    field: &'static str,
    /// Why tshark, not kgtrace, is wrong.
    why: &'static str,
}

/// Rows tshark got wrong without flagging them. Empty today: on every
/// unflagged row of the 14 fixtures, tshark and kgtrace agree field for
/// field. (FindCoordinator's group is not an exception: the stored decode
/// does not export tshark's `kafka.coordinator_key`, so there is nothing to
/// compare; see `expected_group`.)
const EXCEPTIONS: &[Exception] = &[];

/// A request version kgtrace cannot decode the body of yet (so it has no
/// group id), while tshark reads its group id.
struct DecodeGap {
    api_key: i16,
    api_version: i16,
    /// Why, and where it shows.
    why: &'static str,
}

/// Known body-decoding gaps of kgtrace, found by the Apache Kafka fixtures.
const DECODE_GAPS: &[DecodeGap] = &[
    DecodeGap {
        api_key: 8,
        api_version: 10,
        why: "OffsetCommit v10, sent by Apache Kafka 4.4's Java consumer with \
          group.protocol=consumer (ak4_k848_*): the kafka-protocol crate 0.18 that \
          kgtrace decodes with stops at v9, so kgtrace pairs and times these \
          exchanges but reads no group id, member id or epoch from them.",
    },
    DecodeGap {
        api_key: 9,
        api_version: 10,
        why: "OffsetFetch v10, sent by the same consumers (ak4_k848_*, ak4_java_upgrade): \
          past kafka-protocol 0.18's v9 as well; paired and timed, fields not read.",
    },
];

/// The fields compared, tshark's value then kgtrace's (`None` = absent).
type Field = (&'static str, Option<String>, Option<String>);

fn cell<'a>(row: &'a TsvRow, column: &str) -> Option<&'a str> {
    row.get(column)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

/// First occurrence of a field tshark aggregated with `,` (`-E occurrence=a`):
/// the top-level one (later ones are members' or partitions').
fn first<'a>(row: &'a TsvRow, column: &str) -> Option<&'a str> {
    cell(row, column)
        .and_then(|v| v.split(',').next())
        .filter(|v| !v.is_empty())
}

fn number(row: &TsvRow, column: &str) -> Option<i64> {
    first(row, column).and_then(|v| v.parse().ok())
}

fn malformed(row: &TsvRow) -> bool {
    cell(row, "_ws.malformed").is_some()
}

/// tshark's group id: the request's, else the response's. FindCoordinator
/// (10) carries its group as `kafka.coordinator_key`, which the stored
/// field list does not include: nothing to compare there.
fn expected_group(api_key: i64, q: &TsvRow, p: &TsvRow) -> Option<Option<String>> {
    if api_key == 10 {
        return None;
    }
    let group = first(q, "kafka.consumer_group").or(first(p, "kafka.consumer_group"));
    Some(group.map(str::to_string))
}

/// Field by field, as both tools see one exchange; kgtrace's member id and
/// generation are the request's, else the response's, like tshark's here.
fn fields(q: &TsvRow, p: &TsvRow, e: &ExchangeRow) -> Vec<Field> {
    let s = |v: Option<i64>| v.map(|n| n.to_string());
    let api_key = number(q, "kafka.request_key").unwrap_or(-1);
    let mut out = header(q, e);
    out.extend([
        (
            "response_frame",
            s(number(p, "frame.number")),
            s(e.response_frame.map(|f| f as i64)),
        ),
        (
            "member_id",
            first(q, "kafka.member_id")
                .or(first(p, "kafka.member_id"))
                .map(str::to_string),
            e.member_id.clone().filter(|m| !m.is_empty()),
        ),
        (
            "generation_id",
            s(number(q, "kafka.generation_id").or(number(p, "kafka.generation_id"))),
            s(e.generation_id.map(i64::from)),
        ),
        (
            "error_code",
            s(number(p, "kafka.error")),
            s(e.error_code.map(i64::from)),
        ),
    ]);
    if let Some(group) = expected_group(api_key, q, p) {
        out.push(("group_id", group, e.group_id.clone()));
    }
    out
}

/// What one fixture's comparison found.
#[derive(Default)]
struct Tally {
    compared: usize,
    agreed: usize,
    fields: usize,
    undecoded_by_tshark: usize,
    find_coordinator_groups_not_compared: usize,
    /// Requests of a [`DECODE_GAPS`] version: kgtrace frames them (header,
    /// pairing) but cannot read their body.
    known_decode_gaps: usize,
    problems: String,
    /// `(frame, field)` of every disagreement, to hold against [`EXCEPTIONS`].
    disagreements: Vec<(u64, &'static str, String)>,
}

fn frame_of(row: &TsvRow) -> u64 {
    cell(row, "frame.number")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The request header as both tools read it: tshark decodes headers right
/// even where it then misreads the body.
fn header(q: &TsvRow, e: &ExchangeRow) -> Vec<Field> {
    let s = |v: Option<i64>| v.map(|n| n.to_string());
    vec![
        (
            "api_key",
            s(number(q, "kafka.request_key")),
            s(Some(e.api_key.into())),
        ),
        (
            "api_version",
            s(number(q, "kafka.api_version")),
            s(Some(e.api_version.into())),
        ),
        (
            "correlation_id",
            s(number(q, "kafka.correlation_id")),
            s(Some(e.correlation_id.into())),
        ),
        (
            "client_id",
            cell(q, "kafka.client_id").map(str::to_string),
            e.client_id.as_deref().map(str::to_string),
        ),
    ]
}

/// Requests tshark could not decode must still be kgtrace exchanges, with
/// the same header and a group id.
fn check_undecoded(t: &mut Tally, q: &TsvRow, by_request: &HashMap<u64, &ExchangeRow>) {
    t.undecoded_by_tshark += 1;
    let frame = frame_of(q);
    let Some(e) = by_request.get(&frame) else {
        let _ = writeln!(
            t.problems,
            "  frame {frame}: tshark could not decode it and kgtrace has no exchange for it"
        );
        return;
    };
    let gap = DECODE_GAPS
        .iter()
        .any(|g| g.api_key == e.api_key && g.api_version == e.api_version);
    if gap {
        t.known_decode_gaps += 1;
    } else if e.group_id.as_deref().is_none_or(str::is_empty) {
        let _ = writeln!(
            t.problems,
            "  frame {frame}: kgtrace decoded {} without a group id",
            e.api
        );
    }
    for (name, theirs, ours) in header(q, e) {
        if theirs != ours {
            let _ = writeln!(
                t.problems,
                "  frame {frame}: header {name} differs: tshark {theirs:?}, kgtrace {ours:?}"
            );
        }
    }
}

fn compare_one(t: &mut Tally, q: &TsvRow, p: &TsvRow, e: &ExchangeRow) {
    t.compared += 1;
    let frame = frame_of(q);
    let api_key = number(q, "kafka.request_key").unwrap_or(-1);
    if expected_group(api_key, q, p).is_none() {
        t.find_coordinator_groups_not_compared += 1;
    }
    let mut same = true;
    for (name, theirs, ours) in fields(q, p, e) {
        t.fields += 1;
        if theirs != ours {
            same = false;
            let listed = format!("tshark {theirs:?}, kgtrace {ours:?}");
            t.disagreements.push((frame, name, listed));
        }
    }
    if same {
        t.agreed += 1;
    }
}

/// Every group-API exchange of kgtrace's must show up in tshark's rows.
fn check_nothing_invented(t: &mut Tally, rows: &[TsvRow], exchanges: &[ExchangeRow]) {
    let frames: Vec<u64> = rows.iter().map(frame_of).collect();
    for e in exchanges.iter().filter(|e| (8..=14).contains(&e.api_key)) {
        let seen = |f: Option<u64>| f.is_some_and(|f| frames.contains(&f));
        if !seen(e.request_frame) && !seen(e.response_frame) {
            let _ = writeln!(
                t.problems,
                "  kgtrace {} (frames {:?}/{:?}) has no PDU in tshark's decode",
                e.api, e.request_frame, e.response_frame
            );
        }
    }
}

/// tshark's answer rows by the frame of their request. Answers tshark
/// could not pair are counted as undecoded and must be kgtrace exchanges.
fn pair_answers<'a>(
    t: &mut Tally,
    rows: &'a [TsvRow],
    requests: &HashMap<u64, &TsvRow>,
    by_response: &HashMap<u64, &ExchangeRow>,
) -> HashMap<u64, &'a TsvRow> {
    let mut answer = HashMap::new();
    for r in rows
        .iter()
        .filter(|r| cell(r, "kafka.response_key").is_some())
    {
        match number(r, "kafka.request_frame").and_then(|f| u64::try_from(f).ok()) {
            Some(f) if requests.contains_key(&f) => {
                answer.insert(f, r);
            }
            _ => {
                t.undecoded_by_tshark += 1;
                let decoded = by_response
                    .get(&frame_of(r))
                    .and_then(|e| e.group_id.as_ref());
                if decoded.is_none() {
                    let _ = writeln!(
                        t.problems,
                        "  unpaired tshark answer in frame {}: not decoded by kgtrace",
                        frame_of(r)
                    );
                }
            }
        }
    }
    answer
}

fn tally(name: &str) -> Tally {
    let rows = util::tshark_rows(name);
    let exchanges = util::analyse(name, View::Decode).exchanges;
    let by_request: HashMap<u64, &ExchangeRow> = exchanges
        .iter()
        .filter_map(|e| e.request_frame.map(|f| (f, e)))
        .collect();
    let by_response: HashMap<u64, &ExchangeRow> = exchanges
        .iter()
        .filter_map(|e| e.response_frame.map(|f| (f, e)))
        .collect();
    let requests: HashMap<u64, &TsvRow> = rows
        .iter()
        .filter(|r| cell(r, "kafka.request_key").is_some())
        .map(|r| (frame_of(r), r))
        .collect();
    let mut t = Tally::default();
    let answer = pair_answers(&mut t, &rows, &requests, &by_response);
    let mut frames: Vec<u64> = requests.keys().copied().collect();
    frames.sort_unstable();
    for frame in frames {
        let q = requests[&frame];
        match (answer.get(&frame), by_request.get(&frame)) {
            (Some(p), Some(e)) if !malformed(q) && !malformed(p) => compare_one(&mut t, q, p, e),
            (Some(p), None) if !malformed(q) && !malformed(p) => {
                let _ = writeln!(
                    t.problems,
                    "  frame {frame}: tshark decoded it, kgtrace has no exchange"
                );
            }
            _ => check_undecoded(&mut t, q, &by_request),
        }
    }
    check_nothing_invented(&mut t, &rows, &exchanges);
    t
}

/// Runs the comparison on one fixture; panics with every problem.
fn check(name: &str) {
    let mut t = tally(name);
    let listed: Vec<(u64, &str)> = EXCEPTIONS
        .iter()
        .filter(|x| x.fixture == name)
        .inspect(|x| println!("  exception: frame {} {}: {}", x.frame, x.field, x.why))
        .map(|x| (x.frame, x.field))
        .collect();
    for (frame, field, what) in &t.disagreements {
        if !listed.contains(&(*frame, *field)) {
            let _ = writeln!(t.problems, "  frame {frame}: {field} differs: {what}");
        }
    }
    let mut exceptions = 0;
    for (frame, field) in &listed {
        if t.disagreements
            .iter()
            .any(|(f, n, _)| f == frame && n == field)
        {
            exceptions += 1;
        } else {
            let _ = writeln!(
                t.problems,
                "  stale EXCEPTIONS entry: frame {frame} {field} now agrees"
            );
        }
    }
    println!(
        "{name}: {} exchanges compared ({} fields), {} agreed, {exceptions} exception(s); \
         {} tshark could not decode or pair (malformed, or no answer), all decoded by kgtrace \
         ({} of a known kgtrace decode gap); \
         {} FindCoordinator group ids not in the stored decode",
        t.compared,
        t.fields,
        t.agreed,
        t.undecoded_by_tshark,
        t.known_decode_gaps,
        t.find_coordinator_groups_not_compared
    );
    if t.known_decode_gaps > 0 {
        for g in DECODE_GAPS {
            println!("  known decode gap: {}", g.why);
        }
    }
    assert!(t.compared > 0, "{name}: nothing compared");
    assert!(
        t.problems.is_empty(),
        "{name} against tshark:\n{}",
        t.problems
    );
}

macro_rules! tshark_tests {
    ($($test:ident => $fixture:literal,)*) => {
        $(
            #[test]
            fn $test() {
                check($fixture);
            }
        )*

        #[test]
        fn every_lab_fixture_has_a_tshark_test() {
            let mut tested = vec![$($fixture),*];
            tested.sort_unstable();
            assert_eq!(tested, util::LAB_FIXTURES.to_vec());
        }
    };
}

tshark_tests! {
    decode_of_ck_cooperative_sticky_agrees_with_tshark => "ck_cooperative_sticky",
    decode_of_ck_killed_agrees_with_tshark => "ck_killed",
    decode_of_ck_max_poll_agrees_with_tshark => "ck_max_poll",
    decode_of_ck_midstream_agrees_with_tshark => "ck_midstream",
    decode_of_ck_session_timeout_agrees_with_tshark => "ck_session_timeout",
    decode_of_ck_static_expired_agrees_with_tshark => "ck_static_expired",
    decode_of_ck_static_restart_agrees_with_tshark => "ck_static_restart",
    decode_of_kjs_clean_leave_agrees_with_tshark => "kjs_clean_leave",
    decode_of_kjs_join_one_by_one_agrees_with_tshark => "kjs_join_one_by_one",
    decode_of_kjs_killed_agrees_with_tshark => "kjs_killed",
    decode_of_kp_clean_leave_agrees_with_tshark => "kp_clean_leave",
    decode_of_kp_max_poll_agrees_with_tshark => "kp_max_poll",
    decode_of_kp_static_restart_agrees_with_tshark => "kp_static_restart",
    decode_of_kp_ten_members_agrees_with_tshark => "kp_ten_members",
}

#[test]
fn all_lab_fixtures_together_agree_with_tshark() {
    let (mut compared, mut agreed, mut undecoded) = (0, 0, 0);
    for name in util::LAB_FIXTURES {
        let t = tally(name);
        compared += t.compared;
        agreed += t.agreed;
        undecoded += t.undecoded_by_tshark;
    }
    println!(
        "all lab fixtures: {compared} exchanges compared with tshark, {agreed} agreed, \
         {} exception(s); {undecoded} exchanges tshark could not decode or pair",
        EXCEPTIONS.len()
    );
    let excepted: HashSet<(&str, u64)> = EXCEPTIONS.iter().map(|x| (x.fixture, x.frame)).collect();
    assert_eq!(agreed + excepted.len(), compared);
}

/// The same comparison on every Apache Kafka fixture (fixtures/kafka):
/// Apache Kafka 3.9 and 4.x brokers answer the Java consumer and librdkafka
/// with newer versions than tansu did, so this is where tshark's gaps show.
#[test]
fn every_apache_kafka_fixture_agrees_with_tshark() {
    let mut failed = Vec::new();
    for name in util::KAFKA_FIXTURES {
        if util::snapped(name) {
            // tshark decodes the cut PDUs as far as they go; nothing to agree on
            println!("{name}: captured with a snap length, not compared");
            continue;
        }
        if let Err(e) = std::panic::catch_unwind(|| check(name)) {
            failed.push(
                e.downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_else(|| format!("{name}: panic")),
            );
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn every_known_decode_gap_is_explained() {
    for g in DECODE_GAPS {
        assert!(!g.why.is_empty(), "api {} v{}", g.api_key, g.api_version);
    }
}

/// Kafka's name of a [`DECODE_GAPS`] API, as kgtrace's diagnostics write it.
fn gap_api_name(api_key: i16) -> &'static str {
    match api_key {
        8 => "OffsetCommit",
        9 => "OffsetFetch",
        _ => "?",
    }
}

/// Issue 11: no diagnostic for well-formed traffic. Every
/// `undecodable_message` on the Apache Kafka fixtures is a listed decode
/// gap (a version past the crate), and a fixture with no such traffic has
/// none (ApiVersions v5 of the Kafka 4.x Java clients was ~10 per ak4
/// fixture before it was decoded).
#[test]
fn every_undecodable_message_on_the_apache_kafka_fixtures_is_a_listed_decode_gap() {
    use kgtrace::DiagnosticKind;
    let mut problems = Vec::new();
    for name in util::KAFKA_FIXTURES {
        let report = util::analyse(name, View::Decode);
        let count = report
            .diagnostic_counts
            .iter()
            .find(|c| c.kind == DiagnosticKind::UndecodableMessage)
            .map_or(0, |c| c.count);
        let gap_traffic = report.exchanges.iter().any(|e| {
            DECODE_GAPS
                .iter()
                .any(|g| g.api_key == e.api_key && g.api_version == e.api_version)
        });
        if count > 0 && !gap_traffic {
            problems.push(format!(
                "{name}: {count} undecodable messages, no gap traffic"
            ));
        }
        for d in report
            .diagnostics
            .iter()
            .filter(|d| d.kind == DiagnosticKind::UndecodableMessage)
        {
            let listed = DECODE_GAPS.iter().any(|g| {
                d.detail
                    .starts_with(&format!("{} v{} ", gap_api_name(g.api_key), g.api_version))
            });
            if !listed {
                problems.push(format!("{name}: {} at {}", d.detail, d.at));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
