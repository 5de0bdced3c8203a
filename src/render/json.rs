//! The `json` and `ndjson` formats, documented.
//!
//! Takes: a view of a [`Report`] (or, through `Document`, its parts
//! before its list, the list's items one by one, its parts after). Gives:
//! one pretty JSON document followed by a newline. Field names and
//! meanings are those of [`crate::report`]; every field is always present
//! (absent values are `null`) except `frame` and `line` in evidence and
//! timeline entries, of which exactly the one that applies is written.
//! Times are RFC 3339 strings in UTC with microseconds; durations are
//! milliseconds as numbers. `format_version` changes whenever a field
//! changes incompatibly.
//!
//! # The envelope
//!
//! `timeline`, `rebalances`, `groups` and `decode` write the same envelope
//! around their one list: `format_version`, `inputs`, `log_time_zone`, then
//! the list under its name (`timeline`, `rebalances`, `groups` or
//! `exchanges`), then `diagnostics` (the first examples of each kind) and
//! `diagnostic_counts` (all of them, counted). `report` writes every field of
//! the [`Report`]: the same keys with `groups`, `rebalances`, `timeline` and
//! `exchanges` all present.
//!
//! `kgtrace rebalances --format json` on a capture with one rebalance
//! (lists shortened with `…`):
//!
//! ```json
//! {
//!   "format_version": 1,
//!   "inputs": [
//!     {
//!       "path": "lab/broker-1.pcap",
//!       "kind": "capture",
//!       "records": 48213,
//!       "bytes": 9812344,
//!       "events": 612,
//!       "first_ts": "2024-05-01T12:00:00.000000Z",
//!       "last_ts": "2024-05-01T12:04:30.000000Z",
//!       "clock_offset_ms": null
//!     }
//!   ],
//!   "log_time_zone": "UTC",
//!   "rebalances": [
//!     {
//!       "group": "orders-service",
//!       "protocol": "classic",
//!       "previous_generation": 6,
//!       "generation": 7,
//!       "started_at": "2024-05-01T12:03:10.020000Z",
//!       "join_completed_at": "2024-05-01T12:03:10.240000Z",
//!       "completed_at": "2024-05-01T12:03:10.285000Z",
//!       "duration_ms": 265.0,
//!       "trigger": {
//!         "kind": "session_timeout",
//!         "member_id": "consumer-orders-2-8a7b6c5d-1e2f-4a3b-8c9d-0e1f2a3b4c5d",
//!         "client_id": "consumer-orders-2",
//!         "detail": "no Heartbeat from consumer-orders-2 for 45.0 s (session.timeout.ms 45000)",
//!         "confidence": "high"
//!       },
//!       "other_triggers": [],
//!       "expected": false,
//!       "expected_reason": null,
//!       "storm": false,
//!       "members_before": [ … ],
//!       "members_after": [ … ],
//!       "joins": [
//!         {
//!           "member_id": "consumer-orders-1-3f1e7c2a-0d9b-4c8e-9a55-6c1d2e3f4a5b",
//!           "client_id": "consumer-orders-1",
//!           "requested_at": "2024-05-01T12:03:10.110000Z",
//!           "parked_ms": 130.0,
//!           "after_start_ms": 90.0
//!         }
//!       ],
//!       "straggler": null,
//!       "removed": [
//!         {
//!           "member_id": "consumer-orders-2-8a7b6c5d-1e2f-4a3b-8c9d-0e1f2a3b4c5d",
//!           "client_id": "consumer-orders-2",
//!           "how": "session_timeout"
//!         }
//!       ],
//!       "partitions_revoked": ["orders-3", "orders-4"],
//!       "partitions_assigned": ["orders-3", "orders-4"],
//!       "evidence": [
//!         {
//!           "source": "lab/broker-1.pcap",
//!           "frame": 11204,
//!           "ts": "2024-05-01T12:03:10.240000Z",
//!           "text": "JoinGroup v9 response generation 7"
//!         }
//!       ],
//!       "seen_in": ["capture"],
//!       "notes": []
//!     }
//!   ],
//!   "diagnostics": [
//!     {
//!       "kind": "mid_stream_start",
//!       "source": "lab/broker-1.pcap",
//!       "at": "frame 1",
//!       "detail": "10.0.0.21:50122 -> 10.0.0.11:9092 picked up without its SYN"
//!     }
//!   ],
//!   "diagnostic_counts": [
//!     { "kind": "mid_stream_start", "count": 3 }
//!   ]
//! }
//! ```
//!
//! # NDJSON
//!
//! `--format ndjson` writes the view's list only, one compact object per
//! line, with the same fields as the list's items above: one timeline entry,
//! rebalance, group or exchange (`decode`) per line, and nothing else. For
//! `report`, which has several lists, each line is tagged instead, as
//! ripgrep's JSON Lines are: `{"type":"input","data":{…}}`, then `group`,
//! `rebalance`, `event` (timeline entries), `exchange`, `diagnostic` and
//! `diagnostic_count` lines, in that order.

