//! One group's section of the incident report.
//!
//! Takes: a [`Report`] and a group name. Gives: a heading, the group's
//! timeline picture, its facts (protocol, assignors, state at the end and
//! the states it went through, leader, coordinator, generations, rebalance
//! totals, when it was seen), its notes, its members now with host,
//! software and partitions, its rebalance table, and one section per
//! rebalance ([`super::incident_round`]).

use crate::report::{GroupSummary, MemberSummary, Rebalance, StateChange};

use super::doc::{Block, Grid, Line, Span, Tone};
use super::grids;
use super::human::{self, TimeStyle};
use super::parts::{comma_list, members_field, non_empty, notes};

/// State changes listed at most; a storm can have hundreds.
const MAX_STATES: usize = 12;

/// The section of group `name`. Its rebalances are numbered within the
/// group, as the chart, the timeline picture and its zoom panels number
/// them ([`super::parts::round_numbers`]).
pub(crate) fn section(
    summary: Option<&GroupSummary>,
    rounds: &[&Rebalance],
    name: &str,
    style: TimeStyle,
) -> Vec<Block> {
    let heading = vec![Span::plain("Group "), Span::code(human::one_line(name))];
    // The picture comes first: it is what a reader of the ticket looks at.
    let mut blocks = vec![Block::Heading(2, heading), Block::Picture(name.to_string())];
    if let Some(g) = summary {
        blocks.push(Block::Fields(facts(g, style)));
        blocks.extend(notes(&g.notes));
        blocks.extend(non_empty(members(&g.members)));
        blocks.extend(without_rebalance(g, style));
    }
    if rounds.is_empty() {
        blocks.push(Block::Paragraph(vec![Span::plain("No rebalance seen.")]));
        return blocks;
    }
    blocks.push(Block::Heading(3, vec![Span::plain("Rebalances")]));
    blocks.push(Block::Grid(grids::rebalances(
        rounds.iter().copied(),
        style,
    )));
    for (i, r) in rounds.iter().enumerate() {
        blocks.extend(super::incident_round::section(r, i + 1, style));
    }
    blocks
}

/// Partition stops no rebalance explains (a static member restarted
/// within its session timeout), each with its partition grid.
fn without_rebalance(g: &GroupSummary, style: TimeStyle) -> Vec<Block> {
    let mut blocks = Vec::new();
    for s in &g.stops_without_rebalance {
        if blocks.is_empty() {
            blocks.push(Block::Heading(
                3,
                vec![Span::plain("Stops without a rebalance")],
            ));
        }
        blocks.push(Block::Paragraph(vec![
            Span::plain("Static member "),
            Span::code(human::one_line(s.group_instance_id.as_deref().unwrap_or("?"))),
            Span::plain(format!(
                " restarted in generation {}: no LeaveGroup, no new generation; its partitions waited for the new process.",
                s.generation.map_or("?".to_string(), |n| n.to_string())
            )),
        ]));
        blocks.push(Block::Grid(super::incident_stops::grid(
            &s.partitions,
            style,
        )));
    }
    blocks
}

fn facts(g: &GroupSummary, style: TimeStyle) -> Vec<(&'static str, Line)> {
    let mut protocol = human::one_line(&g.protocol);
    if let Some(t) = g.protocol_type.as_deref().filter(|t| !t.is_empty()) {
        protocol.push_str(&format!(" (protocol type {})", human::one_line(t)));
    }
    let mut fields = vec![("Protocol", vec![Span::plain(protocol)])];
    if !g.assignors.is_empty() {
        let names = g.assignors.iter().map(|a| Span::code(human::one_line(a)));
        fields.push(("Assignors", comma_list(names)));
    }
    let state = format!(
        "{}, {} {}",
        human::one_line(&g.state),
        human::generation_word(&g.protocol),
        human::maybe_number(g.generation)
    );
    fields.push(("State at end", vec![Span::plain(state)]));
    if !g.states.is_empty() {
        fields.push(("States", states(&g.states, style)));
    }
    if let Some(leader) = g.leader.as_deref().filter(|l| !l.is_empty()) {
        fields.push(("Leader", vec![Span::code(leader_label(g, leader))]));
    }
    if let Some(c) = &g.coordinator {
        fields.push(("Coordinator", vec![Span::code(human::one_line(c))]));
    }
    let generations = grids::generations(&g.generations_seen);
    fields.push(("Generations seen", vec![Span::plain(generations)]));
    fields.push(("Rebalances", totals(g)));
    if let (Some(first), Some(last)) = (g.first_seen, g.last_seen) {
        let seen = format!("{} → {}", style.show(first), style.show(last));
        fields.push(("Seen", vec![Span::plain(seen)]));
    }
    fields.push(members_field("Members now", &g.members));
    fields
}

