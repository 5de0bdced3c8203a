//! CSV exports of log records (Kibana's "Share → CSV", Elasticsearch SQL or
//! Loki/Grafana table downloads): a header row naming the columns, then one
//! record per row, fields quoted RFC 4180 style (embedded commas, newlines
//! and doubled quotes).
//!
//! Takes: the physical lines of one input, in order. Gives: for each
//! complete record, the log line it carries rebuilt as a plain line — the
//! message, preceded by the record's own time (`@timestamp`, `timestamp`,
//! `time`) when the message has none — and the message's further lines
//! (a stack trace, a multi-line client entry) as continuation lines.
//! Deliberately does not interpret messages: that stays with the layout
//! and message readers.

use super::layout::starts_with_time_after_decoration;

/// Bytes kept per record; a longer record is dropped (its quotes are
/// still counted, so the rows after it stay aligned).
const MAX_RECORD: usize = 1 << 20;

/// Columns read from a header; more are allowed but not split further.
const MAX_COLUMNS: usize = 4096;

/// Column names that hold the log line, most specific first.
const MESSAGE_COLUMNS: [&str; 6] = ["message", "log", "event.original", "line", "msg", "MESSAGE"];

/// Column names that hold the record's own time.
const TIME_COLUMNS: [&str; 4] = ["@timestamp", "timestamp", "time", "_time"];

/// A CSV export being read: which columns matter and the record so far.
#[derive(Debug)]
pub(crate) struct CsvExport {
    message: usize,
    time: Option<usize>,
    record: Vec<u8>,
    /// Whether the record so far ends inside a quoted field.
    open_quote: bool,
    /// Whether the record outgrew [`MAX_RECORD`] and is being skipped.
    dropped: bool,
}

impl CsvExport {
    /// The export whose header row is `line`, if it is one: comma
    /// separated column names, one of them a message column.
    pub(crate) fn from_header(line: &[u8]) -> Option<CsvExport> {
        let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
        let text = std::str::from_utf8(line).ok()?;
        if !text.contains(',') {
            return None;
        }
        let names = fields(text.as_bytes());
        if names.len() > MAX_COLUMNS || !names.iter().all(|n| is_column_name(n)) {
            return None;
        }
        let find = |wanted: &[&str]| {
            wanted
                .iter()
                .find_map(|w| names.iter().position(|n| n.trim() == *w))
        };
        Some(CsvExport {
            message: find(&MESSAGE_COLUMNS)?,
            time: find(&TIME_COLUMNS),
            record: Vec::new(),
            open_quote: false,
            dropped: false,
        })
    }

    /// Adds one physical line (newline stripped); once a record is
    /// complete, gives its log lines (empty for a row without a message).
    pub(crate) fn line(&mut self, line: &[u8]) -> Option<Vec<String>> {
        if !self.record.is_empty() || self.open_quote {
            self.push(b"\n");
        }
        self.push(line);
        let quotes = memchr::memchr_iter(b'"', line).count();
        if quotes % 2 == 1 {
            self.open_quote = !self.open_quote;
        }
        if self.open_quote {
            return None;
        }
        let record = std::mem::take(&mut self.record);
        let dropped = std::mem::replace(&mut self.dropped, false);
        if dropped || record.is_empty() {
            return Some(Vec::new());
        }
        Some(self.lines_of(&record))
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.record.len() + bytes.len() > MAX_RECORD {
            self.dropped = true;
            self.record.clear();
        }
        if !self.dropped {
            self.record.extend_from_slice(bytes);
        }
    }

    fn lines_of(&self, record: &[u8]) -> Vec<String> {
        let row = fields(record);
        let Some(message) = row.get(self.message) else {
            return Vec::new();
        };
        let mut lines = message.lines();
        let Some(first) = lines.next().map(str::trim_end) else {
            return Vec::new();
        };
        let head = if starts_with_time_after_decoration(first.as_bytes()) {
            first.to_string()
        } else {
            match self
                .time
                .and_then(|t| row.get(t))
                .and_then(|t| record_time(t))
            {
                Some(time) => format!("{time} {first}"),
                None => first.to_string(),
            }
        };
        std::iter::once(head)
            .chain(lines.map(str::to_string))
            .collect()
    }
}

/// A header cell: a field name (letters, digits, `@._-` and spaces).
fn is_column_name(n: &str) -> bool {
    let n = n.trim();
    !n.is_empty()
        && n.len() <= 128
        && n.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '@' | '.' | '_' | '-' | ' '))
}

