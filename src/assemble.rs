//! Puts the pipeline's results into the [`Report`] a view shows, filtered.
//!
//! Takes: what was read ([`crate::input::Collected`]), the merged
//! [`Timeline`], the reconstructed group histories and the user's filter.
//! Gives: a [`Report`] holding only what matches, and how many rows of the
//! chosen view matched (for `-c` and the exit code); when the view had rows
//! and the filter kept none, a `nothing_matched` diagnostic saying which
//! flag removed them ([`crate::unmatched`]). Given a [`RowSink`], the
//! matching group events go to it one by one as they are made, after
//! the report as far as it goes before them (its inputs, groups and
//! records), and the report holds none of them (a long capture's million
//! rows are never held at once): the timeline view's rows, or the events
//! of a JSON or NDJSON document. Without one, the report view holds its
//! group events only for `--html`, which draws them; otherwise their
//! span ([`Report::events_span`]) and count.

use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::group::GroupHistory;
use crate::options::{Command, Options};
use crate::render::{EventSink, Format, View};
use crate::report::{
    DiagnosticCount, ExchangeRow, InputSummary, Rebalance, Report, FORMAT_VERSION,
};
use crate::time::Timestamp;
use crate::timeline::Timeline;
use crate::unmatched::Tally;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Whether the report is written in a form that shows its group events:
/// JSON's `timeline`, NDJSON's `event` lines (these two, when not given a
/// [`RowSink`], as a library caller may run them), the HTML page's
/// per-group pictures (`--html`). The others state their span only
/// ([`Report::events_span`]).
fn lists_events(opts: &Options) -> bool {
    let html = matches!(opts.command, Command::Report { html: Some(_), .. });
    opts.view == View::Report && (html || matches!(opts.format, Format::Json | Format::Ndjson))
}

/// Where the matching group events go when they are not gathered into
/// the report: written one by one as they are made (the timeline view's
/// rows, or the events of a JSON or NDJSON document between its other
/// parts).
pub type RowSink<'a> = &'a mut dyn EventSink;

/// The view's rows as reading left them: `decode`'s gathered, to be
/// filtered and put in request order here (empty for other views), or the
/// rows of `decode` or `timeline` already filtered and written as they
/// were read.
pub enum ViewRows {
    /// Every `decode` row, in the order the exchanges completed.
    Exchanges(Vec<ExchangeRow>),
    /// Written as read: the filter's tally over every row, and how many
    /// it kept.
    Written {
        /// Every row went through it (boxed: it is large, and the other
        /// way holds only a vector).
        tally: Box<Tally>,
        /// Rows kept (and written).
        matched: u64,
        /// Group events read, when they were counted and not kept (the
        /// time line is then empty).
        events_not_kept: Option<u64>,
    },
}

impl ViewRows {
    /// The tally `view`'s rows go through: `first` is the inputs' first
    /// event (relative `--since`/`--until` need it).
    pub fn tally(filter: &crate::filter::Filter, first: Option<Timestamp>, view: View) -> Tally {
        Tally::new(filter, first, noun(view))
    }
}

