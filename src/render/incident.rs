//! The incident report as a document.
//!
//! Takes: a [`Report`]. Gives: the [`Block`]s of the report that the
//! `report` subcommand writes as Markdown, HTML or text: a title, a summary
//! (inputs, time span, log time zone, groups, rebalances, storms, worst
//! stall), the groups table, one section per group (see
//! [`super::incident_group`] and [`super::incident_round`]), and last the
//! diagnostics. Choosing what to show is rendering; every number shown was
//! computed before.

use std::collections::{HashMap, HashSet};

use crate::report::{GroupSummary, InputSummary, Rebalance, Report};

use super::doc::{Block, Line, Span, Tone};
use super::grids;
use super::human::{self, TimeStyle};
use super::parts::{chart, comma_list};

/// The whole report.
pub(crate) fn document(report: &Report) -> Vec<Block> {
    let style = TimeStyle::for_report(report);
    let names = group_names(report);
    let mut doc = vec![Block::Heading(1, title(&names))];
    doc.extend(story(report, &names, style));
    doc.push(Block::Fields(summary(report, &names, style)));
    doc.extend(chart(report, &names));
    if names.is_empty() {
        doc.push(Block::Paragraph(vec![Span::plain(
            "No consumer group events were found in the inputs.",
        )]));
    }
    if !report.groups.is_empty() {
        doc.push(Block::Heading(2, vec![Span::plain("Groups")]));
        doc.push(Block::Grid(grids::groups(&report.groups)));
    }
    let by_group = ByGroup::new(report);
    for name in &names {
        doc.extend(super::incident_group::section(
            by_group.summary(name),
            by_group.rounds(name),
            name,
            style,
        ));
    }
    doc.extend(diagnostics(report));
    doc
}

/// Each group's summary and rebalances (in report order), found once for
/// the whole report so that writing something per group stays linear in
/// the report's size (a scan of every group and rebalance per group made
/// `report` with 10 k groups take 11.7 s).
pub(crate) struct ByGroup<'a> {
    summaries: HashMap<&'a str, &'a GroupSummary>,
    rounds: HashMap<&'a str, Vec<&'a Rebalance>>,
}

impl<'a> ByGroup<'a> {
    pub(crate) fn new(report: &'a Report) -> Self {
        let mut summaries = HashMap::new();
        for g in &report.groups {
            summaries.entry(g.group.as_str()).or_insert(g);
        }
        let mut rounds: HashMap<&str, Vec<&Rebalance>> = HashMap::new();
        for r in &report.rebalances {
            rounds.entry(r.group.as_str()).or_default().push(r);
        }
        ByGroup { summaries, rounds }
    }

    /// The first summary of group `name`.
    pub(crate) fn summary(&self, name: &str) -> Option<&'a GroupSummary> {
        self.summaries.get(name).copied()
    }

    /// The rebalances of group `name`.
    pub(crate) fn rounds(&self, name: &str) -> &[&'a Rebalance] {
        self.rounds.get(name).map_or(&[], Vec::as_slice)
    }
}

/// The story first: one paragraph per group.
pub(crate) fn story(report: &Report, names: &[&str], style: TimeStyle) -> Vec<Block> {
    let by_group = ByGroup::new(report);
    names
        .iter()
        .map(|name| {
            Block::Paragraph(super::story::group_of(
                by_group.summary(name),
                by_group.rounds(name),
                name,
                report.input_end,
                style,
            ))
        })
        .collect()
}

/// Groups in the order of `report.groups`, then any group that only a
/// rebalance names.
pub(crate) fn group_names(report: &Report) -> Vec<&str> {
    let mut names: Vec<&str> = report.groups.iter().map(|g| g.group.as_str()).collect();
    let mut seen: HashSet<&str> = names.iter().copied().collect();
    for r in &report.rebalances {
        if seen.insert(r.group.as_str()) {
            names.push(&r.group);
        }
    }
    names
}

pub(crate) fn title(names: &[&str]) -> Line {
    let mut line = vec![Span::plain("Consumer group report")];
    if (1..=3).contains(&names.len()) {
        line.push(Span::plain(": "));
        line.extend(comma_list(
            names.iter().map(|n| Span::code(human::one_line(n))),
        ));
    }
    line
}

pub(crate) fn summary(
    report: &Report,
    names: &[&str],
    style: TimeStyle,
) -> Vec<(&'static str, Line)> {
    let mut fields = vec![("Inputs", inputs(&report.inputs))];
    if let Some((first, last)) = human::span(report) {
        let text = format!(
            "{} {} → {} UTC ({})",
            human::date(first),
            human::clock(first),
            style.show(last),
            human::duration(human::millis_between(first, last))
        );
        fields.push(("Time span", vec![Span::plain(text)]));
    }
    // Only logs are read in a zone: a capture's times are UTC instants.
    if report.inputs.iter().any(|i| i.kind == "log") {
        fields.push((
            "Log time zone",
            vec![
                Span::code(human::one_line(&report.log_time_zone)),
                Span::plain(" (log times shown in UTC)"),
            ],
        ));
    }
    let mut groups = vec![Span::plain(names.len().to_string())];
    if !names.is_empty() {
        groups.push(Span::plain(": "));
        groups.extend(comma_list(
            names.iter().map(|n| Span::code(human::one_line(n))),
        ));
    }
    fields.push(("Groups", groups));
    fields.push(("Rebalances", rebalance_totals(&report.rebalances)));
    fields.push(("Storms", storms(report)));
    fields.push(("Worst stop", super::incident_stops::worst_stop(report)));
    fields.push((
        "Longest round (coordinator)",
        worst_stall(&report.rebalances, style),
    ));
    fields.push(("Diagnostics", diagnostic_totals(report)));
    fields
}

