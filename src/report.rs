//! The one model every renderer reads.
//!
//! Takes: what the pipeline found (inputs read, timeline entries, group
//! histories, rebalances, diagnostics). Gives: [`Report`], a plain
//! serialisable value. Renderers in [`crate::render`] only render it; all
//! computing happens before (hyperfine's `BenchmarkResult` pattern). The JSON
//! field names here are the documented output format (see the README's
//! "JSON format" section); `format_version` changes when a field does.

use std::sync::Arc;

use serde::Serialize;

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::time::Timestamp;

/// Output format version; bumped on any incompatible field change.
pub const FORMAT_VERSION: u32 = 1;

/// Everything a run found, filtered as the user asked.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// Always [`FORMAT_VERSION`].
    pub format_version: u32,
    /// Each input read, in the order given.
    pub inputs: Vec<InputSummary>,
    /// Zone used to read log times (`--log-tz`), e.g. `UTC` or `Europe/Berlin`.
    pub log_time_zone: String,
    /// Per-group summaries (`groups` subcommand, reports).
    pub groups: Vec<GroupSummary>,
    /// One record per rebalance, in start order. Boxed: a record is 728
    /// bytes inline, and the records are put in start order by moving
    /// them out of each group's list into this one. Moved whole, every
    /// list's room was still held when this list was full, a second copy
    /// of every record at the run's peak (the generated 1 GiB all-group
    /// log peaked at 1.8 GiB, and peaks at 1.5 boxed); boxed, a move is a
    /// pointer's.
    /// Serialized as the records themselves.
    pub rebalances: Vec<Box<Rebalance>>,
    /// Every matching group event in time order (`timeline`, reports).
    pub timeline: Vec<TimelineEntry>,
    /// Raw request/response exchanges (`decode` only).
    pub exchanges: Vec<ExchangeRow>,
    /// Anomalies: first examples of each kind.
    pub diagnostics: Vec<Diagnostic>,
    /// How many anomalies of each kind (all of them, not only the examples).
    pub diagnostic_counts: Vec<DiagnosticCount>,
    /// The longest partition stop over every rebalance reported, with its
    /// cause; null when no stop was measured.
    pub worst_stop: Option<WorstStop>,
    /// Partitions that stopped without any rebalance: a static member
    /// (KIP-345) restarted within its session timeout keeps its assignment
    /// and the coordinator opens no round (GroupCoordinator
    /// `doCurrentMemberJoinGroup` / `updateStaticMemberAndRebalance`: a
    /// known `group.instance.id` rejoining a Stable group gets the current
    /// generation back), but nothing consumed its partitions while it was
    /// down. Empty when none.
    pub stops_without_rebalance: Vec<StopWithoutRebalance>,
    /// The time line's last group event: stops still open at the end are
    /// measured to it (the worst stop, the story). Not serialised (the JSON
    /// gives each input's own `first_ts`/`last_ts`, a log's in its own
    /// clock).
    #[serde(skip)]
    pub input_end: Option<Timestamp>,
    /// The first and last instant of the matching group events when
    /// [`Report::timeline`] is left empty: a report in a format that does
    /// not list the events (table, Markdown, HTML, CSV) states their span
    /// only, and keeping one entry per event for it held more than the
    /// rest of the run (the dense capture's 256 MB prefix: 204 against
    /// 92 MB). Not serialised: JSON and NDJSON list the events themselves.
    #[serde(skip)]
    pub events_span: Option<(Timestamp, Timestamp)>,
}

impl Report {
    /// The rebalance records in start order, out of their boxes.
    pub fn rebalance_records(&self) -> impl Iterator<Item = &Rebalance> {
        self.rebalances.iter().map(|r| &**r)
    }
}

/// Partitions stopped with no rebalance to hang the stop on.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StopWithoutRebalance {
    /// `group_id`.
    pub group: String,
    /// The generation it happened in (no new one was opened).
    pub generation: Option<i32>,
    /// `static_member_restarted`.
    pub cause: String,
    /// The static member's `group.instance.id`.
    pub group_instance_id: Option<String>,
    /// Each partition's stop (`from`: the old process's member id, `to`:
    /// the new one's), as in [`Rebalance::partitions`].
    pub partitions: Vec<PartitionStop>,
}

