//! The human tables of each view, as [`Grid`]s.
//!
//! Takes: a [`Report`] (or part of it) and a [`TimeStyle`]. Gives: one grid
//! per view with the columns a person reads first; the table, Markdown and
//! HTML writers all print these, so a column means the same in each. CSV and
//! JSON do not use them: they carry every raw field (see [`super::csv`]).

use crate::report::{
    DiagnosticCount, ExchangeRow, GroupSummary, MemberJoin, Rebalance, Report, TimelineEntry,
};

use super::doc::{Grid, Span, Tone, TriggerClass};
use super::human::{self, TimeStyle};

/// `timeline`: one row per group event.
pub(crate) fn timeline(entries: &[TimelineEntry], style: TimeStyle) -> Grid {
    let headers = vec![
        "time", "group", "gen", "member", "kind", "error", "detail", "evidence",
    ];
    let rows = entries.iter().map(|e| timeline_row(e, style)).collect();
    Grid::new(headers, rows).droppable(&["gen"])
}

fn timeline_row(e: &TimelineEntry, style: TimeStyle) -> Vec<Span> {
    vec![
        Span::plain(style.show(e.ts)),
        code_or_dash(e.group.as_deref()),
        Span::plain(e.generation.map(|g| g.to_string()).unwrap_or_default()),
        member_span(e.member_id.as_deref(), e.client_id.as_deref()),
        Span::plain(human::one_line(&e.kind)),
        error_span(e.error.as_deref()),
        Span::plain(human::one_line(&e.detail)),
        Span::code(human::evidence(&e.source, e.frame, e.line)),
    ]
}

/// An id as code, or a plain `-` when absent.
fn code_or_dash(text: Option<&str>) -> Span {
    match text.filter(|t| !t.is_empty()) {
        Some(t) => Span::code(human::one_line(t)),
        None => Span::plain("-"),
    }
}

/// A member label as code, or a plain `-` when nothing is known.
fn member_span(member_id: Option<&str>, client_id: Option<&str>) -> Span {
    match human::member_label(member_id, client_id) {
        dash if dash == "-" => Span::plain(dash),
        label => Span::code(label),
    }
}

fn error_span(error: Option<&str>) -> Span {
    match error {
        Some(e) if !e.is_empty() => Span::code(human::one_line(e)).tone(Tone::Error),
        _ => Span::plain(""),
    }
}

/// `rebalances`: one row per rebalance.
pub(crate) fn rebalances<'a>(
    rebalances: impl IntoIterator<Item = &'a Rebalance>,
    style: TimeStyle,
) -> Grid {
    let headers = vec![
        "started",
        "group",
        "generation",
        "duration",
        "stopped",
        "trigger",
        "confidence",
        "member",
        "straggler",
        "flags",
        "evidence",
    ];
    let rows = rebalances
        .into_iter()
        .map(|r| rebalance_row(r, style))
        .collect();
    Grid::new(headers, rows).droppable(&["evidence", "confidence", "flags", "straggler"])
}

fn rebalance_row(r: &Rebalance, style: TimeStyle) -> Vec<Span> {
    let duration = match (r.duration_ms, r.status.as_str()) {
        (Some(ms), _) => Span::plain(human::duration(ms)),
        (None, "superseded") => Span::plain("superseded").tone(Tone::Warning),
        (None, "in_progress") => Span::plain("in progress").tone(Tone::Warning),
        (None, _) => Span::plain("never completed").tone(Tone::Warning),
    };
    vec![
        Span::plain(style.show(r.started_at)),
        Span::code(human::one_line(&r.group)),
        Span::plain(human::generation_step(r.previous_generation, r.generation)),
        duration,
        super::incident_stops::stopped_span(r),
        trigger_span(&r.trigger.kind),
        Span::plain(human::one_line(&r.trigger.confidence)),
        member_span(
            r.trigger.member_id.as_deref(),
            r.trigger.client_id.as_deref(),
        ),
        straggler_span(r),
        flags_span(r),
        Span::plain(r.evidence.len().to_string()),
    ]
}

/// A trigger kind, coloured by family.
pub(crate) fn trigger_span(kind: &str) -> Span {
    Span::code(human::one_line(kind)).tone(Tone::Trigger(TriggerClass::of(kind)))
}

/// The round's straggler, when it held anyone up: not the member that
/// started the round, and not one that joined at the start (`+0 ms`), which
/// parked nobody.
pub(crate) fn shown_straggler(r: &Rebalance) -> Option<&MemberJoin> {
    r.straggler.as_ref().filter(|s| {
        s.after_start_ms.is_finite()
            && s.after_start_ms >= 1.0
            && r.trigger.member_id.as_deref() != Some(s.member_id.as_str())
    })
}

fn straggler_span(r: &Rebalance) -> Span {
    match shown_straggler(r) {
        Some(s) => Span::code(format!(
            "{} (+{})",
            human::member_label(Some(&s.member_id), s.client_id.as_deref()),
            human::duration(s.after_start_ms)
        ))
        .tone(Tone::Warning),
        None => Span::plain(""),
    }
}

fn flags_span(r: &Rebalance) -> Span {
    let mut flags = Vec::new();
    if r.storm {
        flags.push("storm");
    }
    if r.expected {
        flags.push("expected");
    }
    let tone = if r.storm {
        Tone::Warning
    } else if r.expected {
        Tone::Muted
    } else {
        Tone::Plain
    };
    Span::plain(flags.join(", ")).tone(tone)
}