use std::io::{self, Write};

use serde::Serialize;

use crate::report::Report;

use super::View;

/// Writes `view` as one pretty JSON document and a newline.
pub(super) fn write(report: &Report, view: View, out: &mut dyn Write) -> io::Result<()> {
    let mut doc = Document::begin(report, view, out)?;
    match view {
        View::Timeline | View::Report => doc.items(&report.timeline)?,
        View::Rebalances => doc.items(&report.rebalances)?,
        View::Groups => doc.items(&report.groups)?,
        View::Decode => doc.items(&report.exchanges)?,
    }
    doc.end(report)
}

/// One view's document, written as serde_json's pretty printer writes it
/// whole, but in three steps: the fields before the view's list, the
/// list's items one by one, the fields after. The time line's items can
/// so be written as they are matched ([`super::ListedEvents`]): a long
/// capture's events are not first gathered as entries, hundreds of bytes
/// each. The fields come in the order of [`Report`]'s own (for `report`,
/// every one of them; for the other views, the envelope's).
pub(super) struct Document<'a> {
    out: &'a mut dyn Write,
    view: View,
    items: u64,
}

impl<'a> Document<'a> {
    /// Writes the fields before `view`'s list (of `head`: only those are
    /// read) and opens the list.
    pub(super) fn begin(head: &Report, view: View, out: &'a mut dyn Write) -> io::Result<Self> {
        out.write_all(b"{")?;
        let mut doc = Document {
            out,
            view,
            items: 0,
        };
        doc.field("format_version", &head.format_version, true)?;
        doc.field("inputs", &head.inputs, false)?;
        doc.field("log_time_zone", &head.log_time_zone, false)?;
        if view == View::Report {
            doc.field("groups", &head.groups, false)?;
            doc.field("rebalances", &head.rebalances, false)?;
        }
        doc.key(list_name(view), false)?;
        doc.out.write_all(b"[").map(|()| doc)
    }

    /// Writes the list's next item.
    pub(super) fn item<T: Serialize + ?Sized>(&mut self, item: &T) -> io::Result<()> {
        self.open_item()?;
        // One item's text at a time: a field may be a whole list.
        in_one_write(self.out, |text| nested(text, item, ITEM_INDENT))
    }

    /// Writes `items` as the list's next items, a long list rendered on
    /// every core ([`super::rendered`]).
    fn items<T: Serialize + Sync>(&mut self, items: &[T]) -> io::Result<()> {
        super::rendered::each_rendered(
            items,
            |item, text| nested(text, item, ITEM_INDENT),
            |text| {
                self.open_item()?;
                self.out.write_all(text)
            },
        )
    }

    /// What comes before an item: the separator and the item's indent.
    fn open_item(&mut self) -> io::Result<()> {
        let before: &[u8] = if self.items == 0 { b"\n" } else { b",\n" };
        self.out.write_all(before)?;
        self.out.write_all(ITEM_INDENT)?;
        self.items += 1;
        Ok(())
    }

    /// Closes the list and writes the fields after it (of `tail`: only
    /// those are read) and the closing newline.
    pub(super) fn end(mut self, tail: &Report) -> io::Result<()> {
        if self.items > 0 {
            self.out.write_all(b"\n")?;
            self.out.write_all(FIELD_INDENT)?;
        }
        self.out.write_all(b"]")?;
        if self.view == View::Report {
            self.field("exchanges", &tail.exchanges, false)?;
        }
        self.field("diagnostics", &tail.diagnostics, false)?;
        self.field("diagnostic_counts", &tail.diagnostic_counts, false)?;
        self.field("worst_stop", &tail.worst_stop, false)?;
        self.field(
            "stops_without_rebalance",
            &tail.stops_without_rebalance,
            false,
        )?;
        self.out.write_all(b"\n}\n")
    }

    fn field<T: Serialize + ?Sized>(
        &mut self,
        key: &str,
        value: &T,
        first: bool,
    ) -> io::Result<()> {
        self.key(key, first)?;
        nested(&mut self.out, value, FIELD_INDENT)
    }

    /// `"key": ` on a line of its own. The keys are plain names (no
    /// character JSON escapes).
    fn key(&mut self, key: &str, first: bool) -> io::Result<()> {
        let before: &[u8] = if first { b"\n" } else { b",\n" };
        self.out.write_all(before)?;
        self.out.write_all(FIELD_INDENT)?;
        write!(self.out, "\"{key}\": ")
    }
}