fn inputs(inputs: &[InputSummary]) -> Line {
    if inputs.is_empty() {
        return vec![Span::plain("none")];
    }
    let mut line = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        if i > 0 {
            line.push(Span::plain("; "));
        }
        let unit = if input.kind == "log" {
            "lines"
        } else {
            "packets"
        };
        let mut text = format!(
            " ({}, {} {unit}, {}, {} events",
            human::one_line(&input.kind),
            human::count(input.records),
            human::bytes(input.bytes),
            human::count(input.events)
        );
        if let Some(offset) = input.clock_offset_ms {
            text.push_str(&format!(", clock offset {offset:+.1} ms"));
        }
        text.push(')');
        line.push(Span::code(human::one_line(&input.path)));
        line.push(Span::plain(text));
    }
    line
}

fn rebalance_totals(rebalances: &[Box<Rebalance>]) -> Line {
    let expected = rebalances.iter().filter(|r| r.expected).count();
    let open = rebalances
        .iter()
        .filter(|r| r.completed_at.is_none())
        .count();
    let mut text = format!("{} ({expected} expected", rebalances.len());
    if open > 0 {
        text.push_str(&format!(", {open} never completed"));
    }
    text.push(')');
    vec![Span::plain(text)]
}

fn storms(report: &Report) -> Line {
    // Storm rounds counted per group in one pass (a scan per group was
    // quadratic in groups: issue 14).
    let mut storm_rounds: HashMap<&str, usize> = HashMap::new();
    for r in report.rebalances.iter().filter(|r| r.storm) {
        *storm_rounds.entry(r.group.as_str()).or_default() += 1;
    }
    let stormy: Vec<(&str, usize)> = group_names(report)
        .into_iter()
        .filter_map(|name| storm_rounds.get(name).map(|n| (name, *n)))
        .collect();
    if stormy.is_empty() {
        return vec![Span::plain("none")];
    }
    let mut line = Vec::new();
    for (i, (name, n)) in stormy.iter().enumerate() {
        if i > 0 {
            line.push(Span::plain(", "));
        }
        line.push(Span::code(human::one_line(name)).tone(Tone::Warning));
        line.push(Span::plain(format!(" ({n} rebalances)")));
    }
    line
}

fn worst_stall(rebalances: &[Box<Rebalance>], style: TimeStyle) -> Line {
    // Expected rounds (a group forming, KIP-429 follow-ups) are not the
    // stall an incident is about.
    let worst = rebalances
        .iter()
        .filter(|r| !r.expected)
        .filter_map(|r| r.duration_ms.map(|d| (d, r)))
        .fold(None::<(f64, &Rebalance)>, |best, (d, r)| match best {
            Some((b, _)) if b >= d => best,
            _ => Some((d, r)),
        });
    let Some((ms, r)) = worst else {
        return vec![Span::plain("none completed")];
    };
    vec![
        Span::strong(human::duration(ms)),
        Span::plain(" in "),
        Span::code(human::one_line(&r.group)),
        Span::plain(format!(
            ", {} {} at {} (",
            human::generation_word(&r.protocol),
            human::generation_step(r.previous_generation, r.generation),
            style.show(r.started_at)
        )),
        grids::trigger_span(&r.trigger.kind),
        Span::plain(")"),
    ]
}

fn diagnostic_totals(report: &Report) -> Line {
    let total: u64 = report.diagnostic_counts.iter().map(|c| c.count).sum();
    if total == 0 {
        return vec![Span::plain("none")];
    }
    let parts: Vec<String> = report
        .diagnostic_counts
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                human::count(c.count),
                human::diagnostic_kind(c.kind)
            )
        })
        .collect();
    vec![Span::plain(format!(
        "{} ({})",
        human::count(total),
        parts.join(", ")
    ))]
}

fn diagnostics(report: &Report) -> Vec<Block> {
    if report.diagnostic_counts.is_empty() && report.diagnostics.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![Block::Heading(2, vec![Span::plain("Diagnostics")])];
    blocks.push(Block::Grid(grids::diagnostic_counts(
        &report.diagnostic_counts,
    )));
    if !report.diagnostics.is_empty() {
        blocks.push(Block::Paragraph(vec![Span::strong("First examples")]));
        blocks.push(Block::Grid(grids::diagnostic_examples(report)));
    }
    blocks
}
