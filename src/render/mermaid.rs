//! The Markdown report's picture: a Mermaid `gantt` chart of each group's
//! rebalances and partition stops over time, which GitHub, GitLab and many
//! wikis draw in place.
//!
//! Takes: a [`Report`] (its `rebalances`, each one's `status`,
//! `completed_at` and `partitions`, and the inputs' span). Gives: the
//! chart's Mermaid source, at most [`MAX_TASKS`] bars, and a line saying
//! what was left out. Names from the inputs are reduced to characters that
//! cannot end a Mermaid gantt line or task name (`:`, `#`, `;`, `%%`, a
//! Markdown fence), and every bar starts with a fixed word, so no group,
//! topic or client name is read as a gantt keyword. The rounds are numbered
//! per group as everywhere else ([`super::parts::round_numbers`]).
//!
//! Times are written as UTC wall-clock strings: Mermaid reads them as the
//! viewer's local time and draws them back in it, so the axis shows UTC,
//! like the rest of the report.

use crate::report::{PartitionStop, Rebalance, Report};
use crate::time::Timestamp;

use super::human;
use super::parts::round_numbers;

/// Bars in the chart at most (rounds and partition stops together), so the
/// brief report keeps room for its tables.
pub(crate) const MAX_TASKS: usize = 60;

/// Partition stops drawn per rebalance at most (the longest).
pub(crate) const STOPS_PER_ROUND: usize = 12;

/// Characters of a bar or section name at most.
const MAX_NAME: usize = 80;

/// The chart, and how many rounds and partition stops it left out; `None`
/// when there is nothing to draw.
pub(crate) struct Chart {
    /// Mermaid source, without the Markdown fence.
    pub(crate) source: String,
    /// Rebalances not drawn.
    pub(crate) rounds_left_out: usize,
    /// Partition stops not drawn.
    pub(crate) stops_left_out: usize,
}

/// The chart of the groups `names` (in that order).
pub(crate) fn gantt(report: &Report, names: &[&str]) -> Option<Chart> {
    let end = human::span(report).map(|(_, last)| last)?;
    let numbers = round_numbers(report);
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    let mut tasks = 0;
    let (mut rounds_left_out, mut stops_left_out) = (0, 0);
    for name in names {
        let rounds: Vec<(usize, &Rebalance)> = report
            .rebalances
            .iter()
            .enumerate()
            .filter(|(_, r)| r.group == *name && r.started_at.is_plausible())
            .collect();
        let mut lines = Vec::new();
        for (pos, &(i, r)) in rounds.iter().enumerate() {
            let next = rounds.get(pos + 1).map(|(_, n)| n.started_at);
            let stops = drawn_stops(r);
            if tasks + 1 + stops.len().min(1) > MAX_TASKS {
                rounds_left_out += 1;
                stops_left_out += r.partitions.len();
                continue;
            }
            lines.push(round_task(r, numbers[i], next, end));
            tasks += 1;
            stops_left_out += r.partitions.len() - stops.len();
            for p in stops {
                if tasks >= MAX_TASKS {
                    stops_left_out += 1;
                    continue;
                }
                lines.push(stop_task(p, numbers[i], end));
                tasks += 1;
            }
        }
        if !lines.is_empty() {
            sections.push((name_of(name), lines));
        }
    }
    if sections.is_empty() {
        return None;
    }
    let mut source = String::from("gantt\n");
    source.push_str("    title Rebalances and partition stops (UTC)\n");
    source.push_str("    dateFormat YYYY-MM-DD HH:mm:ss.SSS\n");
    let first = report.rebalances.iter().map(|r| r.started_at).min();
    let one_day = first.is_some_and(|f| human::date(f) == human::date(end));
    let axis = if one_day { "%H:%M:%S" } else { "%m-%d %H:%M" };
    source.push_str(&format!("    axisFormat {axis}\n"));
    source.push_str("    todayMarker off\n");
    for (section, lines) in sections {
        source.push_str(&format!("    section {section}\n"));
        for line in lines {
            source.push_str(&format!("    {line}\n"));
        }
    }
    Some(Chart {
        source,
        rounds_left_out,
        stops_left_out,
    })
}

/// The round's longest partition stops with a plausible start.
fn drawn_stops(r: &Rebalance) -> Vec<&PartitionStop> {
    r.partitions
        .iter()
        .filter(|p| p.stopped_at.is_plausible())
        .take(STOPS_PER_ROUND)
        .collect()
}

/// `Rebalance 2, gen 3 to 4, poll_timeout :crit, <start>, <end>`: expected
/// rounds greyed (`done`), rounds still in progress at the end of the input
/// `active` and drawn to it, superseded rounds drawn to the next round.
fn round_task(r: &Rebalance, number: usize, next: Option<Timestamp>, end: Timestamp) -> String {
    let step = human::generation_step(r.previous_generation, r.generation).replace('→', "to");
    let (tag, until, note) = match (r.completed_at, r.status.as_str()) {
        (Some(done), _) => (if r.expected { "done, " } else { "" }, done, ""),
        (None, "superseded") => ("done, ", next.unwrap_or(r.started_at), ", superseded"),
        (None, _) => ("active, ", end, ", in progress at the end"),
    };
    let name = name_of(&format!(
        "Rebalance {number}, {} {step}, {}{note}",
        human::generation_word(&r.protocol),
        r.trigger.kind
    ));
    format!(
        "{name} :{tag}{}, {}",
        at(r.started_at),
        at(until.max(r.started_at))
    )
}

