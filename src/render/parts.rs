//! Small pieces the incident report's sections share.
//!
//! Takes: single values of a [`crate::report::Report`]. Gives: [`Line`]s and
//! [`Block`]s (comma lists, member lists, notes, non-empty tables) for
//! [`super::incident`], [`super::incident_group`] and
//! [`super::incident_round`], so those modules import from here and not
//! from each other.

use crate::report::MemberSummary;

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
