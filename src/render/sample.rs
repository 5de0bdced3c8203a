//! Hand-built reports for the renderer tests (test-only).
//!
//! Takes nothing. Gives: [`incident`] (a classic group with a `member_joined`
//! round that had a straggler and a `session_timeout` that removed a member,
//! plus a log-only storm group with `|` in a reason), [`kip848`] (a
//! `consumer`-protocol group whose epoch moves) and [`quiet`] (inputs read,
//! nothing found). Values are written to look like what the pipeline
//! produces from a lab capture; nothing here is read from a fixture file.

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::report::{
    DiagnosticCount, EvidenceLine, ExchangeRow, GroupSummary, InputSummary, MemberJoin,
    MemberSummary, Owner, PartitionStop, Rebalance, RebalanceStop, RemovedMember, Report,
    StateChange, TimelineEntry, Trigger, WorstStop, FORMAT_VERSION,
};
use crate::time::Timestamp;

/// 2024-05-01T12:00:00Z.
const BASE_SECS: i64 = 1_714_564_800;

/// `ms` milliseconds after 12:00:00 UTC.
pub(crate) fn at(ms: i64) -> Timestamp {
    Timestamp(BASE_SECS * 1_000_000_000 + ms * 1_000_000)
}

const PCAP: &str = "lab/broker-1.pcap";
const LOG: &str = "lab/server.log";
const ORDERS: &str = "orders-service";
const BILLING: &str = "billing-ledger";

/// (client_id, member_id) of the three `orders-service` members.
const C1: (&str, &str) = (
    "consumer-orders-1",
    "consumer-orders-1-3f1e7c2a-0d9b-4c8e-9a55-6c1d2e3f4a5b",
);
const C2: (&str, &str) = (
    "consumer-orders-2",
    "consumer-orders-2-8a7b6c5d-1e2f-4a3b-8c9d-0e1f2a3b4c5d",
);
const BROD: (&str, &str) = ("nonode@nohost/<0.1083.0>", "nonode@nohost/<0.1083.0>-9db8");

fn member(m: (&str, &str), host: &str, software: &str, parts: &[&str]) -> MemberSummary {
    MemberSummary {
        member_id: m.1.to_string(),
        group_instance_id: None,
        client_id: Some(m.0.to_string()),
        client_host: Some(host.to_string()),
        client_software: Some(software.to_string()),
        assignment: parts.iter().map(|p| p.to_string()).collect(),
    }
}

fn wire(
    ms: i64,
    m: (&str, &str),
    gen: Option<i32>,
    kind: &str,
    mark: &str,
    frame: u64,
) -> TimelineEntry {
    TimelineEntry {
        ts: at(ms),
        group: Some(ORDERS.to_string()),
        member_id: (!m.1.is_empty()).then(|| m.1.to_string()),
        client_id: Some(m.0.to_string()),
        client_host: Some(host_of(m.0).to_string()),
        generation: gen,
        kind: kind.to_string(),
        mark: mark.to_string(),
        source: PCAP.to_string(),
        frame: Some(frame),
        ..TimelineEntry::default()
    }
}

fn host_of(client: &str) -> &'static str {
    match client {
        "consumer-orders-1" => "10.0.0.21:50122",
        "consumer-orders-2" => "10.0.0.22:41876",
        _ => "10.0.0.23:33410",
    }
}

fn log_entry(
    ms: i64,
    group: &str,
    gen: Option<i32>,
    kind: &str,
    mark: &str,
    line: u64,
    detail: &str,
) -> TimelineEntry {
    TimelineEntry {
        ts: at(ms),
        group: Some(group.to_string()),
        generation: gen,
        kind: kind.to_string(),
        mark: mark.to_string(),
        detail: detail.to_string(),
        source: LOG.to_string(),
        line: Some(line),
        ..TimelineEntry::default()
    }
}

fn evidence_frame(ms: i64, frame: u64, text: &str) -> EvidenceLine {
    EvidenceLine {
        source: PCAP.into(),
        frame: Some(frame),
        line: None,
        ts: at(ms),
        text: text.into(),
    }
}

fn evidence_line(ms: i64, line: u64, text: &str) -> EvidenceLine {
    EvidenceLine {
        source: LOG.into(),
        frame: None,
        line: Some(line),
        ts: at(ms),
        text: text.into(),
    }
}

