//! The shapes of a timeline picture's marks.
//!
//! Takes: a timeline entry's `mark` (`join`, `sync`, `heartbeat`,
//! `heartbeat_failed`, `leave`, `commit`, `coordinator`, `state`, `close`,
//! `other`) and a position. Gives: SVG elements, and the legend's word
//! for each mark as drawn ([`legend_word`]). Shapes differ as well as
//! colours, so the picture still reads in greyscale print.

use std::fmt::Write as _;

/// Colour of the members' presence line and of the lane stripes; the
/// screenshot test looks for these.
pub(crate) const LANE_STRIPE: &str = "#eef2f8";
/// See [`LANE_STRIPE`].
pub(crate) const PRESENCE: &str = "#b4c4dc";
/// Partition-stop bars; the screenshot test looks for this colour.
pub(crate) const STOP_BAR: &str = "#8a4b2a";
/// Stripe of a stopped partition's row.
pub(crate) const STOP_STRIPE: &str = "#fbf3ee";
/// Parked JoinGroup bars.
pub(crate) const PARKED: &str = "#3f7fd0";

/// The mark kinds with a shape of their own, in legend order; `coordinator`
/// is drawn as `state` (a hollow diamond) and anything else as `other`.
pub(crate) const SHAPES: [&str; 9] = [
    "join",
    "sync",
    "heartbeat",
    "heartbeat_failed",
    "leave",
    "close",
    "commit",
    "state",
    "other",
];

/// The legend entry `mark` is drawn under (one of [`SHAPES`]).
pub(crate) fn shape_of(mark: &str) -> &'static str {
    match mark {
        "coordinator" => "state",
        m => SHAPES.iter().copied().find(|s| *s == m).unwrap_or("other"),
    }
}

/// What a mark of `mark` stands for in the legend, given the timeline
/// entry's `kind` (`FindCoordinator request`, `broker: GroupEmpty`, …) and
/// whether it came from a log (it has a line, not a frame): the hollow
/// diamond is a log line in one report and a FindCoordinator or
/// DescribeGroups exchange in a capture-only one, and the legend names what
/// was drawn (src/describe.rs assigns the marks).
pub(crate) fn legend_word(mark: &str, kind: &str, from_log: bool) -> &'static str {
    let named = |word: &str| kind.contains(word);
    let client = kind.starts_with("client: ");
    match (mark, from_log) {
        ("join", _) => "JoinGroup",
        ("sync", _) => "SyncGroup / assignment",
        ("heartbeat", _) => "heartbeat",
        ("heartbeat_failed", true) if named("MemberFenced") => "broker log: member fenced",
        ("heartbeat_failed", _) => "heartbeat error",
        ("leave", _) => "leave / removed",
        ("close", _) => "connection closed",
        ("commit", _) if named("OffsetFetch") => "OffsetFetch",
        ("commit", true) if named("OffsetsExpired") => "broker log: offsets expired",
        ("commit", _) => "offset commit",
        ("state", true) if client => "client log: member state",
        ("state", true) => "broker log: group state",
        ("state", false) => "DescribeGroups / ListGroups",
        ("coordinator", true) => "broker log: coordinator load",
        ("coordinator", false) => "FindCoordinator",
        (_, true) => "other log line",
        (_, false) => "other event",
    }
}

/// The shape of `kind` centred on (`x`, `y`).
pub(crate) fn shape(kind: &str, x: f64, y: f64) -> String {
    let mut s = String::new();
    // Writing into a String cannot fail.
    let _ = match kind {
        "join" => write!(
            s,
            r##"<path d="M{:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}Z" fill="#2f6fb3"/>"##,
            x - 5.0,
            y - 6.5,
            x + 6.0,
            y,
            x - 5.0,
            y + 6.5
        ),
        "sync" => write!(
            s,
            r##"<path d="M{x:.1} {:.1}L{:.1} {y:.1}L{x:.1} {:.1}L{:.1} {y:.1}Z" fill="#2e9e48"/>"##,
            y - 6.0,
            x + 6.0,
            y + 6.0,
            x - 6.0
        ),
        "heartbeat" => write!(
            s,
            r##"<circle cx="{x:.1}" cy="{y:.1}" r="2.2" fill="#7d8a9c"/>"##
        ),
        "heartbeat_failed" => write!(
            s,
            r##"<path d="M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}" stroke="#d0312d" stroke-width="2.6" stroke-linecap="round"/>"##,
            x - 4.5,
            y - 4.5,
            x + 4.5,
            y + 4.5,
            x - 4.5,
            y + 4.5,
            x + 4.5,
            y - 4.5
        ),
        "leave" => write!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="10" height="10" fill="#e07b00"/>"##,
            x - 5.0,
            y - 5.0
        ),
        "close" => write!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="3" height="20" fill="#2b2f36"/>"##,
            x - 1.5,
            y - 10.0
        ),
        "commit" => write!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="2.4" height="9" fill="#8c6bb1"/>"##,
            x - 1.2,
            y - 4.5
        ),
        "state" | "coordinator" => write!(
            s,
            r##"<path d="M{x:.1} {:.1}L{:.1} {y:.1}L{x:.1} {:.1}L{:.1} {y:.1}Z" fill="none" stroke="#4a5260" stroke-width="1.8"/>"##,
            y - 5.0,
            x + 5.0,
            y + 5.0,
            x - 5.0
        ),
        _ => write!(
            s,
            r##"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="#a9b1bc"/>"##
        ),
    };
    s
}

/// A red ring around a mark that carried a Kafka error.
pub(crate) fn error_ring(x: f64, y: f64) -> String {
    format!(
        r##"<circle cx="{x:.1}" cy="{y:.1}" r="8" fill="none" stroke="#d0312d" stroke-width="1.4"/>"##
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_legend_shape_is_its_own() {
        let mut shapes: Vec<String> = SHAPES.iter().map(|k| shape(k, 10.0, 10.0)).collect();
        shapes.sort();
        shapes.dedup();
        assert_eq!(shapes.len(), SHAPES.len());
        assert_eq!(shape("coordinator", 1.0, 1.0), shape("state", 1.0, 1.0));
        assert_eq!(shape_of("coordinator"), "state");
        assert_eq!(shape_of("bogus"), "other");
    }

    #[test]
    fn the_hollow_diamond_is_named_for_what_it_marks() {
        assert_eq!(
            legend_word("coordinator", "FindCoordinator request", false),
            "FindCoordinator"
        );
        assert_eq!(
            legend_word("state", "broker: PreparingRebalance", true),
            "broker log: group state"
        );
        assert_eq!(
            legend_word("state", "DescribeGroups response", false),
            "DescribeGroups / ListGroups"
        );
    }

    #[test]
    fn unknown_kinds_get_a_neutral_dot() {
        assert!(shape("whatever", 1.0, 2.0).starts_with("<circle"));
    }
}