/// The longest partition stop of a report (the headline "worst stop").
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WorstStop {
    /// `group_id`.
    pub group: String,
    /// The rebalance's generation before.
    pub previous_generation: Option<i32>,
    /// The rebalance's generation after.
    pub generation: Option<i32>,
    /// `topic-N`; null for a group-level stop (the members' partitions
    /// are not in the input: logs alone, or a capture cut by its snap
    /// length).
    pub partition: Option<String>,
    /// How long it stopped, ms (when still stopped at the end of the
    /// input: until the input's last event).
    pub stopped_ms: f64,
    /// Why it stopped (see [`PartitionStop::why_stopped`]); `group
    /// (partitions unknown)` for a group-level stop.
    pub why_stopped: String,
    /// The stop is one of [`Report::stops_without_rebalance`] (a static
    /// member restarted within its session timeout): no round, so
    /// `previous_generation` equals `generation`. Present only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub without_rebalance: bool,
}

/// How long consumption stopped in one rebalance: from the first partition
/// stopped to the last one resumed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RebalanceStop {
    /// The first partition stopped (group-level stops: the round's start).
    pub started_at: Timestamp,
    /// The last partition resumed; null when one is still stopped at the
    /// end of the input.
    pub ended_at: Option<Timestamp>,
    /// `ended_at - started_at`, ms; null when still stopped.
    pub stopped_ms: Option<f64>,
    /// Partitions that stopped; null when the partitions are not known
    /// (logs alone).
    pub partitions_stopped: Option<u64>,
}

/// The member on either side of a partition's move.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Owner {
    /// `member_id`.
    pub member_id: String,
    /// `client_id`, if known.
    pub client_id: Option<String>,
}

/// One partition whose consumption stopped because of a rebalance, and what
/// the move cost in offsets.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PartitionStop {
    /// `topic-N`.
    pub partition: String,
    /// Who consumed it before (null: nobody).
    pub from: Option<Owner>,
    /// Who consumes it after (null: nobody by the end of the input).
    pub to: Option<Owner>,
    /// `owner_silent`, `owner_not_polling`, `owner_left`, `revoked` or
    /// `unassigned`.
    pub why_stopped: String,
    /// When it stopped.
    pub stopped_at: Timestamp,
    /// When it resumed (the new owner's first Fetch of it, else the
    /// SyncGroup answer assigning it); null when still stopped.
    pub resumed_at: Option<Timestamp>,
    /// `resumed_at - stopped_at`, ms.
    pub stopped_ms: Option<f64>,
    /// The old owner's last successful OffsetCommit for it.
    pub last_committed_offset: Option<i64>,
    /// When that commit was sent.
    pub committed_at: Option<Timestamp>,
    /// The old owner's last Fetch position for it.
    pub last_fetched_offset: Option<i64>,
    /// Where the new owner started (its OffsetFetch answer, else its first
    /// Fetch).
    pub resume_offset: Option<i64>,
    /// Records processed twice: `last_fetched_offset - resume_offset` when
    /// positive (0 when not).
    pub reprocessed: Option<i64>,
    /// Records skipped: `resume_offset - last_fetched_offset` when positive
    /// (an `auto.offset.reset` jump).
    pub skipped: Option<i64>,
    /// `high_watermark - last_fetched_offset` at the old owner's last Fetch
    /// answer.
    pub lag_at_stop: Option<i64>,
    /// `high_watermark - resume_offset` at the new owner's first Fetch answer.
    pub lag_at_resume: Option<i64>,
    /// The old owner's commit that failed in the round (ILLEGAL_GENERATION,
    /// REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID: the
    /// client's CommitFailedException), if any.
    pub commit_failed: Option<String>,
    /// How the times and offsets were found, where not from the wire.
    pub notes: Vec<String>,
}