/// The indent of the document's fields, and of its list's items.
const FIELD_INDENT: &[u8] = b"  ";
const ITEM_INDENT: &[u8] = b"    ";

/// The name `view`'s list goes under (the report's own list is its events).
fn list_name(view: View) -> &'static str {
    match view {
        View::Timeline | View::Report => "timeline",
        View::Rebalances => "rebalances",
        View::Groups => "groups",
        View::Decode => "exchanges",
    }
}

/// `value` pretty, as it would be written `indent` deep into a document:
/// every line after its first indented by `indent` more.
fn nested<W: Write + ?Sized, T: Serialize + ?Sized>(
    out: &mut W,
    value: &T,
    indent: &'static [u8],
) -> io::Result<()> {
    let f = Visible(Nested(serde_json::ser::PrettyFormatter::new(), indent));
    value
        .serialize(&mut serde_json::Serializer::with_formatter(out, f))
        .map_err(io::Error::from)
}

/// What `write` writes, handed to `out` in one write: serde_json writes a
/// value in many small pieces, and each through `dyn Write` was a call
/// into the writer (a fifth of writing `--stream`'s rows). The text is
/// made in this thread's scratch.
pub(super) fn in_one_write(
    out: &mut dyn Write,
    write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>,
) -> io::Result<()> {
    SCRATCH.with_borrow_mut(|text| {
        text.clear();
        write(text)?;
        let written = out.write_all(text);
        // A record of thousands of members is not kept room for.
        if text.capacity() > MAX_KEPT_SCRATCH {
            *text = Vec::new();
        }
        written
    })
}

/// The most room [`in_one_write`]'s scratch keeps between writes.
const MAX_KEPT_SCRATCH: usize = 1 << 20;

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// serde_json, with bidi controls in strings written as `\u202e` escapes
/// (serde_json escapes control characters itself but writes U+202E raw).
pub(crate) fn to_writer<W: Write, T: Serialize + ?Sized>(
    out: W,
    value: &T,
    pretty: bool,
) -> serde_json::Result<()> {
    if pretty {
        let f = Visible(serde_json::ser::PrettyFormatter::new());
        value.serialize(&mut serde_json::Serializer::with_formatter(out, f))
    } else {
        let f = Visible(serde_json::ser::CompactFormatter);
        value.serialize(&mut serde_json::Serializer::with_formatter(out, f))
    }
}

/// A formatter that escapes bidi controls and delegates the rest.
struct Visible<F>(F);

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $name<W: ?Sized + Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> io::Result<()> {
            self.0.$name(w $(, $arg)*)
        })*
    };
}

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for Visible<F> {
    delegate! {
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        end_object_key();
        begin_object_value();
        end_object_value();
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // Nearly every string is printable ASCII: one byte scan, not a
        // character-by-character search (2.4 % of a dense capture's run),
        // and the scan a smallest and largest byte, which the compiler
        // vectorises (a test per byte that may stop early it does not: a
        // tenth of writing `--stream`'s rows).
        let (low, high) = fragment
            .bytes()
            .fold((u8::MAX, 0), |(low, high), b| (low.min(b), high.max(b)));
        if low >= 0x20 && high < 0x7f {
            return w.write_all(fragment.as_bytes());
        }
        let mut rest = fragment;
        while let Some(at) = rest.find(|c: char| super::human::is_hidden(c)) {
            w.write_all(&rest.as_bytes()[..at])?;
            let c = rest[at..].chars().next().unwrap_or_default();
            write!(w, "\\u{:04x}", c as u32)?;
            rest = &rest[at + c.len_utf8()..];
        }
        w.write_all(rest.as_bytes())
    }
}

/// serde_json's pretty printer, with every line it begins indented by
/// `indent` more: a value written as it is inside a document.
struct Nested(serde_json::ser::PrettyFormatter<'static>, &'static [u8]);

/// Writes through to `w`, `indent` after every newline.
struct IndentAfterNewline<'w, W: ?Sized> {
    w: &'w mut W,
    indent: &'static [u8],
}

impl<W: ?Sized + Write> Write for IndentAfterNewline<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while let Some(at) = rest.iter().position(|b| *b == b'\n') {
            self.w.write_all(&rest[..=at])?;
            self.w.write_all(self.indent)?;
            rest = &rest[at + 1..];
        }
        self.w.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// The pretty printer's methods that begin a line, each given `w` behind
/// an [`IndentAfterNewline`].
macro_rules! indented {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $name<W: ?Sized + Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> io::Result<()> {
            let mut w = IndentAfterNewline { w, indent: self.1 };
            self.0.$name(&mut w $(, $arg)*)
        })*
    };
}

