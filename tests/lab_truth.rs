//! kgtrace against the ground truth of every real-broker lab fixture.
//!
//! Takes each `fixtures/lab/<name>.pcap[ng]` and its `<name>.truth.json`
//! (written by lab/truth.py from the driver's actions and the clients' own
//! logs, never from the capture; format in lab/README.md). Gives one test
//! per fixture that checks issue 5's done criteria:
//!
//! a. every generation a client logged inside the capture window is in its
//!    group's `generations_seen`;
//! b. every truth rebalance inside the capture has a kgtrace rebalance with
//!    the same group, previous generation and generation, the same trigger
//!    kind and (when the truth names one) a trigger client that is the
//!    truth's `client_id` or one of its `also` (equally responsible);
//! c. kgtrace reports no rebalance the truth does not have.
//!
//! Where kgtrace and the truth disagree today, the disagreement is listed,
//! with the reason, in [`KNOWN_DIFFERENCES`]; the test fails on any
//! disagreement not listed there AND on any listed one that no longer
//! happens, so the table always says exactly how far kgtrace is from the
//! truth. Run with `-- --show-output` to see each fixture's summary and its
//! driver actions.

use std::fmt::Write as _;
use std::path::Path;

use kgtrace::render::View;
use kgtrace::report::Rebalance;
use serde_json::Value;

use crate::util;

/// One disagreement between kgtrace and a fixture's truth that is known and
/// explained. `truth` and `kgtrace` read `kind client` (`kind` alone when no
/// client is named, `none` when that side has no such rebalance).
struct Known {
    fixture: &'static str,
    group: &'static str,
    from: Option<i32>,
    to: Option<i32>,
    truth: &'static str,
    kgtrace: &'static str,
    /// Why they differ, and who is closer to right.
    why: &'static str,
}

/// Every disagreement kgtrace has with the truth today. Keep it true: the
/// tests fail when an entry stops happening (delete it) or changes.
const KNOWN_DIFFERENCES: &[Known] = &[
    // --- ck_cooperative_sticky: a second KIP-429 follow-up ---
    Known {
        fixture: "ck_cooperative_sticky",
        group: "g1",
        from: Some(2),
        to: Some(3),
        truth: "previous_rebalance_failed g1-c3",
        kgtrace: "member_joined g1-c3",
        why: "Generation 3 began with g1-c1's JoinGroup of frame 946 \
              (19:03:44.396), 2 ms after its generation-2 SyncGroup answer \
              (frame 942) and its callback revoking lab-0 and lab-2: \
              librdkafka's cooperative rejoin after a revocation (KIP-429). \
              The SyncGroup failure the truth cites (g1-c3's generation-1 \
              SyncGroup, answered REBALANCE_IN_PROGRESS in frame 1023 at \
              19:03:45.835) comes after the round began. kgtrace sees the \
              request only as a known member rejoining a Stable group (it \
              does not compare subscription metadata, so it cannot tell the \
              owned partitions changed) and carries on the cause of the \
              rounds before, g1-c3 joining, at low confidence. Neither names \
              g1-c1's follow-up; the truth marks only the first follow-up \
              after a driver action expected.",
    },
];

/// A rebalance as the truth records it.
struct TruthRebalance {
    group: String,
    from: Option<i32>,
    to: Option<i32>,
    trigger: String,
    client_id: Option<String>,
    /// Clients the truth holds equally responsible.
    also: Vec<String>,
    /// The member ids of `client_id` and `also` (a broker log names members
    /// by member id only).
    member_ids: Vec<String>,
    /// The driver action behind it, if any (`start`, `leave`, `kill`...).
    action: Option<String>,
    expected: bool,
    in_capture: bool,
}

/// One line of the comparison: a disagreement, in the [`Known`] terms.
#[derive(Debug, PartialEq)]
struct Disagreement {
    group: String,
    from: Option<i32>,
    to: Option<i32>,
    truth: String,
    kgtrace: String,
}