/// One input file and what was read from it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct InputSummary {
    /// Path as given (`-` for stdin).
    pub path: String,
    /// `capture` or `log`.
    pub kind: String,
    /// What it was read as: `capture`, `log`, `gzip capture`, `zstd log`…
    pub read_as: String,
    /// Packets (captures) or lines (logs) read.
    pub records: u64,
    /// Of those, packets that were not TCP/IP or could not be sliced
    /// (captures), or group lines no pattern knows (logs).
    pub not_understood: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Group events extracted.
    pub events: u64,
    /// First and last time seen.
    pub first_ts: Option<Timestamp>,
    /// Last time seen.
    pub last_ts: Option<Timestamp>,
    /// For logs: the clock offset applied to line up with the captures, in
    /// milliseconds (log time + offset = capture time); null when not
    /// estimated.
    pub clock_offset_ms: Option<f64>,
    /// Why this input gave no event, or no rebalance from its events (also
    /// said on stderr); null when it gave some.
    pub warning: Option<String>,
}

/// One diagnostic kind and its count.
#[derive(Clone, Debug, Serialize)]
pub struct DiagnosticCount {
    /// The kind.
    pub kind: DiagnosticKind,
    /// How many.
    pub count: u64,
}

/// A group's coordinator history in brief.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GroupSummary {
    /// `group_id`.
    pub group: String,
    /// `classic` (JoinGroup/SyncGroup) or `consumer` (KIP-848).
    pub protocol: String,
    /// JoinGroup `protocol_type` (`consumer`, `connect`, ...).
    pub protocol_type: Option<String>,
    /// Assignor names offered or chosen.
    pub assignors: Vec<String>,
    /// State at the end of the inputs, in the broker's terms.
    pub state: String,
    /// Generation (or group epoch) at the end.
    pub generation: Option<i32>,
    /// Every generation or epoch seen, ascending, without repeats.
    pub generations_seen: Vec<i32>,
    /// Members at the end.
    pub members: Vec<MemberSummary>,
    /// Leader at the end (classic).
    pub leader: Option<String>,
    /// Coordinator broker (`host:port` or `broker N`) last seen.
    pub coordinator: Option<String>,
    /// Number of rebalances.
    pub rebalance_count: u64,
    /// Rebalances per hour over the observed span.
    pub rebalances_per_hour: Option<f64>,
    /// Total time spent rebalancing, in milliseconds.
    pub rebalancing_ms: f64,
    /// True when a storm was detected (see [`Rebalance::storm`]).
    pub storm: bool,
    /// State changes in time order.
    pub states: Vec<StateChange>,
    /// First and last event for the group.
    pub first_seen: Option<Timestamp>,
    /// Last event for the group.
    pub last_seen: Option<Timestamp>,
    /// What could not be seen (e.g. "no traffic from member X before 12:00:03").
    pub notes: Vec<String>,
    /// Partition stops no rebalance explains (a static member restarted
    /// within its session timeout); the report lists them at its top level
    /// ([`Report::stops_without_rebalance`]).
    #[serde(skip)]
    pub stops_without_rebalance: Vec<StopWithoutRebalance>,
}

/// A state the group entered.
#[derive(Clone, Debug, Serialize)]
pub struct StateChange {
    /// When.
    pub at: Timestamp,
    /// `Empty`, `PreparingRebalance`, `CompletingRebalance`, `Stable`, `Dead`
    /// (KIP-848: `Assigning`, `Reconciling`, ...).
    pub state: String,
    /// Generation or epoch at that point.
    pub generation: Option<i32>,
}

/// A group member as known at some point.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemberSummary {
    /// `member_id`.
    pub member_id: String,
    /// Static id (`group.instance.id`).
    pub group_instance_id: Option<String>,
    /// `client_id`.
    pub client_id: Option<String>,
    /// Client `ip:port` (or host as the broker logged it).
    pub client_host: Option<String>,
    /// Client software (KIP-511), e.g. `librdkafka/2.6.0`.
    pub client_software: Option<String>,
    /// Assigned partitions, as `topic-partition`: in a rebalance's
    /// `members_before`, what the member held when the round began; in its
    /// `members_after`, what the round's answers gave it (a member whose
    /// answer is not in the inputs keeps its partitions under cooperative
    /// and KIP-848 rebalancing, else shows none, with a note).
    pub assignment: Vec<String>,
}