/// Heartbeats every 9 s for a member between two instants, with the given
/// generation; frames numbered from `frame`. (The Java client's default is
/// every 3 s; a third of them keeps the snapshots reviewable.)
fn heartbeats(m: (&str, &str), from: i64, to: i64, gen: i32, frame: u64) -> Vec<TimelineEntry> {
    (0..)
        .map(|i| from + i * 9_000)
        .take_while(|&ms| ms < to)
        .enumerate()
        .map(|(i, ms)| {
            wire(
                ms,
                m,
                Some(gen),
                "Heartbeat request",
                "heartbeat",
                frame + 2 * i as u64,
            )
        })
        .collect()
}

/// A classic group with two rebalances and a log-only group in a storm.
pub(crate) fn incident() -> Report {
    Report {
        format_version: FORMAT_VERSION,
        inputs: incident_inputs(),
        log_time_zone: "Europe/Berlin".into(),
        groups: vec![orders_group(), billing_group()],
        rebalances: [
            joined_round(),
            timeout_round(),
            billing_leader_round(),
            billing_stuck_round(),
        ]
        .map(Box::new)
        .into(),
        timeline: incident_timeline(),
        exchanges: incident_exchanges(),
        diagnostics: incident_diagnostics(),
        worst_stop: Some(WorstStop {
            group: ORDERS.into(),
            previous_generation: Some(6),
            generation: Some(7),
            partition: Some("orders-3".into()),
            stopped_ms: 45_810.0,
            why_stopped: "owner_silent".into(),
            without_rebalance: false,
        }),
        stops_without_rebalance: Vec::new(),
        input_end: None,
        events_span: None,
        diagnostic_counts: vec![
            DiagnosticCount {
                kind: DiagnosticKind::MidStreamStart,
                count: 3,
            },
            DiagnosticCount {
                kind: DiagnosticKind::UnknownLogLine,
                count: 1_204,
            },
        ],
    }
}

fn incident_inputs() -> Vec<InputSummary> {
    vec![
        InputSummary {
            path: PCAP.into(),
            kind: "capture".into(),
            read_as: "capture".into(),
            records: 48_213,
            bytes: 9_812_344,
            events: 612,
            first_ts: Some(at(0)),
            last_ts: Some(at(270_000)),
            clock_offset_ms: None,
            ..Default::default()
        },
        InputSummary {
            path: LOG.into(),
            kind: "log".into(),
            read_as: "log".into(),
            records: 5_102,
            bytes: 412_330,
            events: 58,
            first_ts: Some(at(1_500)),
            last_ts: Some(at(268_200)),
            clock_offset_ms: Some(-3.2),
            ..Default::default()
        },
    ]
}

fn orders_group() -> GroupSummary {
    GroupSummary {
        group: ORDERS.into(),
        protocol: "classic".into(),
        protocol_type: Some("consumer".into()),
        assignors: vec!["cooperative-sticky".into(), "range".into()],
        state: "Stable".into(),
        generation: Some(7),
        generations_seen: vec![5, 6, 7],
        members: vec![
            member(
                C1,
                "10.0.0.21:50122",
                "apache-kafka-java/3.7.0",
                &["orders-0", "orders-1", "orders-2"],
            ),
            member(
                BROD,
                "10.0.0.23:33410",
                "brod/3.19.1",
                &["orders-3", "orders-4", "orders-5"],
            ),
        ],
        leader: Some(C1.1.into()),
        coordinator: Some("10.0.0.11:9092 (broker 1)".into()),
        rebalance_count: 2,
        rebalances_per_hour: Some(26.7),
        rebalancing_ms: 3_216.0,
        storm: false,
        states: vec![
            StateChange {
                at: at(41_250),
                state: "PreparingRebalance".into(),
                generation: Some(5),
            },
            StateChange {
                at: at(44_172),
                state: "CompletingRebalance".into(),
                generation: Some(6),
            },
            StateChange {
                at: at(44_201),
                state: "Stable".into(),
                generation: Some(6),
            },
            StateChange {
                at: at(190_020),
                state: "PreparingRebalance".into(),
                generation: Some(6),
            },
            StateChange {
                at: at(190_285),
                state: "Stable".into(),
                generation: Some(7),
            },
        ],
        first_seen: Some(at(1_020)),
        last_seen: Some(at(268_400)),
        notes: vec![
            "no traffic from nonode@nohost/<0.1083.0> before 12:00:41: it connected then".into(),
        ],
        ..GroupSummary::default()
    }
}

