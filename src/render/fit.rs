//! Fitting a table to a terminal's width.
//!
//! Takes: a [`Grid`] and a width in columns. Gives: a grid whose cells are
//! already wrapped (lines joined by `\n`) so that, laid out with one space
//! of padding each side and one border per column, no line is wider than
//! the width; and the notes a reader needs to read it (which columns were
//! left out, what a shortened evidence name stands for).
//!
//! The rules, applied only as far as needed, in this order:
//! 1. times to milliseconds (`16:34:40.886995` → `16:34:40.886`) and
//!    evidence to its file name (`fixtures/lab/a.pcap#12` → `a.pcap#12`);
//!    then, if still too wide, times to what differs between rows: the
//!    date and the hour every row shares move to the header
//!    (`started (2026-12-03 16:…)` over `34:40.886`);
//! 2. columns with nothing in them, then the columns the grid calls
//!    droppable (first to go first) are hidden, never the group or the
//!    trigger, and a note names them;
//! 3. when the evidence column would still wrap, the file name part every
//!    row shares becomes `…` and a note says what it stands for
//!    (`…#12` with `… = ck_max_poll.pcapng`);
//! 4. the rest wraps at word boundaries only (see [`pieces`]); the group, the
//!    trigger and the time never wrap, a number never leaves its unit
//!    (`3.00 s`), `#12` or `:46` never leaves the file it numbers, and only
//!    free text (a detail) has an overlong word cut;
//! 5. only if that cannot fit, other columns are left out from the right
//!    (never the first column, the group or the trigger), and the note
//!    names them too.

use super::doc::Grid;

/// Columns never left out: without them two groups' rows, or two causes,
/// cannot be told apart.
const KEPT: [&str; 2] = ["group", "trigger"];

/// Columns never wrapped: a time, a group or a trigger cut over two lines
/// reads as two values.
const WHOLE: [&str; 4] = ["group", "trigger", "time", "started"];

/// Columns up to this wide are kept on one line (`3 → 4`, `758 ms`).
const SHORT: usize = 6;

/// Columns of free text, whose long words (ids inside a detail) may be cut
/// when nothing else fits; every other column's words (a kind, an error
/// name, a file name) stay whole.
const FREE_TEXT: [&str; 2] = ["detail", "notes"];

/// A free-text column may wrap down to this width.
const LONG_MIN: usize = 10;

/// A grid fitted to a width, and the notes to print under it.
#[derive(Debug)]
pub(super) struct Fitted {
    /// Cells wrapped with `\n`.
    pub(super) grid: Grid,
    /// Headers, wrapped like the cells.
    pub(super) headers: Vec<String>,
    /// Lines for the reader, each in parentheses.
    pub(super) notes: Vec<String>,
}