/// Builds the report for `view`, returning it and the number of matching
/// rows. With `rows`, the matching group events are handed to it in
/// order (after [`EventSink::head`], the report as far as it goes before
/// them) and not kept in the report (an error writing one ends the run).
pub fn assemble(
    mut inputs: Vec<InputSummary>,
    rows_read: ViewRows,
    timeline: &Timeline,
    histories: Vec<GroupHistory>,
    diagnostics: &mut Diagnostics,
    opts: &Options,
    rows: Option<RowSink<'_>>,
) -> std::io::Result<(Report, u64)> {
    let (filter, view) = (&opts.filter, opts.view);
    for input in &mut inputs {
        input.clock_offset_ms = timeline.clock_offsets.get(input.path.as_str()).copied();
    }
    let kept: &[ExchangeRow] = match &rows_read {
        ViewRows::Exchanges(rows) => rows,
        ViewRows::Written { .. } => &[],
    };
    let first = first_time(timeline, kept);
    let mut report = Report {
        format_version: FORMAT_VERSION,
        inputs,
        log_time_zone: opts.read.log_zone_name.clone(),
        ..Report::default()
    };
    let wants = |v: View| view == v || view == View::Report;
    let mut tally = Tally::new(filter, first, noun(view));
    let mut streamed = 0u64;
    let mut events_matched = 0usize;
    let mut groups = Vec::with_capacity(histories.len());
    let mut without = Vec::new();
    let mut lists: Vec<Vec<Box<Rebalance>>> = Vec::with_capacity(histories.len());
    for h in histories {
        if filter.group(&h.summary) {
            without.extend(h.summary.stops_without_rebalance.iter().cloned());
        }
        groups.push(h.summary);
        let mut rebalances = h.rebalances;
        if view == View::Rebalances {
            rebalances.retain(|r| tally.add(&**r));
        } else {
            rebalances.retain(|r| filter.rebalance(r, first));
        }
        lists.push(rebalances);
    }
    let end = timeline.last_ts();
    report.input_end = end;
    report.worst_stop =
        crate::stops::worst_stop(lists.iter().flatten().map(|r| &**r), &without, end);
    report.stops_without_rebalance = without;
    if wants(View::Rebalances) {
        report.rebalances = in_start_order_of_groups(lists);
    }
    if wants(View::Groups) {
        if view == View::Groups {
            groups.retain(|g| tally.add(g));
        } else {
            groups.retain(|g| filter.group(g));
        }
        report.groups = groups;
    }
    // The events last: a sink is handed everything before them first.
    match rows {
        Some(sink) => {
            sink.head(&report)?;
            for e in timeline.events.iter().map(crate::describe::timeline_entry) {
                if tally.add(&e) {
                    sink.event(&e)?;
                    streamed += 1;
                }
            }
        }
        None if view == View::Timeline || lists_events(opts) => {
            report.timeline = timeline
                .events
                .iter()
                .map(crate::describe::timeline_entry)
                .filter(|e| tally.add(e))
                .collect();
        }
        // The report in a format that does not list its events: they are
        // matched and counted as above (what matched decides the exit
        // code), and only their span is kept.
        None if view == View::Report => {
            for e in timeline.events.iter().map(crate::describe::timeline_entry) {
                if tally.add(&e) {
                    events_matched += 1;
                    let (first, last) = report.events_span.get_or_insert((e.ts, e.ts));
                    (*first, *last) = ((*first).min(e.ts), (*last).max(e.ts));
                }
            }
        }
        None => {}
    }
    let (no_rows, events) = match &rows_read {
        ViewRows::Exchanges(rows) => (rows.is_empty(), timeline.len() as u64),
        ViewRows::Written {
            tally,
            events_not_kept,
            ..
        } => (
            tally.total() == 0,
            events_not_kept.unwrap_or(timeline.len() as u64),
        ),
    };
    if view == View::Decode && no_rows && events > 0 {
        diagnostics.add(
            DiagnosticKind::NothingMatched,
            "decode",
            "exchanges",
            format!(
                "{events} group events in the inputs but no captured request/response exchange to \
                 decode: exchanges come from captures, log lines are events (`timeline` shows them)"
            ),
        );
    }
    match rows_read {
        ViewRows::Exchanges(mut rows) if view == View::Decode => {
            // Exchanges complete in response order; people read them in
            // request order. Put in order before the filter sees them, as
            // when they are written while read: a warning that nothing
            // matched names the same values either way.
            in_request_order(&mut rows);
            report.exchanges = rows.into_iter().filter(|x| tally.add(x)).collect();
        }
        ViewRows::Exchanges(_) => {}
        ViewRows::Written {
            tally: t, matched, ..
        } => {
            tally = *t;
            streamed += matched;
        }
    }
    let matched = match view {
        View::Timeline => report.timeline.len() + streamed as usize,
        View::Rebalances => report.rebalances.len() + streamed as usize,
        View::Groups => report.groups.len(),
        View::Decode => report.exchanges.len() + streamed as usize,
        View::Report => (report.timeline.len() + events_matched + streamed as usize)
            .max(report.rebalances.len()),
    } as u64;
    if let Some(w) = tally.warning().filter(|_| matched == 0) {
        diagnostics.add(DiagnosticKind::NothingMatched, "filters", "selection", w);
    }
    report.diagnostics = diagnostics.examples.clone();
    report.diagnostic_counts = diagnostics
        .counts
        .iter()
        .map(|(kind, count)| DiagnosticCount {
            kind: *kind,
            count: *count,
        })
        .collect();
    Ok((report, matched))
}