fn billing_group() -> GroupSummary {
    GroupSummary {
        group: BILLING.into(),
        protocol: "classic".into(),
        state: "PreparingRebalance".into(),
        generation: Some(13),
        generations_seen: vec![12, 13],
        rebalance_count: 2,
        rebalances_per_hour: Some(26.7),
        rebalancing_ms: 1_840.0,
        storm: true,
        first_seen: Some(at(120_000)),
        last_seen: Some(at(268_200)),
        notes: vec!["log only: members and joins are not visible".into()],
        ..GroupSummary::default()
    }
}

fn join(m: (&str, &str), requested_ms: i64, parked_ms: f64, after_start_ms: f64) -> MemberJoin {
    MemberJoin {
        member_id: m.1.into(),
        client_id: Some(m.0.into()),
        requested_at: at(requested_ms),
        parked_ms: Some(parked_ms),
        after_start_ms,
    }
}

fn joined_round() -> Rebalance {
    let straggler = join(C2, 44_155, 17.0, 2_905.0);
    Rebalance {
        group: ORDERS.into(),
        protocol: "classic".into(),
        previous_generation: Some(5),
        generation: Some(6),
        started_at: at(41_250),
        join_completed_at: Some(at(44_172)),
        completed_at: Some(at(44_201)),
        duration_ms: Some(2_951.0),
        trigger: Trigger {
            kind: "member_joined".into(),
            member_id: Some(BROD.1.into()),
            client_id: Some(BROD.0.into()),
            detail: "JoinGroup with an empty member_id while Stable; the 2 existing members rejoined within 2.91 s".into(),
            confidence: "high".into(),
        },
        members_before: vec![
            member(C1, "10.0.0.21:50122", "apache-kafka-java/3.7.0", &["orders-0", "orders-1", "orders-2"]),
            member(C2, "10.0.0.22:41876", "apache-kafka-java/3.7.0", &["orders-3", "orders-4", "orders-5"]),
        ],
        members_after: vec![
            member(C1, "10.0.0.21:50122", "apache-kafka-java/3.7.0", &["orders-0", "orders-1"]),
            member(C2, "10.0.0.22:41876", "apache-kafka-java/3.7.0", &["orders-3", "orders-4"]),
            member(BROD, "10.0.0.23:33410", "brod/3.19.1", &["orders-2", "orders-5"]),
        ],
        joins: vec![join(BROD, 41_250, 2_922.0, 0.0), join(C1, 42_460, 1_712.0, 1_210.0), straggler.clone()],
        straggler: Some(straggler),
        partitions_revoked: vec!["orders-2".into(), "orders-5".into()],
        partitions_assigned: vec!["orders-2".into(), "orders-5".into()],
        evidence: vec![
            evidence_frame(41_250, 4_410, "JoinGroup v9 request from nonode@nohost/<0.1083.0> with member_id \"\""),
            evidence_line(41_253, 4_120, "Preparing to rebalance group orders-service in state PreparingRebalance with old generation 5 (__consumer_offsets-17) (reason: Adding new member nonode@nohost/<0.1083.0>-9db8 with group instance id None; client reason: rebalance | need to rejoin)"),
            evidence_frame(42_460, 4_502, "Heartbeat v4 response REBALANCE_IN_PROGRESS to consumer-orders-1"),
            evidence_frame(44_172, 4_633, "JoinGroup v9 response generation 6, leader consumer-orders-1"),
            evidence_frame(44_201, 4_651, "SyncGroup v5 response to consumer-orders-2 (2 partitions)"),
        ],
        seen_in: vec!["capture".into(), "log".into()],
        status: "completed".into(),
        ..Rebalance::default()
    }
}