/// Fits `grid` to `width` columns (see the module's rules).
pub(super) fn fit(grid: &Grid, width: u16) -> Fitted {
    let width = usize::from(width);
    let naturals: usize = (0..grid.headers.len()).map(|i| natural(grid, i)).sum();
    if naturals + borders(grid.headers.len()) <= width {
        return Fitted {
            grid: grid.clone(),
            headers: grid.headers.iter().map(|h| h.to_string()).collect(),
            notes: Vec::new(),
        };
    }
    let short = shortened(grid);
    let (cut, contexts) = times_to_what_differs(&short);
    // The two grids differ only in their time columns: measured once, the
    // time columns again.
    let short_cols = Cols::of(&short);
    let mut cut_cols = short_cols.clone();
    for (i, header) in cut.headers.iter().enumerate() {
        if matches!(*header, "time" | "started") {
            cut_cols.measure_again(&cut, i);
        }
    }
    let whole_times = hidden_to_fit(short, short_cols, width);
    let cut_times = hidden_to_fit(cut, cut_cols, width);
    // Times cut to what differs only when that hides fewer columns, or
    // wraps less (the table would still not sit on one line per row).
    let use_cut = !contexts.is_empty()
        && (cut_times.2.len() < whole_times.2.len()
            || comfortable_total(&whole_times.0, &whole_times.1) > width);
    // The grid not taken is dropped here, before the table is laid out.
    let (mut fitted, mut cols, mut left_out, contexts) = if use_cut {
        drop(whole_times);
        (cut_times.0, cut_times.1, cut_times.2, contexts)
    } else {
        drop(cut_times);
        (whole_times.0, whole_times.1, whole_times.2, Vec::new())
    };
    let mut notes = Vec::new();
    if cols.natural_total() > width {
        if let Some((short, i, note)) = evidence_shortened(&fitted, &cols, width) {
            fitted = short;
            cols.measure_again(&fitted, i);
            notes.push(note);
        }
    }
    while cols.min_total() > width {
        let Some(i) = last_resort(&fitted) else { break };
        if fitted.headers[i] == "evidence" {
            notes.clear();
        }
        left_out.push(fitted.headers[i].to_string());
        hide(&mut fitted, &mut cols, i);
    }
    let mut widths = widths(&cols, width);
    for (name, shared) in &contexts {
        if let Some(i) = fitted.headers.iter().position(|h| h == name) {
            let need = header_min(&format!("{name} ({shared})"));
            make_room(&cols, &mut widths, i, need, width);
        }
    }
    let headers = fitted
        .headers
        .iter()
        .zip(&widths)
        .map(|(h, w)| {
            let h = match contexts.iter().find(|(name, _)| name == h) {
                Some((_, shared)) => format!("{h} ({shared})"),
                None => h.to_string(),
            };
            wrap(&h, *w).join("\n")
        })
        .collect();
    let wrapped = wrapped(fitted, &widths);
    if !left_out.is_empty() {
        notes.insert(
            0,
            format!(
                "(hidden to fit {width} columns: {}; --wide shows everything)",
                left_out.join(", ")
            ),
        );
    }
    Fitted {
        grid: wrapped,
        headers,
        notes,
    }
}

/// `grid` without its empty columns, then without its droppable columns
/// (first to go first) until it fits comfortably; its columns' widths; and
/// the names hidden.
fn hidden_to_fit(mut fitted: Grid, mut cols: Cols, width: usize) -> (Grid, Cols, Vec<String>) {
    let mut left_out: Vec<String> = Vec::new();
    // The columns are measured once (`cols`): hiding a column leaves the
    // others' widths as they are (measuring the whole grid again for each
    // column hidden took a second over a 24,000-row table).
    while let Some(i) = empty_column(&fitted) {
        left_out.push(format!("{} (empty)", fitted.headers[i]));
        hide(&mut fitted, &mut cols, i);
    }
    for name in fitted
        .droppable
        .clone()
        .iter()
        .filter(|n| !KEPT.contains(n))
    {
        if comfortable_total(&fitted, &cols) <= width {
            break;
        }
        if let Some(i) = fitted.headers.iter().position(|h| h == name) {
            hide(&mut fitted, &mut cols, i);
            left_out.push(name.to_string());
        }
    }
    (fitted, cols, left_out)
}

/// Each column's width with every cell on one line, and the narrowest it
/// may get ([`min_width`]), measured once for a grid.
#[derive(Clone, Debug)]
struct Cols {
    natural: Vec<usize>,
    min: Vec<usize>,
}

impl Cols {
    fn of(grid: &Grid) -> Cols {
        let natural: Vec<usize> = (0..grid.headers.len()).map(|i| natural(grid, i)).collect();
        let min = natural
            .iter()
            .enumerate()
            .map(|(i, n)| min_width(grid, i, *n))
            .collect();
        Cols { natural, min }
    }

    /// Measures column `i` again, after its cells changed.
    fn measure_again(&mut self, grid: &Grid, i: usize) {
        self.natural[i] = natural(grid, i);
        self.min[i] = min_width(grid, i, self.natural[i]);
    }

    /// Forgets column `i`, as the grid hides it.
    fn remove(&mut self, i: usize) {
        self.natural.remove(i);
        self.min.remove(i);
    }

    /// Columns the grid takes with every cell on one line.
    fn natural_total(&self) -> usize {
        self.natural.iter().sum::<usize>() + borders(self.natural.len())
    }

    /// Columns the grid takes with every cell wrapped as far as allowed.
    fn min_total(&self) -> usize {
        self.min.iter().sum::<usize>() + borders(self.min.len())
    }
}

/// Hides column `i` of `grid` and forgets its widths, in step.
fn hide(grid: &mut Grid, cols: &mut Cols, i: usize) {
    grid.remove_column(i);
    cols.remove(i);
}

