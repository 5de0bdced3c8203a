//! The lines `kgtrace watch` writes, each flushed at once.
//!
//! Takes: what the [`super::engine::Engine`] tells. Gives: one line per
//! item. Text: a sentence per record for a person watching. NDJSON: the
//! record exactly as `rebalances --format ndjson` (and so `--format json`)
//! writes it, with a `"type"` field first:
//!
//! - `"started"`: a round began; its record is `in_progress` and
//!   `waiting_for` names whom it waits for;
//! - `"completed"`: a round completed or was superseded (`status` says
//!   which): its record;
//! - `"revised"`: a record already written, changed by what came after it
//!   (a LeaveGroup judged by what the member did next, the first Fetch that
//!   ends a partition's stop); the last line for a `group` and
//!   `started_at` is the record `rebalances` gives;
//! - `"withdrawn"`: a record already written that no longer stands:
//!   events that happened earlier but arrived later (a parked JoinGroup
//!   request is captured only with its answer, seconds on) put its
//!   evidence into another round, told in its own line; forget the
//!   withdrawn `group` + `started_at`;
//! - `"unfinished"`: the input ended (or the run was stopped) inside this
//!   round: the record `rebalances` lists as `in_progress`;
//! - `"summary"`: the last line: counts of the above, groups seen, groups
//!   evicted for silence, whether the run was stopped by a signal, and
//!   each log's clock offset lined up with a capture (`clock_offsets_ms`,
//!   only when there is one).

use crate::event::Source;
use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::render::escape_line;
use crate::report::Rebalance;

use super::engine::{serde_json_line, Counts, Output};

/// How lines look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Sentences.
    Text,
    /// One JSON object per line.
    Ndjson,
}

/// Writes every item, then flushes.
pub fn write_all(told: &[Output], style: Style, out: &mut dyn Write) -> io::Result<()> {
    for o in told {
        match style {
            Style::Text => writeln!(out, "{}", text(o))?,
            Style::Ndjson => writeln!(out, "{}", ndjson(o))?,
        }
    }
    if !told.is_empty() {
        out.flush()?;
    }
    Ok(())
}

/// The summary line, flushed; with each log's clock offset when one was
/// lined up with a capture (as `rebalances` gives it per input).
pub fn write_summary(
    c: &Counts,
    clock_offsets: &BTreeMap<Source, f64>,
    stopped: bool,
    style: Style,
    out: &mut dyn Write,
) -> io::Result<()> {
    match style {
        Style::Ndjson => {
            let offsets = match clock_offsets.is_empty() {
                true => String::new(),
                false => format!(
                    ",\"clock_offsets_ms\":{}",
                    serde_json::to_string(clock_offsets).unwrap_or_default()
                ),
            };
            writeln!(
                out,
                "{{\"type\":\"summary\",\"completed\":{},\"revised\":{},\"withdrawn\":{},\"started\":{},\"unfinished\":{},\"groups\":{},\"evicted\":{},\"stopped\":{stopped}{offsets}}}",
                c.completed, c.revised, c.withdrawn, c.started, c.unfinished, c.groups, c.evicted
            )?
        }
        Style::Text => {
            let offsets: String = clock_offsets
                .iter()
                .map(|(source, ms)| {
                    format!(
                        "; {}'s clock lined up with the capture's ({ms:+.3} ms)",
                        escape_line(source)
                    )
                })
                .collect();
            writeln!(
                out,
                "summary: {} rebalances completed ({} revised), {} in progress{}, {} groups{}{offsets}",
                c.completed,
                c.revised,
                c.unfinished,
                if stopped { " when stopped" } else { " at the end" },
                c.groups,
                if stopped { " (stopped by a signal)" } else { "" }
            )?
        }
    }
    out.flush()
}

fn kind(o: &Output) -> &'static str {
    match o {
        Output::Started(_) => "started",
        Output::Completed(_) => "completed",
        Output::Revised(_) => "revised",
        Output::Withdrawn(_) => "withdrawn",
        Output::Unfinished(_) => "unfinished",
    }
}

/// `{"type":…,` then the record's own fields.
fn ndjson(o: &Output) -> String {
    let record = serde_json_line(o.rebalance());
    let fields = record.strip_prefix('{').unwrap_or(&record);
    format!("{{\"type\":\"{}\",{fields}", kind(o))
}

fn text(o: &Output) -> String {
    let r = o.rebalance();
    let generations = format!(
        "generation {}→{}",
        r.previous_generation.map_or("?".into(), |g| g.to_string()),
        r.generation.map_or("?".into(), |g| g.to_string())
    );
    let line = match o {
        Output::Started(_) => format!(
            "{} {} rebalance started ({}): in progress: waiting for {}; {}",
            r.started_at,
            group(r),
            generations,
            waiting(r),
            cause(r)
        ),
        Output::Unfinished(_) => format!(
            "{} {} rebalance still in progress ({}): waiting for {}; {}",
            r.started_at,
            group(r),
            generations,
            waiting(r),
            cause(r)
        ),
        Output::Withdrawn(_) => format!(
            "withdrawn: {} {} {} (later packets put its evidence in another round)",
            r.started_at,
            group(r),
            generations
        ),
        Output::Completed(_) | Output::Revised(_) => format!(
            "{}{} {} {} {} in {}: {}{}{}",
            if matches!(o, Output::Revised(_)) {
                "revised: "
            } else {
                ""
            },
            r.completed_at.unwrap_or(r.started_at),
            group(r),
            generations,
            r.status,
            r.duration_ms.map_or("?".into(), |ms| format!("{ms:.0} ms")),
            cause(r),
            removed(r),
            stopped(r)
        ),
    };
    escape_line(&line)
}

fn group(r: &Rebalance) -> String {
    format!("group {}", r.group)
}

fn waiting(r: &Rebalance) -> String {
    if r.waiting_for.is_empty() {
        "nobody named".into()
    } else {
        r.waiting_for.join(", ")
    }
}

fn cause(r: &Rebalance) -> String {
    let t = &r.trigger;
    let who = t
        .client_id
        .as_deref()
        .or(t.member_id.as_deref())
        .map_or(String::new(), |w| format!(" ({w})"));
    format!("{}{who}: {}", t.kind, t.detail)
}

fn removed(r: &Rebalance) -> String {
    if r.removed.is_empty() {
        return String::new();
    }
    format!("; removed {} member(s)", r.removed.len())
}

fn stopped(r: &Rebalance) -> String {
    match r.stop.as_ref().and_then(|s| s.stopped_ms) {
        Some(ms) => format!("; consumption stopped {ms:.0} ms"),
        None => String::new(),
    }
}
