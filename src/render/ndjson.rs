//! The `ndjson` format: one compact JSON object per line.
//!
//! Takes: a view of a [`Report`]. Gives: one line per item of the view's
//! list and nothing else; for [`View::Report`], one tagged line per item of
//! every list. The format is documented in [`super::json`].

use std::io::{self, Write};

use serde::Serialize;

use crate::report::Report;

use super::View;

/// Writes `view` as newline-delimited JSON.
pub(super) fn write(report: &Report, view: View, out: &mut dyn Write) -> io::Result<()> {
    match view {
        View::Timeline => lines(&report.timeline, out),
        View::Rebalances => lines(&report.rebalances, out),
        View::Groups => lines(&report.groups, out),
        View::Decode => lines(&report.exchanges, out),
        View::Report => tagged_report(report, out),
    }
}

/// One line per item, a long list rendered on every core
/// ([`super::rendered`]).
fn lines<T: Serialize + Sync>(items: &[T], out: &mut dyn Write) -> io::Result<()> {
    super::rendered::each_rendered(items, compact_line, |text| out.write_all(text))
}

/// `item` as one compact line.
fn compact_line<T: Serialize + ?Sized>(item: &T, line: &mut Vec<u8>) -> io::Result<()> {
    super::json::to_writer(&mut *line, item, false)?;
    line.push(b'\n');
    Ok(())
}

pub(super) fn line<T: Serialize>(item: &T, out: &mut dyn Write) -> io::Result<()> {
    super::json::in_one_write(out, |line| compact_line(item, line))
}

/// `{"type": …, "data": …}`.
#[derive(Serialize)]
struct Tagged<'a, T: Serialize> {
    r#type: &'static str,
    data: &'a T,
}

fn tagged<T: Serialize + Sync>(
    kind: &'static str,
    items: &[T],
    out: &mut dyn Write,
) -> io::Result<()> {
    super::rendered::each_rendered(
        items,
        |data, line| compact_line(&Tagged { r#type: kind, data }, line),
        |text| out.write_all(text),
    )
}

/// One `{"type": kind, "data": …}` line.
pub(super) fn tagged_line<T: Serialize>(
    kind: &'static str,
    data: &T,
    out: &mut dyn Write,
) -> io::Result<()> {
    line(&Tagged { r#type: kind, data }, out)
}

fn tagged_report(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    report_head(report, out)?;
    tagged("event", &report.timeline, out)?;
    report_tail(report, out)
}

/// The report's lines before its `event` lines (of `head`: only those
/// are read); the events can so be written as they are matched
/// ([`super::ListedEvents`]).
pub(super) fn report_head(head: &Report, out: &mut dyn Write) -> io::Result<()> {
    tagged("input", &head.inputs, out)?;
    tagged("group", &head.groups, out)?;
    tagged("rebalance", &head.rebalances, out)
}

/// The report's lines after its `event` lines (of `tail`: only those are
/// read).
pub(super) fn report_tail(tail: &Report, out: &mut dyn Write) -> io::Result<()> {
    tagged("exchange", &tail.exchanges, out)?;
    tagged("diagnostic", &tail.diagnostics, out)?;
    tagged("diagnostic_count", &tail.diagnostic_counts, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;
    use serde_json::Value;

    fn parsed(view: View) -> Vec<Value> {
        let mut out = Vec::new();
        write(&sample::incident(), view, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn decode_writes_exactly_one_exchange_per_line() {
        let report = sample::incident();
        let lines = parsed(View::Decode);
        assert_eq!(lines.len(), report.exchanges.len());
        assert!(lines
            .iter()
            .all(|l| l.get("api_key").is_some() && l.get("type").is_none()));
    }

    #[test]
    fn report_lines_are_tagged_with_their_type() {
        let report = sample::incident();
        let lines = parsed(View::Report);
        let events = lines.iter().filter(|l| l["type"] == "event").count();
        assert_eq!(events, report.timeline.len());
        assert_eq!(lines[0]["type"], "input");
        assert_eq!(lines.last().unwrap()["type"], "diagnostic_count");
    }
}