/// A note in lines of at most `width` characters, broken at spaces.
pub(super) fn note_lines(note: &str, width: u16) -> Vec<String> {
    let width = usize::from(width);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in note.split(' ') {
        if !line.is_empty() && chars(&line) + 1 + chars(word) > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// Columns the grid takes with long cells wrapped over two or three lines
/// (each long column counted as [`WRAPPED`] wide): wrapping a detail is
/// better than hiding a column, but not one letter per line.
fn comfortable_total(grid: &Grid, cols: &Cols) -> usize {
    const WRAPPED: usize = 24;
    (0..grid.headers.len())
        .map(|i| {
            let w = cols.natural[i];
            if WHOLE.contains(&grid.headers[i]) {
                w
            } else {
                w.min(WRAPPED.max(cols.min[i]))
            }
        })
        .sum::<usize>()
        + borders(grid.headers.len())
}

/// One space each side of every cell and a border between and around
/// `columns` columns.
fn borders(columns: usize) -> usize {
    3 * columns + 1
}

fn cells(grid: &Grid, i: usize) -> impl Iterator<Item = &str> {
    grid.rows
        .iter()
        .filter_map(move |row| row.get(i))
        .map(|span| span.text.as_str())
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

/// The widest cell (or header) on one line.
fn natural(grid: &Grid, i: usize) -> usize {
    cells(grid, i)
        .map(chars)
        .chain(std::iter::once(chars(grid.headers[i])))
        .max()
        .unwrap_or(0)
}

/// The narrowest column `i` (`natural` wide on one line) may get: whole
/// for the group, trigger, time and short columns; the longest unbreakable
/// piece for the rest, but no more than [`LONG_MIN`] for [`FREE_TEXT`]
/// (longer pieces are cut there).
fn min_width(grid: &Grid, i: usize, natural: usize) -> usize {
    let header = grid.headers[i];
    if WHOLE.contains(&header) || natural <= SHORT {
        return natural;
    }
    let mut longest = 0;
    for cell in cells(grid, i) {
        each_piece(cell, |p| longest = longest.max(chars(p.trim_end())));
    }
    let longest = if FREE_TEXT.contains(&header) {
        longest.min(LONG_MIN)
    } else {
        longest
    };
    longest.max(header_min(header))
}

/// A header may wrap between its words (`resumed at` / `offset`).
fn header_min(header: &str) -> usize {
    header.split(' ').map(chars).max().unwrap_or(0)
}

/// A column with nothing in any row (an `error` column when nothing
/// failed), other than the group or trigger. A table with no rows has no
/// empty column: its headers are all it says, and every one "(empty)"
/// would be noise.
fn empty_column(grid: &Grid) -> Option<usize> {
    if grid.rows.is_empty() {
        return None;
    }
    (0..grid.headers.len())
        .find(|i| !KEPT.contains(&grid.headers[*i]) && cells(grid, *i).all(|c| c.trim().is_empty()))
}

/// The column to leave out when nothing else fits: the rightmost that is
/// neither the first, nor kept, nor alone.
fn last_resort(grid: &Grid) -> Option<usize> {
    (1..grid.headers.len())
        .rev()
        .find(|i| !KEPT.contains(&grid.headers[*i]))
}

/// Each column's width: its minimum, then columns whole, narrowest first,
/// while what is left allows, then the rest shared out one column at a
/// time to the column furthest from its natural width.
fn widths(cols: &Cols, width: usize) -> Vec<usize> {
    let n = cols.natural.len();
    let natural = &cols.natural;
    let mut widths = cols.min.clone();
    let mut budget = width.saturating_sub(widths.iter().sum::<usize>() + borders(n));
    let mut narrowest: Vec<usize> = (0..n).collect();
    narrowest.sort_by_key(|i| (natural[*i], *i));
    for i in narrowest {
        let more = natural[i] - widths[i];
        if more <= budget {
            budget -= more;
            widths[i] = natural[i];
        }
    }
    while budget > 0 {
        let wanting = (0..n)
            .filter(|i| widths[*i] < natural[*i])
            .max_by_key(|i| (natural[*i] - widths[*i], std::cmp::Reverse(*i)));
        let Some(i) = wanting else { break };
        widths[i] += 1;
        budget -= 1;
    }
    widths
}

/// Widens column `i` to `need`, from the width left over, then by
/// narrowing the columns with most room above their minimum (a time column's header `started (2026-12-03 16:…)`
/// must not be cut inside its date); as far as they allow.
fn make_room(cols: &Cols, widths: &mut [usize], i: usize, need: usize, width: usize) {
    let used = widths.iter().sum::<usize>() + borders(widths.len());
    let slack = width
        .saturating_sub(used)
        .min(need.saturating_sub(widths[i]));
    widths[i] += slack;
    while widths[i] < need {
        let giver = (0..widths.len())
            .filter(|j| *j != i && widths[*j] > cols.min[*j])
            .max_by_key(|j| (widths[*j] - cols.min[*j], std::cmp::Reverse(*j)));
        let Some(j) = giver else { break };
        widths[j] -= 1;
        widths[i] += 1;
    }
}

/// Every cell wrapped to its column's width.
fn wrapped(grid: Grid, widths: &[usize]) -> Grid {
    let mut out = grid;
    for row in &mut out.rows {
        for (i, span) in row.iter_mut().enumerate() {
            let w = widths.get(i).copied().unwrap_or(usize::MAX);
            if chars(&span.text) > w {
                span.text = wrap(&span.text, w).join("\n");
            }
        }
    }
    out
}

/// `text` in lines of at most `width` characters, broken only between
/// [`pieces`]; a piece longer than the width is cut.
pub(super) fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for piece in pieces(text) {
        // The piece is tried on the line itself (a new string per piece
        // was most of the time spent wrapping a long table).
        let kept = line.len();
        line.push_str(piece);
        if chars(line.trim_end()) <= width {
            continue;
        }
        line.truncate(kept);
        if !line.trim_end().is_empty() {
            lines.push(line.trim_end().to_string());
        }
        line = String::new();
        let mut rest: Vec<char> = piece.chars().collect();
        while chars(String::from_iter(&rest).trim_end()) > width {
            lines.push(rest.drain(..width).collect());
        }
        line.extend(rest);
    }
    if !line.trim_end().is_empty() || lines.is_empty() {
        lines.push(line.trim_end().to_string());
    }
    lines
}

/// `text` cut after each place a line may break: a space (not between a
/// number and its unit, nor before the ` / ` of a member label or the ` → `
/// of a generation step), `_`, `,`,
/// `=`, `;`, a `/` in a path, a `-` before a letter (`consumer-`, not
/// `orders-2`), a `.` between letters. `#` and `:` are never break places, so a
/// frame or line number stays with its file.
pub(super) fn pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    each_piece(text, |p| out.push(p));
    out
}

/// [`pieces`], each handed to `f` as it is found.
fn each_piece<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    let mut start = 0;
    let mut prev = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|n| n.1);
        let breaks = match c {
            ' ' => next != Some('/') && next != Some('→') && !unit_follows(prev, &text[at + 1..]),
            '_' | ',' | '=' | ';' => true,
            '/' => next != Some(' '),
            '-' => prev.is_some_and(char::is_alphanumeric) && next.is_some_and(char::is_alphabetic),
            '.' => prev.is_some_and(char::is_alphabetic) && next.is_some_and(char::is_alphabetic),
            _ => false,
        };
        if breaks {
            let end = at + c.len_utf8();
            f(&text[start..end]);
            start = end;
        }
        prev = Some(c);
    }
    if start < text.len() {
        f(&text[start..]);
    }
}