fn timeout_round() -> Rebalance {
    let survivors = vec![
        member(
            C1,
            "10.0.0.21:50122",
            "apache-kafka-java/3.7.0",
            &["orders-0", "orders-1", "orders-2"],
        ),
        member(
            BROD,
            "10.0.0.23:33410",
            "brod/3.19.1",
            &["orders-3", "orders-4", "orders-5"],
        ),
    ];
    Rebalance {
        group: ORDERS.into(),
        protocol: "classic".into(),
        previous_generation: Some(6),
        generation: Some(7),
        started_at: at(190_020),
        join_completed_at: Some(at(190_240)),
        completed_at: Some(at(190_285)),
        duration_ms: Some(265.0),
        trigger: Trigger {
            kind: "session_timeout".into(),
            member_id: Some(C2.1.into()),
            client_id: Some(C2.0.into()),
            detail: "no Heartbeat from consumer-orders-2 for 45.0 s (session.timeout.ms 45000); its connection closed at 12:02:31".into(),
            confidence: "high".into(),
        },
        members_before: vec![
            member(C1, "10.0.0.21:50122", "apache-kafka-java/3.7.0", &["orders-0", "orders-1"]),
            member(C2, "10.0.0.22:41876", "apache-kafka-java/3.7.0", &["orders-3", "orders-4"]),
            member(BROD, "10.0.0.23:33410", "brod/3.19.1", &["orders-2", "orders-5"]),
        ],
        members_after: survivors,
        joins: vec![join(C1, 190_110, 130.0, 90.0), join(BROD, 190_140, 100.0, 120.0)],
        straggler: None,
        removed: vec![RemovedMember { member_id: C2.1.into(), client_id: Some(C2.0.into()), how: "session_timeout".into() }],
        partitions_revoked: vec!["orders-3".into(), "orders-4".into()],
        partitions_assigned: vec!["orders-3".into(), "orders-4".into()],
        evidence: vec![
            evidence_frame(151_010, 9_870, "connection 10.0.0.22:41876 -> 10.0.0.11:9092 closed (FIN)"),
            evidence_line(190_020, 4_977, "Member consumer-orders-2-8a7b6c5d-1e2f-4a3b-8c9d-0e1f2a3b4c5d in group orders-service has failed, removing it from the group"),
            evidence_frame(190_240, 11_204, "JoinGroup v9 response generation 7"),
        ],
        seen_in: vec!["capture".into(), "log".into()],
        status: "completed".into(),
        stop: Some(RebalanceStop {
            started_at: at(144_600),
            ended_at: Some(at(190_410)),
            stopped_ms: Some(45_810.0),
            partitions_stopped: Some(2),
        }),
        partitions: vec![silent_stop("orders-3", 190_410, 1_200), silent_stop("orders-4", 190_395, 0)],
        ..Rebalance::default()
    }
}

/// A partition consumer-orders-2 held when it went silent.
fn silent_stop(partition: &str, resumed_ms: i64, reprocessed: i64) -> PartitionStop {
    PartitionStop {
        partition: partition.into(),
        from: Some(Owner {
            member_id: C2.1.into(),
            client_id: Some(C2.0.into()),
        }),
        to: Some(Owner {
            member_id: BROD.1.into(),
            client_id: Some(BROD.0.into()),
        }),
        why_stopped: "owner_silent".into(),
        stopped_at: at(144_600),
        resumed_at: Some(at(resumed_ms)),
        stopped_ms: Some((resumed_ms - 144_600) as f64),
        last_committed_offset: Some(88_100),
        committed_at: Some(at(141_000)),
        last_fetched_offset: Some(88_100 + reprocessed),
        resume_offset: Some(88_100),
        reprocessed: Some(reprocessed),
        skipped: Some(0),
        lag_at_stop: Some(12),
        lag_at_resume: Some(4_480),
        commit_failed: (reprocessed > 0).then(|| "UNKNOWN_MEMBER_ID".into()),
        notes: Vec::new(),
    }
}

fn billing_leader_round() -> Rebalance {
    Rebalance {
        group: BILLING.into(),
        protocol: "classic".into(),
        previous_generation: Some(12),
        generation: Some(13),
        started_at: at(120_000),
        join_completed_at: Some(at(121_800)),
        completed_at: Some(at(121_840)),
        duration_ms: Some(1_840.0),
        trigger: Trigger {
            kind: "leader_rejoined".into(),
            detail: "broker reason: Leader consumer-billing-1 re-joining group during Stable | metadata changed".into(),
            confidence: "medium".into(),
            ..Trigger::default()
        },
        storm: true,
        evidence: vec![
            evidence_line(120_000, 3_301, "Preparing to rebalance group billing-ledger in state PreparingRebalance with old generation 12 (__consumer_offsets-4) (reason: Leader consumer-billing-1 re-joining group during Stable)"),
            evidence_line(121_800, 3_318, "Stabilized group billing-ledger generation 13 (__consumer_offsets-4) with 2 members"),
        ],
        seen_in: vec!["log".into()],
        notes: vec!["log only: no JoinGroup seen, joins unknown".into()],
        status: "completed".into(),
        stop: Some(RebalanceStop {
            started_at: at(120_000),
            ended_at: Some(at(121_840)),
            stopped_ms: Some(1_840.0),
            partitions_stopped: None,
        }),
        ..Rebalance::default()
    }
}

