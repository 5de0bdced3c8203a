//! The incident report as one self-contained HTML file (`report --html`).
//!
//! Takes: a [`Report`]. Gives: an HTML5 document with the same content as
//! the Markdown report, inline CSS, and one inline SVG timeline per group
//! (see [`super::svg`]). No script, no font, no image, no link to anything
//! outside the file: it opens offline and can be attached to a ticket.
//! Everything from the inputs is escaped ([`escape`]); the SVG is written
//! without an `xmlns`, which HTML does not need for inline SVG.

use std::collections::HashMap;
use std::io::{self, Write};

use crate::report::Report;

use super::doc::{plain_text, Block, Grid, Span, Style, Tone, TriggerClass};
use super::escape::escape;
use super::{incident, svg};

/// Writes the report as HTML.
pub(super) fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let blocks = incident::document(report);
    let title = match blocks.first() {
        Some(Block::Heading(_, line)) => plain_text(line),
        _ => "Consumer group report".to_string(),
    };
    writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">"
    )?;
    writeln!(
        out,
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    )?;
    writeln!(
        out,
        "<title>{}</title>\n<style>\n{}</style>\n</head>",
        escape(&title),
        css()
    )?;
    writeln!(out, "<body>\n<main>")?;
    let sections = sections(&blocks);
    let index = svg::Index::new(report);
    // Block index → section number, looked up once per block (a scan of the
    // sections per block made `--html` with 8 k groups take 110 s).
    let numbers: HashMap<usize, usize> = sections
        .iter()
        .enumerate()
        .map(|(n, (at, ..))| (*at, n))
        .collect();
    for (i, block) in blocks.iter().enumerate() {
        match (block, numbers.get(&i).copied()) {
            (Block::Heading(level, line), Some(n)) => writeln!(
                out,
                "<h{level} id=\"s{}\">{}</h{level}>",
                n + 1,
                spans(line)
            )?,
            _ => write_block(&index, block, out)?,
        }
        // The contents go right after the title and summary.
        if i == 1 {
            contents(&sections, out)?;
        }
    }
    writeln!(out, "<footer>Written by kgtrace. Times are UTC.</footer>")?;
    writeln!(out, "</main>\n</body>\n</html>")
}

/// Headings of level 2 and 3, with their block index: the sections the
/// contents link to (as `#s1`, `#s2`, …).
fn sections(blocks: &[Block]) -> Vec<(usize, u8, &[Span])> {
    blocks
        .iter()
        .enumerate()
        .filter_map(|(i, b)| match b {
            Block::Heading(level @ 2..=3, line) => Some((i, *level, line.as_slice())),
            _ => None,
        })
        .collect()
}

/// A list of links to the sections, when there are enough to need one.
fn contents(sections: &[(usize, u8, &[Span])], out: &mut dyn Write) -> io::Result<()> {
    if sections.len() < 4 {
        return Ok(());
    }
    writeln!(
        out,
        "<nav class=\"contents\"><strong>Contents</strong>\n<ul>"
    )?;
    for (n, (_, level, line)) in sections.iter().enumerate() {
        let class = if *level == 3 { " class=\"sub\"" } else { "" };
        writeln!(
            out,
            "<li{class}><a href=\"#s{}\">{}</a></li>",
            n + 1,
            spans(line)
        )?;
    }
    writeln!(out, "</ul></nav>")
}

fn write_block(index: &svg::Index<'_>, block: &Block, out: &mut dyn Write) -> io::Result<()> {
    match block {
        Block::Heading(level, line) => {
            let level = (*level).clamp(1, 4);
            writeln!(out, "<h{level}>{}</h{level}>", spans(line))
        }
        Block::Paragraph(line) => writeln!(out, "<p>{}</p>", spans(line)),
        Block::Fields(fields) => {
            writeln!(out, "<dl class=\"fields\">")?;
            for (name, line) in fields {
                writeln!(out, "<dt>{}</dt><dd>{}</dd>", escape(name), spans(line))?;
            }
            writeln!(out, "</dl>")
        }
        Block::List(items) => {
            writeln!(out, "<ul>")?;
            for item in items {
                writeln!(out, "<li>{}</li>", spans(item))?;
            }
            writeln!(out, "</ul>")
        }
        Block::Grid(grid) => table(grid, out),
        // The Markdown report's chart; HTML draws its own timelines.
        Block::Chart(_) => Ok(()),
        Block::Picture(group) => {
            writeln!(out, "<figure class=\"timeline\">")?;
            svg::write(index, group, out)?;
            writeln!(out, "<figcaption>Timeline of <code>{}</code>: one lane per member; shaded windows are rebalances, coloured by trigger; a row per stopped partition, a bar per stop (#N: rebalance N). Hover a mark for its frame or line, a bar for its owners and times.</figcaption>", escape(group))?;
            writeln!(out, "</figure>")
        }
    }
}

fn table(grid: &Grid, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<div class=\"scroll\"><table>\n<thead><tr>")?;
    for h in &grid.headers {
        write!(out, "<th>{}</th>", escape(h))?;
    }
    writeln!(out, "</tr></thead>\n<tbody>")?;
    for row in &grid.rows {
        write!(out, "<tr>")?;
        for cell in row {
            write!(out, "<td>{}</td>", span(cell))?;
        }
        writeln!(out, "</tr>")?;
    }
    writeln!(out, "</tbody>\n</table></div>")
}