/// `Stop orders-3, 11.4 s (rebalance 2) :crit, <start>, <end>`.
fn stop_task(p: &PartitionStop, number: usize, end: Timestamp) -> String {
    let (until, how_long) = match p.resumed_at.filter(|t| t.is_plausible()) {
        Some(t) => (t, human::maybe_duration(p.stopped_ms)),
        None => (end, "still stopped at the end".into()),
    };
    let name = name_of(&format!(
        "Stop {}, {how_long} (rebalance {number})",
        p.partition
    ));
    format!(
        "{name} :crit, {}, {}",
        at(p.stopped_at),
        at(until.max(p.stopped_at))
    )
}

/// `2024-05-01 15:04:31.123` (UTC, milliseconds), the chart's `dateFormat`.
fn at(ts: Timestamp) -> String {
    let clamped = Timestamp(ts.0.clamp(
        Timestamp::PLAUSIBLE_FROM.0,
        Timestamp::PLAUSIBLE_UNTIL.0 - 1,
    ));
    let rfc = clamped.to_rfc3339();
    match (rfc.get(..10), rfc.get(11..23)) {
        (Some(date), Some(time)) => format!("{date} {time}"),
        _ => "1970-01-01 00:00:00.000".into(),
    }
}

/// A name that cannot break a gantt line: letters, digits, spaces and
/// `-_.,/()+@=[]'?` kept, anything else (`:` `#` `;` `%` `` ` `` `{` `<`,
/// control characters) as `_`, runs of spaces as one, at most [`MAX_NAME`]
/// characters, never empty.
pub(crate) fn name_of(raw: &str) -> String {
    let mut out = String::new();
    for c in raw.chars() {
        let c = match c {
            c if c.is_alphanumeric() => c,
            ' ' | '-' | '_' | '.' | ',' | '/' | '(' | ')' | '+' | '@' | '=' | '[' | ']' | '\''
            | '?' => c,
            c if c.is_whitespace() => ' ',
            _ => '_',
        };
        if c == ' ' && (out.is_empty() || out.ends_with(' ')) {
            continue;
        }
        if out.chars().count() == MAX_NAME {
            out.push('…');
            break;
        }
        out.push(c);
    }
    let trimmed = out.trim_end().to_string();
    if trimmed.is_empty() {
        "_".into()
    } else {
        trimmed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    #[test]
    fn names_lose_what_ends_a_gantt_line() {
        assert_eq!(name_of("orders: #1; 50%% done"), "orders_ _1_ 50__ done");
        assert_eq!(name_of("a```b\n{c}<d>"), "a___b _c__d_");
        assert_eq!(name_of("  "), "_");
        assert!(name_of(&"x".repeat(500)).chars().count() <= MAX_NAME + 1);
    }

    #[test]
    fn every_round_and_stop_is_a_bar_in_its_group_section() {
        let report = sample::incident();
        let chart = gantt(&report, &["orders-service"]).unwrap();
        let bars = chart
            .source
            .lines()
            .filter(|l| l.trim_start().starts_with("Rebalance "))
            .count();
        let rounds = report
            .rebalances
            .iter()
            .filter(|r| r.group == "orders-service")
            .count();
        assert_eq!(bars, rounds, "{}", chart.source);
        assert!(chart.source.contains("section orders-service"));
        for line in chart.source.lines().skip(1) {
            let line = line.trim();
            let colons = line.matches(':').count();
            if line.starts_with("Rebalance ") || line.starts_with("Stop ") {
                // One colon ends the name; the times carry two each.
                assert_eq!(colons, 5, "{line}");
            } else if !line.starts_with("dateFormat") && !line.starts_with("axisFormat") {
                assert_eq!(colons, 0, "{line}");
            }
        }
    }

    #[test]
    fn a_storm_is_cut_to_the_cap_and_says_how_much_was_left_out() {
        let mut report = sample::incident();
        let round = report.rebalances[0].clone();
        report.rebalances = (0..500)
            .map(|i| {
                let mut r = round.clone();
                r.started_at = sample::at(i * 1_000);
                r.completed_at = Some(sample::at(i * 1_000 + 500));
                r
            })
            .collect();
        let chart = gantt(&report, &[round.group.as_str()]).unwrap();
        let bars = chart.source.lines().filter(|l| l.contains(" :")).count();
        assert!(bars <= MAX_TASKS, "{bars}");
        assert!(chart.rounds_left_out > 0);
    }

    #[test]
    fn times_are_utc_wall_clock_milliseconds() {
        assert_eq!(
            at(Timestamp::from_secs_nanos(1_714_575_871, 123_456_789)),
            "2024-05-01 15:04:31.123"
        );
        assert_eq!(at(Timestamp(i64::MIN)), "1970-01-01 00:00:00.000");
    }
}
