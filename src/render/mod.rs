//! Writes a [`Report`] in the format the user asked for.
//!
//! Takes: a finished [`Report`] (all computing is done before), the part of
//! it a subcommand shows ([`View`]), a [`Format`] and [`RenderOptions`].
//! Gives: bytes on any `io::Write`. Renderers only render: they choose
//! layout, wording and colour, never findings (hyperfine's exporters over
//! `BenchmarkResult`, ripgrep's printers over `io::Write`).
//!
//! Layout of this module:
//! - `human.rs`: how times, durations and ids read to a person;
//! - `doc.rs`: a small document model (headings, fields, lists, grids) so
//!   the Markdown, HTML and terminal reports say the same things;
//! - `grids.rs`: the human tables of each view; `incident.rs` and
//!   `incident_round.rs`: the incident report as a document;
//! - one file per format: `table.rs` (comfy-table) and `text.rs`,
//!   [`json`] (which documents the JSON format), `ndjson.rs`, `csv.rs`,
//!   `markdown.rs`, `html.rs`, and `svg/` for the timeline picture;
//! - `rendered.rs`: a long list's items rendered on every core, written in
//!   order (the JSON, NDJSON and CSV lists);
//! - here, besides [`render`]: the views written as their rows are made
//!   ([`Rows`], [`ListedEvents`]), fed by `assemble` through
//!   [`EventSink`].

mod brief;
mod coordinator;
mod csv;
mod doc;
mod escape;
mod fit;
mod grids;
mod html;
mod human;

/// A text from the inputs made safe for one line of a terminal: control and
/// bidi characters escaped, line breaks as spaces.
pub fn escape_line(text: &str) -> String {
    human::one_line(text)
}
mod incident;
mod incident_group;
mod incident_round;
mod incident_stops;
pub mod json;
mod markdown;
mod mermaid;
mod ndjson;
mod parts;
mod rendered;
mod story;
mod svg;
mod table;
mod text;

#[cfg(test)]
mod sample;

use std::io::{self, Write};

use crate::report::{ExchangeRow, Rebalance, Report, TimelineEntry};

/// Output format (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for a person at a terminal (comfy-table).
    Table,
    /// One pretty JSON document (see [`json`] for the format).
    Json,
    /// One JSON object per line, one line per item of the view's list.
    Ndjson,
    /// RFC 4180 CSV: a header row, then one row per item.
    Csv,
    /// Markdown that pastes into Jira or GitHub.
    Markdown,
}

impl std::str::FromStr for Format {
    type Err = String;

    /// Parses a `--format` value: `table`, `json`, `ndjson`, `csv` or
    /// `markdown` (also `md`).
    fn from_str(name: &str) -> Result<Format, String> {
        match name {
            "table" => Ok(Format::Table),
            "json" => Ok(Format::Json),
            "ndjson" => Ok(Format::Ndjson),
            "csv" => Ok(Format::Csv),
            "markdown" | "md" => Ok(Format::Markdown),
            other => Err(format!(
                "unknown format {other:?}: expected table, json, ndjson, csv or markdown"
            )),
        }
    }
}

/// Which part of the [`Report`] a subcommand shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// `timeline`: every group event, one per line.
    Timeline,
    /// `rebalances`: one row per rebalance.
    Rebalances,
    /// `groups`: one row per group.
    Groups,
    /// `decode`: one row per request/response exchange.
    Decode,
    /// `report`: the whole incident report.
    Report,
}

/// How to lay out human-readable output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// Use ANSI colours (already resolved from `--color` and `NO_COLOR`).
    pub color: bool,
    /// Terminal width in columns; `None` when not writing to a terminal,
    /// which selects a fixed ASCII layout that never wraps, so output is
    /// stable for pipes and snapshots.
    pub width: Option<u16>,
    /// `report --brief`: the story, the summary and the rebalance tables,
    /// under 30,000 characters.
    pub brief: bool,
}

/// Writes `view` of `report` as `format` into `out`.
///
/// For [`View::Report`], CSV has no room for several tables, so it writes
/// the report's central table, the rebalances; NDJSON writes every list of
/// the report, each line tagged with its type (see [`json`]).
pub fn render(
    report: &Report,
    view: View,
    format: Format,
    opts: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Table if view == View::Report => {
            let blocks = if opts.brief {
                brief::document(report, &|b| text::size(b, opts))
            } else {
                incident::document(report)
            };
            text::write(&blocks, opts, out)
        }
        Format::Table => table::write(report, view, opts, out),
        Format::Json => json::write(report, view, out),
        Format::Ndjson => ndjson::write(report, view, out),
        Format::Csv => csv::write(report, view, out),
        Format::Markdown => markdown::write(report, view, opts.brief, out),
    }
}

