//! What a rebalance cost, in the incident report: the headline "worst
//! stop", each round's status and stop, and its partition stops with their
//! offsets.
//!
//! Takes: the [`Report`]'s `worst_stop` and each [`Rebalance`]'s `status`,
//! `stop` and `partitions`. Gives: summary fields, a facts line and a grid.

use crate::report::{Owner, PartitionStop, Rebalance, Report, WorstStop};

use super::doc::{Grid, Line, Span, Tone};
use super::human::{self, TimeStyle};

/// The headline: the longest partition stop, with its cause.
pub(crate) fn worst_stop(report: &Report) -> Line {
    let Some(w) = &report.worst_stop else {
        return vec![Span::plain("none measured")];
    };
    let mut line = vec![Span::strong(human::duration(w.stopped_ms))];
    if let Some(p) = &w.partition {
        line.push(Span::plain(" for "));
        line.push(Span::code(human::one_line(p)));
    }
    line.push(Span::plain(" in "));
    line.push(Span::code(human::one_line(&w.group)));
    line.push(Span::plain(format!(
        ", {} ({})",
        where_in_history(w),
        human::one_line(&w.why_stopped)
    )));
    line
}

/// The headline as one plain line, for tables.
pub(crate) fn worst_stop_text(report: &Report) -> Option<String> {
    let w = report.worst_stop.as_ref()?;
    let on = w
        .partition
        .as_ref()
        .map_or(String::new(), |p| format!(" for {}", human::one_line(p)));
    Some(format!(
        "worst stop: {}{on} in {}, {} ({})",
        human::duration(w.stopped_ms),
        human::one_line(&w.group),
        where_in_history(w),
        human::one_line(&w.why_stopped)
    ))
}

/// The rebalance the worst stop belongs to (`2 → 3`), or, for a static
/// member's restart that opened no round, the generation it happened in:
/// never an `N → N` that reads like a rebalance row.
fn where_in_history(w: &WorstStop) -> String {
    if w.without_rebalance {
        return match w.generation {
            Some(g) => format!("no rebalance (static member restarted in generation {g})"),
            None => "no rebalance (static member restarted)".into(),
        };
    }
    human::generation_step(w.previous_generation, w.generation)
}

/// The rebalances table's `stopped` cell: first partition stopped to last resumed.
pub(crate) fn stopped_span(r: &Rebalance) -> Span {
    match &r.stop {
        Some(s) => match s.stopped_ms {
            Some(ms) => Span::plain(human::duration(ms)),
            None => Span::plain("still stopped").tone(Tone::Warning),
        },
        None => Span::plain("–"),
    }
}

/// The round's status and how long consumption stopped, for its facts.
pub(crate) fn status_and_stop(r: &Rebalance) -> Vec<(&'static str, Line)> {
    let mut fields = Vec::new();
    if !r.status.is_empty() {
        let mut line = vec![Span::plain(r.status.replace('_', " "))];
        if r.status == "in_progress" {
            line[0] = line[0].clone().tone(Tone::Warning);
            if !r.waiting_for.is_empty() {
                line.push(Span::plain(format!(
                    ", waiting for {}",
                    human::one_line(&r.waiting_for.join(", "))
                )));
            }
        }
        fields.push(("Status", line));
    }
    if let Some(s) = &r.stop {
        let how_long = match s.stopped_ms {
            Some(ms) => human::duration(ms),
            None => "still stopped at the end of the input".into(),
        };
        let what = match s.partitions_stopped {
            Some(n) => format!(" ({n} partitions)"),
            None => " (the group; partitions unknown from logs alone)".into(),
        };
        fields.push(("Stopped", vec![Span::strong(how_long), Span::plain(what)]));
    }
    fields
}

/// One row per partition stop: who had it, who has it, why, how long, and
/// the offsets around the move.
pub(crate) fn grid(partitions: &[PartitionStop], style: TimeStyle) -> Grid {
    let rows = partitions.iter().map(|p| row(p, style)).collect();
    let mut g = Grid::new(
        vec![
            "partition",
            "from",
            "to",
            "why",
            "stopped at",
            "stopped",
            "committed",
            "fetched",
            "resumed at offset",
            "read twice",
            "skipped",
            "commit failed",
        ],
        rows,
    );
    g.droppable = vec!["commit failed", "skipped", "committed", "stopped at"];
    g
}

fn row(p: &PartitionStop, style: TimeStyle) -> Vec<Span> {
    let num = |v: Option<i64>| v.map_or("–".to_string(), |x| x.to_string());
    vec![
        Span::code(human::one_line(&p.partition)),
        owner(p.from.as_ref()),
        owner(p.to.as_ref()),
        Span::plain(human::one_line(&p.why_stopped)),
        Span::plain(style.show(p.stopped_at)),
        Span::plain(match p.stopped_ms {
            Some(ms) => human::duration(ms),
            None => "still stopped".into(),
        }),
        Span::plain(num(p.last_committed_offset)),
        Span::plain(num(p.last_fetched_offset)),
        Span::plain(num(p.resume_offset)),
        match p.reprocessed {
            Some(n) if n > 0 => Span::strong(n.to_string()).tone(Tone::Warning),
            v => Span::plain(num(v)),
        },
        Span::plain(num(p.skipped)),
        Span::plain(
            p.commit_failed
                .as_deref()
                .map_or("–".into(), human::one_line),
        ),
    ]
}

fn owner(o: Option<&Owner>) -> Span {
    match o {
        Some(o) => Span::code(human::member_label(
            Some(&o.member_id),
            o.client_id.as_deref(),
        )),
        None => Span::plain("nobody").tone(Tone::Muted),
    }
}