fn billing_stuck_round() -> Rebalance {
    Rebalance {
        group: BILLING.into(),
        protocol: "classic".into(),
        previous_generation: Some(13),
        generation: None,
        started_at: at(262_000),
        trigger: Trigger { kind: "unknown".into(), detail: "no reason logged".into(), confidence: "low".into(), ..Trigger::default() },
        storm: true,
        evidence: vec![evidence_line(262_000, 5_090, "Preparing to rebalance group billing-ledger in state PreparingRebalance with old generation 13 (__consumer_offsets-4) (reason: )")],
        seen_in: vec!["log".into()],
        notes: vec!["still rebalancing when the log ends".into()],
        status: "in_progress".into(),
        waiting_for: vec!["consumer-billing-2".into()],
        stop: Some(RebalanceStop {
            started_at: at(262_000),
            ended_at: None,
            stopped_ms: None,
            partitions_stopped: None,
        }),
        ..Rebalance::default()
    }
}

fn with_error(mut e: TimelineEntry, error: &str) -> TimelineEntry {
    e.error = Some(error.into());
    e
}

fn with_detail(mut e: TimelineEntry, detail: &str) -> TimelineEntry {
    e.detail = detail.into();
    e
}

fn orders_round_one() -> Vec<TimelineEntry> {
    let no_id = (BROD.0, "");
    vec![
        with_detail(wire(41_250, no_id, None, "JoinGroup request", "join", 4_410), "protocols cooperative-sticky, range; session 45000 ms"),
        log_entry(41_253, ORDERS, Some(5), "log: Preparing to rebalance", "state", 4_120, "reason: Adding new member nonode@nohost/<0.1083.0>-9db8; client reason: rebalance | need to rejoin"),
        wire(41_262, BROD, None, "JoinGroup response", "join", 4_412),
        with_error(wire(42_455, C1, Some(5), "Heartbeat response", "heartbeat_failed", 4_502), "REBALANCE_IN_PROGRESS"),
        wire(42_460, C1, Some(5), "JoinGroup request", "join", 4_504),
        with_error(wire(43_900, C2, Some(5), "Heartbeat response", "heartbeat_failed", 4_590), "REBALANCE_IN_PROGRESS"),
        wire(44_155, C2, Some(5), "JoinGroup request", "join", 4_610),
        with_detail(wire(44_172, C1, Some(6), "JoinGroup response", "join", 4_633), "leader, 3 members"),
        wire(44_172, C2, Some(6), "JoinGroup response", "join", 4_634),
        wire(44_172, BROD, Some(6), "JoinGroup response", "join", 4_635),
        log_entry(44_172, ORDERS, Some(6), "log: Stabilized", "state", 4_131, "generation 6 with 3 members"),
        wire(44_180, C1, Some(6), "SyncGroup request", "sync", 4_640),
        wire(44_190, BROD, Some(6), "SyncGroup request", "sync", 4_644),
        wire(44_195, C2, Some(6), "SyncGroup request", "sync", 4_646),
        wire(44_201, C1, Some(6), "SyncGroup response", "sync", 4_649),
        wire(44_201, BROD, Some(6), "SyncGroup response", "sync", 4_650),
        with_detail(wire(44_201, C2, Some(6), "SyncGroup response", "sync", 4_651), "assigned orders-3, orders-4"),
    ]
}