fn spans(line: &[Span]) -> String {
    line.iter().map(span).collect()
}

fn span(s: &Span) -> String {
    if s.text.is_empty() {
        return String::new();
    }
    let text = escape(&s.text);
    let styled = match s.style {
        Style::Plain => text,
        Style::Code => format!("<code>{text}</code>"),
        Style::Strong => format!("<strong>{text}</strong>"),
    };
    match tone_class(s.tone) {
        Some(class) => format!("<span class=\"{class}\">{styled}</span>"),
        None => styled,
    }
}

fn tone_class(tone: Tone) -> Option<String> {
    match tone {
        Tone::Plain => None,
        Tone::Muted => Some("muted".into()),
        Tone::Error => Some("error".into()),
        Tone::Warning => Some("warn".into()),
        Tone::Trigger(class) => Some(format!("trigger t{}", class_index(class))),
    }
}

fn class_index(class: TriggerClass) -> usize {
    TriggerClass::ALL
        .iter()
        .position(|c| *c == class)
        .unwrap_or(0)
}

fn css() -> String {
    let mut css = String::from(BASE_CSS);
    for (i, class) in TriggerClass::ALL.iter().enumerate() {
        css.push_str(&format!(
            ".t{i} code {{ color: {}; border-color: {}; }}\n",
            class.css(),
            class.css()
        ));
    }
    css
}

const BASE_CSS: &str = "\
:root { color-scheme: light; }
body { margin: 0; background: #f6f7f9; color: #1f2630; font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif; }
main { max-width: 1320px; margin: 0 auto; padding: 24px 28px 40px; background: #fff; }
h1 { font-size: 22px; margin: 0 0 12px; }
h2 { font-size: 18px; margin: 32px 0 10px; padding-top: 12px; border-top: 2px solid #e3e7ee; }
h3 { font-size: 15px; margin: 22px 0 8px; }
code { font: 12.5px/1.3 'DejaVu Sans Mono', Menlo, Consolas, monospace; background: #f1f3f6; border-radius: 3px; padding: 0 3px; }
li code, dd code { overflow-wrap: anywhere; }
dl.fields { display: grid; grid-template-columns: max-content 1fr; gap: 3px 14px; margin: 8px 0 12px; }
dl.fields dt { font-weight: 600; color: #4a5260; }
dl.fields dd { margin: 0; }
.scroll { overflow-x: auto; margin: 8px 0 14px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { text-align: left; padding: 4px 10px; border-bottom: 1px solid #e3e7ee; vertical-align: top; }
th { background: #eef2f8; font-weight: 600; white-space: nowrap; }
tbody tr:nth-child(even) { background: #fafbfc; }
ul { margin: 6px 0 12px; padding-left: 22px; }
li { margin: 2px 0; }
.muted { color: #7a7f87; }
.error code, .error { color: #c0281f; }
.warn code, .warn { color: #a85d00; font-weight: 600; }
.trigger code { font-weight: 600; background: #fff; border: 1px solid; white-space: nowrap; }
figure.timeline { margin: 12px 0 16px; padding: 8px; border: 1px solid #e3e7ee; border-radius: 6px; }
figure.timeline svg { display: block; max-width: 1280px; height: auto; }
figcaption { font-size: 12px; color: #5b6472; margin-top: 4px; }
nav.contents { margin: 12px 0 4px; padding: 8px 14px; background: #f6f8fb; border: 1px solid #e3e7ee; border-radius: 6px; font-size: 13px; }
nav.contents ul { list-style: none; margin: 4px 0 0; padding: 0; columns: 2; }
nav.contents li.sub { margin-left: 18px; }
nav.contents a { color: #1f4f8a; text-decoration: none; }
footer { margin-top: 32px; font-size: 12px; color: #7a7f87; }
@media print { body { background: #fff; } main { padding: 0; } h2 { break-before: auto; } }
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    fn html(report: &Report) -> String {
        let mut out = Vec::new();
        write(report, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn one_svg_per_group_and_no_external_reference() {
        for (_, report) in sample::all() {
            let text = html(&report);
            let groups = incident::group_names(&report).len();
            assert_eq!(text.matches("<svg").count(), groups);
            assert!(!text.contains("http://") && !text.contains("https://"));
            assert!(!text.contains("<script") && !text.contains("<link") && !text.contains("src="));
        }
    }

    #[test]
    fn contents_link_to_every_section_by_an_id_that_exists() {
        let text = html(&sample::incident());
        let links = text.matches("<a href=\"#s").count();
        assert!(links >= 8, "{links} links");
        for n in 1..=links {
            assert!(text.contains(&format!("id=\"s{n}\"")), "no section s{n}");
        }
    }

    #[test]
    fn odd_member_ids_are_escaped() {
        let text = html(&sample::incident());
        assert!(text.contains("nonode@nohost/&lt;0.1083.0&gt;"));
        assert!(!text.contains("<0.1083.0>"));
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }

    #[test]
    fn a_hostile_client_id_cannot_inject_markup() {
        let mut report = sample::incident();
        report.timeline[0].client_id = Some("</text><script>alert(1)</script>".into());
        report.groups[0].members[0].client_id = Some("<img src=x>".into());
        let text = html(&report);
        assert!(!text.contains("<script") && !text.contains("<img"));
    }
}