fn leader_label(g: &GroupSummary, leader: &str) -> String {
    let client = g
        .members
        .iter()
        .find(|m| m.member_id == leader)
        .and_then(|m| m.client_id.as_deref());
    human::member_label(Some(leader), client)
}

fn totals(g: &GroupSummary) -> Line {
    // No rate when the inputs are too short to give one: "3 (-)" reads as
    // a typo.
    let rate = match g.rebalances_per_hour {
        Some(r) if r.is_finite() => format!(" ({})", human::rate(Some(r))),
        _ => String::new(),
    };
    let mut text = format!(
        "{}{rate}, {} rebalancing in total",
        g.rebalance_count,
        human::duration(g.rebalancing_ms)
    );
    if g.storm {
        text.push_str(", storm");
    }
    let tone = if g.storm { Tone::Warning } else { Tone::Plain };
    vec![Span::plain(text).tone(tone)]
}

/// `PreparingRebalance 12:00:41.250000 → Stable 12:00:44.201000`, the last
/// [`MAX_STATES`] of them.
fn states(states: &[StateChange], style: TimeStyle) -> Line {
    let skipped = states.len().saturating_sub(MAX_STATES);
    let shown: Vec<String> = states[skipped..]
        .iter()
        .map(|s| format!("{} {}", human::one_line(&s.state), style.show(s.at)))
        .collect();
    let mut text = shown.join(" → ");
    if skipped > 0 {
        text = format!("({skipped} earlier) … → {text}");
    }
    vec![Span::plain(text)]
}

/// Members at the end: who, where, what software, which partitions.
fn members(members: &[MemberSummary]) -> Grid {
    let rows = members
        .iter()
        .map(|m| {
            vec![
                Span::code(human::member_label(
                    Some(&m.member_id),
                    m.client_id.as_deref(),
                )),
                code_or_blank(m.group_instance_id.as_deref()),
                code_or_blank(m.client_host.as_deref()),
                Span::plain(human::or_dash(m.client_software.as_deref())),
                Span::plain(human::one_line(&m.assignment.join(", "))),
            ]
        })
        .collect();
    Grid::new(
        vec!["member now", "static id", "host", "software", "partitions"],
        rows,
    )
    .droppable(&["static id", "software"])
}

fn code_or_blank(text: Option<&str>) -> Span {
    match text.filter(|t| !t.is_empty()) {
        Some(t) => Span::code(human::one_line(t)),
        None => Span::plain(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::doc::plain_text;
    use crate::render::sample;

    fn field(blocks: &[Block], name: &str) -> Option<String> {
        blocks.iter().find_map(|b| match b {
            Block::Fields(fields) => fields
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, l)| plain_text(l)),
            _ => None,
        })
    }

    #[test]
    fn facts_name_the_leader_and_the_states_passed_through() {
        let report = sample::incident();
        let style = TimeStyle::for_report(&report);
        let by_group = super::super::incident::ByGroup::new(&report);
        let name = "orders-service";
        let (summary, rounds) = (by_group.summary(name), by_group.rounds(name));
        let blocks = section(summary, rounds, name, style);
        assert_eq!(
            field(&blocks, "Leader").unwrap(),
            "consumer-orders-1 / 3f1e7c2a…"
        );
        let states = field(&blocks, "States").unwrap();
        assert!(states.starts_with("PreparingRebalance 12:00:41.250000 → CompletingRebalance"));
    }

    #[test]
    fn many_states_keep_only_the_last_ones() {
        let change = |i: i64| StateChange {
            at: sample::at(i),
            state: "Stable".into(),
            generation: None,
        };
        let many: Vec<StateChange> = (0..40).map(change).collect();
        let style = TimeStyle::for_report(&sample::incident());
        let text = plain_text(&states(&many, style));
        assert!(text.starts_with("(28 earlier) … → Stable"));
        assert_eq!(text.matches("Stable").count(), MAX_STATES);
    }

    #[test]
    fn members_now_are_listed_with_host_and_partitions() {
        let report = sample::incident();
        let grid = members(&report.groups[0].members);
        assert_eq!(grid.rows.len(), 2);
        assert_eq!(grid.rows[0][2].text, "10.0.0.21:50122");
        assert_eq!(grid.rows[0][4].text, "orders-0, orders-1, orders-2");
    }
}
