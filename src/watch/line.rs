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
//!   evicted for silence, and whether the run was stopped by a signal.

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

/// The summary line, flushed.
pub fn write_summary(
    c: &Counts,
    stopped: bool,
    style: Style,
    out: &mut dyn Write,
) -> io::Result<()> {
    match style {
        Style::Ndjson => writeln!(
            out,
            "{{\"type\":\"summary\",\"completed\":{},\"revised\":{},\"withdrawn\":{},\"started\":{},\"unfinished\":{},\"groups\":{},\"evicted\":{},\"stopped\":{stopped}}}",
            c.completed, c.revised, c.withdrawn, c.started, c.unfinished, c.groups, c.evicted
        )?,
        Style::Text => writeln!(
            out,
            "summary: {} rebalances completed ({} revised), {} in progress{}, {} groups{}",
            c.completed,
            c.revised,
            c.unfinished,
            if stopped { " when stopped" } else { " at the end" },
            c.groups,
            if stopped { " (stopped by a signal)" } else { "" }
        )?,
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
