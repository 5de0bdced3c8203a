//! The per-line loop: prefilter, entry splitting, multi-line entries,
//! dispatch to the message readers, and turning their [`Parsed`] results
//! into [`GroupEvent`]s with time, client, broker and evidence.
//!
//! Takes: lines (bytes, newline included or not) with their numbers. Gives:
//! events pushed to the caller's vector, diagnostics for unknown coordinator
//! lines, DST-ambiguous or missing times, and a [`LogSummary`].
//!
//! Speed: one SIMD substring search for `roup` (every coordinator, client
//! and group-request line contains "Group" or "groupId") rejects most
//! other lines before any layout work or regex; [`quiet_prefix`] runs that
//! search over a whole buffer so that runs of such lines are skipped
//! without being copied or split one by one.

use crate::event::Source;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use memchr::memmem::Finder;

use super::csv::CsvExport;
use super::layout::{split_entry, starts_entry, structured_line, Component, Entry, LineTime};
use super::parsed::{Outcome, Parsed};
use super::{broker, client, request_log, LogSummary};
use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::event::{ClientLine, ClientRef, EventKind, Evidence, GroupEvent, Ids, Location};
use crate::fast_hash::FastSet;
use crate::time::{LocalTimeKind, LogZone, Timestamp, ZoneClock};

static PREFILTER: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"roup"));

/// Continuation bytes kept per multi-line entry (a reconciliation block of a
/// consumer with thousands of partitions stays readable; more is dropped).
const MAX_CONTINUATION: usize = 1 << 20;

/// Clients whose pending rejoin reason is remembered at once.
const MAX_CLIENTS: usize = 1 << 16;

/// Distinct clients shared at once (a log names a few hundred).
const MAX_SHARED_CLIENTS: usize = 1 << 12;

/// A multi-line entry waiting for its continuation lines.
struct Pending {
    line: u64,
    head: Vec<u8>,
    rest: Vec<u8>,
}

/// The length of the longest prefix of `chunk` made of whole lines that
/// [`LineReader::line`] would reject at its prefilter (no `roup` in them),
/// so that a caller can skip them without copying or splitting them: one
/// SIMD search over the whole chunk instead of one per line. The chunk
/// must start at a line start; a trailing partial line is never included.
pub(crate) fn quiet_prefix(chunk: &[u8]) -> usize {
    let end = PREFILTER.find(chunk).unwrap_or(chunk.len());
    memchr::memrchr(b'\n', &chunk[..end]).map_or(0, |i| i + 1)
}

/// Whether `line` (newline excluded) starts a new entry as
/// [`LineReader`] reads it: a multi-line entry waiting before it ends there.
pub(crate) fn opens_entry(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let record = structured_line(line);
    starts_entry(record.as_deref().map_or(line, str::as_bytes))
}

/// Reads the lines of one input.
pub(crate) struct LineReader<'a> {
    source: Source,
    zone: &'a LogZone,
    clock: ZoneClock<'a>,
    pub(crate) summary: LogSummary,
    pending: Option<Pending>,
    /// Last "Request joining group due to" reason per (client id, group),
    /// given to that client's next "(Re-)joining group".
    rejoin_reasons: HashMap<(Option<String>, Option<String>), String>,
    /// One shared copy of each client the lines name (a broker's lines
    /// name only the broker): a copy per line was a tenth of a long log's
    /// memory, and sharing only the previous line's missed a log that
    /// interleaves several brokers and clients. Forgotten when it reaches
    /// [`MAX_SHARED_CLIENTS`] (a line is then given a fresh copy, correct,
    /// only not shared).
    clients: FastSet<Arc<ClientRef>>,
    /// The last broker a line named without a client (`[GroupCoordinator
    /// 1]: …`): its id as written and its shared copy, so that a broker's
    /// run of lines builds and looks up no client.
    last_broker: Option<(Vec<u8>, Arc<ClientRef>)>,
    /// One copy of each group, member and instance id the lines name.
    ids: Ids,
    /// Whether the first line was seen (it may be a CSV header).
    started: bool,
    /// A CSV export's columns, when the first line was its header.
    csv: Option<CsvExport>,
}