/// Sorts rebalances by start, then group, ties kept in the order given
/// (the groups' order, then each group's own): the index is the last key,
/// so sorting the keys alone and moving each record once is stable without
/// a stable sort's scratch copy of half the records.
fn in_start_order(rebalances: &mut [Box<Rebalance>]) {
    // Fewer than 2^32 records: each is hundreds of bytes, so that many
    // would be terabytes.
    let mut keys: Vec<(Timestamp, &str, u32)> = rebalances
        .iter()
        .enumerate()
        .map(|(i, r)| (r.started_at, r.group.as_str(), i as u32))
        .collect();
    keys.sort_unstable();
    let from: Vec<u32> = keys.into_iter().map(|k| k.2).collect();
    crate::timeline::put_in_order(rebalances, from);
}

/// The groups' rebalances (`lists`, in the groups' order) in one list in
/// [`in_start_order`]. Each group's own come in start order (a group's
/// rounds follow each other), so they are merged, each record's box moved
/// once. A list out of that order (or naming two groups) is gathered and
/// sorted as before.
#[allow(clippy::vec_box)] // Boxed on purpose: see `Report::rebalances`.
fn in_start_order_of_groups(lists: Vec<Vec<Box<Rebalance>>>) -> Vec<Box<Rebalance>> {
    let total = lists.iter().map(Vec::len).sum();
    let mergeable = lists.iter().all(|l| {
        l.windows(2)
            .all(|w| w[0].group == w[1].group && w[0].started_at <= w[1].started_at)
    });
    if !mergeable {
        let mut all = Vec::with_capacity(total);
        lists.into_iter().for_each(|l| all.extend(l));
        in_start_order(&mut all);
        return all;
    }
    // Ties in start go by group name, then by the lists' order: the heap
    // holds each list's next start and its place in that order.
    let mut order: Vec<usize> = (0..lists.len()).filter(|i| !lists[*i].is_empty()).collect();
    order.sort_by(|a, b| lists[*a][0].group.cmp(&lists[*b][0].group).then(a.cmp(b)));
    let mut heads: Vec<std::iter::Peekable<std::vec::IntoIter<Box<Rebalance>>>> = lists
        .into_iter()
        .map(|l| l.into_iter().peekable())
        .collect();
    let mut next: BinaryHeap<Reverse<(Timestamp, usize)>> = order
        .iter()
        .enumerate()
        .filter_map(|(place, i)| heads[*i].peek().map(|r| Reverse((r.started_at, place))))
        .collect();
    let mut out = Vec::with_capacity(total);
    while let Some(Reverse((_, place))) = next.pop() {
        let head = &mut heads[order[place]];
        out.extend(head.next());
        if let Some(n) = head.peek() {
            next.push(Reverse((n.started_at, place)));
        }
    }
    out
}

/// Sorts `rows` by request time, then frame, stably, by sorting their
/// 4-byte indexes and then putting the rows in place in one pass of swaps
/// ([`crate::timeline::put_in_order`]): a stable sort of the rows
/// themselves (208 bytes each) borrowed room for half of them and moved
/// each many times (on a dense capture's `decode`, hundreds of thousands).
pub fn in_request_order(rows: &mut [ExchangeRow]) {
    let Ok(n) = u32::try_from(rows.len()) else {
        return rows.sort_by_key(ExchangeRow::request_order);
    };
    let mut from: Vec<u32> = (0..n).collect();
    from.sort_by_key(|i| rows[*i as usize].request_order());
    crate::timeline::put_in_order(rows, from);
}

