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
use comfy_table::{Attribute, Cell, Color, ColumnConstraint, ContentArrangement, Table};

use crate::report::Report;

use super::doc::{Grid, Span, Style, Tone, TriggerClass};
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
        View::Rebalances => grids::rebalances(&report.rebalances, style),
        View::Groups => grids::groups(&report.groups),
        View::Decode => grids::exchanges(&report.exchanges, style),
        // The report is text with tables: the caller sends it to `text`.
        View::Report => grids::rebalances(&report.rebalances, style),
    };
    writeln!(out, "{}", grid_text(&grid, opts))?;
    if matches!(view, View::Rebalances | View::Groups) {
        if let Some(line) = super::incident_stops::worst_stop_text(report) {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// Columns a narrow terminal never hides or wraps: without them two
/// groups' rows, or two causes, cannot be told apart.
const KEPT: [&str; 2] = ["group", "trigger"];

/// Columns kept whole when a width is set: a time or a `file#frame` cut
/// over two lines reads as another value.
const WHOLE: [&str; 4] = ["group", "trigger", "evidence", "time"];

/// A grid laid out as a table, without a trailing newline. On a terminal
/// too narrow for it, cells are shortened first (times to milliseconds,
/// evidence to its file name), then the grid's droppable columns are
/// hidden, never the group or the trigger, and a last line says which.
pub(super) fn grid_text(grid: &Grid, opts: &RenderOptions) -> String {
    let Some(width) = opts.width else {
        return layout(grid, opts);
    };
    let (fitted, hidden) = fit(grid, width);
    let mut text = layout(&fitted, opts);
    if !hidden.is_empty() {
        text.push_str(&format!(
            "\n(hidden to fit {width} columns: {}; --wide shows everything)",
            hidden.join(", ")
        ));
    }
    text
}

/// Columns the grid needs: long columns count as [`WRAPPED`] wide, since
/// wrapping them over two or three lines is better than hiding a column.
fn needed(g: &Grid) -> usize {
    const WRAPPED: usize = 24;
    let cells: usize = (0..g.headers.len())
        .map(|i| {
            let w = column_width(g, i);
            if WHOLE.contains(&g.headers[i]) {
                w
            } else {
                w.min(WRAPPED)
            }
        })
        .sum();
    cells + 3 * g.headers.len() + 1
}

/// The grid shortened, then without as many droppable columns as it takes
/// to fit `width`.
fn fit(grid: &Grid, width: u16) -> (Grid, Vec<&'static str>) {
    let width = usize::from(width);
    if needed(grid) <= width {
        return (grid.clone(), Vec::new());
    }
    let mut fitted = shortened(grid);
    let mut hidden = Vec::new();
    for name in grid.droppable.iter().filter(|n| !KEPT.contains(n)) {
        if needed(&fitted) <= width {
            break;
        }
        if let Some(index) = fitted.headers.iter().position(|h| h == name) {
            fitted = fitted.without(index);
            hidden.push(*name);
        }
    }
    (fitted, hidden)
}

/// Cells cut to what a reader needs at a glance: `16:34:40.886995` to
/// `16:34:40.887`, `fixtures/lab/a.pcapng#12` to `a.pcapng#12`.
fn shortened(grid: &Grid) -> Grid {
    let mut short = grid.clone();
    for header in short.headers.iter_mut() {
        *header = match *header {
            "generation" => "gen",
            "duration" => "took",
            other => other,
        };
    }
    for (i, header) in grid.headers.iter().enumerate() {
        let cut: fn(&str) -> Option<String> = match *header {
            "time" | "started" => millis,
            "evidence" => file_name,
            _ => continue,
        };
        for row in &mut short.rows {
            if let Some(cell) = row.get_mut(i) {
                if let Some(text) = cut(&cell.text) {
                    cell.text = text;
                }
            }
        }
    }
    short
}

/// `…12:00:03.123456` to `…12:00:03.123` (rounded down).
fn millis(text: &str) -> Option<String> {
    let (head, fraction) = text.rsplit_once('.')?;
    (fraction.len() == 6 && fraction.bytes().all(|b| b.is_ascii_digit()))
        .then(|| format!("{head}.{}", &fraction[..3]))
}

/// `dir/file#12` to `file#12`.
fn file_name(text: &str) -> Option<String> {
    let (_, name) = text.rsplit_once('/')?;
    (!name.is_empty()).then(|| name.to_string())
}

fn layout(grid: &Grid, opts: &RenderOptions) -> String {
    let mut table = Table::new();
    // Never let comfy-table look at stdout itself: what we write to may not
    // be stdout, and the caller already decided on width and colour.
    table.force_no_tty();
    match opts.width {
        Some(width) => {
            table
                .load_style(UTF8_FULL_CONDENSED)
                .set_content_arrangement(ContentArrangement::Dynamic)
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
    table.set_header(grid.headers.iter().map(|h| header_cell(h, opts.color)));
    for row in &grid.rows {
        table.add_row(row.iter().map(|span| cell(span, opts.color)));
    }
    if let Some(width) = opts.width {
        keep_short_columns_whole(&mut table, grid, width);
    }
    table.to_string()
}

/// The group, trigger, time and evidence columns are kept whole, then
/// short columns (generations, durations, counts), narrowest first, as long
/// as the long ones (members, details) keep at least [`LONG_MIN`] columns
/// each; the rest share what is left. Without this comfy-table gives every
/// column an equal share and splits `member_joined` over two lines while a
/// member id gets one letter per line.
fn keep_short_columns_whole(table: &mut Table, grid: &Grid, width: u16) {
    const SHORT: usize = 16;
    const LONG_MIN: usize = 12;
    let widths: Vec<usize> = (0..grid.headers.len())
        .map(|i| column_width(grid, i))
        .collect();
    let whole = |i: usize| WHOLE.contains(&grid.headers[i]) || grid.headers[i] == "started";
    // Each column costs its padding and one border.
    let borders = 3 * widths.len() + 1;
    let mut budget = usize::from(width).saturating_sub(borders);
    let long = |min: usize| -> usize {
        (0..widths.len())
            .filter(|i| !whole(*i) && widths[*i] > SHORT)
            .map(|i| widths[i].min(min))
            .sum()
    };
    // First the columns that must not wrap, leaving the long ones a few
    // letters each; then short ones, leaving the long ones [`LONG_MIN`].
    let mut keep = |i: usize, budget: &mut usize, reserve: usize| -> bool {
        if widths[i] + reserve > *budget {
            return false;
        }
        *budget -= widths[i];
        if let Some(column) = table.column_mut(i) {
            column.set_constraint(ColumnConstraint::ContentWidth);
        }
        true
    };
    let mut first: Vec<usize> = (0..widths.len()).filter(|i| whole(*i)).collect();
    first.sort_by_key(|i| (widths[*i], *i));
    let reserve = long(4);
    for i in first {
        keep(i, &mut budget, reserve);
    }
    let mut short: Vec<usize> = (0..widths.len())
        .filter(|i| !whole(*i) && widths[*i] <= SHORT)
        .collect();
    short.sort_by_key(|i| (widths[*i], *i));
    let reserve = long(LONG_MIN);
    for i in short {
        if !keep(i, &mut budget, reserve) {
            break;
        }
    }
}

fn column_width(grid: &Grid, i: usize) -> usize {
    grid.rows
        .iter()
        .filter_map(|row| row.get(i))
        .map(|span| span.text.chars().count())
        .chain(std::iter::once(grid.headers[i].chars().count()))
        .max()
        .unwrap_or(0)
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
    fn cells_are_shortened_before_columns_are_hidden() {
        assert_eq!(millis("12:00:03.123456").as_deref(), Some("12:00:03.123"));
        assert_eq!(millis("12:00:03").as_deref(), None);
        assert_eq!(file_name("lab/x.pcap#12").as_deref(), Some("x.pcap#12"));
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