/// Whether the space before `rest` joins a number to its unit (`3.00 s`,
/// `758 ms`, `212 records` does not count: only units).
fn unit_follows(prev: Option<char>, rest: &str) -> bool {
    const UNITS: [&str; 9] = ["s", "ms", "µs", "min", "h", "B", "kB", "MB", "GB"];
    let word = rest.split([' ', ',', ')']).next().unwrap_or("");
    prev.is_some_and(|p| p.is_ascii_digit()) && UNITS.contains(&word)
}

/// Cells cut to what a reader needs at a glance: times to milliseconds,
/// evidence to its file name; `generation` and `duration` headers to `gen`
/// and `took`.
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

/// Time cells cut to the part that differs between rows: the date when
/// every row has the same one, then the hour when every row has the same
/// one (`2026-12-03 16:34:40.886` → `34:40.886`). Gives the grid and, per
/// time column cut, what was cut (`2026-12-03 16:…`), for its header:
/// `started (2026-12-03 16:…)`. A column with a cell that is not a time
/// (other than an empty cell or a dash) is left as it is.
fn times_to_what_differs(grid: &Grid) -> (Grid, Vec<(&'static str, String)>) {
    let mut short = grid.clone();
    let mut contexts = Vec::new();
    for (i, header) in grid.headers.iter().enumerate() {
        if !matches!(*header, "time" | "started") {
            continue;
        }
        let Some(times) = cells(grid, i)
            .filter(|c| !matches!(c.trim(), "" | "-" | "–"))
            .map(split_time)
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        let Some(first) = times.first() else { continue };
        let date = times.iter().all(|t| t.0 == first.0).then_some(first.0);
        let Some(date) = date else { continue };
        let hour = &first.1[..3];
        let same_hour = times.iter().all(|t| &t.1[..3] == hour);
        let cut = |text: &str| -> Option<String> {
            let (_, clock) = split_time(text)?;
            Some(if same_hour { &clock[3..] } else { clock }.to_string())
        };
        let shared = match (date, same_hour) {
            ("", false) => continue,
            ("", true) => format!("{hour}…"),
            (date, false) => date.to_string(),
            (date, true) => format!("{date} {hour}…"),
        };
        for row in &mut short.rows {
            if let Some(cell) = row.get_mut(i) {
                if let Some(text) = cut(&cell.text) {
                    cell.text = text;
                }
            }
        }
        contexts.push((*header, shared));
    }
    (short, contexts)
}

/// `2026-12-03 16:34:40.886` to (`2026-12-03`, `16:34:40.886`);
/// `16:34:40.886` to (``, `16:34:40.886`); `None` for anything else.
fn split_time(text: &str) -> Option<(&str, &str)> {
    let (date, clock) = match text.split_once(' ') {
        Some((d, c)) => (d, c),
        None => ("", text),
    };
    let date_ok = date.is_empty()
        || (date.len() == 10
            && date.bytes().enumerate().all(|(k, b)| match k {
                4 | 7 => b == b'-',
                _ => b.is_ascii_digit(),
            }));
    let b = clock.as_bytes();
    let clock_ok = b.len() >= 8
        && b[2] == b':'
        && b[5] == b':'
        && [0, 1, 3, 4, 6, 7].iter().all(|k| b[*k].is_ascii_digit());
    (date_ok && clock_ok).then_some((date, clock))
}

/// `…12:00:03.123456` to `…12:00:03.123` (rounded down).
pub(super) fn millis(text: &str) -> Option<String> {
    let (head, fraction) = text.rsplit_once('.')?;
    (fraction.len() == 6 && fraction.bytes().all(|b| b.is_ascii_digit()))
        .then(|| format!("{head}.{}", &fraction[..3]))
}

/// `dir/file#12` to `file#12`.
pub(super) fn file_name(text: &str) -> Option<String> {
    let (_, name) = text.rsplit_once('/')?;
    (!name.is_empty()).then(|| name.to_string())
}

/// The evidence column with the start of the file name every row shares
/// replaced by `…`, its index, and the note saying what `…` stands for; `None` when
/// there is no evidence column, it already fits, or the rows share too
/// little to be worth it.
fn evidence_shortened(grid: &Grid, cols: &Cols, width: usize) -> Option<(Grid, usize, String)> {
    let i = grid.headers.iter().position(|h| *h == "evidence")?;
    let allotted = widths(cols, width)[i];
    if allotted >= cols.natural[i] {
        return None;
    }
    let names: Vec<&str> = cells(grid, i)
        .filter(|c| !c.is_empty() && *c != "-")
        .map(evidence_file)
        .collect();
    let shared = shared_start(&names)?;
    if chars(shared) < 6 {
        return None;
    }
    let mut short = grid.clone();
    for row in &mut short.rows {
        if let Some(cell) = row.get_mut(i) {
            if let Some(rest) = cell.text.strip_prefix(shared) {
                cell.text = format!("…{rest}");
            }
        }
    }
    Some((short, i, format!("(evidence: … stands for {shared})")))
}

/// `a.pcap#12` → `a.pcap`, `a.log:46` → `a.log`.
fn evidence_file(cell: &str) -> &str {
    let end = cell.rfind(['#', ':']).unwrap_or(cell.len());
    &cell[..end]
}

/// The start every name shares: the whole name when all are the same,
/// else cut back to just after a `.`, `_` or `-` so no word is cut.
fn shared_start<'a>(names: &[&'a str]) -> Option<&'a str> {
    let first = *names.first()?;
    let mut end = first.len();
    for name in &names[1..] {
        end = first
            .char_indices()
            .zip(name.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map(|((at, c), _)| at + c.len_utf8())
            .unwrap_or(0)
            .min(end);
    }
    if names.iter().all(|n| n.len() == end) {
        return Some(first);
    }
    let cut = first[..end].rfind(['.', '_', '-'])? + 1;
    Some(&first[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::doc::Span;

    fn grid(headers: Vec<&'static str>, rows: &[&[&str]]) -> Grid {
        Grid::new(
            headers,
            rows.iter()
                .map(|r| r.iter().map(|c| Span::plain(*c)).collect())
                .collect(),
        )
    }

    fn widest(f: &Fitted) -> usize {
        (0..f.grid.headers.len())
            .map(|i| {
                cells(&f.grid, i)
                    .flat_map(str::lines)
                    .map(chars)
                    .chain(std::iter::once(chars(f.grid.headers[i])))
                    .max()
                    .unwrap_or(0)
            })
            .sum::<usize>()
            + borders(f.grid.headers.len())
    }

    #[test]
    fn lines_break_at_word_boundaries_never_inside_a_frame_number() {
        assert_eq!(
            wrap("ak4_java_max_poll.pcap#25", 12),
            ["ak4_java_", "max_poll.", "pcap#25"]
        );
        assert_eq!(
            wrap("COORDINATOR_NOT_AVAILABLE", 14),
            ["COORDINATOR_", "NOT_AVAILABLE"]
        );
        assert_eq!(wrap("took 3.00 s then", 9), ["took", "3.00 s", "then"]);
        assert_eq!(wrap("11.02 s", 4), ["11.0", "2 s"]);
        assert_eq!(wrap("", 4), [""]);
    }

    #[test]
    fn numbers_keep_their_units_and_decimals() {
        assert_eq!(pieces("3.00 s"), ["3.00 s"]);
        assert_eq!(pieces("10 → 11"), ["10 → ", "11"]);
        assert_eq!(pieces("212 records"), ["212 ", "records"]);
        assert_eq!(pieces("a.pcap#12"), ["a.", "pcap#12"]);
        assert_eq!(pieces("x.log:46"), ["x.", "log:46"]);
        assert_eq!(
            pieces("consumer-orders-2 / 8a7b6c5d…"),
            ["consumer-", "orders-2 / ", "8a7b6c5d…"]
        );
    }

    #[test]
    fn a_table_with_no_rows_calls_no_column_empty() {
        let g = grid(
            vec![
                "started", "group", "gen", "took", "trigger", "member", "evidence",
            ],
            &[],
        );
        let f = fit(&g, 20);
        assert!(
            f.notes.iter().all(|n| !n.contains("(empty)")),
            "{:?}",
            f.notes
        );
    }

    #[test]
    fn notes_wrap_at_spaces() {
        assert_eq!(
            note_lines(
                "(hidden to fit 20 columns: a, b; --wide shows everything)",
                20
            ),
            [
                "(hidden to fit 20",
                "columns: a, b;",
                "--wide shows",
                "everything)"
            ]
        );
    }

    #[test]
    fn a_grid_that_fits_is_left_alone() {
        let g = grid(vec!["group", "trigger"], &[&["g1", "member_joined"]]);
        let f = fit(&g, 80);
        assert_eq!(f.grid, g);
        assert!(f.notes.is_empty());
    }

    #[test]
    fn shared_file_names_become_an_ellipsis_with_a_note_only_when_needed() {
        let g = grid(
            vec!["time", "group", "kind", "detail", "evidence"],
            &[
                &[
                    "12:00:00.000001",
                    "g1",
                    "JoinGroup request",
                    "member=consumer-1-abc generation=3 protocol=range",
                    "lab/ak4_java_max_poll.pcap#25",
                ],
                &[
                    "12:00:01.000001",
                    "g2",
                    "broker: Stabilized",
                    "generation 4",
                    "lab/ak4_java_max_poll.server.log:46",
                ],
            ],
        );
        let f = fit(&g, 70);
        assert!(widest(&f) <= 70, "{f:?}");
        assert_eq!(f.notes, ["(evidence: … stands for ak4_java_max_poll.)"]);
        assert_eq!(f.grid.rows[0][4].text, "…pcap#25");
        assert_eq!(f.grid.rows[1][4].text, "…server.log:46");
        // Both rows in hour 12: the header says so (`time (12:…)`).
        assert_eq!(f.grid.rows[0][0].text, "00:00.000");
        let roomy = fit(&g, 200);
        assert!(roomy.notes.is_empty());
        assert_eq!(roomy.grid.rows[0][4].text, "lab/ak4_java_max_poll.pcap#25");
    }

    #[test]
    fn droppable_columns_go_first_then_the_rightmost_never_group_or_trigger() {
        let g = grid(
            vec!["time", "group", "trigger", "confidence", "member", "notes"],
            &[&[
                "12:00:00.000",
                "orders-app",
                "previous_rebalance_failed",
                "medium",
                "consumer-orders-app-1 / 0a1b2c3d…",
                "a long note that goes on",
            ]],
        )
        .droppable(&["confidence", "group"]);
        let f = fit(&g, 60);
        assert!(widest(&f) <= 60, "{f:?}");
        assert_eq!(f.grid.headers[..3], ["time", "group", "trigger"]);
        assert!(f.notes[0].starts_with("(hidden to fit 60 columns: confidence"));
        assert!(f.notes[0].ends_with("--wide shows everything)"));
    }

    #[test]
    fn times_lose_their_microseconds_and_evidence_its_directory() {
        assert_eq!(millis("12:00:03.123456").as_deref(), Some("12:00:03.123"));
        assert_eq!(millis("12:00:03").as_deref(), None);
        assert_eq!(file_name("lab/x.pcap#12").as_deref(), Some("x.pcap#12"));
    }

    #[test]
    fn times_keep_only_what_differs_and_the_header_says_the_rest() {
        let rows: &[&[&str]] = &[
            &[
                "2026-12-03 16:34:40.886995",
                "g1",
                "member_joined",
                "a long member label here",
            ],
            &[
                "2026-12-03 16:35:04.458661",
                "g2",
                "poll_timeout",
                "another long member label",
            ],
            &["–", "g2", "unknown", ""],
        ];
        let g = grid(vec!["started", "group", "trigger", "member"], rows);
        let f = fit(&g, 60);
        assert_eq!(f.grid.rows[0][0].text, "34:40.886", "{f:?}");
        assert_eq!(f.grid.rows[1][0].text, "35:04.458");
        assert_eq!(f.grid.rows[2][0].text, "–");
        assert_eq!(f.headers[0].replace('\n', " "), "started (2026-12-03 16:…)");
        // Only as far as needed: roomy, the time stays whole.
        let roomy = fit(&g, 200);
        assert_eq!(roomy.grid.rows[0][0].text, "2026-12-03 16:34:40.886995");
        assert_eq!(roomy.headers[0], "started");
        // Another hour in one row: only the shared date moves up.
        let hours: &[&[&str]] = &[
            &[
                "2026-12-03 16:59:59.000001",
                "g1",
                "member_joined",
                "a long member label here",
            ],
            &[
                "2026-12-03 17:00:00.000001",
                "g1",
                "member_left",
                "a long member label here",
            ],
        ];
        let f = fit(
            &grid(vec!["started", "group", "trigger", "member"], hours),
            60,
        );
        assert_eq!(f.grid.rows[1][0].text, "17:00:00.000", "{f:?}");
        assert_eq!(f.headers[0].replace('\n', " "), "started (2026-12-03)");
        // Other days, or clocks alone of other hours: nothing to move up.
        assert_eq!(split_time("16:34:40.886"), Some(("", "16:34:40.886")));
        assert_eq!(split_time("soon"), None);
        assert_eq!(split_time("2026-12-0x 16:34:40"), None);
    }

    #[test]
    fn the_shared_start_ends_at_a_word_boundary() {
        assert_eq!(shared_start(&["a.pcap", "a.pcap"]), Some("a.pcap"));
        assert_eq!(
            shared_start(&["ab_cd.pcap", "ab_cd.server.log"]),
            Some("ab_cd.")
        );
        assert_eq!(shared_start(&["abc.pcap", "abd.pcap"]), None);
    }
}