/// What the view's rows are called in a warning (the report's: its events).
fn noun(view: View) -> (&'static str, &'static str) {
    match view {
        View::Rebalances => ("rebalance", "rebalances"),
        View::Timeline | View::Report => ("group event", "group events"),
        View::Groups => ("group", "groups"),
        View::Decode => ("exchange", "exchanges"),
    }
}

fn first_time(timeline: &Timeline, exchanges: &[ExchangeRow]) -> Option<Timestamp> {
    let a = timeline.first_ts();
    let b = exchanges.iter().map(|x| x.ts).min();
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Rebalance;

    fn at(ms: i64, group: &str, generation: i32) -> Box<Rebalance> {
        Box::new(Rebalance {
            started_at: Timestamp(ms * 1_000_000),
            group: group.into(),
            generation: Some(generation),
            ..Rebalance::default()
        })
    }

    #[test]
    fn exchanges_are_in_request_order_and_ties_keep_theirs() {
        // Few times and frames, so that every tie occurs; an orphan
        // response has no request frame; correlation ids tell rows apart.
        let mut rng = crate::logs::synth::Rng(11);
        let rows: Vec<ExchangeRow> = (0..500)
            .map(|i| {
                let r = (rng.next() >> 33) as i64;
                ExchangeRow {
                    ts: Timestamp(r % 5),
                    correlation_id: i,
                    request_frame: (r % 3 != 0).then_some((r % 4) as u64),
                    response_frame: Some((r % 7) as u64),
                    ..ExchangeRow::default()
                }
            })
            .collect();
        let mut want = rows.clone();
        want.sort_by_key(|x| (x.ts, x.request_frame.or(x.response_frame)));
        let mut got = rows;
        in_request_order(&mut got);
        let ids = |v: &[ExchangeRow]| v.iter().map(|x| x.correlation_id).collect::<Vec<_>>();
        assert_eq!(ids(&got), ids(&want));
    }

    #[test]
    fn groups_rebalances_merged_are_those_gathered_and_sorted() {
        let gathered = |lists: &[Vec<Box<Rebalance>>]| {
            let mut all: Vec<Box<Rebalance>> = lists.concat();
            in_start_order(&mut all);
            all
        };
        let key = |v: &[Box<Rebalance>]| {
            v.iter()
                .map(|r| (r.started_at.0 / 1_000_000, r.group.clone(), r.generation))
                .collect::<Vec<_>>()
        };
        let mut rng = crate::logs::synth::Rng(5);
        for round in 0..200 {
            // Few starts and names, so that ties across groups occur, the
            // same name in two lists, empty lists; every fourth case has
            // a list out of order or naming two groups (sorted instead).
            let lists: Vec<Vec<Box<Rebalance>>> = (0..rng.below(6))
                .map(|_| {
                    let name = ["a", "b", "c"][rng.below(3) as usize];
                    let mut t = 0;
                    (0..rng.below(5))
                        .map(|i| {
                            t += rng.below(3) as i64;
                            at(t, name, i as i32)
                        })
                        .collect()
                })
                .collect();
            let mut lists = lists;
            if round % 4 == 3 {
                if let Some(l) = lists.iter_mut().find(|l| l.len() > 1) {
                    l.swap(0, 1);
                    l[0].group = "z".into();
                }
            }
            let want = gathered(&lists);
            assert_eq!(key(&in_start_order_of_groups(lists)), key(&want), "{round}");
        }
    }

    #[test]
    fn rebalances_are_in_start_then_group_order_and_ties_keep_theirs() {
        let mut r = vec![
            at(5, "b", 1),
            at(5, "a", 1),
            at(1, "z", 1),
            at(5, "a", 2),
            at(5, "b", 2),
            at(5, "a", 3),
        ];
        in_start_order(&mut r);
        let got: Vec<(i64, &str, Option<i32>)> = r
            .iter()
            .map(|r| (r.started_at.0 / 1_000_000, r.group.as_str(), r.generation))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, "z", Some(1)),
                (5, "a", Some(1)),
                (5, "a", Some(2)),
                (5, "a", Some(3)),
                (5, "b", Some(1)),
                (5, "b", Some(2)),
            ]
        );
    }
}