/// `groups`: one row per group.
pub(crate) fn groups(groups: &[GroupSummary]) -> Grid {
    let headers = vec![
        "group",
        "protocol",
        "assignors",
        "state",
        "members",
        "generations",
        "rebalances",
        "rate",
        "rebalancing",
        "storm",
    ];
    let rows = groups.iter().map(group_row).collect();
    Grid::new(headers, rows).droppable(&["assignors", "rebalancing", "rate", "generations"])
}

fn group_row(g: &GroupSummary) -> Vec<Span> {
    let protocol = match &g.protocol_type {
        Some(t) if !t.is_empty() => format!("{} ({})", g.protocol, t),
        _ => g.protocol.clone(),
    };
    vec![
        Span::code(human::one_line(&g.group)),
        Span::plain(human::one_line(&protocol)),
        Span::plain(human::one_line(&g.assignors.join(", "))),
        Span::plain(human::one_line(&g.state)),
        Span::plain(g.members.len().to_string()),
        Span::plain(generations(&g.generations_seen)),
        Span::plain(g.rebalance_count.to_string()),
        Span::plain(human::rate(g.rebalances_per_hour)),
        Span::plain(human::duration(g.rebalancing_ms)),
        if g.storm {
            Span::plain("storm").tone(Tone::Warning)
        } else {
            Span::plain("")
        },
    ]
}

/// `3, 4, 5`, or `1 … 40 (37 seen)` when there are many.
pub(crate) fn generations(seen: &[i32]) -> String {
    match seen {
        [] => "-".to_string(),
        [first, .., last] if seen.len() > 4 => format!("{first} … {last} ({} seen)", seen.len()),
        _ => seen
            .iter()
            .map(|g| g.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// `decode`: one row per request/response exchange.
pub(crate) fn exchanges(rows: &[ExchangeRow], style: TimeStyle) -> Grid {
    let headers = vec![
        "time",
        "api",
        "corr",
        "client",
        "connection",
        "frames",
        "latency",
        "group",
        "member",
        "gen",
        "error",
    ];
    let rows = rows.iter().map(|x| exchange_row(x, style)).collect();
    Grid::new(headers, rows).droppable(&["connection", "corr", "client", "gen"])
}

fn exchange_row(x: &ExchangeRow, style: TimeStyle) -> Vec<Span> {
    let frames = format!(
        "{} → {}",
        x.request_frame
            .map(|f| f.to_string())
            .unwrap_or_else(|| "?".into()),
        x.response_frame
            .map(|f| f.to_string())
            .unwrap_or_else(|| "?".into())
    );
    vec![
        Span::plain(style.show(x.ts)),
        Span::plain(format!("{} v{}", human::one_line(x.api), x.api_version)),
        Span::plain(x.correlation_id.to_string()),
        code_or_dash(x.client_id.as_deref()),
        Span::code(human::one_line(&x.connection)),
        Span::plain(frames),
        Span::plain(human::maybe_duration(x.latency_ms)),
        code_or_dash(x.group_id.as_deref()),
        match x.member_id.as_deref() {
            Some(m) => member_span(Some(m), x.client_id.as_deref()),
            None => code_or_dash(None),
        },
        Span::plain(x.generation_id.map(|g| g.to_string()).unwrap_or_default()),
        error_span(x.error),
    ]
}

/// Diagnostic counts: one row per kind.
pub(crate) fn diagnostic_counts(counts: &[DiagnosticCount]) -> Grid {
    let rows = counts
        .iter()
        .map(|c| {
            vec![
                Span::code(human::diagnostic_kind(c.kind)),
                Span::plain(human::count(c.count)),
            ]
        })
        .collect();
    Grid::new(vec!["diagnostic", "count"], rows)
}

/// Diagnostic examples: kind, where, what.
pub(crate) fn diagnostic_examples(report: &Report) -> Grid {
    let rows = report
        .diagnostics
        .iter()
        .map(|d| {
            vec![
                Span::code(human::diagnostic_kind(d.kind)),
                Span::code(format!(
                    "{} {}",
                    human::one_line(&d.source),
                    human::one_line(&d.at)
                )),
                Span::plain(human::one_line(&d.detail)),
            ]
        })
        .collect();
    Grid::new(vec!["diagnostic", "where", "detail"], rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    #[test]
    fn every_row_is_as_wide_as_the_header() {
        let report = sample::incident();
        let style = TimeStyle::for_report(&report);
        for grid in [
            timeline(&report.timeline, style),
            rebalances(report.rebalance_records(), style),
            groups(&report.groups),
            exchanges(&report.exchanges, style),
            diagnostic_counts(&report.diagnostic_counts),
            diagnostic_examples(&report),
        ] {
            assert!(grid.rows.iter().all(|r| r.len() == grid.headers.len()));
        }
    }

    #[test]
    fn many_generations_are_shown_as_a_range() {
        assert_eq!(generations(&[3, 4]), "3, 4");
        assert_eq!(generations(&[1, 2, 3, 4, 9]), "1 … 9 (5 seen)");
        assert_eq!(generations(&[]), "-");
    }

    #[test]
    fn a_rebalance_that_never_completed_says_so() {
        let mut report = sample::incident();
        report.rebalances[0].duration_ms = None;
        let grid = rebalances(report.rebalance_records(), TimeStyle::for_report(&report));
        assert_eq!(grid.rows[0][3].text, "never completed");
        assert_eq!(grid.rows[0][3].tone, Tone::Warning);
    }
}
