//! The `csv` format: a header row, then one row per item.
//!
//! Takes: a view of a [`Report`]. Gives: RFC 4180 CSV (a field is quoted
//! when it holds a comma, a quote, CR or LF, and quotes are doubled), rows
//! ended by `\n`. Values are raw, for scripts: full ids, RFC 3339 times,
//! milliseconds; absent values are empty; lists are joined with `;` (a
//! group's `states` as `State@time`).
//! [`View::Report`] writes the rebalances, the report's central table.
//! Control characters and bidi controls from the inputs are written
//! escaped (`\u{1b}`, `\n`), never raw, so viewing the CSV in a terminal is
//! safe; a cell that starts with `=`, `+`, `-` or `@` and is not a number is
//! quoted (a formula-injection guard that a CSV reader still unquotes to
//! the same text).

use std::io::{self, Write};

use crate::report::{ExchangeRow, GroupSummary, Rebalance, Report, TimelineEntry};
use crate::time::Timestamp;

use super::View;

/// Writes `view` as CSV.
pub(super) fn write(report: &Report, view: View, out: &mut dyn Write) -> io::Result<()> {
    match view {
        View::Timeline => table(TIMELINE, &report.timeline, timeline_row, out),
        View::Rebalances | View::Report => {
            table(REBALANCES, &report.rebalances, |r| rebalance_row(r), out)
        }
        View::Groups => table(GROUPS, &report.groups, group_row, out),
        View::Decode => table(EXCHANGES, &report.exchanges, exchange_row, out),
    }
}

/// The timeline's header row (written before its rows are streamed).
pub(super) fn timeline_header(out: &mut dyn Write) -> io::Result<()> {
    record(TIMELINE.iter().copied(), out)
}

/// One timeline row, as [`write`] writes it.
pub(super) fn timeline_line(e: &TimelineEntry, out: &mut dyn Write) -> io::Result<()> {
    record(timeline_row(e).iter().map(String::as_str), out)
}

/// The rebalances' header row (written before `rebalances` of logs writes
/// its records as they settle).
pub(super) fn rebalance_header(out: &mut dyn Write) -> io::Result<()> {
    record(REBALANCES.iter().copied(), out)
}

/// One rebalance row, as [`write`] writes it.
pub(super) fn rebalance_line(r: &Rebalance, out: &mut dyn Write) -> io::Result<()> {
    record(rebalance_row(r).iter().map(String::as_str), out)
}

/// The exchanges' header row (written before `decode`'s rows are streamed).
pub(super) fn exchange_header(out: &mut dyn Write) -> io::Result<()> {
    record(EXCHANGES.iter().copied(), out)
}

/// One exchange row, as [`write`] writes it.
pub(super) fn exchange_line(x: &ExchangeRow, out: &mut dyn Write) -> io::Result<()> {
    record(exchange_row(x).iter().map(String::as_str), out)
}

/// The header, then one row per item, a long list rendered on every core
/// ([`super::rendered`]).
fn table<T: Sync>(
    header: &[&str],
    items: &[T],
    row: impl Fn(&T) -> Vec<String> + Sync,
    out: &mut dyn Write,
) -> io::Result<()> {
    record(header.iter().copied(), out)?;
    super::rendered::each_rendered(
        items,
        |item, text| {
            let row = row(item);
            debug_assert_eq!(row.len(), header.len());
            text.extend_from_slice(line(row.iter().map(String::as_str)).as_bytes());
            Ok(())
        },
        |text| out.write_all(text),
    )
}

fn record<'a>(fields: impl Iterator<Item = &'a str>, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(line(fields).as_bytes())
}

/// One CSV record, newline included.
fn line<'a>(fields: impl Iterator<Item = &'a str>) -> String {
    let mut line = String::new();
    for (i, field) in fields.enumerate() {
        if i > 0 {
            line.push(',');
        }
        push_field(&mut line, field);
    }
    line.push('\n');
    line
}

