//! How values read to a person: times, durations, ids, evidence.
//!
//! Takes: single values from the [`Report`]. Gives: short, stable strings for
//! the table, Markdown and HTML renderers (CSV and JSON keep raw values).
//! Every string that came off the wire (member ids, client ids, reasons) goes
//! through [`one_line`] first: a client can put control characters in its
//! `client_id`, and a terminal must never receive them raw.

use crate::diagnostic::DiagnosticKind;
use crate::report::Report;
use crate::time::Timestamp;

const NANOS_PER_SEC: i64 = 1_000_000_000;

/// Picks how much of a timestamp a table shows: the time of day when the
/// whole report fits in one UTC day (the date is then in the summary), the
/// full date otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimeStyle {
    same_day: bool,
}

impl TimeStyle {
    /// The style for everything in `report`.
    pub(crate) fn for_report(report: &Report) -> TimeStyle {
        let same_day = match span(report) {
            Some((first, last)) => date(first) == date(last),
            None => true,
        };
        TimeStyle { same_day }
    }

    /// `12:00:03.123456`, or `2024-05-01 12:00:03.123456`.
    pub(crate) fn show(self, ts: Timestamp) -> String {
        if self.same_day {
            clock(ts)
        } else {
            format!("{} {}", date(ts), clock(ts))
        }
    }
}

/// First and last instant the report mentions: input spans, then group
/// events, then rebalances.
pub(crate) fn span(report: &Report) -> Option<(Timestamp, Timestamp)> {
    let inputs = report
        .inputs
        .iter()
        .flat_map(|i| i.first_ts.into_iter().chain(i.last_ts));
    let events = report.timeline.iter().map(|e| e.ts).chain(
        report
            .events_span
            .into_iter()
            .flat_map(|(first, last)| [first, last]),
    );
    let rebalances = report
        .rebalances
        .iter()
        .flat_map(|r| std::iter::once(r.started_at).chain(r.completed_at));
    let exchanges = report.exchanges.iter().map(|x| x.ts);
    let all = inputs.chain(events).chain(rebalances).chain(exchanges);
    all.fold(None, |acc, t| match acc {
        None => Some((t, t)),
        Some((a, b)) => Some((a.min(t), b.max(t))),
    })
}

/// Milliseconds from `first` to `last`, without overflow for any pair
/// (`Timestamp::millis_since` subtracts in `i64`).
pub(crate) fn millis_between(first: Timestamp, last: Timestamp) -> f64 {
    (i128::from(last.0) - i128::from(first.0)) as f64 / 1e6
}

/// `2024-05-01` (UTC).
pub(crate) fn date(ts: Timestamp) -> String {
    let text = ts.to_rfc3339();
    text.get(..10).unwrap_or(&text).to_string()
}

/// `12:00:03.123456` (UTC), computed from the integer so it never fails.
pub(crate) fn clock(ts: Timestamp) -> String {
    let secs = ts.0.div_euclid(NANOS_PER_SEC);
    let micros = ts.0.rem_euclid(NANOS_PER_SEC) / 1_000;
    let day = secs.rem_euclid(86_400);
    let (h, m, s) = (day / 3600, day / 60 % 60, day % 60);
    format!("{h:02}:{m:02}:{s:02}.{micros:06}")
}

/// A duration in the largest unit that keeps it short: `840 µs`, `812 ms`,
/// `3.21 s`, `4 min 12 s`, `2 h 03 min`.
pub(crate) fn duration(ms: f64) -> String {
    if !ms.is_finite() {
        return "?".to_string();
    }
    let sign = if ms < 0.0 { "-" } else { "" };
    let ms = ms.abs();
    let body = if ms == 0.0 {
        "0 ms".to_string()
    } else if ms < 1.0 {
        format!("{:.0} µs", ms * 1000.0)
    } else if ms < 10.0 {
        format!("{ms:.1} ms")
    } else if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else if ms < 60_000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else if ms < 3_600_000.0 {
        let s = (ms / 1000.0).round() as u64;
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        let m = (ms / 60_000.0).round() as u64;
        format!("{} h {:02} min", m / 60, m % 60)
    };
    format!("{sign}{body}")
}

/// An optional duration, `-` when absent.
pub(crate) fn maybe_duration(ms: Option<f64>) -> String {
    ms.map(duration).unwrap_or_else(|| "-".to_string())
}

