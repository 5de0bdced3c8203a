//! The `table` format: aligned columns for a person (comfy-table).
//!
//! Takes: a view of a [`Report`] and [`RenderOptions`]. Gives: one table per
//! view, or for [`View::Report`] the incident report as text with tables
//! (see [`super::text`]). Without a terminal width the layout is fixed ASCII
//! with no wrapping, one line per row, so pipes, `grep` and snapshots see
//! stable output; with one, UTF-8 borders and content wrapped to the width.
//! Colour (trigger families, Kafka errors, storms) only when asked. This is
//! the only module that uses comfy-table.

use std::io::{self, Write};

use comfy_table::presets::{ASCII_FULL_CONDENSED, UTF8_FULL_CONDENSED};
use comfy_table::{Attribute, Cell, Color, ContentArrangement, Table};

use crate::report::Report;

use super::doc::{Grid, Span, Style, Tone, TriggerClass};
use super::fit::{fit, note_lines};
use super::grids;
use super::human::TimeStyle;
use super::{RenderOptions, View};

/// Writes `view` as a table (or the report as text).
pub(super) fn write(
    report: &Report,
    view: View,
    opts: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    let style = TimeStyle::for_report(report);
    let grid = match view {
        View::Timeline => grids::timeline(&report.timeline, style),
        View::Rebalances => grids::rebalances(report.rebalance_records(), style),
        View::Groups => grids::groups(&report.groups),
        View::Decode => grids::exchanges(&report.exchanges, style),
        // The report is text with tables: the caller sends it to `text`.
        View::Report => grids::rebalances(report.rebalance_records(), style),
    };
    // Nothing matched: nothing on stdout, as grep prints no line (the
    // exit code is 1 and stderr names what matched nothing); an empty
    // frame of headers would read as a result.
    if grid.rows.is_empty() {
        return Ok(());
    }
    writeln!(out, "{}", grid_text(&grid, opts))?;
    if matches!(view, View::Rebalances | View::Groups) {
        if let Some(line) = super::incident_stops::worst_stop_text(report) {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// A grid laid out as a table, without a trailing newline. On a terminal
/// too narrow for it, the grid is fitted first (see [`super::fit`]: cells
/// shortened, droppable columns hidden, never the group or the trigger,
/// cells wrapped at word boundaries) and the notes follow the table.
pub(super) fn grid_text(grid: &Grid, opts: &RenderOptions) -> String {
    let Some(width) = opts.width else {
        let headers: Vec<String> = grid.headers.iter().map(|h| h.to_string()).collect();
        return layout(grid, &headers, opts);
    };
    let fitted = fit(grid, width);
    let mut text = layout(&fitted.grid, &fitted.headers, opts);
    for line in fitted.notes.iter().flat_map(|n| note_lines(n, width)) {
        text.push('\n');
        text.push_str(&line);
    }
    text
}

fn layout(grid: &Grid, headers: &[String], opts: &RenderOptions) -> String {
    let mut table = Table::new();
    // Never let comfy-table look at stdout itself: what we write to may not
    // be stdout, and the caller already decided on width and colour.
    table.force_no_tty();
    match opts.width {
        Some(width) => {
            // The cells are already wrapped to fit (see `fit`).
            table
                .load_style(UTF8_FULL_CONDENSED)
                .set_content_arrangement(ContentArrangement::Disabled)
                .set_width(width);
        }
        None => {
            table
                .load_style(ASCII_FULL_CONDENSED)
                .set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    if opts.color {
        table.enforce_styling();
    }
    table.set_header(headers.iter().map(|h| header_cell(h, opts.color)));
    for row in &grid.rows {
        table.add_row(row.iter().map(|span| cell(span, opts.color)));
    }
    table.to_string()
}

fn header_cell(text: &str, color: bool) -> Cell {
    let cell = Cell::new(text);
    if color {
        cell.add_attribute(Attribute::Bold)
    } else {
        cell
    }
}

fn cell(span: &Span, color: bool) -> Cell {
    let mut cell = Cell::new(&span.text);
    if !color {
        return cell;
    }
    if let Some(c) = ansi_color(span.tone) {
        cell = cell.fg(c);
    }
    if span.style == Style::Strong {
        cell = cell.add_attribute(Attribute::Bold);
    }
    cell
}

/// The terminal colour of a tone; `None` leaves the terminal's default.
fn ansi_color(tone: Tone) -> Option<Color> {
    match tone {
        Tone::Plain => None,
        Tone::Muted => Some(Color::DarkGrey),
        Tone::Error => Some(Color::Red),
        Tone::Warning => Some(Color::Yellow),
        Tone::Trigger(class) => Some(match class {
            TriggerClass::Join => Color::Cyan,
            TriggerClass::Leave => Color::Yellow,
            TriggerClass::Timeout => Color::Red,
            TriggerClass::Change => Color::Magenta,
            TriggerClass::Coordinator => Color::Blue,
            TriggerClass::Failure => Color::DarkRed,
            TriggerClass::Unknown => Color::DarkGrey,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    fn table(view: View, opts: RenderOptions) -> String {
        let mut out = Vec::new();
        write(&sample::incident(), view, &opts, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn without_a_terminal_every_event_is_one_ascii_line() {
        let text = table(View::Timeline, RenderOptions::default());
        let report = sample::incident();
        // Top border, header, separator, rows, bottom border.
        assert_eq!(text.lines().count(), report.timeline.len() + 4);
        assert!(text.starts_with("+-") && !text.contains('─'));
        assert!(!text.contains('\u{1b}'));
    }

    #[test]
    fn a_terminal_width_wraps_rows_to_fit() {
        let opts = RenderOptions {
            color: false,
            width: Some(80),
            ..RenderOptions::default()
        };
        let text = table(View::Rebalances, opts);
        let table_lines = text.lines().filter(|l| !l.starts_with('('));
        assert!(
            table_lines.clone().all(|l| l.chars().count() <= 80),
            "{text}"
        );
        assert!(table_lines.count() > 6);
        assert!(text.contains('─'));
    }

    #[test]
    fn a_narrow_terminal_hides_droppable_columns_and_says_so() {
        let narrow = table(
            View::Rebalances,
            RenderOptions {
                color: false,
                width: Some(100),
                ..RenderOptions::default()
            },
        );
        assert!(
            narrow.contains("(hidden to fit 100 columns: evidence, confidence"),
            "{narrow}"
        );
        let wide = table(
            View::Rebalances,
            RenderOptions {
                color: false,
                width: Some(250),
                ..RenderOptions::default()
            },
        );
        assert!(!wide.contains("hidden") && wide.contains("evidence"));
    }

    #[test]
    fn group_and_trigger_are_never_hidden_or_wrapped_at_80_columns() {
        let report = sample::incident();
        for width in [80, 100, 200] {
            let text = table(
                View::Rebalances,
                RenderOptions {
                    width: Some(width),
                    ..RenderOptions::default()
                },
            );
            let header = text.lines().nth(1).unwrap();
            assert!(
                header.contains("group") && header.contains("trigger"),
                "{text}"
            );
            for r in &report.rebalances {
                assert!(text.contains(&r.trigger.kind), "{width}: {text}");
                assert!(text.contains(&r.group), "{width}: {text}");
            }
            let widest = text
                .lines()
                .filter(|l| !l.starts_with('('))
                .map(|l| l.chars().count())
                .max()
                .unwrap();
            assert!(widest <= usize::from(width), "{widest} > {width}: {text}");
        }
    }

    #[test]
    fn colour_marks_trigger_kinds_only_when_asked() {
        let plain = table(View::Rebalances, RenderOptions::default());
        let coloured = table(
            View::Rebalances,
            RenderOptions {
                color: true,
                width: None,
                ..RenderOptions::default()
            },
        );
        assert!(!plain.contains('\u{1b}'));
        assert!(coloured.contains('\u{1b}'));
        assert!(coloured.contains("member_joined"));
    }
}
