//! The shapes of a timeline picture's marks.
//!
//! Takes: a timeline entry's `mark` (`join`, `sync`, `heartbeat`,
//! `heartbeat_failed`, `leave`, `commit`, `coordinator`, `state`, `close`,
//! `other`) and a position. Gives: SVG elements. Shapes differ as well as
//! colours, so the picture still reads in greyscale print.

use std::fmt::Write as _;

/// Colour of the members' presence line and of the lane stripes; the
/// screenshot test looks for these.
pub(crate) const LANE_STRIPE: &str = "#eef2f8";
/// See [`LANE_STRIPE`].
pub(crate) const PRESENCE: &str = "#b4c4dc";
/// Parked JoinGroup bars.
pub(crate) const PARKED: &str = "#3f7fd0";

/// Every mark kind with its legend word, in legend order.
pub(crate) const LEGEND: [(&str, &str); 8] = [
    ("join", "JoinGroup"),
    ("sync", "SyncGroup / assignment"),
    ("heartbeat", "heartbeat"),
    ("heartbeat_failed", "heartbeat error"),
    ("leave", "leave / removed"),
    ("close", "connection closed"),
    ("commit", "offset commit"),
    ("state", "broker log"),
];

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
    fn every_legend_kind_has_its_own_shape() {
        let mut shapes: Vec<String> = LEGEND.iter().map(|(k, _)| shape(k, 10.0, 10.0)).collect();
        shapes.sort();
        shapes.dedup();
        assert_eq!(shapes.len(), LEGEND.len());
    }

    #[test]
    fn unknown_kinds_get_a_neutral_dot() {
        assert!(shape("whatever", 1.0, 2.0).starts_with("<circle"));
    }
}