/// One rebalance: from the first evidence to the last member synced.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Rebalance {
    /// `group_id`.
    pub group: String,
    /// `classic` or `consumer` (KIP-848: generations are group epochs);
    /// `consumer_member` for rows read from a KIP-848 client's log alone,
    /// whose numbers are that member's epochs, not group epochs.
    pub protocol: String,
    /// Generation before (null when the group was not seen before).
    pub previous_generation: Option<i32>,
    /// This is the first rebalance of a group made again after it was
    /// deleted: the generation the old group had (not written: the notes
    /// say it). The stops stage hands the old group's partitions over from
    /// that generation's owners.
    #[serde(skip)]
    pub made_again_from: Option<i32>,
    /// Generation it produced (null if it never got one).
    pub generation: Option<i32>,
    /// First evidence.
    pub started_at: Timestamp,
    /// When the join phase ended (first JoinGroup answer with the new
    /// generation, or "Stabilized").
    pub join_completed_at: Option<Timestamp>,
    /// Last SyncGroup answer or "Assignment received"; null if it never completed.
    pub completed_at: Option<Timestamp>,
    /// `completed_at - started_at`; null if it never completed.
    pub duration_ms: Option<f64>,
    /// Why it most likely happened.
    pub trigger: Trigger,
    /// Other causes seen in the same round.
    pub other_triggers: Vec<Trigger>,
    /// A harmless, expected rebalance (group formation, the cooperative
    /// follow-up round, Streams probing...).
    pub expected: bool,
    /// Why it is expected, when it is.
    pub expected_reason: Option<String>,
    /// Part of a storm (many rebalances in a short window).
    pub storm: bool,
    /// Members before.
    pub members_before: Vec<MemberSummary>,
    /// Members after.
    pub members_after: Vec<MemberSummary>,
    /// Each member's join in this round.
    pub joins: Vec<MemberJoin>,
    /// The member whose JoinGroup came last and held the others parked.
    pub straggler: Option<MemberJoin>,
    /// Members that were in the group before and are not after (left,
    /// evicted by the session or rebalance timeout).
    pub removed: Vec<RemovedMember>,
    /// Partitions that changed owner, as `topic-partition`.
    pub partitions_revoked: Vec<String>,
    /// Partitions newly assigned, as `topic-partition`.
    pub partitions_assigned: Vec<String>,
    /// `completed`, `superseded` (a new round began before it completed)
    /// or `in_progress` (the input ends inside it).
    pub status: String,
    /// For `in_progress`: the members (client id, else member id) it still
    /// waits for.
    pub waiting_for: Vec<String>,
    /// How long consumption stopped; null when nothing is known to have
    /// stopped.
    pub stop: Option<RebalanceStop>,
    /// Each partition that stopped, longest first.
    pub partitions: Vec<PartitionStop>,
    /// The events that justify the record.
    pub evidence: Vec<EvidenceLine>,
    /// What kinds of input saw it: `capture`, `log` or both.
    pub seen_in: Vec<String>,
    /// What could not be seen.
    pub notes: Vec<String>,
}

/// The likely cause of a rebalance.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Trigger {
    /// One of: `member_joined`, `member_left`, `poll_timeout`,
    /// `session_timeout`, `metadata_changed`, `subscription_changed`,
    /// `leader_rejoined`, `static_member_replaced`, `static_member_fenced`,
    /// `coordinator_changed`, `previous_rebalance_failed`,
    /// `pending_sync_expired`, `storage_error`, `group_over_capacity`, `protocol_migration`,
    /// `unknown`.
    pub kind: String,
    /// The member that caused it, if known.
    pub member_id: Option<String>,
    /// Its client id, if known.
    pub client_id: Option<String>,
    /// In words, with the numbers behind the verdict.
    pub detail: String,
    /// `high`, `medium` or `low`.
    pub confidence: String,
}