impl<'a> LineReader<'a> {
    /// A reader for one input named `source`.
    pub(crate) fn new(source: Source, zone: &'a LogZone) -> LineReader<'a> {
        LineReader {
            source,
            zone,
            clock: ZoneClock::new(zone),
            summary: LogSummary::default(),
            pending: None,
            rejoin_reasons: HashMap::new(),
            clients: FastSet::default(),
            last_broker: None,
            ids: Ids::default(),
            started: false,
            csv: None,
        }
    }

    /// The input's name, as evidence and diagnostics give it.
    pub(crate) fn source(&self) -> &str {
        &self.source
    }

    /// Reads as if the input's first line had been read already: a part
    /// of a file after its first ([`super::read_log_part`]), whose first
    /// line is not a CSV header.
    pub(crate) fn continue_after_first_line(&mut self) {
        self.started = true;
    }

    /// Whether lines after this point would be read differently by this
    /// reader than by a fresh one continued after its first line: a
    /// multi-line entry or a client's rejoin reason still waiting, or a
    /// CSV export's columns.
    pub(crate) fn carries_state(&self) -> bool {
        self.pending.is_some() || !self.rejoin_reasons.is_empty() || self.csv.is_some()
    }

    /// Whether lines may be skipped by [`quiet_prefix`] instead of read
    /// one by one: not while a multi-line entry waits for its
    /// continuation lines (which need no prefilter match).
    /// Nor before the first line (a CSV header has no `roup`), nor in a
    /// CSV export (a skipped row may open a quoted field).
    pub(crate) fn may_skip(&self) -> bool {
        self.pending.is_none() && self.started && self.csv.is_none()
    }

    /// Counts `lines` lines skipped by [`quiet_prefix`].
    pub(crate) fn skipped(&mut self, lines: u64) {
        self.summary.lines += lines;
    }

    /// Reads line `no` (1-based).
    pub(crate) fn line(
        &mut self,
        no: u64,
        raw: &[u8],
        diags: &mut Diagnostics,
        out: &mut Vec<GroupEvent>,
    ) {
        self.summary.lines += 1;
        let line = raw.strip_suffix(b"\n").unwrap_or(raw);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !std::mem::replace(&mut self.started, true) {
            self.csv = CsvExport::from_header(line);
            if self.csv.is_some() {
                return;
            }
        }
        if let Some(csv) = &mut self.csv {
            for l in csv.line(line).unwrap_or_default() {
                self.plain(no, l.as_bytes(), diags, out);
            }
            return;
        }
        self.plain(no, line, diags, out);
    }

    /// Reads one line of text (a record's line already unwrapped from CSV).
    fn plain(&mut self, no: u64, line: &[u8], diags: &mut Diagnostics, out: &mut Vec<GroupEvent>) {
        // A structured record (docker json-file, a JSON layout, journald
        // JSON) is read as the plain line it carries.
        let record = structured_line(line);
        let line = record.as_deref().map_or(line, str::as_bytes);
        if let Some(p) = &mut self.pending {
            if !starts_entry(line) {
                if p.rest.len() + line.len() < MAX_CONTINUATION {
                    p.rest.extend_from_slice(line);
                    p.rest.push(b'\n');
                }
                return;
            }
            self.flush(diags, out);
        }
        if PREFILTER.find(line).is_none() {
            return;
        }
        let Some(entry) = split_entry(line) else {
            return;
        };
        let is_client = matches!(
            entry.component,
            Component::Client { .. } | Component::ClientBare
        );
        if is_client && client::wants_continuation(entry.message) {
            self.pending = Some(Pending {
                line: no,
                head: line.to_vec(),
                rest: Vec::new(),
            });
            return;
        }
        self.entry(no, line, &entry, b"", diags, out);
    }

    /// Ends the input (a multi-line entry may still be open).
    pub(crate) fn finish(&mut self, diags: &mut Diagnostics, out: &mut Vec<GroupEvent>) {
        self.flush(diags, out);
    }

    fn flush(&mut self, diags: &mut Diagnostics, out: &mut Vec<GroupEvent>) {
        let Some(p) = self.pending.take() else { return };
        if let Some(entry) = split_entry(&p.head) {
            self.entry(p.line, &p.head, &entry, &p.rest, diags, out);
        }
    }

    fn entry(
        &mut self,
        no: u64,
        line: &[u8],
        e: &Entry<'_>,
        cont: &[u8],
        diags: &mut Diagnostics,
        out: &mut Vec<GroupEvent>,
    ) {
        let outcome = match e.component {
            Component::Broker { .. } | Component::BrokerBare => broker::parse(e.message),
            Component::Client { .. } | Component::ClientBare => client::parse(e.message, cont),
            Component::Request => request_log::parse(e.message),
        };
        match outcome {
            Outcome::Ignored => {}
            Outcome::Known => self.summary.group_lines += 1,
            Outcome::Unknown if !is_membership_line(e, line) => {}
            Outcome::Unknown => self.unknown(no, e, diags),
            Outcome::Event(mut p) => {
                self.summary.group_lines += 1;
                let more = std::mem::take(&mut p.more_groups);
                let Some(ev) = self.event(no, e, *p, diags) else {
                    return;
                };
                // The same for each further group the line names.
                let others: Vec<GroupEvent> = more
                    .iter()
                    .map(|g| GroupEvent {
                        group: self.ids.of(Some(g.as_str())),
                        ..ev.clone()
                    })
                    .collect();
                out.push(ev);
                out.extend(others);
            }
        }
    }

    fn unknown(&mut self, no: u64, e: &Entry<'_>, diags: &mut Diagnostics) {
        self.summary.unknown_group_lines += 1;
        let text = String::from_utf8_lossy(&e.message[..e.message.len().min(200)]);
        diags.add(
            DiagnosticKind::UnknownLogLine,
            &self.source,
            super::line_at(no),
            text,
        );
    }

    fn event(
        &mut self,
        no: u64,
        e: &Entry<'_>,
        p: Parsed,
        diags: &mut Diagnostics,
    ) -> Option<GroupEvent> {
        let ts = self.time(no, e.time, diags)?;
        let mut kind = p.kind;
        let (client, group, instance) = match (e.component, p.client_id) {
            // A broker's line names no group or instance in its prefix and
            // carries no client's rejoin reason.
            (Component::Broker { id: Some(id) }, None) => (self.broker_client(id), None, None),
            (_, client_id) => {
                let (mut client, group, instance) = component_fields(e);
                client.client_id = client_id.or(client.client_id);
                let named = p.group.as_deref().or(group.as_deref());
                self.remember_rejoin_reason(&client, named, &mut kind);
                (self.shared(client), group, instance)
            }
        };
        Some(GroupEvent {
            ts,
            group: self.ids.of(p.group.or(group).as_deref()),
            member_id: self.ids.of(p.member_id.as_deref()),
            group_instance_id: self.ids.of(p.group_instance_id.or(instance).as_deref()),
            generation_id: p.generation_id,
            client,
            kind,
            truncated: false,
            evidence: Evidence {
                source: self.source.clone(),
                at: Location::Line { line: no },
            },
        })
    }

    /// The shared client of a broker's line that names no client: the last
    /// one's when it is the same broker.
    fn broker_client(&mut self, id: &[u8]) -> Arc<ClientRef> {
        match &self.last_broker {
            Some((last, client)) if last.as_slice() == id => client.clone(),
            _ => {
                let client = self.shared(broker_client_ref(id));
                self.last_broker = Some((id.to_vec(), client.clone()));
                client
            }
        }
    }

    /// The one shared copy of `client`.
    fn shared(&mut self, client: ClientRef) -> Arc<ClientRef> {
        if let Some(known) = self.clients.get(&client) {
            return known.clone();
        }
        if self.clients.len() >= MAX_SHARED_CLIENTS {
            self.clients.clear();
        }
        let client = Arc::new(client);
        self.clients.insert(client.clone());
        client
    }

    /// The line's instant; DST-ambiguous times are flagged, lines without a
    /// time are diagnosed and give no event (inventing one would misplace it).
    fn time(&mut self, no: u64, time: LineTime, diags: &mut Diagnostics) -> Option<Timestamp> {
        let at = || super::line_at(no);
        match time {
            LineTime::Local(dt) => {
                let z = self.clock.to_timestamp(&dt);
                let what = match z.local {
                    LocalTimeKind::Unique => return Some(z.ts),
                    LocalTimeKind::Ambiguous => "ambiguous (DST fold, earlier instant taken)",
                    LocalTimeKind::Nonexistent => {
                        "nonexistent (DST gap, read with the offset before it)"
                    }
                };
                let detail = format!("local time is {what} in {}", self.zone.name());
                diags.add(
                    DiagnosticKind::AmbiguousLocalTime,
                    &self.source,
                    at(),
                    detail,
                );
                Some(z.ts)
            }
            LineTime::Zoned(ts) => Some(ts),
            LineTime::Missing => {
                let detail = "group line without a time; event dropped";
                diags.add(DiagnosticKind::BadLogTimestamp, &self.source, at(), detail);
                None
            }
        }
    }

    /// Carries "Request joining group due to: R" into the next "(Re-)joining group".
    fn remember_rejoin_reason(
        &mut self,
        client: &ClientRef,
        group: Option<&str>,
        kind: &mut EventKind,
    ) {
        // The key is built only for the two lines that use it: most events
        // are neither.
        let key = || (client.client_id.clone(), group.map(str::to_string));
        match kind {
            EventKind::Client(ClientLine::RejoinRequested { reason }) => {
                if self.rejoin_reasons.len() >= MAX_CLIENTS {
                    // Only the next join of the same client uses a reason; a
                    // log naming this many clients loses little by forgetting.
                    self.rejoin_reasons.clear();
                }
                self.rejoin_reasons.insert(key(), reason.clone());
            }
            EventKind::Client(ClientLine::Joining { reason }) if reason.is_none() => {
                *reason = self.rejoin_reasons.remove(&key());
            }
            _ => {}
        }
    }
}

/// Client, group and static id from the line's prefix.
fn component_fields(e: &Entry<'_>) -> (ClientRef, Option<String>, Option<String>) {
    let s = crate::logs::parsed::owned_text;
    let mut client = ClientRef::default();
    let (mut group, mut instance) = (None, None);
    match e.component {
        Component::Broker { id: Some(id) } => client = broker_client_ref(id),
        Component::Broker { id: None } => {}
        Component::Client {
            client_id,
            group_id,
            instance_id,
        } => {
            client.client_id = client_id.map(s);
            group = group_id.map(s);
            instance = instance_id.map(s);
        }
        Component::Request => client.address = request_log::client_address(e.message),
        Component::BrokerBare | Component::ClientBare => {}
    }
    (client, group, instance)
}

/// The client of a broker's line whose prefix names broker `id`: the
/// broker alone.
fn broker_client_ref(id: &[u8]) -> ClientRef {
    ClientRef {
        broker: Some(format!("broker {}", String::from_utf8_lossy(id))),
        ..ClientRef::default()
    }
}

/// Whether an unmatched line came from a membership logger (and so deserves
/// an unknown-line diagnostic). Client lines from the fetcher, metadata or
/// commit managers carry the same `[Consumer …]` prefix but no group event;
/// when the layout names no logger, broker lines still count.
fn is_membership_line(e: &Entry<'_>, line: &[u8]) -> bool {
    static NAMES: LazyLock<[Finder<'static>; 4]> = LazyLock::new(|| {
        [
            Finder::new(b"Coordinator"),
            Finder::new(b"MembershipManager"),
            Finder::new(b"HeartbeatRequestManager"),
            Finder::new(b"RebalanceListenerInvoker"),
        ]
    });
    match e.component {
        Component::Client { .. } => NAMES.iter().any(|f| f.find(line).is_some()),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::event::BrokerLine;
    use crate::logs::{read_log, LogOptions};

    fn read_with(text: &str, zone: &str) -> (Vec<GroupEvent>, LogSummary, Diagnostics) {
        let opts = LogOptions {
            zone: LogZone::parse(zone).unwrap(),
        };
        let (mut diags, mut out) = (Diagnostics::default(), Vec::new());
        let summary = read_log(
            Cursor::new(text.as_bytes()),
            crate::event::Source::from("t.log"),
            &opts,
            &mut diags,
            &mut out,
        )
        .unwrap();
        (out, summary, diags)
    }

    fn read(text: &str) -> (Vec<GroupEvent>, LogSummary, Diagnostics) {
        read_with(text, "UTC")
    }

    #[test]
    fn quiet_prefix_stops_before_the_first_line_that_may_matter() {
        assert_eq!(quiet_prefix(b"a\nb\nx Group y\nc\n"), 4);
        assert_eq!(quiet_prefix(b"a\nb\nx groupId=y\n"), 4);
        assert_eq!(quiet_prefix(b"a\nb\nc"), 4);
        assert_eq!(quiet_prefix(b"abc"), 0);
        assert_eq!(quiet_prefix(b"Group\na\n"), 0);
        assert_eq!(quiet_prefix(b""), 0);
    }

    #[test]
    fn lines_naming_the_same_client_share_one_copy_of_it() {
        let text = "\
[2024-01-02 03:04:05,000] INFO [GroupCoordinator 3]: Stabilized group g generation 9 (__consumer_offsets-1) with 2 members (kafka.coordinator.group.GroupCoordinator)
[2024-01-02 03:04:06,000] INFO [GroupCoordinator 4]: Stabilized group h generation 2 (__consumer_offsets-2) with 1 members (kafka.coordinator.group.GroupCoordinator)
[2024-01-02 03:04:07,000] INFO [GroupCoordinator 3]: Stabilized group g generation 10 (__consumer_offsets-1) with 2 members (kafka.coordinator.group.GroupCoordinator)
";
        let (out, _, _) = read(text);
        assert_eq!(out.len(), 3);
        assert_eq!(out[0].client.broker.as_deref(), Some("broker 3"));
        assert_eq!(out[1].client.broker.as_deref(), Some("broker 4"));
        assert!(Arc::ptr_eq(&out[0].client, &out[2].client));
        assert!(!Arc::ptr_eq(&out[0].client, &out[1].client));
    }

    #[test]
    fn every_layout_yields_the_same_event() {
        let lines = [
            "[2024-01-02 03:04:05,678] INFO [GroupCoordinator 3]: Stabilized group g generation 9 (__consumer_offsets-1) with 2 members (kafka.coordinator.group.GroupCoordinator)",
            "2024-01-02 03:04:05,678 INFO [GroupCoordinator 3]: Stabilized group g generation 9 (__consumer_offsets-1) with 2 members (kafka.coordinator.group.GroupCoordinator) [data-plane-kafka-request-handler-0]",
            "2024-01-02T03:04:05.678123456Z 2024-01-02 03:04:05,678 INFO [GroupCoordinator 3]: Stabilized group g generation 9 (__consumer_offsets-1) with 2 members (kafka.coordinator.group.GroupCoordinator) [executor-Heartbeat]",
            "kafka_1  | [2024-01-02 03:04:05,678] INFO [GroupCoordinator 3]: Stabilized group g generation 9 (__consumer_offsets-1) with 2 members (kafka.coordinator.group.GroupCoordinator)",
            "2024-01-02 03:04:05,678 | INFO  | [kafka-request-handler-3] | [GroupCoordinator 3]: Stabilized group g generation 9 (__consumer_offsets-1) with 2 members | kafka.coordinator.group.GroupCoordinator (Logging.scala:68)",
            "[2024-01-02 03:04:05,678] INFO [GroupCoordinator 3]: Stabilized group g generation 9 (__consumer_offsets-1) with 2 members (kafka.coordinator.group.GroupCoordinator:66)",
            "2024-01-02T03:04:05.678 INFO [GroupCoordinator 3]: Stabilized group g generation 9 (__consumer_offsets-1) with 2 members (kafka.coordinator.group.GroupCoordinator)",
        ];
        for l in lines {
            let (out, summary, diags) = read(&format!("{l}\n\n"));
            assert_eq!((out.len(), summary.lines, diags.total()), (1, 2, 0), "{l}");
            let e = &out[0];
            assert_eq!(e.ts.to_rfc3339(), "2024-01-02T03:04:05.678000Z", "{l}");
            assert_eq!((e.group.as_deref(), e.generation_id), (Some("g"), Some(9)));
            assert_eq!(e.client.broker.as_deref(), Some("broker 3"));
            assert_eq!(e.evidence.at, Location::Line { line: 1 });
            assert!(matches!(
                e.kind,
                EventKind::Broker(BrokerLine::Stabilized {
                    generation: 9,
                    members: Some(2),
                    ..
                })
            ));
        }
    }

    #[test]
    fn client_lines_carry_client_id_group_and_instance() {
        let (out, _, _) = read("INFO - 2024-11-11 09:36:08,773 - org.apache.kafka.clients.consumer.internals.ConsumerCoordinator:665 - [Consumer instanceId=i-1, clientId=app-1, groupId=g] Successfully joined group with generation Generation{generationId=4, memberId='m-1', protocol='range'}  \r\n");
        let e = &out[0];
        assert_eq!(
            (
                e.client.client_id.as_deref(),
                e.group.as_deref(),
                e.group_instance_id.as_deref()
            ),
            (Some("app-1"), Some("g"), Some("i-1"))
        );
        assert_eq!(
            (e.member_id.as_deref(), e.generation_id),
            (Some("m-1"), Some(4))
        );
    }

    #[test]
    fn stack_traces_attach_to_their_entry_and_are_not_unknown() {
        let log = "[2024-01-01 00:00:00,000] WARN [GroupCoordinator 1]: Failed to write empty metadata for group g: The coordinator is not available. (kafka.coordinator.group.GroupCoordinator)\n\
org.apache.kafka.common.errors.CoordinatorNotAvailableException: The coordinator is not available.\n\
\tat kafka.coordinator.group.GroupMetadataManager.storeGroup(GroupMetadataManager.scala:263)\n\
\tat kafka.coordinator.group.GroupCoordinator.onCompleteJoin(GroupCoordinator.scala:1234)\n\
[2024-01-01 00:00:01,000] INFO [GroupCoordinator 1]: Group g with generation 5 is now empty (__consumer_offsets-2) (kafka.coordinator.group.GroupCoordinator)\n";
        let (out, summary, diags) = read(log);
        assert_eq!(
            (
                out.len(),
                summary.lines,
                summary.unknown_group_lines,
                diags.total()
            ),
            (2, 5, 0, 0)
        );
        assert_eq!(out[1].evidence.at, Location::Line { line: 5 });
    }

    #[test]
    fn multi_line_reconciliation_reads_its_continuation_lines() {
        let log = "INFO - 2024-11-11 09:38:40,874 - org.apache.kafka.clients.consumer.internals.MembershipManagerImpl:962 - [Consumer clientId=c, groupId=g] Reconciling assignment with local epoch gjWz\n\
\tMember:                                    3\n\
\tAssigned partitions:                       [t-0]\n\
\tRevoked partitions (owned - assigned):     [u-0]\n  \n\
INFO - 2024-11-11 09:38:40,960 - org.apache.kafka.clients.consumer.internals.MembershipManagerImpl:1208 - [Consumer clientId=c, groupId=g] Revoking previously assigned partitions u-0  \n";
        let (out, summary, _) = read(log);
        assert_eq!((out.len(), summary.lines), (2, 6));
        assert_eq!(
            (out[0].member_id.as_deref(), out[0].generation_id),
            (Some("gjWz"), Some(3))
        );
        assert_eq!(out[0].evidence.at, Location::Line { line: 1 });
        assert!(
            matches!(&out[0].kind, EventKind::Client(ClientLine::Reconciling { revoked, .. }) if revoked[..] == ["u-0"])
        );
        assert_eq!(out[1].evidence.at, Location::Line { line: 6 });
    }

    #[test]
    fn unknown_coordinator_lines_are_counted_with_their_line() {
        let log = "[2024-01-01 00:00:00,000] INFO [GroupCoordinator 1]: Startup complete. (kafka.coordinator.group.GroupCoordinator)\n\
[2024-01-01 00:00:01,000] INFO [GroupCoordinator 1]: Reticulating splines for group g (kafka.coordinator.group.GroupCoordinator)\n\
INFO - 2024-01-01 00:00:02,000 - org.apache.kafka.clients.consumer.internals.Fetcher:1 - [Consumer clientId=c, groupId=g] Fetch position for partition t-0 is out of range\n\
[2024-01-01 00:00:03,000] INFO [ReplicaFetcher replicaId=1] a line about a consumer group (kafka.server.ReplicaFetcherThread)\n";
        let (out, summary, diags) = read(log);
        assert_eq!(
            (
                out.len(),
                summary.lines,
                summary.group_lines,
                summary.unknown_group_lines
            ),
            (0, 4, 1, 1)
        );
        assert_eq!(diags.count(DiagnosticKind::UnknownLogLine), 1);
        assert_eq!(
            (
                diags.examples[0].at.as_str(),
                diags.examples[0].detail.as_str()
            ),
            ("line 2", "Reticulating splines for group g")
        );
    }

    #[test]
    fn iana_zone_converts_and_flags_the_repeated_hour() {
        let log = "[2024-10-27 01:30:00,000] INFO [GroupCoordinator 1]: Stabilized group g generation 2 (__consumer_offsets-1) (kafka.coordinator.group.GroupCoordinator)\n\
[2024-10-27 02:30:00,000] INFO [GroupCoordinator 1]: Stabilized group g generation 3 (__consumer_offsets-1) (kafka.coordinator.group.GroupCoordinator)\n";
        let (out, _, diags) = read_with(log, "Europe/Berlin");
        assert_eq!(out[0].ts.to_rfc3339(), "2024-10-26T23:30:00.000000Z");
        assert_eq!(out[1].ts.to_rfc3339(), "2024-10-27T00:30:00.000000Z");
        assert_eq!(diags.count(DiagnosticKind::AmbiguousLocalTime), 1);
        assert_eq!(diags.examples[0].at, "line 2");
    }

    #[test]
    fn fixed_offset_zone_shifts_every_event() {
        let (out, _, _) = read_with("[2024-05-01 14:00:00,000] INFO [GroupCoordinator 1]: Stabilized group g generation 2 (kafka.coordinator.group.GroupCoordinator)\n", "+02:00");
        assert_eq!(out[0].ts.to_rfc3339(), "2024-05-01T12:00:00.000000Z");
    }

    #[test]
    fn group_lines_without_a_time_are_diagnosed_not_invented() {
        let (out, summary, diags) = read("[main] INFO org.apache.kafka.clients.consumer.internals.ConsumerCoordinator - [Consumer clientId=c, groupId=g] (Re-)joining group\n");
        assert_eq!((out.len(), summary.group_lines), (0, 1));
        assert_eq!(diags.count(DiagnosticKind::BadLogTimestamp), 1);
    }

    #[test]
    fn rejoin_reason_is_carried_to_the_next_join_of_that_client() {
        let head = "INFO - 2024-01-01 00:00:00,000 - org.apache.kafka.clients.consumer.internals.ConsumerCoordinator:1 - ";
        let log = format!(
            "{head}[Consumer clientId=a, groupId=g] Request joining group due to: group is already rebalancing\n\
{head}[Consumer clientId=b, groupId=g] (Re-)joining group\n\
{head}[Consumer clientId=a, groupId=g] (Re-)joining group\n"
        );
        let (out, _, _) = read(&log);
        assert_eq!(
            out[1].kind,
            EventKind::Client(ClientLine::Joining { reason: None })
        );
        assert_eq!(
            out[2].kind,
            EventKind::Client(ClientLine::Joining {
                reason: Some("group is already rebalancing".into())
            })
        );
    }

    #[test]
    fn erlang_member_ids_with_quotes_and_spaces_survive_every_step() {
        let log = "kafka_1  | [2019-07-23 09:12:56,388] INFO [GroupCoordinator 0]: Preparing to rebalance group test in state PreparingRebalance with old generation 14 (__consumer_offsets-7) (reason: Adding new member 'my node@host'/<0.1083.0>-9db8 with group instanceid None) (kafka.coordinator.group.GroupCoordinator)\n";
        let (out, _, _) = read(log);
        assert_eq!(
            out[0].member_id.as_deref(),
            Some("'my node@host'/<0.1083.0>-9db8")
        );
        assert_eq!(out[0].generation_id, Some(14));
    }

    #[test]
    fn request_log_lines_give_the_client_address() {
        let log = "[2024-01-01 00:00:03,001] DEBUG Completed request:{\"requestHeader\":{\"requestApiKey\":14,\"requestApiVersion\":5,\"correlationId\":3,\"clientId\":\"c\"},\"request\":{\"groupId\":\"g\",\"generationId\":2,\"memberId\":\"m\"},\"response\":{\"errorCode\":0},\"connection\":\"10.0.0.1:9092-10.0.0.7:5555-0\",\"totalTimeMs\":5.0,\"remoteTimeMs\":4.0} (kafka.request.logger)\n\
[2024-01-01 00:00:03,002] DEBUG Completed request:{\"requestHeader\":{\"requestApiKey\":1,\"requestApiVersion\":13,\"correlationId\":4,\"clientId\":\"c\"},\"request\":{\"groupId\":\"x\"}} (kafka.request.logger)\n";
        let (out, summary, _) = read(log);
        assert_eq!((out.len(), summary.group_lines), (1, 1));
        assert_eq!(out[0].client.address.as_deref(), Some("10.0.0.7:5555"));
        assert_eq!(out[0].client.client_id.as_deref(), Some("c"));
    }

    #[test]
    fn a_multi_version_multi_broker_story_reads_in_order() {
        let log = "\
[2016-05-01 10:00:00,000] INFO [GroupCoordinator 1]: Preparing to restabilize group old with old generation 3 (kafka.coordinator.GroupCoordinator)
[2016-05-01 10:00:03,000] INFO [GroupCoordinator 1]: Stabilized group old generation 4 (kafka.coordinator.GroupCoordinator)
[2021-05-01 10:00:00,000] INFO [GroupCoordinator 2]: Member c-1 in group mid has failed, removing it from the group (kafka.coordinator.group.GroupCoordinator)
[2021-05-01 10:00:00,001] INFO [GroupCoordinator 2]: Preparing to rebalance group mid in state PreparingRebalance with old generation 7 (__consumer_offsets-3) (reason: removing member c-1 on heartbeat expiration) (kafka.coordinator.group.GroupCoordinator)
[2024-05-01 10:00:00,000] INFO [GroupCoordinator id=3 topic=__consumer_offsets partition=9] [GroupId new] Member m-1 joins the consumer group using the consumer protocol. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2024-05-01 10:00:00,001] INFO [GroupCoordinator id=3 topic=__consumer_offsets partition=9] [GroupId new] Bumped group epoch to 12. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2024-05-01 10:00:00,002] INFO [GroupCoordinator id=3 topic=__consumer_offsets partition=9] [GroupId new] Member m-2 fenced from the group because the member session expired. (org.apache.kafka.coordinator.group.GroupMetadataManager)
";
        let (out, summary, diags) = read(log);
        assert_eq!((summary.unknown_group_lines, diags.total()), (0, 0));
        let got: Vec<_> = out
            .iter()
            .map(|e| {
                (
                    e.client.broker.as_deref().unwrap_or(""),
                    e.group.as_deref().unwrap_or(""),
                    e.member_id.as_deref(),
                    e.generation_id,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("broker 1", "old", None, Some(3)),
                ("broker 1", "old", None, Some(4)),
                ("broker 2", "mid", Some("c-1"), None),
                ("broker 2", "mid", Some("c-1"), Some(7)),
                ("broker 3", "new", Some("m-1"), None),
                ("broker 3", "new", None, Some(12)),
                ("broker 3", "new", Some("m-2"), None),
            ]
        );
        assert!(
            matches!(&out[6].kind, EventKind::Broker(BrokerLine::MemberFenced { reason }) if reason == "the member session expired")
        );
    }

    #[test]
    fn a_log_time_that_carries_its_zone_ignores_the_log_tz_option() {
        let log = "[2024-05-01T14:00:00.000+0200] INFO [GroupCoordinator 1]: Stabilized group g generation 2 (kafka.coordinator.group.GroupCoordinator)\n";
        let (out, _, _) = read_with(log, "America/New_York");
        assert_eq!(out[0].ts.to_rfc3339(), "2024-05-01T12:00:00.000000Z");
    }
}