fn int(v: &Value) -> Option<i32> {
    v.as_i64().and_then(|n| i32::try_from(n).ok())
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

fn truth_rebalances(truth: &Value) -> Vec<TruthRebalance> {
    let list = truth["rebalances"]
        .as_array()
        .expect("truth has rebalances");
    list.iter()
        .map(|r| TruthRebalance {
            group: text(&r["group"]).expect("rebalance has a group"),
            from: int(&r["from_generation"]),
            to: int(&r["to_generation"]),
            trigger: text(&r["trigger"]).expect("rebalance has a trigger"),
            client_id: text(&r["client_id"]),
            also: r["also"]
                .as_array()
                .map(|a| a.iter().filter_map(|x| text(&x["client_id"])).collect())
                .unwrap_or_default(),
            member_ids: std::iter::once(&r["member_id"])
                .chain(
                    r["also"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|a| &a["member_id"]),
                )
                .filter_map(text)
                .collect(),
            action: text(&r["action"]),
            expected: r["expected"].as_bool().unwrap_or(false),
            in_capture: r["in_capture"].as_bool() != Some(false),
        })
        .collect()
}

fn verdict(kind: &str, client: Option<&str>) -> String {
    match client {
        Some(c) => format!("{kind} {c}"),
        None => kind.to_string(),
    }
}

fn kgtrace_verdict(r: &Rebalance) -> String {
    verdict(&r.trigger.kind, r.trigger.client_id.as_deref())
}

fn agrees(t: &TruthRebalance, r: &Rebalance) -> bool {
    let client_ok = match &t.client_id {
        None => true,
        Some(c) => r
            .trigger
            .client_id
            .as_ref()
            .is_some_and(|k| k == c || t.also.contains(k)),
    };
    r.trigger.kind == t.trigger && client_ok
}

/// [`agrees`], or (for Apache Kafka) the same trigger naming the same
/// member id: a broker's log names members by member id only, so kgtrace
/// names no client (KIP-848 member ids carry none) or the static member's
/// `group.instance.id` (the prefix of its member id) instead.
fn agrees_ak(t: &TruthRebalance, r: &Rebalance) -> bool {
    agrees(t, r)
        || (r.trigger.kind == t.trigger
            && r.trigger
                .member_id
                .as_ref()
                .is_some_and(|m| t.member_ids.contains(m)))
}

fn same_key(t: &TruthRebalance, r: &Rebalance) -> bool {
    r.group == t.group && r.previous_generation == t.from && r.generation == t.to
}

/// [`same_key`] for Apache Kafka, whose new groups start at generation 0
/// (`GroupMetadata`'s `generationId = 0` in 3.9's GroupMetadata.scala,
/// `ClassicGroup`'s initial generation 0 in 4.x): the truth cannot know the
/// generation before a group's first round (clients never see 0), so its
/// `from: null` matches kgtrace's 0 (a log says "old generation 0") or null.
fn same_key_ak(t: &TruthRebalance, r: &Rebalance) -> bool {
    let from_ok =
        r.previous_generation == t.from || (t.from.is_none() && r.previous_generation == Some(0));
    r.group == t.group && from_ok && r.generation == t.to
}

/// Pairs truth and kgtrace rebalances (criteria b and c). Returns the
/// disagreements, how many in-capture truth rebalances matched, how many
/// there were, and the kgtrace verdict given to each truth rebalance.
fn compare(
    truth: &[TruthRebalance],
    found: &[Rebalance],
) -> (Vec<Disagreement>, usize, usize, Vec<String>) {
    compare_by(truth, found, same_key, agrees)
}

/// [`compare`] with the rule that pairs a truth rebalance with kgtrace's.
fn compare_by(
    truth: &[TruthRebalance],
    found: &[Rebalance],
    same_key: fn(&TruthRebalance, &Rebalance) -> bool,
    agrees: fn(&TruthRebalance, &Rebalance) -> bool,
) -> (Vec<Disagreement>, usize, usize, Vec<String>) {
    let mut used = vec![false; found.len()];
    let mut out = Vec::new();
    let mut verdicts = Vec::new();
    let (mut matched, mut total) = (0, 0);
    for t in truth {
        let free = |i: &usize| !used[*i] && same_key(t, &found[*i]);
        let good = (0..found.len()).find(|i| free(i) && agrees(t, &found[*i]));
        let pick = good.or_else(|| (0..found.len()).find(free));
        if let Some(i) = pick {
            used[i] = true;
        }
        let said = pick.map_or("none".to_string(), |i| kgtrace_verdict(&found[i]));
        verdicts.push(said.clone());
        if !t.in_capture {
            continue;
        }
        total += 1;
        if good.is_some() {
            matched += 1;
        } else {
            out.push(Disagreement {
                group: t.group.clone(),
                from: t.from,
                to: t.to,
                truth: verdict(&t.trigger, t.client_id.as_deref()),
                kgtrace: said,
            });
        }
    }
    for (_, r) in found.iter().enumerate().filter(|(i, _)| !used[*i]) {
        out.push(Disagreement {
            group: r.group.clone(),
            from: r.previous_generation,
            to: r.generation,
            truth: "none".into(),
            kgtrace: kgtrace_verdict(r),
        });
    }
    (out, matched, total, verdicts)
}

/// Criterion a: generations logged inside the capture that kgtrace missed.
fn missing_generations(name: &str, capture: &Path, truth: &Value) -> Vec<String> {
    let groups = util::analyse_path(capture, View::Groups).groups;
    let window = &truth["capture_window"];
    let (start, stop) = (text(&window["start"]), text(&window["stop"]));
    let mut missing = Vec::new();
    for g in truth["generations"]
        .as_array()
        .expect("truth has generations")
    {
        let ts = text(&g["ts"]).unwrap_or_default();
        // Both are RFC 3339 with milliseconds and `Z`: text order is time order.
        let inside = start.as_deref() <= Some(ts.as_str()) && Some(ts.as_str()) <= stop.as_deref();
        assert_eq!(
            g["in_capture"].as_bool(),
            Some(inside),
            "{name}: truth's in_capture disagrees with its capture_window at {ts}"
        );
        let (group, gen) = (text(&g["group"]).unwrap_or_default(), int(&g["generation"]));
        let seen = groups
            .iter()
            .find(|s| s.group == group)
            .is_some_and(|s| gen.is_some_and(|n| s.generations_seen.contains(&n)));
        if inside && !seen {
            missing.push(format!(
                "{group} generation {gen:?} logged by {} at {ts}",
                g["client_id"]
            ));
        }
    }
    missing
}

fn gens(from: Option<i32>, to: Option<i32>) -> String {
    let show = |g: Option<i32>| g.map_or("-".to_string(), |n| n.to_string());
    format!("{}->{}", show(from), show(to))
}

/// The driver actions behind the truth's rebalances and kgtrace's verdicts.
fn driver_table(truth: &[TruthRebalance], verdicts: &[String]) -> String {
    let mut s = String::new();
    for (t, said) in truth.iter().zip(verdicts) {
        let Some(action) = &t.action else { continue };
        let wanted = verdict(&t.trigger, t.client_id.as_deref());
        let mark = if !t.in_capture {
            "not in capture"
        } else if said == &wanted || t.also.iter().any(|c| said == &verdict(&t.trigger, Some(c))) {
            "ok"
        } else {
            "DIFFERS"
        };
        let also = if t.also.is_empty() {
            String::new()
        } else {
            format!(" (also {})", t.also.join(", "))
        };
        let exp = if t.expected { " expected" } else { "" };
        let _ = writeln!(
            s,
            "  action {action:<14} {} {}: truth {wanted}{also}{exp}; kgtrace {said} [{mark}]",
            t.group,
            gens(t.from, t.to)
        );
    }
    s
}

/// Driver actions on a group that the truth ties to no rebalance (a static
/// member restarted within its session, the close of a static member):
/// criterion c already fails if kgtrace invents one, this only lists them.
fn actions_without_rebalance(truth: &Value) -> String {
    let names = |r: &Value| -> Vec<(Option<String>, Option<String>)> {
        let mut v = vec![(text(&r["action"]), text(&r["client_id"]))];
        for a in r["also"].as_array().into_iter().flatten() {
            v.push((text(&a["action"]), text(&a["client_id"])));
        }
        v
    };
    let caused: Vec<_> = truth["rebalances"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(names)
        .collect();
    let mut s = String::new();
    for a in truth["actions"].as_array().into_iter().flatten() {
        let (action, client) = (text(&a["action"]), text(&a["client_id"]));
        if a["group"].is_null() || caused.contains(&(action.clone(), client.clone())) {
            continue;
        }
        let _ = writeln!(
            s,
            "  action {:<14} {} {}: no rebalance in the truth",
            action.unwrap_or_default(),
            text(&a["group"]).unwrap_or_default(),
            client.unwrap_or_default()
        );
    }
    s
}

/// Known differences the fixture should show today.
fn known_for(name: &str) -> Vec<Disagreement> {
    KNOWN_DIFFERENCES
        .iter()
        .filter(|k| k.fixture == name)
        .map(|k| Disagreement {
            group: k.group.into(),
            from: k.from,
            to: k.to,
            truth: k.truth.into(),
            kgtrace: k.kgtrace.into(),
        })
        .collect()
}

/// Runs criteria a, b and c on one fixture; panics with every problem.
fn check(name: &str) {
    let generations = !util::snapped(name);
    let (capture, truth) = (util::capture_of(name), util::truth_of(name));
    check_capture(name, &capture, &truth, known_for(name), generations);
}

/// Criteria a (when `generations`), b and c on one capture of a fixture
/// (`name` labels it in messages), against `truth_json` and the
/// disagreements `known` for it.
fn check_capture(
    name: &str,
    capture: &Path,
    truth_json: &Value,
    known: Vec<Disagreement>,
    generations: bool,
) {
    let truth = truth_rebalances(truth_json);
    let found = util::records(util::analyse_path(capture, View::Rebalances));
    let (found_diffs, matched, total, verdicts) = compare(&truth, &found);
    let missing = if generations {
        missing_generations(name, capture, truth_json)
    } else {
        Vec::new()
    };
    let unlisted: Vec<&Disagreement> = found_diffs.iter().filter(|d| !known.contains(d)).collect();
    let stale: Vec<&Disagreement> = known.iter().filter(|k| !found_diffs.contains(k)).collect();

    println!(
        "{name}: matched {matched} of {total} truth rebalances in the capture; \
         {} known difference(s); kgtrace reported {} rebalance(s)",
        known.len(),
        found.len()
    );
    print!("{}", driver_table(&truth, &verdicts));
    print!("{}", actions_without_rebalance(truth_json));
    let mut problems = String::new();
    for m in &missing {
        let _ = writeln!(problems, "  (a) generation not in generations_seen: {m}");
    }
    for d in &unlisted {
        let _ = writeln!(
            problems,
            "  (b/c) unlisted disagreement: {} {}: truth `{}`, kgtrace `{}`",
            d.group,
            gens(d.from, d.to),
            d.truth,
            d.kgtrace
        );
    }
    for k in &stale {
        let _ = writeln!(
            problems,
            "  stale KNOWN_DIFFERENCES entry (no longer happens, remove it): {} {}: truth `{}`, kgtrace `{}`",
            k.group,
            gens(k.from, k.to),
            k.truth,
            k.kgtrace
        );
    }
    assert!(problems.is_empty(), "{name} against its truth:\n{problems}");
}

macro_rules! lab_truth_tests {
    ($($test:ident => $fixture:literal,)*) => {
        $(
            #[test]
            fn $test() {
                check($fixture);
            }
        )*

        #[test]
        fn every_lab_fixture_has_a_truth_test() {
            let mut tested = vec![$($fixture),*];
            tested.sort_unstable();
            assert_eq!(tested, util::LAB_FIXTURES.to_vec());
        }
    };
}

lab_truth_tests! {
    ck_cooperative_sticky_follow_ups_match_their_truth_apart_from_listed_differences => "ck_cooperative_sticky",
    ck_killed_member_is_named_as_a_session_timeout => "ck_killed",
    ck_max_poll_member_is_named_as_a_poll_timeout => "ck_max_poll",
    ck_midstream_capture_matches_its_truth => "ck_midstream",
    ck_session_timeout_frozen_member_is_named_as_a_session_timeout => "ck_session_timeout",
    ck_static_expired_restart_matches_its_truth => "ck_static_expired",
    ck_static_restart_within_the_session_is_no_rebalance => "ck_static_restart",
    kjs_clean_leave_is_named_as_member_left => "kjs_clean_leave",
    kjs_join_one_by_one_names_each_joining_member => "kjs_join_one_by_one",
    kjs_killed_member_is_named_as_a_session_timeout => "kjs_killed",
    kp_clean_leave_is_named_as_member_left => "kp_clean_leave",
    kp_max_poll_member_is_named_as_a_poll_timeout => "kp_max_poll",
    kp_static_restart_within_the_session_is_no_rebalance => "kp_static_restart",
    kp_ten_members_burst_matches_its_truth_apart_from_listed_differences => "kp_ten_members",
}

#[test]
fn all_lab_fixtures_together_miss_only_the_known_differences() {
    let (mut matched, mut total) = (0, 0);
    for name in util::LAB_FIXTURES {
        let truth = truth_rebalances(&util::truth_of(name));
        let found = util::records(util::analyse(name, View::Rebalances));
        let (_, m, t, _) = compare(&truth, &found);
        matched += m;
        total += t;
    }
    let known_misses = KNOWN_DIFFERENCES
        .iter()
        .filter(|k| k.truth != "none")
        .count();
    println!(
        "all lab fixtures: {matched} of {total} truth rebalances matched; \
         {known_misses} known misses, {} known extra kgtrace rebalance(s)",
        KNOWN_DIFFERENCES.len() - known_misses
    );
    assert_eq!(matched + known_misses, total);
}

#[test]
fn known_differences_name_only_lab_fixtures() {
    for k in KNOWN_DIFFERENCES {
        assert!(
            util::LAB_FIXTURES.contains(&k.fixture),
            "KNOWN_DIFFERENCES names unknown fixture {}",
            k.fixture
        );
        assert!(!k.why.is_empty());
    }
}

// --- Apache Kafka fixtures (fixtures/kafka) ------------------------------------------------

/// Which inputs of an Apache Kafka fixture kgtrace reads.
const SOURCES: [&str; 3] = ["capture", "log", "both"];

/// One disagreement between kgtrace and an Apache Kafka fixture's truth,
/// for one kind of input (`capture`, `log` = the brokers' server.log
/// excerpts, `both`).
struct AkKnown {
    fixture: &'static str,
    source: &'static str,
    group: &'static str,
    from: Option<i32>,
    to: Option<i32>,
    truth: &'static str,
    kgtrace: &'static str,
    /// Why they differ, against Apache Kafka's source.
    why: &'static str,
}

/// Generations a client logged inside the capture that kgtrace's capture
/// reading does not list in `generations_seen`, with the reason.
const AK_KNOWN_MISSING_GENERATIONS: &[(&str, &str, i32, &str)] = &[];

/// Every disagreement kgtrace has today with an Apache Kafka fixture's
/// truth. Keep it true: a listed entry that stops happening fails too.
const AK_KNOWN_DIFFERENCES: &[AkKnown] = &[
    AkKnown {
        fixture: "ak4_k848_recreated",
        source: "log",
        group: "g1",
        from: Some(3),
        to: Some(5),
        truth: "none",
        kgtrace: "member_left",
        why: LEFT_EMPTY,
    },
    AkKnown {
        fixture: "ak4_k848_recreated",
        source: "both",
        group: "g1",
        from: Some(3),
        to: Some(5),
        truth: "none",
        kgtrace: "member_left g1-c1",
        why: LEFT_EMPTY,
    },
];

/// The truth is made from the members' own logs: no member is left to log
/// the epoch the last leave makes.
const LEFT_EMPTY: &str = "both members left: the broker bumped the group epoch to 4 and 5 \
     (\"Bumped group epoch to 5 with metadata hash 0\", GroupMetadataManager.java removes a \
     leaving member and bumps the epoch) and kgtrace tells that round from the log; no member \
     remained to reconcile to it, so the members' logs, the truth's source, have no such \
     generation. The capture shows no epoch for it either (the leaving members are answered -1)";

fn ak_inputs(name: &str, source: &str) -> Vec<std::path::PathBuf> {
    match source {
        "capture" => vec![util::capture_of(name)],
        "log" => util::server_logs_of(name),
        _ => {
            let mut v = vec![util::capture_of(name)];
            v.extend(util::server_logs_of(name));
            v
        }
    }
}

/// Rebalances of the `both` run that lack evidence from the capture or
/// the log (one record per rebalance, with both kinds of evidence).
fn not_merged(found: &[Rebalance]) -> Vec<String> {
    found
        .iter()
        .filter(|r| {
            !(r.seen_in.iter().any(|s| s == "capture") && r.seen_in.iter().any(|s| s == "log"))
        })
        .map(|r| {
            format!(
                "{} {} seen only in {:?}",
                r.group,
                gens(r.previous_generation, r.generation),
                r.seen_in
            )
        })
        .collect()
}

/// Runs the truth comparison of one Apache Kafka fixture on its capture
/// alone, its server.log alone, and both together; panics with every
/// problem.
fn ak_check(name: &str) {
    let truth_json = util::truth_of(name);
    let truth = truth_rebalances(&truth_json);
    assert!(!truth.is_empty(), "{name}: the truth has no rebalance");
    assert!(
        !util::server_logs_of(name).is_empty(),
        "{name}: no server.log excerpt"
    );
    let mut problems = String::new();
    // Captures cut by a snap length are checked too (issue 11): their cut
    // frames are decoded as far as their captured bytes go.
    for source in SOURCES {
        let found = util::records(util::analyse_inputs(
            ak_inputs(name, source),
            View::Rebalances,
        ));
        let (diffs, matched, total, verdicts) = compare_by(&truth, &found, same_key_ak, agrees_ak);
        let known: Vec<Disagreement> = AK_KNOWN_DIFFERENCES
            .iter()
            .filter(|k| k.fixture == name && k.source == source)
            .map(|k| Disagreement {
                group: k.group.into(),
                from: k.from,
                to: k.to,
                truth: k.truth.into(),
                kgtrace: k.kgtrace.into(),
            })
            .collect();
        println!(
            "{name} [{source}]: matched {matched} of {total} truth rebalances; {} known \
             difference(s); kgtrace reported {} rebalance(s)",
            known.len(),
            found.len()
        );
        print!("{}", driver_table(&truth, &verdicts));
        for d in diffs.iter().filter(|d| !known.contains(d)) {
            let _ = writeln!(
                problems,
                "  [{source}] unlisted disagreement: {} {}: truth `{}`, kgtrace `{}`",
                d.group,
                gens(d.from, d.to),
                d.truth,
                d.kgtrace
            );
        }
        for k in known.iter().filter(|k| !diffs.contains(k)) {
            let _ = writeln!(
                problems,
                "  [{source}] stale AK_KNOWN_DIFFERENCES entry: {} {}: truth `{}`, kgtrace `{}`",
                k.group,
                gens(k.from, k.to),
                k.truth,
                k.kgtrace
            );
        }
        if source == "both" {
            for m in not_merged(&found) {
                let _ = writeln!(problems, "  [both] not merged: {m}");
            }
        }
    }
    // Captures cut by a snap length too (issue 11): a cut frame still
    // carries its generation, so every logged generation must be seen.
    let missing = missing_generations(name, &util::capture_of(name), &truth_json);
    for m in &missing {
        let known = AK_KNOWN_MISSING_GENERATIONS
            .iter()
            .any(|(f, g, n, _)| *f == name && m.starts_with(&format!("{g} generation Some({n}) ")));
        if !known {
            let _ = writeln!(
                problems,
                "  [capture] generation not in generations_seen: {m}"
            );
        }
    }
    for (f, g, n, _) in AK_KNOWN_MISSING_GENERATIONS.iter().filter(|k| k.0 == name) {
        if !missing
            .iter()
            .any(|m| m.starts_with(&format!("{g} generation Some({n}) ")))
        {
            let _ = writeln!(
                problems,
                "  stale AK_KNOWN_MISSING_GENERATIONS entry: {f} {g} generation {n} is now seen"
            );
        }
    }
    assert!(problems.is_empty(), "{name} against its truth:\n{problems}");
}

#[test]
fn every_apache_kafka_fixture_matches_its_truth_from_capture_log_and_both() {
    let mut failed = Vec::new();
    for name in util::KAFKA_FIXTURES {
        if let Err(e) = std::panic::catch_unwind(|| ak_check(name)) {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_else(|| "panic".into());
            failed.push(msg);
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// Issue 11's done criterion on the Apache Kafka captures cut by a snap
/// length (`tcpdump -s 128` / `-s 200`): read from the capture alone, and
/// from the capture with its server.log, every rebalance their truth shows
/// is found with its trigger and nothing else is, with no known difference
/// allowed (the whole comparison above may list some; these may not).
#[test]
fn apache_kafka_captures_cut_by_a_snap_length_give_every_truth_rebalance_with_its_trigger() {
    let snapped: Vec<&str> = util::KAFKA_FIXTURES
        .iter()
        .copied()
        .filter(|n| util::snapped(n))
        .collect();
    assert_eq!(
        snapped,
        [
            "ak4_java_session_timeout_s128",
            "ak4_java_session_timeout_s200"
        ]
    );
    let mut problems = Vec::new();
    for name in snapped {
        let truth = truth_rebalances(&util::truth_of(name));
        for source in ["capture", "both"] {
            let found = util::records(util::analyse_inputs(
                ak_inputs(name, source),
                View::Rebalances,
            ));
            let (diffs, matched, total, _) = compare_by(&truth, &found, same_key_ak, agrees_ak);
            println!("{name} [{source}]: {matched} of {total} truth rebalances matched");
            if total == 0 || matched != total || !diffs.is_empty() {
                problems.push(format!("{name} [{source}]: {diffs:?}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn ak_known_differences_name_only_kafka_fixtures() {
    for k in AK_KNOWN_DIFFERENCES {
        assert!(
            util::KAFKA_FIXTURES.contains(&k.fixture),
            "unknown fixture {}",
            k.fixture
        );
        assert!(SOURCES.contains(&k.source), "unknown source {}", k.source);
        assert!(!k.why.is_empty());
    }
}

// --- Snap-length captures (issue 11) ---------------------------------------
//
// fixtures/snaplen/<name>.s<N>.pcap[ng] is fixtures/lab/<name>'s capture cut
// with `editcap -s N` (as `tcpdump -s N` would have captured it), beside a
// copy of the original's truth. Each must give what its truth shows, apart
// from the original's own KNOWN_DIFFERENCES and the cut-specific ones below.

/// Disagreements only the cut capture has, with why; `fixture` reads
/// `<name>.s<N>`. The tests fail when one stops happening, as above.
// None today. kp_clean_leave.s200 (4 rounds), kjs_killed.s128 and
// ck_killed.s128 (the eviction each) were here: rounds whose member lists
// the cut hid stayed open until the next cause, and late JoinGroup answers
// opened rounds of their own. kgtrace now reads them by Kafka's rules
// (a successful SyncGroup ends the round, a JoinGroup answered with the
// current generation starts none: src/group/classic.rs).
const SNAP_KNOWN_DIFFERENCES: &[Known] = &[];

/// The original fixture's known differences plus the cut capture's own.
fn snap_known_for(name: &str, snap: u32) -> Vec<Disagreement> {
    let label = format!("{name}.s{snap}");
    let mut known: Vec<Disagreement> = known_for(name)
        .into_iter()
        .filter(|k| {
            // A cut-specific entry for the same rebalance replaces it.
            !SNAP_KNOWN_DIFFERENCES.iter().any(|s| {
                s.fixture == label && s.group == k.group && s.from == k.from && s.to == k.to
            })
        })
        .collect();
    known.extend(
        SNAP_KNOWN_DIFFERENCES
            .iter()
            .filter(|k| k.fixture == label)
            .map(|k| Disagreement {
                group: k.group.into(),
                from: k.from,
                to: k.to,
                truth: k.truth.into(),
                kgtrace: k.kgtrace.into(),
            }),
    );
    known
}

fn check_snap(name: &str, snap: u32) {
    let capture = util::snaplen_capture_of(name, snap);
    let truth = util::json_file(&util::snaplen_dir().join(format!("{name}.s{snap}.truth.json")));
    assert_eq!(
        truth,
        util::truth_of(name),
        "{name}.s{snap}.truth.json must be a copy of fixtures/lab/{name}.truth.json"
    );
    let label = format!("{name}.s{snap}");
    check_capture(&label, &capture, &truth, snap_known_for(name, snap), true);
}

macro_rules! snap_truth_tests {
    ($($test:ident => ($fixture:literal, $snap:literal),)*) => {
        $(
            #[test]
            fn $test() {
                check_snap($fixture, $snap);
            }
        )*

        #[test]
        fn every_snaplen_fixture_has_a_truth_test() {
            let mut tested = vec![$(format!("{}.s{}", $fixture, $snap)),*];
            tested.sort_unstable();
            let mut on_disk: Vec<String> = std::fs::read_dir(util::snaplen_dir())
                .expect("fixtures/snaplen is readable")
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter_map(|n| n.strip_suffix(".truth.json").map(str::to_string))
                .collect();
            on_disk.sort_unstable();
            assert_eq!(tested, on_disk);
        }
    };
}

snap_truth_tests! {
    ck_cooperative_sticky_cut_at_200_bytes_matches_its_truth => ("ck_cooperative_sticky", 200),
    ck_killed_cut_at_200_bytes_names_the_session_timeout => ("ck_killed", 200),
    ck_killed_cut_at_128_bytes_matches_its_truth_apart_from_listed_differences => ("ck_killed", 128),
    ck_session_timeout_cut_at_200_bytes_names_the_session_timeout => ("ck_session_timeout", 200),
    kjs_clean_leave_cut_at_200_bytes_names_the_leave => ("kjs_clean_leave", 200),
    kjs_killed_cut_at_200_bytes_names_the_session_timeout => ("kjs_killed", 200),
    kjs_killed_cut_at_128_bytes_matches_its_truth_apart_from_listed_differences => ("kjs_killed", 128),
    kp_clean_leave_cut_at_200_bytes_matches_its_truth_apart_from_listed_differences => ("kp_clean_leave", 200),
}

// --- Issue 10's done criterion: no "N → N" row unless the broker repeated it ------------------

/// The "N → N" rows of a run, with whether each says the broker repeated
/// the generation (a note citing GroupCoordinator `initNextGeneration`).
fn same_generation_rows(found: &[Rebalance]) -> Vec<(String, Option<i32>, bool)> {
    found
        .iter()
        .filter(|r| r.generation.is_some() && r.generation == r.previous_generation)
        .map(|r| {
            let noted = r
                .notes
                .iter()
                .any(|n| n.contains("kept generation") && n.contains("initNextGeneration"));
            (r.group.clone(), r.generation, noted)
        })
        .collect()
}

/// Apache Kafka always moves a rebalance to a new generation
/// (GroupCoordinator.scala / ClassicGroup.java `initNextGeneration`) and a
/// KIP-848 round to a new group epoch, so no Apache Kafka fixture, read
/// from its capture, its server.log or both, has an "N → N" row; the tansu
/// lab fixtures may (tansu repeats a generation), and every such row says
/// so in a note.
#[test]
fn no_fixture_has_a_same_generation_row_unless_the_broker_repeated_it_and_a_note_says_so() {
    let mut problems = Vec::new();
    for name in util::KAFKA_FIXTURES {
        for source in SOURCES {
            let found = util::records(util::analyse_inputs(
                ak_inputs(name, source),
                View::Rebalances,
            ));
            for (group, g, _) in same_generation_rows(&found) {
                problems.push(format!("{name} [{source}] {group}: {g:?} -> {g:?}"));
            }
        }
    }
    let mut tansu_rows = 0;
    for name in util::LAB_FIXTURES {
        let found = util::records(util::analyse(name, View::Rebalances));
        for (group, g, noted) in same_generation_rows(&found) {
            tansu_rows += 1;
            if !noted {
                problems.push(format!(
                    "{name} (tansu) {group}: {g:?} -> {g:?} without the repeated-generation note"
                ));
            }
        }
    }
    println!("tansu fixtures: {tansu_rows} same-generation row(s), each with its note");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// --- Issue 11's crash by FIN: Apache Kafka's Java consumer SIGKILLed ------------------------

/// ak4_java_killed: the Java consumer g1-c2 is SIGKILLed (no LeaveGroup;
/// the kernel closes its connections with FIN) and Kafka 4.4 evicts it
/// after its 6 s session: from the capture, the eviction is a
/// `session_timeout` of g1-c2 that says its connection closed without
/// LeaveGroup, as for librdkafka and KafkaJS.
#[test]
fn a_killed_java_consumer_is_a_session_timeout_whose_connection_closed_without_leavegroup() {
    let report = util::analyse("ak4_java_killed", View::Rebalances);
    let timeouts: Vec<&Rebalance> = report
        .rebalance_records()
        .filter(|r| r.group == "g1" && r.trigger.kind == "session_timeout")
        .collect();
    assert_eq!(timeouts.len(), 1, "{:#?}", report.rebalances);
    let t = &timeouts[0].trigger;
    assert_eq!(t.client_id.as_deref(), Some("g1-c2"), "{t:?}");
    assert!(
        t.detail.contains("closed") && t.detail.contains("without LeaveGroup"),
        "{}",
        t.detail
    );
    assert!(t.detail.contains("killed or crashed"), "{}", t.detail);
}

/// ak39_java4_k848_refused: a Java 4.4 consumer with group.protocol=consumer
/// against Kafka 3.9, whose coordinator does not run the consumer protocol:
/// 3.9 lists ConsumerGroupHeartbeat in its ApiVersions answer yet answers it
/// UNSUPPORTED_VERSION; the client is restarted classic and joins. From the
/// capture alone the group is classic and the refusal is said.
#[test]
fn a_java_consumer_refused_the_consumer_protocol_by_kafka_3_9_is_said_in_words() {
    let report = util::analyse("ak39_java4_k848_refused", View::Report);
    let g1 = report
        .groups
        .iter()
        .find(|g| g.group == "g1")
        .expect("group g1");
    assert_eq!(g1.protocol, "classic");
    let said = g1.notes.join("\n");
    assert!(
        said.contains("g1-c1 asked for the consumer protocol")
            && said.contains("the broker does not offer it (UNSUPPORTED_VERSION)")
            && said.contains("it fell back to classic"),
        "{said}"
    );
}
