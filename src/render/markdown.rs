//! The `markdown` format: text that pastes into GitHub or Jira.
//!
//! Takes: a view of a [`Report`]. Gives: for [`View::Report`] the incident
//! report (title, summary, per-group tables, per-rebalance sections with
//! their evidence); for the other views one GFM table. Everything that came
//! from the inputs is escaped: `|` and line breaks in cells (GFM table
//! syntax, escaped even inside code spans), Markdown punctuation and `<` in
//! running text, and code spans get a fence longer than any backtick run
//! inside them (CommonMark §6.1).

use std::io::{self, Write};

use crate::report::Report;

use super::doc::{Block, Grid, Span, Style};
use super::grids;
use super::human::TimeStyle;
use super::{brief, incident, View};

/// Writes `view` as Markdown.
pub(super) fn write(
    report: &Report,
    view: View,
    brief: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let style = TimeStyle::for_report(report);
    let grid = match view {
        View::Timeline => grids::timeline(&report.timeline, style),
        View::Rebalances => grids::rebalances(report.rebalance_records(), style),
        View::Groups => grids::groups(&report.groups),
        View::Decode => grids::exchanges(&report.exchanges, style),
        View::Report if brief => return blocks(&brief::document(report, &size), out),
        View::Report => return blocks(&incident::document(report), out),
    };
    table(&grid, out)
}

/// Characters `block` takes as Markdown.
fn size(block: &Block) -> usize {
    let mut out = Vec::new();
    match blocks(std::slice::from_ref(block), &mut out) {
        Ok(()) => String::from_utf8_lossy(&out).chars().count(),
        Err(_) => usize::MAX,
    }
}

/// Writes blocks separated by blank lines; pictures are HTML-only.
fn blocks(blocks: &[Block], out: &mut dyn Write) -> io::Result<()> {
    let mut first = true;
    for block in blocks.iter().filter(|b| !matches!(b, Block::Picture(_))) {
        if !first {
            writeln!(out)?;
        }
        first = false;
        match block {
            Block::Heading(level, line) => {
                writeln!(out, "{} {}", "#".repeat(usize::from(*level)), spans(line))?
            }
            Block::Paragraph(line) => writeln!(out, "{}", spans(line))?,
            Block::Fields(fields) => {
                for (name, line) in fields {
                    writeln!(out, "- **{name}:** {}", spans(line))?;
                }
            }
            Block::List(items) => {
                for item in items {
                    writeln!(out, "- {}", spans(item))?;
                }
            }
            Block::Grid(grid) => table(grid, out)?,
            Block::Chart(source) => writeln!(out, "```mermaid\n{source}```")?,
            Block::Picture(_) => {}
        }
    }
    Ok(())
}

/// Columns a Markdown table may take; wider ones are written as lists,
/// which read in a plain-text ticket and in a narrow rendered column.
pub(crate) const MAX_TABLE_WIDTH: usize = 120;

/// A GFM table (header, delimiter row, one row per item) when its widest
/// written row fits [`MAX_TABLE_WIDTH`], else a list with one item per row.
fn table(grid: &Grid, out: &mut dyn Write) -> io::Result<()> {
    let header: Vec<String> = grid.headers.iter().map(|h| text(h)).collect();
    let rows: Vec<Vec<String>> = grid
        .rows
        .iter()
        .map(|row| row.iter().map(cell).collect())
        .collect();
    let line = |cells: &[String]| format!("| {} |", cells.join(" | "));
    let widest = std::iter::once(&header)
        .chain(&rows)
        .map(|cells| line(cells).chars().count())
        .max()
        .unwrap_or(0);
    if widest > MAX_TABLE_WIDTH {
        return list(&header, &rows, out);
    }
    writeln!(out, "{}", line(&header))?;
    writeln!(out, "|{}", " --- |".repeat(grid.headers.len()))?;
    for row in &rows {
        writeln!(out, "{}", line(row))?;
    }
    Ok(())
}

/// A table too wide for [`MAX_TABLE_WIDTH`]: one item per row, its first
/// cell in bold, then each non-empty cell as `header: value`.
fn list(header: &[String], rows: &[Vec<String>], out: &mut dyn Write) -> io::Result<()> {
    for row in rows {
        let mut parts = Vec::new();
        for (i, (name, value)) in header.iter().zip(row).enumerate() {
            match (i, value.is_empty()) {
                (_, true) => {}
                (0, false) => parts.push(format!("**{name}:** {value}")),
                (_, false) => parts.push(format!("{name}: {value}")),
            }
        }
        if parts.is_empty() {
            parts.push("–".into());
        }
        writeln!(out, "- {}", parts.join(" · "))?;
    }
    Ok(())
}