/// A view written row by row as the rows are made, for the formats whose
/// rows stand alone (`ndjson`, `csv`): the timeline (a long capture's
/// million events are not first gathered as rows, hundreds of bytes each,
/// and then written) and `decode` (its rows written while the capture is
/// read). The table, JSON and Markdown formats need every row at once
/// (column widths, one document) and are not streamed.
pub struct Rows<'a, T> {
    format: Format,
    out: &'a mut dyn Write,
    header_written: bool,
    row: std::marker::PhantomData<fn(&T)>,
}

/// The timeline view's rows.
pub type TimelineRows<'a> = Rows<'a, TimelineEntry>;

/// `decode`'s rows.
pub type ExchangeRows<'a> = Rows<'a, ExchangeRow>;

/// `rebalances`' rows (of logs: written as they settle).
pub type RebalanceRows<'a> = Rows<'a, Rebalance>;

/// A row a view can write alone.
pub trait StreamedRow: serde::Serialize {
    /// The CSV header row.
    fn csv_header(out: &mut dyn Write) -> io::Result<()>;
    /// The row in CSV.
    fn csv_line(&self, out: &mut dyn Write) -> io::Result<()>;
}

impl StreamedRow for TimelineEntry {
    fn csv_header(out: &mut dyn Write) -> io::Result<()> {
        csv::timeline_header(out)
    }
    fn csv_line(&self, out: &mut dyn Write) -> io::Result<()> {
        csv::timeline_line(self, out)
    }
}

impl StreamedRow for Rebalance {
    fn csv_header(out: &mut dyn Write) -> io::Result<()> {
        csv::rebalance_header(out)
    }
    fn csv_line(&self, out: &mut dyn Write) -> io::Result<()> {
        csv::rebalance_line(self, out)
    }
}

impl StreamedRow for ExchangeRow {
    fn csv_header(out: &mut dyn Write) -> io::Result<()> {
        csv::exchange_header(out)
    }
    fn csv_line(&self, out: &mut dyn Write) -> io::Result<()> {
        csv::exchange_line(self, out)
    }
}

impl<'a, T: StreamedRow> Rows<'a, T> {
    /// Whether a view in `format` can be written row by row.
    pub fn streams(format: Format) -> bool {
        matches!(format, Format::Ndjson | Format::Csv)
    }

    /// Rows in `format` (one of those [`Rows::streams`] accepts) to `out`.
    pub fn new(format: Format, out: &'a mut dyn Write) -> Rows<'a, T> {
        debug_assert!(Self::streams(format), "{format:?} is not streamed");
        Rows {
            format,
            out,
            header_written: false,
            row: std::marker::PhantomData,
        }
    }

    /// Writes one row, as the whole view would have written it.
    pub fn row(&mut self, e: &T) -> io::Result<()> {
        self.header()?;
        match self.format {
            Format::Csv => e.csv_line(self.out),
            _ => ndjson::line(e, self.out),
        }
    }

    /// Ends the view: a CSV without rows still has its header.
    pub fn finish(mut self) -> io::Result<()> {
        self.header()
    }

    fn header(&mut self) -> io::Result<()> {
        if !self.header_written && self.format == Format::Csv {
            T::csv_header(self.out)?;
        }
        self.header_written = true;
        Ok(())
    }
}

/// Where the time line's matching entries go when they are written as
/// they are made instead of kept in the report ([`crate::assemble`]).
pub trait EventSink {
    /// The report as far as it goes before its events (inputs, groups,
    /// records; not yet its diagnostics): once, before the first event.
    fn head(&mut self, _head: &Report) -> io::Result<()> {
        Ok(())
    }
    /// One matching entry, in the time line's order.
    fn event(&mut self, e: &TimelineEntry) -> io::Result<()>;
}

/// Entries only counted (`-c`).
impl<F: FnMut(&TimelineEntry) -> io::Result<()>> EventSink for F {
    fn event(&mut self, e: &TimelineEntry) -> io::Result<()> {
        self(e)
    }
}

impl EventSink for TimelineRows<'_> {
    fn event(&mut self, e: &TimelineEntry) -> io::Result<()> {
        self.row(e)
    }
}

/// The timeline view in JSON, or the report in JSON or NDJSON, with its
/// group events written as they are matched, between what comes before
/// them and what after (`json::Document`, `ndjson::report_head`): a
/// long capture's events are not first gathered as entries, hundreds of
/// bytes each, then written (on a storm of 80,000 rounds, 480,000
/// events: a third of the run's peak). The output is the same as
/// [`render`]'s.
pub struct ListedEvents<'a>(Listing<'a>);