/// One member's JoinGroup in a round.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MemberJoin {
    /// `member_id` (as answered).
    pub member_id: String,
    /// `client_id`.
    pub client_id: Option<String>,
    /// When its JoinGroup was sent.
    pub requested_at: Timestamp,
    /// How long it was parked at the broker (JoinGroup latency), ms.
    pub parked_ms: Option<f64>,
    /// Time after the round's start at which it joined, ms.
    pub after_start_ms: f64,
}

/// A member that was in the group before a rebalance and not after it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RemovedMember {
    /// `member_id`.
    pub member_id: String,
    /// `client_id`.
    pub client_id: Option<String>,
    /// `left`, `session_timeout`, `rebalance_timeout`, `replaced` or `unknown`.
    pub how: String,
}

/// One piece of evidence a person can look up.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EvidenceLine {
    /// Input file (shared with the event's evidence: a round cites many).
    pub source: crate::event::Source,
    /// Frame number (captures).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<u64>,
    /// Line number (logs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// When.
    pub ts: Timestamp,
    /// What it says, in one line.
    pub text: String,
}

/// One group event as the timeline shows it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TimelineEntry {
    /// When.
    pub ts: Timestamp,
    /// `group_id`, if the event names one.
    pub group: Option<String>,
    /// `member_id`.
    pub member_id: Option<String>,
    /// `group.instance.id`.
    pub group_instance_id: Option<String>,
    /// `client_id`.
    pub client_id: Option<String>,
    /// Client address.
    pub client_host: Option<String>,
    /// Generation or epoch carried.
    pub generation: Option<i32>,
    /// Short kind, e.g. `JoinGroup request`, `Heartbeat response`, `log: Stabilized`.
    pub kind: String,
    /// Category for pictures and filters: `join`, `sync`, `heartbeat`,
    /// `heartbeat_failed`, `leave`, `commit`, `coordinator`, `state`, `close`, `other`.
    pub mark: String,
    /// Error name, when the event carries one.
    pub error: Option<String>,
    /// The rest, in words.
    pub detail: String,
    /// Input file.
    pub source: String,
    /// Frame number (captures).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<u64>,
    /// Line number (logs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// One Kafka request/response exchange as `decode` prints it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ExchangeRow {
    /// Request time, or response time when the request was not captured.
    pub ts: Timestamp,
    /// Kafka API key.
    pub api_key: i16,
    /// Kafka's name for the API, e.g. `JoinGroup`.
    pub api: &'static str,
    /// API version.
    pub api_version: i16,
    /// Correlation id.
    pub correlation_id: i32,
    /// Request header `client_id`.
    pub client_id: Option<Arc<str>>,
    /// `ip:port -> ip:port`, client first.
    pub connection: Arc<str>,
    /// Frame that completed the request (1-based); null when not captured.
    pub request_frame: Option<u64>,
    /// Frame that completed the response; null when not captured.
    pub response_frame: Option<u64>,
    /// Response time minus request time, ms.
    pub latency_ms: Option<f64>,
    /// `group_id`, for group APIs.
    pub group_id: Option<String>,
    /// `member_id`, for group APIs.
    pub member_id: Option<String>,
    /// `generation_id` (or member epoch), for group APIs.
    pub generation_id: Option<i32>,
    /// Response error code.
    pub error_code: Option<i16>,
    /// Its name.
    pub error: Option<&'static str>,
    /// KIP-511 client software, if ApiVersions was seen on the connection.
    pub client_software: Option<Arc<str>>,
}

impl ExchangeRow {
    /// Where `decode` puts the row: by request time (response time when
    /// the request was not captured), then frame.
    pub fn request_order(&self) -> (Timestamp, Option<u64>) {
        (self.ts, self.request_frame.or(self.response_frame))
    }
}