impl serde_json::ser::Formatter for Nested {
    indented! {
        end_array();
        begin_array_value(first: bool);
        end_object();
        begin_object_key(first: bool);
    }

    delegate! {
        begin_array();
        end_array_value();
        begin_object();
        end_object_key();
        begin_object_value();
        end_object_value();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;
    use serde_json::Value;

    fn parsed(view: View) -> Value {
        let mut out = Vec::new();
        write(&sample::incident(), view, &mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn each_view_puts_its_list_under_its_name_inside_the_envelope() {
        for (view, key) in [
            (View::Timeline, "timeline"),
            (View::Rebalances, "rebalances"),
            (View::Groups, "groups"),
            (View::Decode, "exchanges"),
        ] {
            let doc = parsed(view);
            let keys: Vec<&str> = doc
                .as_object()
                .unwrap()
                .keys()
                .map(|k| k.as_str())
                .collect();
            let mut expected = vec![
                "format_version",
                "inputs",
                "log_time_zone",
                key,
                "diagnostics",
                "diagnostic_counts",
                "worst_stop",
                "stops_without_rebalance",
            ];
            expected.sort();
            assert_eq!(keys, expected);
            assert!(doc[key].is_array());
        }
    }

    #[test]
    fn report_view_carries_every_list() {
        let doc = parsed(View::Report);
        for key in [
            "groups",
            "rebalances",
            "timeline",
            "exchanges",
            "diagnostic_counts",
        ] {
            assert!(doc[key].is_array(), "{key}");
        }
        assert_eq!(doc["format_version"], 1);
    }

    #[test]
    fn the_report_document_is_the_report_serialised_whole() {
        // The document names the report's fields itself, to write its
        // events between them: one the report gains and the document
        // lacks fails here.
        for (name, report) in sample::all() {
            let mut whole = Vec::new();
            to_writer(&mut whole, &report, true).unwrap();
            whole.push(b'\n');
            let mut doc = Vec::new();
            write(&report, View::Report, &mut doc).unwrap();
            assert_eq!(
                String::from_utf8(doc).unwrap(),
                String::from_utf8(whole).unwrap(),
                "{name}"
            );
        }
    }

    #[test]
    fn a_value_nested_in_the_document_is_indented_as_serde_json_indents_it() {
        #[derive(Serialize)]
        struct Inner {
            list: Vec<u8>,
            empty: Vec<u8>,
            none: Option<u8>,
            text: &'static str,
        }
        let inner = || Inner {
            list: vec![1, 2],
            empty: vec![],
            none: None,
            text: "a\nb\u{202e}",
        };
        #[derive(Serialize)]
        struct Outer {
            e: std::collections::BTreeMap<u8, u8>,
            k: [Inner; 2],
        }
        let whole = Outer {
            e: Default::default(),
            k: [inner(), inner()],
        };
        let mut want = Vec::new();
        to_writer(&mut want, &whole, true).unwrap();
        let mut got = b"{\n  \"e\": ".to_vec();
        nested(&mut got, &whole.e, FIELD_INDENT).unwrap();
        got.extend_from_slice(b",\n  \"k\": ");
        nested(&mut got, &[inner(), inner()], FIELD_INDENT).unwrap();
        got.extend_from_slice(b"\n}");
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(want).unwrap()
        );
    }

    #[test]
    fn evidence_names_a_frame_or_a_line_never_both() {
        let doc = parsed(View::Rebalances);
        let evidence = doc["rebalances"][0]["evidence"].as_array().unwrap();
        assert_eq!(evidence[0]["frame"], 4410);
        assert!(evidence[0].get("line").is_none());
        assert_eq!(evidence[1]["line"], 4120);
        assert!(evidence[1].get("frame").is_none());
    }

    #[test]
    fn hidden_characters_are_escaped_and_printable_text_is_written_as_is() {
        let mut out = Vec::new();
        let text = ["member-1 a→b", "x\u{202e}y\u{7f}z\u{85}", "tab\there"];
        to_writer(&mut out, &text, false).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"["member-1 a→b","x\u202ey\u007fz\u0085","tab\there"]"#
        );
    }

    #[test]
    fn a_long_value_is_written_whole_and_its_room_not_kept() {
        let long = "x".repeat(MAX_KEPT_SCRATCH + 1);
        let mut out = Vec::new();
        in_one_write(&mut out, |t| {
            to_writer(t, &long, false).map_err(io::Error::from)
        })
        .unwrap();
        assert_eq!(out.len(), long.len() + 2);
        assert_eq!(SCRATCH.with_borrow(Vec::capacity), 0);
        in_one_write(&mut out, |t| {
            to_writer(t, "short", false).map_err(io::Error::from)
        })
        .unwrap();
        assert!(SCRATCH.with_borrow(Vec::capacity) > 0);
    }
}
