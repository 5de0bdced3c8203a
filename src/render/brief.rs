//! `report --brief`: the report a ticket accepts.
//!
//! Takes: a [`Report`] and a way to measure a block as the chosen format
//! writes it. Gives: the story, the summary and each group's rebalance
//! table (the longest unexpected rounds when there are many), with no
//! evidence, joins, members or diagnostics, kept under [`BUDGET`]
//! characters whatever the input, and closed by a paragraph saying what was
//! left out and how to get it.

use crate::report::{Rebalance, Report};

use super::doc::{Block, Span};
use super::grids;
use super::human::{self, TimeStyle};
use super::{incident, parts};

/// Characters the brief report stays under (a Jira comment takes about
/// 32,000).
pub(crate) const BUDGET: usize = 30_000;

/// Room kept for the closing paragraph.
const CLOSING: usize = 1_500;

/// Rebalance rows shown per group at most.
const MAX_ROWS: usize = 20;

/// The brief report; `measure` gives a block's size in the output format.
pub(crate) fn document(report: &Report, measure: &dyn Fn(&Block) -> usize) -> Vec<Block> {
    let style = TimeStyle::for_report(report);
    let names = incident::group_names(report);
    let mut wanted = vec![Block::Heading(1, incident::title(&names))];
    wanted.extend(incident::story(report, &names, style));
    wanted.push(Block::Fields(incident::summary(report, &names, style)));
    wanted.extend(parts::chart(report, &names));
    let mut rows_left_out = 0;
    for name in &names {
        let rounds: Vec<&Rebalance> = report
            .rebalance_records()
            .filter(|r| r.group == *name)
            .collect();
        if rounds.is_empty() {
            continue;
        }
        let shown = chosen(&rounds);
        wanted.push(Block::Heading(
            2,
            vec![
                Span::plain("Rebalances of "),
                Span::code(human::one_line(name)),
            ],
        ));
        wanted.push(Block::Grid(
            grids::rebalances(shown.iter().copied(), style)
                .without_named("evidence")
                .without_named("group"),
        ));
        if shown.len() < rounds.len() {
            rows_left_out += rounds.len() - shown.len();
            wanted.push(Block::Paragraph(vec![Span::plain(format!(
                "The {} longest unexpected of {} rebalances.",
                shown.len(),
                rounds.len()
            ))]));
        }
    }
    let mut doc = Vec::new();
    let mut used = 0;
    let mut blocks_left_out = 0;
    for block in wanted {
        let size = measure(&block) + 1;
        if blocks_left_out > 0 || used + size > BUDGET - CLOSING {
            blocks_left_out += 1;
            continue;
        }
        used += size;
        doc.push(block);
    }
    doc.push(left_out(rows_left_out, blocks_left_out));
    doc
}

/// Every round when they are few; else the [`MAX_ROWS`] longest unexpected
/// ones, in time order.
fn chosen<'a>(rounds: &[&'a Rebalance]) -> Vec<&'a Rebalance> {
    if rounds.len() <= MAX_ROWS {
        return rounds.to_vec();
    }
    let mut unexpected: Vec<&Rebalance> = rounds.iter().copied().filter(|r| !r.expected).collect();
    unexpected.sort_by(|a, b| {
        let d = |r: &Rebalance| r.duration_ms.filter(|d| d.is_finite()).unwrap_or(-1.0);
        d(b).total_cmp(&d(a))
    });
    unexpected.truncate(MAX_ROWS);
    unexpected.sort_by_key(|r| r.started_at);
    unexpected
}

/// What the brief report does not say, and how to get it.
fn left_out(rows: usize, blocks: usize) -> Block {
    let mut line = Vec::new();
    let mut text = String::from(
        "Left out of this brief report: the evidence (frames and log lines) behind each rebalance, the joins, members, states and diagnostics",
    );
    if rows > 0 {
        text.push_str(&format!(", {rows} rebalance rows"));
    }
    if blocks > 0 {
        text.push_str(&format!(
            ", and {blocks} further parts that would have passed {} characters",
            human::count(BUDGET as u64)
        ));
    }
    text.push_str(". ");
    line.push(Span::plain(text));
    line.push(Span::code("kgtrace report"));
    line.push(Span::plain(" without "));
    line.push(Span::code("--brief"));
    line.push(Span::plain(" has everything; "));
    line.push(Span::code("kgtrace rebalances -g GROUP"));
    line.push(Span::plain(" lists every rebalance of a group."));
    Block::Paragraph(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{render, sample, Format, RenderOptions, View};

    /// `n` rebalances over `groups` groups, each with long ids and evidence,
    /// made from the sample incident's rounds.
    fn storm(n: usize, groups: usize) -> Report {
        let mut report = sample::incident();
        let rounds = report.rebalances.clone();
        report.rebalances = (0..n)
            .map(|i| {
                let mut r = rounds[i % rounds.len()].clone();
                r.group = format!("orders-service-with-a-long-name-{}", i % groups);
                r.started_at = sample::at(i as i64 * 7_000);
                r.completed_at = Some(sample::at(i as i64 * 7_000 + 3_000));
                r.duration_ms = Some(3_000.0 + i as f64);
                r.expected = false;
                r
            })
            .collect();
        report
    }

    fn brief(report: &Report, format: Format, width: Option<u16>) -> String {
        let opts = RenderOptions {
            brief: true,
            width,
            ..RenderOptions::default()
        };
        let mut out = Vec::new();
        render(report, View::Report, format, &opts, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn five_hundred_rebalances_stay_under_the_budget_and_say_what_is_left_out() {
        for (n, groups) in [(500, 1), (500, 7), (2_000, 400)] {
            let report = storm(n, groups);
            for (format, width) in [
                (Format::Markdown, None),
                (Format::Table, None),
                (Format::Table, Some(80)),
            ] {
                let text = brief(&report, format, width);
                let chars = text.chars().count();
                assert!(
                    chars < BUDGET,
                    "{n}/{groups} {format:?}: {chars} characters"
                );
                assert!(text.contains("Left out of this brief report"), "{text}");
                assert!(text.contains("without"), "{text}");
                assert!(!text.contains("Evidence"), "{text}");
            }
        }
    }

    #[test]
    fn a_small_report_is_whole_but_for_the_evidence() {
        let report = sample::incident();
        let text = brief(&report, Format::Markdown, None);
        assert!(text.starts_with("# Consumer group report"));
        assert!(text.contains("rebalanced"), "{text}");
        assert!(!text.contains("rebalance rows"), "{text}");
        assert!(!text.contains("lab/broker-1.pcap#4410"), "{text}");
    }

    #[test]
    fn many_rounds_of_a_group_keep_the_longest_unexpected_ones() {
        let report = storm(100, 1);
        let rounds: Vec<&Rebalance> = report.rebalance_records().collect();
        let shown = chosen(&rounds);
        assert_eq!(shown.len(), MAX_ROWS);
        assert!(shown.windows(2).all(|w| w[0].started_at <= w[1].started_at));
        assert!(shown.iter().all(|r| r.duration_ms >= Some(3_080.0)));
    }
}
