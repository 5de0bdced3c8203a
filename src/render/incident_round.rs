//! One rebalance's section of the incident report.
//!
//! Takes: a [`Rebalance`] and its number in the report. Gives: a heading, the
//! facts (when, trigger and why, flags, members before and after, straggler,
//! removed members, partitions), the joins with their parked times, the
//! evidence as `file#frame` / `file:line` references with their text, and the
//! notes.

use crate::report::{EvidenceLine, MemberJoin, Rebalance};

use super::doc::{Block, Grid, Line, Span, Tone};
use super::grids;
use super::human::{self, TimeStyle};
use super::incident_stops;
use super::parts::{members_field, non_empty, notes};

/// The section of rebalance number `number`.
pub(crate) fn section(r: &Rebalance, number: usize, style: TimeStyle) -> Vec<Block> {
    let heading = vec![
        Span::plain(format!(
            "Rebalance {number} at {}: {} {}, ",
            style.show(r.started_at),
            human::generation_word(&r.protocol),
            human::generation_step(r.previous_generation, r.generation)
        )),
        grids::trigger_span(&r.trigger.kind),
    ];
    let mut facts = facts(r, style);
    facts.extend(incident_stops::status_and_stop(r));
    let mut blocks = vec![Block::Heading(3, heading), Block::Fields(facts)];
    blocks.extend(non_empty(incident_stops::grid(&r.partitions, style)));
    blocks.extend(non_empty(joins(&r.joins, style)));
    blocks.extend(evidence(&r.evidence, style));
    blocks.extend(notes(&r.notes));
    blocks
}

fn facts(r: &Rebalance, style: TimeStyle) -> Vec<(&'static str, Line)> {
    let mut fields = vec![("When", when(r, style)), ("Trigger", trigger(r))];
    if !r.trigger.detail.is_empty() {
        fields.push(("Why", vec![Span::plain(human::one_line(&r.trigger.detail))]));
    }
    if !r.other_triggers.is_empty() {
        let mut others = Vec::new();
        for (i, t) in r.other_triggers.iter().enumerate() {
            if i > 0 {
                others.push(Span::plain("; "));
            }
            others.push(grids::trigger_span(&t.kind));
            if let Some(who) = t.client_id.as_ref().or(t.member_id.as_ref()) {
                others.push(Span::plain(" by "));
                others.push(Span::code(who.clone()));
            }
        }
        fields.push(("Other causes", others));
    }
    if r.expected {
        let why = r.expected_reason.as_deref().unwrap_or("expected");
        fields.push((
            "Expected",
            vec![Span::plain(human::one_line(why)).tone(Tone::Muted)],
        ));
    }
    if r.storm {
        fields.push((
            "Storm",
            vec![Span::plain("part of a rebalance storm").tone(Tone::Warning)],
        ));
    }
    if !r.seen_in.is_empty() {
        fields.push((
            "Seen in",
            vec![Span::plain(human::one_line(&r.seen_in.join(", ")))],
        ));
    }
    fields.push(members_field("Members before", &r.members_before));
    fields.push(members_field("Members after", &r.members_after));
    if let Some(s) = grids::shown_straggler(r) {
        fields.push(("Straggler", straggler(s)));
    }
    if !r.removed.is_empty() {
        fields.push(("Removed", removed(r)));
    }
    partitions(&mut fields, "Partitions revoked", &r.partitions_revoked);
    partitions(&mut fields, "Partitions assigned", &r.partitions_assigned);
    fields
}

fn when(r: &Rebalance, style: TimeStyle) -> Line {
    let mut text = style.show(r.started_at);
    match (r.completed_at, r.duration_ms) {
        (Some(end), Some(ms)) => {
            text.push_str(&format!(" → {} ({})", style.show(end), human::duration(ms)))
        }
        (Some(end), None) => text.push_str(&format!(" → {}", style.show(end))),
        (None, _) => {
            return vec![
                Span::plain(text),
                Span::plain(", never completed").tone(Tone::Warning),
            ];
        }
    }
    if let Some(join) = r.join_completed_at {
        text.push_str(&format!("; join phase ended {}", style.show(join)));
    }
    vec![Span::plain(text)]
}

fn trigger(r: &Rebalance) -> Line {
    let mut line = vec![grids::trigger_span(&r.trigger.kind)];
    if !r.trigger.confidence.is_empty() {
        line.push(Span::plain(format!(
            " ({} confidence)",
            human::one_line(&r.trigger.confidence)
        )));
    }
    if r.trigger.member_id.is_some() || r.trigger.client_id.is_some() {
        line.push(Span::plain(" by "));
        line.push(Span::code(human::member_label(
            r.trigger.member_id.as_deref(),
            r.trigger.client_id.as_deref(),
        )));
    }
    line
}

fn straggler(s: &MemberJoin) -> Line {
    let mut text = format!(
        " joined {} after the start",
        human::duration(s.after_start_ms)
    );
    if let Some(parked) = s.parked_ms {
        text.push_str(&format!(", parked {}", human::duration(parked)));
    }
    vec![
        Span::code(human::member_label(
            Some(&s.member_id),
            s.client_id.as_deref(),
        ))
        .tone(Tone::Warning),
        Span::plain(text),
    ]
}

fn removed(r: &Rebalance) -> Line {
    let mut line = Vec::new();
    for (i, m) in r.removed.iter().enumerate() {
        if i > 0 {
            line.push(Span::plain(", "));
        }
        line.push(Span::code(human::member_label(
            Some(&m.member_id),
            m.client_id.as_deref(),
        )));
        line.push(Span::plain(format!(" ({})", human::one_line(&m.how))));
    }
    line
}

fn partitions(fields: &mut Vec<(&'static str, Line)>, name: &'static str, list: &[String]) {
    if !list.is_empty() {
        fields.push((name, vec![Span::code(human::one_line(&list.join(", ")))]));
    }
}

fn joins(joins: &[MemberJoin], style: TimeStyle) -> Grid {
    let rows = joins
        .iter()
        .map(|j| {
            vec![
                Span::code(human::member_label(
                    Some(&j.member_id),
                    j.client_id.as_deref(),
                )),
                Span::plain(style.show(j.requested_at)),
                Span::plain(format!("+{}", human::duration(j.after_start_ms))),
                Span::plain(human::maybe_duration(j.parked_ms)),
            ]
        })
        .collect();
    Grid::new(
        vec!["joined", "JoinGroup sent", "after start", "parked"],
        rows,
    )
}

fn evidence(lines: &[EvidenceLine], style: TimeStyle) -> Vec<Block> {
    if lines.is_empty() {
        return Vec::new();
    }
    let items = lines
        .iter()
        .map(|e| {
            vec![
                Span::code(human::evidence(&e.source, e.frame, e.line)),
                Span::plain(format!(" {} ", style.show(e.ts))),
                Span::plain(human::one_line(&e.text)),
            ]
        })
        .collect();
    vec![
        Block::Paragraph(vec![Span::strong("Evidence")]),
        Block::List(items),
    ]
}
