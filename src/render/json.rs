//! The `json` and `ndjson` formats, documented.
//!
//! Takes: a view of a [`Report`]. Gives: one pretty JSON document followed by
//! a newline. Field names and meanings are those of [`crate::report`]; every
//! field is always present (absent values are `null`) except `frame` and
//! `line` in evidence and timeline entries, of which exactly the one that
//! applies is written. Times are RFC 3339 strings in UTC with microseconds;
//! durations are milliseconds as numbers. `format_version` changes whenever a
//! field changes incompatibly.
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

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use crate::report::Report;

use super::View;

/// Writes `view` as one pretty JSON document and a newline.
pub(super) fn write(report: &Report, view: View, out: &mut dyn Write) -> io::Result<()> {
    let mut out = &mut *out;
    match view {
        View::Report => to_writer(&mut out, report, true)?,
        _ => to_writer(&mut out, &Envelope { report, view }, true)?,
    }
    writeln!(out)
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
        // character-by-character search (2.4 % of a dense capture's run).
        if fragment.bytes().all(|b| (0x20..0x7f).contains(&b)) {
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

/// The envelope around one view's list.
struct Envelope<'a> {
    report: &'a Report,
    view: View,
}

impl Serialize for Envelope<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.report;
        let mut map = s.serialize_map(Some(8))?;
        map.serialize_entry("format_version", &r.format_version)?;
        map.serialize_entry("inputs", &r.inputs)?;
        map.serialize_entry("log_time_zone", &r.log_time_zone)?;
        match self.view {
            View::Timeline => map.serialize_entry("timeline", &r.timeline)?,
            View::Rebalances => map.serialize_entry("rebalances", &r.rebalances)?,
            View::Groups => map.serialize_entry("groups", &r.groups)?,
            View::Decode => map.serialize_entry("exchanges", &r.exchanges)?,
            // Never reached: `write` serialises the whole report itself.
            View::Report => map.serialize_entry("rebalances", &r.rebalances)?,
        }
        map.serialize_entry("diagnostics", &r.diagnostics)?;
        map.serialize_entry("diagnostic_counts", &r.diagnostic_counts)?;
        map.serialize_entry("worst_stop", &r.worst_stop)?;
        map.serialize_entry("stops_without_rebalance", &r.stops_without_rebalance)?;
        map.end()
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
}