/// RFC 4180 §2 rules 5–7: quote when needed, double inner quotes; hidden
/// characters escaped; formula-like cells quoted.
fn push_field(line: &mut String, field: &str) {
    let field = &super::human::visible(field);
    let formula = field.starts_with(['=', '+', '-', '@']) && field.parse::<f64>().is_err();
    if formula || field.contains([',', '"', '\r', '\n']) {
        line.push('"');
        line.push_str(&field.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(field);
    }
}

fn opt<T: ToString>(value: Option<T>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

fn time(ts: Timestamp) -> String {
    ts.to_rfc3339()
}

fn list(items: &[String]) -> String {
    items.join(";")
}

const TIMELINE: &[&str] = &[
    "ts",
    "group",
    "generation",
    "member_id",
    "group_instance_id",
    "client_id",
    "client_host",
    "kind",
    "mark",
    "error",
    "detail",
    "source",
    "frame",
    "line",
];

fn timeline_row(e: &TimelineEntry) -> Vec<String> {
    vec![
        time(e.ts),
        opt(e.group.as_deref()),
        opt(e.generation),
        opt(e.member_id.as_deref()),
        opt(e.group_instance_id.as_deref()),
        opt(e.client_id.as_deref()),
        opt(e.client_host.as_deref()),
        e.kind.clone(),
        e.mark.clone(),
        opt(e.error.as_deref()),
        e.detail.clone(),
        e.source.clone(),
        opt(e.frame),
        opt(e.line),
    ]
}

const REBALANCES: &[&str] = &[
    "started_at",
    "group",
    "protocol",
    "previous_generation",
    "generation",
    "join_completed_at",
    "completed_at",
    "duration_ms",
    "trigger",
    "confidence",
    "trigger_member_id",
    "trigger_client_id",
    "trigger_detail",
    "other_triggers",
    "expected",
    "expected_reason",
    "storm",
    "members_before",
    "members_after",
    "joins",
    "straggler_member_id",
    "straggler_after_start_ms",
    "removed",
    "partitions_revoked",
    "partitions_assigned",
    "evidence_count",
    "seen_in",
    "notes",
];

fn rebalance_row(r: &Rebalance) -> Vec<String> {
    let others: Vec<String> = r.other_triggers.iter().map(|t| t.kind.clone()).collect();
    let removed: Vec<String> = r
        .removed
        .iter()
        .map(|m| format!("{}:{}", m.member_id, m.how))
        .collect();
    vec![
        time(r.started_at),
        r.group.clone(),
        r.protocol.clone(),
        opt(r.previous_generation),
        opt(r.generation),
        opt(r.join_completed_at.map(time)),
        opt(r.completed_at.map(time)),
        opt(r.duration_ms),
        r.trigger.kind.clone(),
        r.trigger.confidence.clone(),
        opt(r.trigger.member_id.as_deref()),
        opt(r.trigger.client_id.as_deref()),
        r.trigger.detail.clone(),
        list(&others),
        r.expected.to_string(),
        opt(r.expected_reason.as_deref()),
        r.storm.to_string(),
        r.members_before.len().to_string(),
        r.members_after.len().to_string(),
        r.joins.len().to_string(),
        opt(r.straggler.as_ref().map(|s| s.member_id.as_str())),
        opt(r.straggler.as_ref().map(|s| s.after_start_ms)),
        list(&removed),
        list(&r.partitions_revoked),
        list(&r.partitions_assigned),
        r.evidence.len().to_string(),
        list(&r.seen_in),
        list(&r.notes),
    ]
}

const GROUPS: &[&str] = &[
    "group",
    "protocol",
    "protocol_type",
    "assignors",
    "state",
    "generation",
    "generations_seen",
    "members",
    "member_ids",
    "leader",
    "coordinator",
    "rebalance_count",
    "rebalances_per_hour",
    "rebalancing_ms",
    "storm",
    "states",
    "first_seen",
    "last_seen",
    "notes",
];

fn group_row(g: &GroupSummary) -> Vec<String> {
    let generations: Vec<String> = g.generations_seen.iter().map(|n| n.to_string()).collect();
    let members: Vec<String> = g.members.iter().map(|m| m.member_id.clone()).collect();
    let states: Vec<String> = g
        .states
        .iter()
        .map(|c| format!("{}@{}", c.state, time(c.at)))
        .collect();
    vec![
        g.group.clone(),
        g.protocol.clone(),
        opt(g.protocol_type.as_deref()),
        list(&g.assignors),
        g.state.clone(),
        opt(g.generation),
        list(&generations),
        g.members.len().to_string(),
        list(&members),
        opt(g.leader.as_deref()),
        opt(g.coordinator.as_deref()),
        g.rebalance_count.to_string(),
        opt(g.rebalances_per_hour),
        g.rebalancing_ms.to_string(),
        g.storm.to_string(),
        list(&states),
        opt(g.first_seen.map(time)),
        opt(g.last_seen.map(time)),
        list(&g.notes),
    ]
}

const EXCHANGES: &[&str] = &[
    "ts",
    "api_key",
    "api",
    "api_version",
    "correlation_id",
    "client_id",
    "connection",
    "request_frame",
    "response_frame",
    "latency_ms",
    "group_id",
    "member_id",
    "generation_id",
    "error_code",
    "error",
    "client_software",
];

fn exchange_row(x: &ExchangeRow) -> Vec<String> {
    vec![
        time(x.ts),
        x.api_key.to_string(),
        x.api.to_string(),
        x.api_version.to_string(),
        x.correlation_id.to_string(),
        opt(x.client_id.as_deref()),
        x.connection.to_string(),
        opt(x.request_frame),
        opt(x.response_frame),
        opt(x.latency_ms),
        opt(x.group_id.as_deref()),
        opt(x.member_id.as_deref()),
        opt(x.generation_id),
        opt(x.error_code),
        opt(x.error),
        opt(x.client_software.as_deref()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    /// Splits RFC 4180 text into records of fields (a reader for the tests).
    fn parse(text: &str) -> Vec<Vec<String>> {
        let (mut records, mut record, mut field) = (Vec::new(), Vec::new(), String::new());
        let (mut quoted, mut chars) = (false, text.chars().peekable());
        while let Some(c) = chars.next() {
            match (quoted, c) {
                (true, '"') if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                (true, '"') => quoted = false,
                (false, '"') => quoted = true,
                (false, ',') => record.push(std::mem::take(&mut field)),
                (false, '\n') => {
                    record.push(std::mem::take(&mut field));
                    records.push(std::mem::take(&mut record));
                }
                (_, c) => field.push(c),
            }
        }
        records
    }

    fn csv(view: View) -> String {
        let mut out = Vec::new();
        write(&sample::incident(), view, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_record_has_as_many_fields_as_the_header() {
        let views = [
            View::Timeline,
            View::Rebalances,
            View::Groups,
            View::Decode,
            View::Report,
        ];
        for view in views {
            assert!(parse(&csv(view)).len() > 1, "{view:?}");
        }
        for (name, report) in sample::all() {
            for view in views {
                let mut out = Vec::new();
                write(&report, view, &mut out).unwrap();
                let records = parse(&String::from_utf8(out).unwrap());
                let width = records[0].len();
                assert!(records.iter().all(|r| r.len() == width), "{name} {view:?}");
            }
        }
    }

    #[test]
    fn commas_quotes_and_pipes_survive_a_round_trip() {
        let mut line = String::new();
        push_field(&mut line, "say \"hi\", then | go");
        assert_eq!(line, "\"say \"\"hi\"\", then | go\"");
        let records = parse(&csv(View::Rebalances));
        let detail = records[0]
            .iter()
            .position(|h| h == "trigger_detail")
            .unwrap();
        assert!(records[3][detail].contains("Stable | metadata changed"));
    }

    #[test]
    fn an_unfinished_rebalance_has_empty_end_fields() {
        let records = parse(&csv(View::Rebalances));
        let end = records[0].iter().position(|h| h == "completed_at").unwrap();
        assert_eq!(records[4][end], "");
    }
}
