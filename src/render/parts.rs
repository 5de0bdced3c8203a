//! Small pieces the incident report's sections share.
//!
//! Takes: single values of a [`crate::report::Report`]. Gives: [`Line`]s and
//! [`Block`]s (comma lists, member lists, notes, non-empty tables) for
//! [`super::incident`], [`super::incident_group`] and
//! [`super::incident_round`], so those modules import from here and not
//! from each other.

use crate::report::{MemberSummary, Report};

use super::doc::{Block, Grid, Line, Span};
use super::human;

/// Items separated by commas.
pub(crate) fn comma_list(items: impl IntoIterator<Item = Span>) -> Vec<Span> {
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(Span::plain(", "));
        }
        out.push(item);
    }
    out
}

/// `Members …: (n) a, b, c`.
pub(crate) fn members_field(name: &'static str, members: &[MemberSummary]) -> (&'static str, Line) {
    if members.is_empty() {
        return (name, vec![Span::plain("none seen")]);
    }
    let mut line = vec![Span::plain(format!("{}", members.len()))];
    {
        line.push(Span::plain(": "));
        line.extend(comma_list(members.iter().map(|m| {
            Span::code(human::member_label(
                Some(&m.member_id),
                m.client_id.as_deref(),
            ))
        })));
    }
    (name, line)
}

/// A "Notes" paragraph and list, or nothing.
pub(crate) fn notes(notes: &[String]) -> Vec<Block> {
    if notes.is_empty() {
        return Vec::new();
    }
    let items = notes
        .iter()
        .map(|n| vec![Span::plain(human::one_line(n))])
        .collect();
    vec![
        Block::Paragraph(vec![Span::strong("Notes")]),
        Block::List(items),
    ]
}

/// A grid with no rows is not worth a table.
pub(crate) fn non_empty(grid: Grid) -> Option<Block> {
    (!grid.rows.is_empty()).then_some(Block::Grid(grid))
}

/// Each rebalance's number within its group (1, 2, … in the order of
/// `report.rebalances`), by index into `report.rebalances`: the one
/// "Rebalance N" that headings, tables, charts and zoom panels all use.
pub(crate) fn round_numbers(report: &Report) -> Vec<usize> {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    report
        .rebalances
        .iter()
        .map(|r| match seen.iter_mut().find(|(g, _)| *g == r.group) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                seen.push((&r.group, 1));
                1
            }
        })
        .collect()
}

/// The Markdown chart of the groups `names`, and a line saying what it
/// left out.
pub(crate) fn chart(report: &Report, names: &[&str]) -> Vec<Block> {
    let Some(chart) = super::mermaid::gantt(report, names) else {
        return Vec::new();
    };
    let mut blocks = vec![Block::Chart(chart.source)];
    let mut left_out = Vec::new();
    if chart.rounds_left_out > 0 {
        left_out.push(format!("{} rebalances", chart.rounds_left_out));
    }
    if chart.stops_left_out > 0 {
        left_out.push(format!("{} partition stops", chart.stops_left_out));
    }
    if !left_out.is_empty() {
        blocks.push(Block::Paragraph(vec![Span::plain(format!(
            "The chart leaves out {} (it draws {} bars at most, and {} partition stops per rebalance, the longest); the report's tables list them all.",
            left_out.join(" and "),
            super::mermaid::MAX_TASKS,
            super::mermaid::STOPS_PER_ROUND,
        ))]));
    }
    blocks
}