/// `4 → 5`, with `?` for an unknown side.
pub(crate) fn generation_step(before: Option<i32>, after: Option<i32>) -> String {
    format!("{} → {}", maybe_number(before), maybe_number(after))
}

/// What a protocol calls its generations: KIP-848 (`consumer`) groups
/// count group epochs, rows read from a KIP-848 client's log alone
/// (`consumer_member`) the member's epochs, classic groups generations.
pub(crate) fn generation_word(protocol: &str) -> &'static str {
    match protocol {
        "consumer" => "group epoch",
        "consumer_member" => "member epoch",
        _ => "generation",
    }
}

/// A number or `-`.
pub(crate) fn maybe_number(n: Option<i32>) -> String {
    n.map(|n| n.to_string()).unwrap_or_else(|| "?".to_string())
}

/// A short form of a `member_id`: the part after the `client_id-` prefix
/// the Java client puts in front of its UUID (`GroupCoordinator` builds
/// member ids as `clientId + "-" + UUID`), cut to 8 characters; ids that are
/// short already stay whole.
pub(crate) fn short_member(member_id: &str, client_id: Option<&str>) -> String {
    let rest = client_id
        .filter(|c| !c.is_empty())
        .and_then(|c| member_id.strip_prefix(c))
        .and_then(|r| r.strip_prefix('-'))
        .filter(|r| !r.is_empty())
        // A static member's id starts with its group.instance.id instead.
        .or_else(|| split_client_uuid(member_id).map(|(_, uuid)| uuid))
        .unwrap_or(member_id);
    if rest.chars().count() <= 12 {
        return one_line(rest);
    }
    let cut: String = rest.chars().take(8).collect();
    one_line(&format!("{cut}…"))
}

/// `client / short-member`, or whichever is known, or `-`.
pub(crate) fn member_label(member_id: Option<&str>, client_id: Option<&str>) -> String {
    let member = member_id.filter(|m| !m.is_empty());
    let client = client_id.filter(|c| !c.is_empty());
    match (client, member) {
        (Some(c), Some(m)) => format!("{} / {}", one_line(c), short_member(m, Some(c))),
        (Some(c), None) => one_line(c),
        (None, Some(m)) => match split_client_uuid(m) {
            Some((client, _)) => {
                format!("{} / {}", one_line(client), short_member(m, Some(client)))
            }
            None => short_member(m, None),
        },
        (None, None) => "-".to_string(),
    }
}

/// A classic member id is `client_id + "-" + UUID`, or
/// `group.instance.id + "-" + UUID` for a static member (Kafka's
/// `GroupMetadata.generateMemberId`), so a broker log line that names only
/// the member still tells who it is: without this every member of a
/// log-only group would show as the same first eight characters
/// (`consumer…`).
fn split_client_uuid(member_id: &str) -> Option<(&str, &str)> {
    let cut = member_id.len().checked_sub(37)?;
    let (client, rest) = member_id.split_at_checked(cut)?;
    let uuid = rest.strip_prefix('-')?;
    let uuid_shaped = uuid.char_indices().all(|(i, c)| match i {
        8 | 13 | 18 | 23 => c == '-',
        _ => c.is_ascii_hexdigit(),
    });
    (uuid_shaped && !client.is_empty()).then_some((client, uuid))
}

/// `file#frame`, `file:line`, or just the file.
pub(crate) fn evidence(source: &str, frame: Option<u64>, line: Option<u64>) -> String {
    let source = one_line(source);
    match (frame, line) {
        (Some(f), _) => format!("{source}#{f}"),
        (None, Some(l)) => format!("{source}:{l}"),
        (None, None) => source,
    }
}

/// The text on one line, with control characters and bidi controls made
/// visible (`\u{1b}`, `\u{202e}`) and line breaks turned into spaces.
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if is_hidden(c) => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out
}