fn cell(span: &Span) -> String {
    if span.text.is_empty() {
        return String::new();
    }
    let written = self::span(span);
    // GFM splits cells on `|` before it parses inlines, so a pipe must be
    // escaped even inside a code span; line breaks would end the row.
    let mut out = String::with_capacity(written.len());
    let mut escaped = false;
    for c in written.chars() {
        match c {
            '|' if !escaped => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
        escaped = c == '\\' && !escaped;
    }
    out
}

fn spans(line: &[Span]) -> String {
    line.iter().map(span).collect()
}

fn span(s: &Span) -> String {
    let flat = s.text.replace(['\n', '\r'], " ");
    match s.style {
        Style::Plain => text(&flat),
        Style::Strong => format!("**{}**", text(&flat)),
        Style::Code => code(&flat),
    }
}

/// Running text with Markdown's active characters backslash-escaped:
/// those that start emphasis, code, links, raw HTML or strike-through, and
/// `|`. An `_` between two letters or digits cannot start emphasis
/// (CommonMark §6.2, left- and right-flanking runs), so `member_id` stays
/// readable when pasted into a tool that does not render Markdown.
fn text(raw: &str) -> String {
    let chars: Vec<char> = raw.chars().collect();
    let mut out = String::with_capacity(raw.len());
    for (i, &c) in chars.iter().enumerate() {
        let inside_word = || {
            let before = i.checked_sub(1).and_then(|j| chars.get(j));
            let after = chars.get(i + 1);
            before.is_some_and(|b| b.is_alphanumeric())
                && after.is_some_and(|a| a.is_alphanumeric())
        };
        let active = match c {
            '\\' | '`' | '*' | '[' | '<' | '|' | '~' => true,
            '_' => !inside_word(),
            _ => false,
        };
        if active {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A code span whose fence is longer than any backtick run inside.
fn code(raw: &str) -> String {
    if raw.is_empty() {
        return String::new();
    }
    let longest = raw.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if raw.starts_with('`') || raw.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{raw}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    fn markdown(view: View) -> String {
        let mut out = Vec::new();
        write(&sample::incident(), view, false, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Cell separators in a GFM row: pipes not escaped by a backslash.
    fn pipes(row: &str) -> usize {
        let mut n = 0;
        let mut escaped = false;
        for c in row.chars() {
            if c == '|' && !escaped {
                n += 1;
            }
            escaped = c == '\\' && !escaped;
        }
        n
    }

    #[test]
    fn pipes_in_a_reason_do_not_split_the_cell() {
        let text = markdown(View::Timeline);
        assert!(text.contains("rebalance \\| need to rejoin"), "{text}");
        let rows: Vec<&str> = text.lines().collect();
        assert!(rows.iter().all(|r| pipes(r) == pipes(rows[0])), "{text}");
    }

    #[test]
    fn every_table_of_every_view_has_consistent_pipes() {
        let views = [
            View::Timeline,
            View::Rebalances,
            View::Groups,
            View::Decode,
            View::Report,
        ];
        for (name, report) in sample::all() {
            for view in views {
                let mut out = Vec::new();
                write(&report, view, false, &mut out).unwrap();
                let text = String::from_utf8(out).unwrap();
                let mut columns = None;
                for line in text.lines() {
                    if line.starts_with('|') {
                        let n = pipes(line);
                        assert_eq!(*columns.get_or_insert(n), n, "{name} {view:?}: {line}");
                    } else {
                        columns = None;
                    }
                }
            }
        }
        assert!(markdown(View::Report).starts_with("# Consumer group report"));
    }

    #[test]
    fn code_spans_survive_backticks_and_text_escapes_markup() {
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(text("<0.1083.0> *x*"), "\\<0.1083.0> \\*x\\*");
        assert_eq!(
            text("member_id __consumer_offsets"),
            "member_id \\_\\_consumer_offsets"
        );
    }

    #[test]
    fn a_table_wider_than_120_columns_is_written_as_a_list() {
        let narrow = Grid::new(
            vec!["a", "b"],
            vec![vec![Span::plain("x"), Span::plain("y")]],
        );
        let mut out = Vec::new();
        table(&narrow, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "| a | b |\n| --- | --- |\n| x | y |\n"
        );
        let long = "z".repeat(60);
        let wide = Grid::new(
            vec!["a", "b", "c"],
            vec![vec![
                Span::plain("x"),
                Span::plain(long.clone()),
                Span::plain(long.clone()),
            ]],
        );
        let mut out = Vec::new();
        table(&wide, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, format!("- **a:** x · b: {long} · c: {long}\n"));
        // Every table the reports write fits 120 columns or is a list.
        for (_, report) in sample::all() {
            for view in [
                View::Timeline,
                View::Rebalances,
                View::Groups,
                View::Decode,
                View::Report,
            ] {
                let mut out = Vec::new();
                write(&report, view, false, &mut out).unwrap();
                let text = String::from_utf8(out).unwrap();
                for line in text.lines().filter(|l| l.starts_with('|')) {
                    assert!(line.chars().count() <= MAX_TABLE_WIDTH, "{line}");
                }
            }
        }
    }

    #[test]
    fn evidence_is_listed_with_its_frame_or_line() {
        let text = markdown(View::Report);
        assert!(text.contains("- `lab/broker-1.pcap#4410`"));
        assert!(text.contains("- `lab/server.log:4120`"));
    }
}