/// The fields of one CSV record (RFC 4180: `"…"` quoting, `""` for a quote
/// inside; unquoted fields taken as they are). Invalid UTF-8 is replaced.
fn fields(record: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = Vec::new();
    let mut quoted = false;
    let mut i = 0;
    while i < record.len() {
        let b = record[i];
        match (quoted, b) {
            (true, b'"') if record.get(i + 1) == Some(&b'"') => {
                field.push(b'"');
                i += 1;
            }
            (true, b'"') => quoted = false,
            (false, b'"') => quoted = true,
            (false, b',') => out.push(String::from_utf8_lossy(&std::mem::take(&mut field)).into()),
            (false, b'\r') if record.get(i + 1).is_none() => {}
            _ => field.push(b),
        }
        i += 1;
    }
    out.push(String::from_utf8_lossy(&field).into());
    out
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// A record's time as text the layout reader takes: ISO 8601 as it is;
/// Kibana's default display format (`Dec 3, 2026 @ 02:35:41.496`, in the
/// exporting browser's zone, so zone-less like a log4j time) rewritten to
/// `2026-12-03 02:35:41.496`; milliseconds since the epoch as UTC.
fn record_time(t: &str) -> Option<String> {
    let t = t.trim();
    if t.as_bytes().first().is_some_and(u8::is_ascii_digit) && t.contains('-') {
        return Some(t.to_string());
    }
    if !t.is_empty() && t.len() <= 16 && t.bytes().all(|b| b.is_ascii_digit()) {
        let ms: i64 = t.parse().ok()?;
        return Some(crate::time::Timestamp(ms.checked_mul(1_000_000)?).to_string());
    }
    kibana_time(t)
}

/// `Dec 3, 2026 @ 02:35:41.496` → `2026-12-03 02:35:41.496`.
fn kibana_time(t: &str) -> Option<String> {
    let (date, clock) = t.split_once(" @ ")?;
    let (month_day, year) = date.split_once(", ")?;
    let (month, day) = month_day.split_once(' ')?;
    let month = MONTHS.iter().position(|m| *m == month)? + 1;
    let day: u8 = day.trim().parse().ok()?;
    let year: u16 = year.trim().parse().ok()?;
    let clock = clock.trim();
    if !clock.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    Some(format!("{year:04}-{month:02}-{day:02} {clock}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kibana_header_names_the_message_and_time_columns() {
        let csv = CsvExport::from_header(b"\"@timestamp\",\"log.level\",message").unwrap();
        assert_eq!((csv.message, csv.time), (2, Some(0)));
        assert!(CsvExport::from_header(b"[2026-12-03 02:35:41,496] INFO a, b").is_none());
        assert!(CsvExport::from_header(b"time,level").is_none());
    }

    #[test]
    fn quoted_fields_keep_commas_newlines_and_doubled_quotes() {
        let mut csv = CsvExport::from_header(b"\"@timestamp\",message").unwrap();
        assert_eq!(
            csv.line(b"\"Dec 3, 2026 @ 02:35:41.496\",\"a, \"\"b\"\""),
            None
        );
        assert!(csv.open_quote);
        let lines = csv.line(b"second line\"").unwrap();
        assert_eq!(
            lines,
            vec![
                "2026-12-03 02:35:41.496 a, \"b\"".to_string(),
                "second line".to_string()
            ]
        );
        assert!(!csv.open_quote);
    }

    #[test]
    fn a_message_with_its_own_time_is_kept_as_it_is() {
        let mut csv = CsvExport::from_header(b"@timestamp,message").unwrap();
        let lines = csv
            .line(b"2026-12-03T02:35:41.496Z,\"[2026-12-03 02:35:41,496] INFO x\"")
            .unwrap();
        assert_eq!(lines, vec!["[2026-12-03 02:35:41,496] INFO x".to_string()]);
        let lines = csv.line(b"1764729341496,INFO y").unwrap();
        assert_eq!(lines.len(), 1);
        assert!(lines[0].ends_with(" INFO y"), "{lines:?}");
        assert!(lines[0].starts_with("20"), "{lines:?}");
    }

    #[test]
    fn an_endless_record_is_dropped_without_holding_it() {
        let mut csv = CsvExport::from_header(b"@timestamp,message").unwrap();
        assert_eq!(csv.line(b"x,\"open"), None);
        let long = vec![b'a'; 1 << 16];
        for _ in 0..40 {
            assert_eq!(csv.line(&long), None);
        }
        assert!(csv.record.len() <= MAX_RECORD);
        assert_eq!(csv.line(b"\""), Some(Vec::new()));
    }
}