/// Whether `c` would act on a terminal or reorder text rather than show:
/// a control character (C0, DEL, C1) or a bidi embedding, override,
/// isolate or mark (Trojan Source, CVE-2021-42574).
pub(crate) fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// Every hidden character ([`is_hidden`]) made visible, line breaks
/// included (`\n`).
pub(crate) fn visible(text: &str) -> String {
    if !text.chars().any(is_hidden) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hidden(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// An optional text, `-` when absent or empty.
pub(crate) fn or_dash(text: Option<&str>) -> String {
    match text {
        Some(t) if !t.is_empty() => one_line(t),
        _ => "-".to_string(),
    }
}

/// `12,345`.
pub(crate) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `3.2 MB` (decimal units, as `ls -h --si`).
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// `2.4/h`, `-` when unknown.
pub(crate) fn rate(per_hour: Option<f64>) -> String {
    match per_hour {
        Some(r) if r.is_finite() => format!("{r:.1}/h"),
        _ => "-".to_string(),
    }
}

/// The snake_case name of a diagnostic kind, as JSON writes it.
pub(crate) fn diagnostic_kind(kind: DiagnosticKind) -> String {
    match serde_json::to_value(kind) {
        Ok(serde_json::Value::String(name)) => name,
        _ => format!("{kind:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_span_reaches_events_kept_only_as_their_span() {
        // A report in a format that does not list its events keeps their
        // first and last instant alone: the span still reaches them.
        let report = Report {
            rebalances: vec![Box::new(crate::report::Rebalance {
                started_at: Timestamp(5_000),
                completed_at: Some(Timestamp(6_000)),
                ..Default::default()
            })],
            events_span: Some((Timestamp(1_000), Timestamp(9_000))),
            ..Report::default()
        };
        assert_eq!(span(&report), Some((Timestamp(1_000), Timestamp(9_000))));
    }

    #[test]
    fn clock_shows_microseconds_of_the_utc_day() {
        let t = Timestamp::from_secs_nanos(1_714_564_803, 123_456_789);
        assert_eq!(clock(t), "12:00:03.123456");
        assert_eq!(date(t), "2024-05-01");
    }

    #[test]
    fn clock_handles_instants_before_the_epoch() {
        assert_eq!(clock(Timestamp(-1_000)), "23:59:59.999999");
    }

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(duration(0.84), "840 µs");
        assert_eq!(duration(3.44), "3.4 ms");
        assert_eq!(duration(812.4), "812 ms");
        assert_eq!(duration(3_214.0), "3.21 s");
        assert_eq!(duration(252_000.0), "4 min 12 s");
        assert_eq!(duration(7_380_000.0), "2 h 03 min");
        assert_eq!(duration(f64::NAN), "?");
    }

    #[test]
    fn short_member_drops_the_client_id_prefix_and_cuts_the_uuid() {
        let id = "consumer-orders-1-3f1e7c2a-0d9b-4c8e-9a55-6c1d2e3f4a5b";
        assert_eq!(short_member(id, Some("consumer-orders-1")), "3f1e7c2a…");
        assert_eq!(short_member("m-1", None), "m-1");
    }

    #[test]
    fn member_label_keeps_odd_characters_but_not_control_characters() {
        let label = member_label(
            Some("nonode@nohost/<0.1083.0>-9db8"),
            Some("nonode@nohost/<0.1083.0>"),
        );
        assert_eq!(label, "nonode@nohost/<0.1083.0> / 9db8");
        let from_log = member_label(
            Some("consumer-orders-1-3f1e7c2a-0d9b-4c8e-9a55-6c1d2e3f4a5b"),
            None,
        );
        assert_eq!(from_log, "consumer-orders-1 / 3f1e7c2a…");
        assert_eq!(
            member_label(Some("gjWzAEmmRlOfypB2_GB_9Q"), None),
            "gjWzAEmm…"
        );
        let static_id = "g1-static-2-29919797-d9f3-4d75-aa2d-5498dc942a00";
        assert_eq!(
            member_label(Some(static_id), Some("g1-c2")),
            "g1-c2 / 29919797…"
        );
        assert_eq!(one_line("a\u{1b}[31mb\nc"), "a\\u{1b}[31mb c");
    }

    #[test]
    fn evidence_names_frames_with_hash_and_lines_with_colon() {
        assert_eq!(evidence("a.pcap", Some(12), None), "a.pcap#12");
        assert_eq!(evidence("server.log", None, Some(40)), "server.log:40");
    }

    #[test]
    fn counts_and_sizes_are_grouped() {
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(12), "12");
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(3_200_000), "3.2 MB");
    }
}
