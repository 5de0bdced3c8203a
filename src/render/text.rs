//! The incident report as terminal text.
//!
//! Takes: the report's [`Block`]s and [`RenderOptions`]. Gives: plain text,
//! with headings underlined, `name: value` fields aligned, tables from
//! [`super::table`] and ANSI colour only when asked. The timeline picture
//! exists only in HTML.

use std::io::{self, Write};

use super::doc::{Block, Span, Style, Tone, TriggerClass};
use super::table::grid_text;
use super::RenderOptions;

/// Writes every block, separated by blank lines.
pub(super) fn write(blocks: &[Block], opts: &RenderOptions, out: &mut dyn Write) -> io::Result<()> {
    let mut first = true;
    for block in blocks {
        if matches!(block, Block::Picture(_) | Block::Chart(_)) {
            continue;
        }
        if !first {
            writeln!(out)?;
        }
        first = false;
        write_block(block, opts, out)?;
    }
    Ok(())
}

/// Characters `block` takes as text.
pub(super) fn size(block: &Block, opts: &RenderOptions) -> usize {
    let mut out = Vec::new();
    match write_block(block, opts, &mut out) {
        Ok(()) => String::from_utf8_lossy(&out).chars().count(),
        Err(_) => usize::MAX,
    }
}

fn write_block(block: &Block, opts: &RenderOptions, out: &mut dyn Write) -> io::Result<()> {
    match block {
        Block::Heading(level, line) => {
            let text = spans(line, opts.color);
            let plain: String = line.iter().map(|s| s.text.as_str()).collect();
            let rule = match level {
                1 => "=",
                2 => "-",
                _ => "·",
            };
            writeln!(out, "{}", bold(&text, opts.color))?;
            writeln!(out, "{}", rule.repeat(plain.chars().count()))
        }
        Block::Paragraph(line) => writeln!(out, "{}", spans(line, opts.color)),
        Block::Fields(fields) => {
            let pad = fields
                .iter()
                .map(|(n, _)| n.chars().count())
                .max()
                .unwrap_or(0);
            for (name, line) in fields {
                writeln!(
                    out,
                    "{:<width$}  {}",
                    format!("{name}:"),
                    spans(line, opts.color),
                    width = pad + 1
                )?;
            }
            Ok(())
        }
        Block::List(items) => {
            for item in items {
                writeln!(out, "  - {}", spans(item, opts.color))?;
            }
            Ok(())
        }
        Block::Grid(grid) => writeln!(out, "{}", grid_text(grid, opts)),
        Block::Picture(_) | Block::Chart(_) => Ok(()),
    }
}

fn spans(line: &[Span], color: bool) -> String {
    line.iter().map(|s| span(s, color)).collect()
}

fn span(s: &Span, color: bool) -> String {
    if !color {
        return s.text.clone();
    }
    let mut codes = Vec::new();
    if s.style == Style::Strong {
        codes.push("1");
    }
    codes.extend(ansi_code(s.tone));
    if codes.is_empty() {
        return s.text.clone();
    }
    format!("\u{1b}[{}m{}\u{1b}[0m", codes.join(";"), s.text)
}

fn bold(text: &str, color: bool) -> String {
    if color {
        format!("\u{1b}[1m{text}\u{1b}[0m")
    } else {
        text.to_string()
    }
}

/// SGR foreground codes: the bright hues comfy-table uses for the same
/// tones in table cells (`Color::Cyan` is 256-colour 14, bright cyan).
fn ansi_code(tone: Tone) -> Option<&'static str> {
    match tone {
        Tone::Plain => None,
        Tone::Muted => Some("90"),
        Tone::Error => Some("91"),
        Tone::Warning => Some("93"),
        Tone::Trigger(class) => Some(match class {
            TriggerClass::Join => "96",
            TriggerClass::Leave => "93",
            TriggerClass::Timeout => "91",
            TriggerClass::Change => "95",
            TriggerClass::Coordinator => "94",
            TriggerClass::Failure => "31",
            TriggerClass::Unknown => "90",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{incident, sample};

    fn report_text(opts: RenderOptions) -> String {
        let mut out = Vec::new();
        write(&incident::document(&sample::incident()), &opts, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn headings_are_underlined_to_their_length() {
        let text = report_text(RenderOptions::default());
        let lines: Vec<&str> = text.lines().collect();
        let title = lines[0];
        assert!(title.starts_with("Consumer group report"));
        assert_eq!(lines[1], "=".repeat(title.chars().count()));
    }

    #[test]
    fn text_report_has_no_escape_codes_without_colour() {
        assert!(!report_text(RenderOptions::default()).contains('\u{1b}'));
        assert!(report_text(RenderOptions {
            color: true,
            width: None,
            ..RenderOptions::default()
        })
        .contains("\u{1b}[96m"));
    }
}