fn orders_round_two() -> Vec<TimelineEntry> {
    let mut closed = wire(151_010, C2, None, "connection closed", "close", 9_870);
    closed.group = None;
    closed.member_id = None;
    closed.client_id = None;
    closed.detail = "FIN from client".into();
    let mut removed = log_entry(
        190_020,
        ORDERS,
        Some(6),
        "log: Member removed",
        "leave",
        4_977,
        "has failed, removing it from the group (session timeout)",
    );
    removed.member_id = Some(C2.1.into());
    vec![
        with_detail(wire(60_000, C1, Some(6), "OffsetCommit request", "commit", 5_300), "orders-0..2"),
        with_detail(wire(120_000, C1, Some(6), "OffsetCommit request", "commit", 7_710), "orders-0..2"),
        closed,
        removed,
        log_entry(190_021, ORDERS, Some(6), "log: Preparing to rebalance", "state", 4_978, "reason: removing member consumer-orders-2-8a7b6c5d-1e2f-4a3b-8c9d-0e1f2a3b4c5d on heartbeat expiration"),
        with_error(wire(190_100, C1, Some(6), "Heartbeat response", "heartbeat_failed", 11_120), "REBALANCE_IN_PROGRESS"),
        wire(190_110, C1, Some(6), "JoinGroup request", "join", 11_122),
        with_error(wire(190_135, BROD, Some(6), "Heartbeat response", "heartbeat_failed", 11_130), "REBALANCE_IN_PROGRESS"),
        wire(190_140, BROD, Some(6), "JoinGroup request", "join", 11_133),
        wire(190_240, C1, Some(7), "JoinGroup response", "join", 11_204),
        wire(190_240, BROD, Some(7), "JoinGroup response", "join", 11_205),
        wire(190_260, C1, Some(7), "SyncGroup request", "sync", 11_210),
        wire(190_270, BROD, Some(7), "SyncGroup request", "sync", 11_212),
        wire(190_285, C1, Some(7), "SyncGroup response", "sync", 11_220),
        wire(190_285, BROD, Some(7), "SyncGroup response", "sync", 11_221),
    ]
}

fn billing_timeline() -> Vec<TimelineEntry> {
    vec![
        log_entry(
            120_000,
            BILLING,
            Some(12),
            "log: Preparing to rebalance",
            "state",
            3_301,
            "reason: Leader consumer-billing-1 re-joining group during Stable",
        ),
        log_entry(
            121_800,
            BILLING,
            Some(13),
            "log: Stabilized",
            "state",
            3_318,
            "generation 13 with 2 members",
        ),
        log_entry(
            262_000,
            BILLING,
            Some(13),
            "log: Preparing to rebalance",
            "state",
            5_090,
            "reason: ",
        ),
    ]
}

fn incident_timeline() -> Vec<TimelineEntry> {
    let mut all = Vec::new();
    all.extend(heartbeats(C1, 1_020, 41_250, 5, 100));
    all.extend(heartbeats(C2, 2_300, 41_250, 5, 101));
    all.extend(orders_round_one());
    all.extend(heartbeats(C1, 45_020, 190_000, 6, 4_700));
    all.extend(heartbeats(C2, 46_100, 148_000, 6, 4_701));
    all.extend(heartbeats(BROD, 45_300, 190_000, 6, 4_702));
    all.extend(orders_round_two());
    all.extend(heartbeats(C1, 193_000, 268_400, 7, 11_300));
    all.extend(heartbeats(BROD, 194_100, 268_400, 7, 11_301));
    all.extend(billing_timeline());
    all.sort_by_key(|e| (e.ts, e.frame, e.line));
    all
}