/// How far a [`ListedEvents`] has gone.
enum Listing<'a> {
    /// Nothing written yet.
    Before {
        view: View,
        format: Format,
        out: &'a mut dyn Write,
    },
    /// The JSON document, begun.
    Json(json::Document<'a>),
    /// The report's NDJSON lines before its events, written.
    Ndjson(&'a mut dyn Write),
    /// Left for a moment while changing step.
    Moving,
}

impl<'a> ListedEvents<'a> {
    /// Whether `view` in `format` is written so: the forms that list the
    /// events and do not already write them row by row ([`Rows`]).
    pub fn applies(view: View, format: Format) -> bool {
        matches!(
            (view, format),
            (View::Timeline, Format::Json) | (View::Report, Format::Json | Format::Ndjson)
        )
    }

    /// `view` in `format` (one that [`ListedEvents::applies`] to) to `out`.
    pub fn new(view: View, format: Format, out: &'a mut dyn Write) -> ListedEvents<'a> {
        debug_assert!(Self::applies(view, format), "{view:?} in {format:?}");
        ListedEvents(Listing::Before { view, format, out })
    }

    /// Writes what comes after the events, from the finished `report`
    /// (and what comes before them, if no event came).
    pub fn finish(mut self, report: &Report) -> io::Result<()> {
        self.head(report)?;
        match std::mem::replace(&mut self.0, Listing::Moving) {
            Listing::Json(doc) => doc.end(report),
            Listing::Ndjson(out) => ndjson::report_tail(report, out),
            Listing::Before { .. } | Listing::Moving => Ok(()),
        }
    }
}

impl EventSink for ListedEvents<'_> {
    fn head(&mut self, head: &Report) -> io::Result<()> {
        self.0 = match std::mem::replace(&mut self.0, Listing::Moving) {
            Listing::Before {
                view,
                format: Format::Json,
                out,
            } => Listing::Json(json::Document::begin(head, view, out)?),
            Listing::Before { out, .. } => {
                ndjson::report_head(head, out)?;
                Listing::Ndjson(out)
            }
            begun => begun,
        };
        Ok(())
    }

    fn event(&mut self, e: &TimelineEntry) -> io::Result<()> {
        match &mut self.0 {
            Listing::Json(doc) => doc.item(e),
            Listing::Ndjson(out) => ndjson::tagged_line("event", e, *out),
            // `assemble` calls `head` before any event.
            Listing::Before { .. } | Listing::Moving => {
                debug_assert!(false, "an event before the head");
                Ok(())
            }
        }
    }
}

/// Writes the incident report as one self-contained HTML file: inline CSS,
/// one inline SVG timeline per group, no script, no external asset.
pub fn render_html(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    html::write(report, out)
}

/// Writes which `__consumer_offsets` partition (and broker, if the inputs
/// showed it) coordinates `group` (`coordinator` subcommand).
pub fn render_coordinator(
    group: &str,
    partition: u32,
    partitions: u32,
    seen: Option<&str>,
    format: Format,
    out: &mut dyn Write,
) -> io::Result<()> {
    coordinator::write(group, partition, partitions, seen, format, out)
}

/// Writes the number of matching items (`-c/--count`), as grep does.
pub fn render_count(n: u64, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{n}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    const VIEWS: [(View, &str); 5] = [
        (View::Timeline, "timeline"),
        (View::Rebalances, "rebalances"),
        (View::Groups, "groups"),
        (View::Decode, "decode"),
        (View::Report, "report"),
    ];

    const FORMATS: [(Format, &str); 5] = [
        (Format::Table, "table"),
        (Format::Json, "json"),
        (Format::Ndjson, "ndjson"),
        (Format::Csv, "csv"),
        (Format::Markdown, "markdown"),
    ];

    fn rendered(report: &Report, view: View, format: Format, opts: &RenderOptions) -> String {
        let mut out = Vec::new();
        render(report, view, format, opts, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// `view` in `format` as [`ListedEvents`] writes it, handed the
    /// report's events one by one.
    fn listed(report: &Report, view: View, format: Format) -> String {
        let mut out = Vec::new();
        let mut head = report.clone();
        head.timeline.clear();
        head.diagnostics.clear();
        let mut listed = ListedEvents::new(view, format, &mut out);
        listed.head(&head).unwrap();
        for e in &report.timeline {
            listed.event(e).unwrap();
        }
        listed.finish(report).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn events_listed_as_they_come_make_the_document_written_whole() {
        let opts = RenderOptions::default();
        let mut forms = 0;
        for (name, report) in sample::all() {
            let mut none = report.clone();
            none.timeline.clear();
            for report in [report, none] {
                for (view, _) in VIEWS {
                    for (format, _) in FORMATS {
                        if !ListedEvents::applies(view, format) {
                            continue;
                        }
                        forms += 1;
                        let whole = rendered(&report, view, format, &opts);
                        assert_eq!(
                            listed(&report, view, format),
                            whole,
                            "{name} {view:?} {format:?}"
                        );
                    }
                }
            }
        }
        assert!(forms >= 6, "{forms}");
    }

    #[test]
    fn every_format_of_every_view_matches_its_snapshot() {
        let opts = RenderOptions::default();
        for (name, report) in sample::all() {
            for (view, view_name) in VIEWS {
                for (format, format_name) in FORMATS {
                    let text = rendered(&report, view, format, &opts);
                    insta::assert_snapshot!(format!("{name}_{view_name}_{format_name}"), text);
                }
            }
        }
    }

    #[test]
    fn the_html_report_matches_its_snapshot() {
        for (name, report) in sample::all() {
            let mut out = Vec::new();
            render_html(&report, &mut out).unwrap();
            insta::assert_snapshot!(format!("{name}_html"), String::from_utf8(out).unwrap());
        }
    }

    #[test]
    fn a_terminal_gets_wrapped_unicode_tables_matching_their_snapshot() {
        let opts = RenderOptions {
            color: false,
            width: Some(100),
            ..RenderOptions::default()
        };
        let report = sample::incident();
        for (view, view_name) in [(View::Rebalances, "rebalances"), (View::Report, "report")] {
            let text = rendered(&report, view, Format::Table, &opts);
            insta::assert_snapshot!(format!("incident_{view_name}_table_width_100"), text);
        }
    }

    #[test]
    fn json_of_every_view_parses_back() {
        for (_, report) in sample::all() {
            for (view, _) in VIEWS {
                let text = rendered(&report, view, Format::Json, &RenderOptions::default());
                let value: serde_json::Value = serde_json::from_str(&text).unwrap();
                assert_eq!(value["format_version"], 1);
            }
        }
    }

    #[test]
    fn ndjson_of_every_view_is_one_parseable_object_per_line() {
        for (_, report) in sample::all() {
            for (view, _) in VIEWS {
                let text = rendered(&report, view, Format::Ndjson, &RenderOptions::default());
                for line in text.lines() {
                    let value: serde_json::Value = serde_json::from_str(line).unwrap();
                    assert!(value.is_object());
                }
            }
        }
    }

    #[test]
    fn format_names_parse_and_unknown_ones_say_what_is_expected() {
        assert_eq!("ndjson".parse::<Format>(), Ok(Format::Ndjson));
        assert_eq!("md".parse::<Format>(), Ok(Format::Markdown));
        let err = "yaml".parse::<Format>().unwrap_err();
        assert!(err.contains("expected table, json"), "{err}");
    }

    /// A report with every value a broken input could produce.
    fn hostile() -> Report {
        use crate::report::{MemberJoin, TimelineEntry};
        use crate::time::Timestamp;
        let mut report = sample::incident();
        let far = [Timestamp(i64::MIN), Timestamp(i64::MAX), Timestamp(0)];
        for (i, r) in report.rebalances.iter_mut().enumerate() {
            r.started_at = far[i % 3];
            r.completed_at = Some(far[(i + 1) % 3]);
            r.duration_ms = Some([f64::NAN, f64::INFINITY, -5.0, 1e300][i % 4]);
            r.joins.push(MemberJoin {
                member_id: String::new(),
                client_id: Some("\u{1b}[2J\0\r\n".into()),
                requested_at: far[i % 3],
                parked_ms: Some([f64::NAN, 1e300, -1.0, f64::NEG_INFINITY][i % 4]),
                after_start_ms: f64::NAN,
            });
            r.trigger.kind = "`|<script>|`".into();
        }
        report.timeline.push(TimelineEntry {
            ts: Timestamp(i64::MIN),
            group: Some("orders-service".into()),
            mark: "join".into(),
            ..TimelineEntry::default()
        });
        report.timeline.push(TimelineEntry {
            ts: Timestamp(i64::MAX),
            ..TimelineEntry::default()
        });
        report.groups[0].rebalances_per_hour = Some(f64::NAN);
        report.groups[0].rebalancing_ms = f64::INFINITY;
        report.inputs[0].first_ts = Some(Timestamp(i64::MIN));
        report
    }

    #[test]
    fn hostile_values_never_make_a_renderer_panic() {
        let report = hostile();
        let terminal = |width| RenderOptions {
            color: true,
            width: Some(width),
            ..RenderOptions::default()
        };
        for opts in [
            RenderOptions::default(),
            terminal(0),
            terminal(1),
            terminal(20),
        ] {
            for (view, _) in VIEWS {
                for (format, _) in FORMATS {
                    rendered(&report, view, format, &opts);
                }
            }
        }
        let mut out = Vec::new();
        render_html(&report, &mut out).unwrap();
        let html = String::from_utf8(out).unwrap();
        assert!(!html.contains("<script>") && !html.contains('\u{1b}'));
    }

    #[test]
    fn count_is_a_bare_number() {
        let mut out = Vec::new();
        render_count(42, &mut out).unwrap();
        assert_eq!(out, b"42\n");
    }
}
