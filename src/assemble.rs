//! Puts the pipeline's results into the [`Report`] a view shows, filtered.
//!
//! Takes: what was read ([`crate::input::Collected`]), the merged
//! [`Timeline`], the reconstructed group histories and the user's filter.
//! Gives: a [`Report`] holding only what matches, and how many rows of the
//! chosen view matched (for `-c` and the exit code).

use crate::diagnostic::Diagnostics;
use crate::group::GroupHistory;
use crate::options::Options;
use crate::render::View;
use crate::report::{DiagnosticCount, ExchangeRow, InputSummary, Report, FORMAT_VERSION};
use crate::time::Timestamp;
use crate::timeline::Timeline;

/// Builds the report for `view`, returning it and the number of matching rows.
pub fn assemble(
    mut inputs: Vec<InputSummary>,
    exchanges: Vec<ExchangeRow>,
    timeline: &Timeline,
    histories: Vec<GroupHistory>,
    diagnostics: &Diagnostics,
    opts: &Options,
) -> (Report, u64) {
    let (filter, view) = (&opts.filter, opts.view);
    for input in &mut inputs {
        input.clock_offset_ms = timeline.clock_offsets.get(input.path.as_str()).copied();
    }
    let first = first_time(timeline, &exchanges);
    let mut report = Report {
        format_version: FORMAT_VERSION,
        inputs,
        log_time_zone: opts.read.log_zone_name.clone(),
        diagnostics: diagnostics.examples.clone(),
        diagnostic_counts: diagnostics
            .counts
            .iter()
            .map(|(kind, count)| DiagnosticCount {
                kind: *kind,
                count: *count,
            })
            .collect(),
        ..Report::default()
    };
    let wants = |v: View| view == v || view == View::Report;
    if wants(View::Timeline) {
        report.timeline = timeline
            .events
            .iter()
            .map(crate::describe::timeline_entry)
            .filter(|e| filter.entry(e, first))
            .collect();
    }
    let mut rebalances = Vec::new();
    let mut groups = Vec::new();
    let mut without = Vec::new();
    for h in histories {
        if filter.group(&h.summary) {
            without.extend(h.summary.stops_without_rebalance.iter().cloned());
        }
        groups.push(h.summary);
        rebalances.extend(h.rebalances);
    }
    rebalances.retain(|r| filter.rebalance(r, first));
    let end = timeline.events.last().map(|e| e.ts);
    report.worst_stop = crate::stops::worst_stop(&rebalances, &without, end);
    report.stops_without_rebalance = without;
    if wants(View::Rebalances) {
        rebalances.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.group.cmp(&b.group)));
        report.rebalances = rebalances;
    }
    if wants(View::Groups) {
        groups.retain(|g| filter.group(g));
        report.groups = groups;
    }
    if view == View::Decode {
        report.exchanges = exchanges
            .into_iter()
            .filter(|x| filter.exchange(x, first))
            .collect();
        // Exchanges complete in response order; people read them in request order.
        report
            .exchanges
            .sort_by_key(|x| (x.ts, x.request_frame.or(x.response_frame)));
    }
    let matched = match view {
        View::Timeline => report.timeline.len(),
        View::Rebalances => report.rebalances.len(),
        View::Groups => report.groups.len(),
        View::Decode => report.exchanges.len(),
        View::Report => report.timeline.len().max(report.rebalances.len()),
    } as u64;
    (report, matched)
}

fn first_time(timeline: &Timeline, exchanges: &[ExchangeRow]) -> Option<Timestamp> {
    let a = timeline.events.first().map(|e| e.ts);
    let b = exchanges.iter().map(|x| x.ts).min();
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