fn exchange(
    ms: i64,
    api: (i16, &'static str, i16),
    corr: i32,
    m: (&str, &str),
    latency: f64,
    frames: (u64, u64),
) -> ExchangeRow {
    ExchangeRow {
        ts: at(ms),
        api_key: api.0,
        api: api.1,
        api_version: api.2,
        correlation_id: corr,
        client_id: Some(m.0.into()),
        connection: format!("{} -> 10.0.0.11:9092", host_of(m.0)).into(),
        request_frame: Some(frames.0),
        response_frame: Some(frames.1),
        latency_ms: Some(latency),
        group_id: Some(ORDERS.into()),
        member_id: (!m.1.is_empty()).then(|| m.1.into()),
        generation_id: Some(5),
        error_code: Some(0),
        error: None,
        client_software: Some("apache-kafka-java/3.7.0".into()),
    }
}

fn incident_exchanges() -> Vec<ExchangeRow> {
    let mut brod_join = exchange(
        41_250,
        (11, "JoinGroup", 9),
        7,
        (BROD.0, ""),
        12.0,
        (4_410, 4_412),
    );
    brod_join.generation_id = Some(-1);
    brod_join.error_code = Some(79);
    brod_join.error = Some("MEMBER_ID_REQUIRED");
    brod_join.client_software = Some("brod/3.19.1".into());
    let mut hb = exchange(42_454, (12, "Heartbeat", 4), 311, C1, 1.1, (4_501, 4_502));
    hb.error_code = Some(27);
    hb.error = Some("REBALANCE_IN_PROGRESS");
    let mut lost = exchange(44_195, (14, "SyncGroup", 5), 98, C2, 6.0, (4_646, 4_651));
    lost.generation_id = Some(6);
    lost.request_frame = None;
    lost.latency_ms = None;
    vec![
        brod_join,
        hb,
        exchange(
            42_460,
            (11, "JoinGroup", 9),
            312,
            C1,
            1_712.0,
            (4_504, 4_633),
        ),
        lost,
    ]
}

fn incident_diagnostics() -> Vec<Diagnostic> {
    vec![
        Diagnostic {
            kind: DiagnosticKind::MidStreamStart,
            source: PCAP.into(),
            at: "frame 1".into(),
            detail: "10.0.0.21:50122 -> 10.0.0.11:9092 picked up without its SYN".into(),
        },
        Diagnostic {
            kind: DiagnosticKind::UnknownLogLine,
            source: LOG.into(),
            at: "line 12".into(),
            detail: "[2024-05-01 14:00:01,204] INFO [LogLoader partition=orders-3, dir=/var/kafka] Loading producer state".into(),
        },
    ]
}

const KPCAP: &str = "kip848/client-host.pcapng";
const PAYMENTS: &str = "payments";
const K1: (&str, &str) = ("payments-app-1", "Zk3o4dOjSBWzt0Kc1xGR5Q");
const K2: (&str, &str) = ("payments-app-2", "qL2mB7yXTxe0vJ3sN1aPcw");
const K3: (&str, &str) = ("payments-app-3", "u9HsW4kRQh6nV2dEo8tLbA");

fn cgh(
    ms: i64,
    m: (&str, &str),
    epoch: i32,
    mark: &str,
    frame: u64,
    detail: &str,
) -> TimelineEntry {
    TimelineEntry {
        ts: at(ms),
        group: Some(PAYMENTS.into()),
        member_id: Some(m.1.into()),
        client_id: Some(m.0.into()),
        client_host: Some(format!("10.1.0.{}:5{}000", frame % 7 + 10, frame % 3)),
        generation: Some(epoch),
        kind: "ConsumerGroupHeartbeat request".into(),
        mark: mark.into(),
        detail: detail.into(),
        source: KPCAP.into(),
        frame: Some(frame),
        ..TimelineEntry::default()
    }
}

fn kip848_member(m: (&str, &str), parts: &[&str]) -> MemberSummary {
    MemberSummary {
        member_id: m.1.into(),
        client_id: Some(m.0.into()),
        client_host: Some("10.1.0.12".into()),
        client_software: Some("apache-kafka-java/4.0.0".into()),
        assignment: parts.iter().map(|p| p.to_string()).collect(),
        ..MemberSummary::default()
    }
}

fn kip848_round(
    prev: i32,
    kind: &str,
    m: (&str, &str),
    start: i64,
    end: i64,
    detail: &str,
) -> Rebalance {
    Rebalance {
        group: PAYMENTS.into(),
        protocol: "consumer".into(),
        previous_generation: Some(prev),
        generation: Some(prev + 1),
        started_at: at(start),
        completed_at: Some(at(end)),
        duration_ms: Some((end - start) as f64),
        trigger: Trigger {
            kind: kind.into(),
            member_id: Some(m.1.into()),
            client_id: Some(m.0.into()),
            detail: detail.into(),
            confidence: "high".into(),
        },
        evidence: vec![EvidenceLine {
            source: KPCAP.into(),
            frame: Some(start as u64 / 10),
            line: None,
            ts: at(start),
            text: format!(
                "ConsumerGroupHeartbeat v0 request from {} with member_epoch {}",
                m.0,
                if kind == "member_left" { -1 } else { 0 }
            ),
        }],
        seen_in: vec!["capture".into()],
        ..Rebalance::default()
    }
}

/// A copy of the first event of `group` in `report` that names a member:
/// a template for a test's own events.
pub(crate) fn member_event(report: &Report, group: &str) -> TimelineEntry {
    report
        .timeline
        .iter()
        .find(|e| e.group.as_deref() == Some(group) && e.member_id.is_some())
        .expect("the sample names a member of the group")
        .clone()
}

/// A KIP-848 group: a member arrives (epoch 14 → 15), another leaves
/// (15 → 16).
pub(crate) fn kip848() -> Report {
    let mut timeline = Vec::new();
    for (i, m) in [K1, K2].iter().enumerate() {
        for ms in (1_000 + i as i64 * 700..30_000).step_by(5_000) {
            timeline.push(cgh(ms, *m, 14, "heartbeat", ms as u64 / 10, ""));
        }
    }
    timeline.push(cgh(
        30_000,
        K3,
        0,
        "join",
        3_000,
        "member_epoch 0: joining, subscribed to payments",
    ));
    timeline.push(cgh(
        30_350,
        K1,
        15,
        "sync",
        3_035,
        "new assignment: payments-0, payments-1",
    ));
    timeline.push(cgh(
        30_412,
        K3,
        15,
        "sync",
        3_041,
        "new assignment: payments-2",
    ));
    for (i, m) in [K1, K2, K3].iter().enumerate() {
        for ms in (31_000 + i as i64 * 700..80_000).step_by(5_000) {
            timeline.push(cgh(ms, *m, 15, "heartbeat", ms as u64 / 10 + 1, ""));
        }
    }
    timeline.push(cgh(
        80_000,
        K2,
        -1,
        "leave",
        8_000,
        "member_epoch -1: leaving the group",
    ));
    timeline.push(cgh(
        80_300,
        K1,
        16,
        "sync",
        8_030,
        "new assignment: payments-0, payments-1, payments-3",
    ));
    timeline.sort_by_key(|e| (e.ts, e.frame));
    Report {
        format_version: FORMAT_VERSION,
        inputs: vec![InputSummary {
            path: KPCAP.into(),
            kind: "capture".into(),
            read_as: "capture".into(),
            records: 1_480,
            bytes: 402_112,
            events: timeline.len() as u64,
            first_ts: Some(at(1_000)),
            last_ts: Some(at(90_000)),
            clock_offset_ms: None,
            ..Default::default()
        }],
        log_time_zone: "UTC".into(),
        groups: vec![GroupSummary {
            group: PAYMENTS.into(),
            protocol: "consumer".into(),
            protocol_type: None,
            assignors: vec!["uniform".into()],
            state: "Stable".into(),
            generation: Some(16),
            generations_seen: vec![14, 15, 16],
            members: vec![
                kip848_member(K1, &["payments-0", "payments-1", "payments-3"]),
                kip848_member(K3, &["payments-2"]),
            ],
            coordinator: Some("broker 2".into()),
            rebalance_count: 2,
            rebalances_per_hour: Some(80.9),
            rebalancing_ms: 712.0,
            first_seen: Some(at(1_000)),
            last_seen: Some(at(80_300)),
            ..GroupSummary::default()
        }],
        rebalances: [
            kip848_round(
                14,
                "member_joined",
                K3,
                30_000,
                30_412,
                "ConsumerGroupHeartbeat with member_epoch 0 bumped the group epoch to 15",
            ),
            kip848_round(
                15,
                "member_left",
                K2,
                80_000,
                80_300,
                "ConsumerGroupHeartbeat with member_epoch -1 (leave) bumped the group epoch to 16",
            ),
        ]
        .map(Box::new)
        .into(),
        timeline,
        ..Report::default()
    }
}

/// Inputs read, nothing found.
pub(crate) fn quiet() -> Report {
    Report {
        format_version: FORMAT_VERSION,
        inputs: vec![InputSummary {
            path: "empty.pcap".into(),
            kind: "capture".into(),
            read_as: "capture".into(),
            records: 12,
            bytes: 2_048,
            ..InputSummary::default()
        }],
        log_time_zone: "UTC".into(),
        ..Report::default()
    }
}

/// Every sample, named for snapshot files.
pub(crate) fn all() -> Vec<(&'static str, Report)> {
    vec![
        ("incident", incident()),
        ("kip848", kip848()),
        ("quiet", quiet()),
    ]
}
