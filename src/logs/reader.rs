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
//! other lines before any layout work or regex.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use memchr::memmem::Finder;

use super::layout::{split_entry, starts_entry, Component, Entry, LineTime};
use super::parsed::{Outcome, Parsed};
use super::{broker, client, request_log, LogSummary};
use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::event::{ClientLine, ClientRef, EventKind, Evidence, GroupEvent, Location};
use crate::time::{LocalTimeKind, LogZone, ZoneClock};

static PREFILTER: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"roup"));

/// Continuation bytes kept per multi-line entry (a reconciliation block of a
/// consumer with thousands of partitions stays readable; more is dropped).
const MAX_CONTINUATION: usize = 1 << 20;

/// A multi-line entry waiting for its continuation lines.
struct Pending {
    line: u64,
    head: Vec<u8>,
    rest: Vec<u8>,
}

/// Reads the lines of one input.
pub(crate) struct LineReader<'a> {
    source: Arc<str>,
    zone: &'a LogZone,
    clock: ZoneClock<'a>,
    pub(crate) summary: LogSummary,
    pending: Option<Pending>,
    /// Last "Request joining group due to" reason per (client id, group),
    /// given to that client's next "(Re-)joining group".
    rejoin_reasons: HashMap<(Option<String>, Option<String>), String>,
}

impl<'a> LineReader<'a> {
    /// A reader for one input named `source`.
    pub(crate) fn new(source: Arc<str>, zone: &'a LogZone) -> LineReader<'a> {
        LineReader {
            source,
            zone,
            clock: ZoneClock::new(zone),
            summary: LogSummary::default(),
            pending: None,
            rejoin_reasons: HashMap::new(),
        }
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
        self.summary.bytes += raw.len() as u64;
        let line = raw.strip_suffix(b"\n").unwrap_or(raw);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
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
            Outcome::Event(p) => {
                self.summary.group_lines += 1;
                if let Some(ev) = self.event(no, e, *p, diags) {
                    out.push(ev);
                }
            }
        }
    }

    fn unknown(&mut self, no: u64, e: &Entry<'_>, diags: &mut Diagnostics) {
        self.summary.unknown_group_lines += 1;
        let text = String::from_utf8_lossy(&e.message[..e.message.len().min(200)]);
        diags.add(
            DiagnosticKind::UnknownLogLine,
            &self.source,
            format!("line {no}"),
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
        let ts = match e.time {
            LineTime::Local(dt) => {
                let z = self.clock.to_timestamp(&dt);
                if z.local != LocalTimeKind::Unique {
                    let what = if z.local == LocalTimeKind::Ambiguous {
                        "ambiguous (DST fold, earlier instant taken)"
                    } else {
                        "nonexistent (DST gap, read with the offset before it)"
                    };
                    diags.add(
                        DiagnosticKind::AmbiguousLocalTime,
                        &self.source,
                        format!("line {no}"),
                        format!("local time is {what} in {}", self.zone.name()),
                    );
                }
                z.ts
            }
            LineTime::Zoned(ts) => ts,
            LineTime::Missing => {
                diags.add(
                    DiagnosticKind::BadLogTimestamp,
                    &self.source,
                    format!("line {no}"),
                    "group line without a time; event dropped",
                );
                return None;
            }
        };
        let (mut client, group, instance) = component_fields(e);
        client.client_id = p.client_id.or(client.client_id);
        let mut kind = p.kind;
        self.remember_rejoin_reason(
            &client,
            &p.group.as_ref().or(group.as_ref()).cloned(),
            &mut kind,
        );
        Some(GroupEvent {
            ts,
            group: p.group.or(group),
            member_id: p.member_id,
            group_instance_id: p.group_instance_id.or(instance),
            generation_id: p.generation_id,
            client,
            kind,
            evidence: Evidence {
                source: self.source.clone(),
                at: Location::Line { line: no },
            },
        })
    }

    /// Carries "Request joining group due to: R" into the next "(Re-)joining group".
    fn remember_rejoin_reason(
        &mut self,
        client: &ClientRef,
        group: &Option<String>,
        kind: &mut EventKind,
    ) {
        let key = (client.client_id.clone(), group.clone());
        match kind {
            EventKind::Client(ClientLine::RejoinRequested { reason }) => {
                self.rejoin_reasons.insert(key, reason.clone());
            }
            EventKind::Client(ClientLine::Joining { reason }) if reason.is_none() => {
                *reason = self.rejoin_reasons.remove(&key);
            }
            _ => {}
        }
    }
}

/// Client, group and static id from the line's prefix.
fn component_fields(e: &Entry<'_>) -> (ClientRef, Option<String>, Option<String>) {
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut client = ClientRef::default();
    let (mut group, mut instance) = (None, None);
    match e.component {
        Component::Broker { id } => client.broker = id.map(|id| format!("broker {}", s(id))),
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
