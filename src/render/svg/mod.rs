//! The timeline picture of one group, as inline SVG.
//!
//! Takes: a [`crate::report::Report`] (its [`Index`]) and a group name. Gives: one `<svg>` element. On top,
//! the overview: a swimlane per member (label: client id and short member
//! id), a time axis with round UTC ticks, a mark per event (join, sync,
//! heartbeat, heartbeat error, leave, close, commit, broker log line),
//! JoinGroup requests parked at the broker as bars, and each rebalance as a
//! window shaded in its trigger family's colour and labelled with
//! generation, trigger and duration. Below it, each rebalance zoomed in (the
//! [`MAX_ZOOMS`] longest when there are more), because a three-second round
//! is a sliver on a day's axis. A legend closes the picture. Every mark has
//! a `<title>` tooltip (no script needed). Marks of one kind that fall on
//! the same pixel of a lane are drawn once, their tooltip counting the
//! rest, so a day of heartbeats stays a small file. Output is
//! deterministic: layout depends only on the report.

mod axis;
mod glyph;
mod model;
mod panel;

use std::io::{self, Write};

use super::doc::TriggerClass;
use super::escape::escape;
pub(crate) use model::Index;
use model::{Picture, Window};
use panel::{Panel, Scale};

const WIDTH: f64 = 1280.0;
const GUTTER: f64 = 250.0;
const RIGHT: f64 = 24.0;
const LANE_H: f64 = 30.0;
const ZOOM_LANE_H: f64 = 26.0;
const LEGEND_ROW: f64 = 20.0;
/// Average advance of an 11 px sans-serif character, for label layout.
const CHAR_W: f64 = 6.4;
/// Zoomed rebalances drawn per group at most.
pub(crate) const MAX_ZOOMS: usize = 6;

/// Writes the picture of `group`.
pub(crate) fn write(index: &Index<'_>, group: &str, out: &mut dyn Write) -> io::Result<()> {
    let picture = model::picture_in(index, group);
    let Some((first, last)) = picture.range else {
        return empty(group, out);
    };
    let mut body = String::new();
    let overview = Panel {
        lanes: picture.lanes.iter().collect(),
        scale: padded(first, last, 40),
        lane_h: LANE_H,
    };
    let mut y = panel::draw(&mut body, &overview, &picture.windows, 8.0);
    y = legend(&mut body, &picture, y + 8.0);
    for w in zoomed(&picture.windows) {
        if let Some(end) = zoom(&mut body, &picture, w, y + 14.0) {
            y = end;
        }
    }
    if picture.windows.len() > MAX_ZOOMS {
        let note = format!(
            "The {MAX_ZOOMS} longest of {} rebalances are zoomed in above.",
            picture.windows.len()
        );
        body.push_str(&format!(
            r##"<text x="8" y="{:.1}" fill="#5b6472">{note}</text>"##,
            y + 8.0
        ));
        y += 14.0;
    }
    let height = y + 8.0;
    let open = format!(
        r##"<svg viewBox="0 0 {WIDTH} {height:.0}" width="100%" role="img" aria-label="timeline of group {}" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="11">"##,
        escape(group)
    );
    writeln!(out, "{open}\n{body}</svg>")
}

/// The range `[first, last]` with a margin of 1/`part` of it on each side
/// (at least 200 ms), so marks at the ends are not cut in half.
fn padded(first: i64, last: i64, part: i64) -> Scale {
    let pad = (last.saturating_sub(first) / part).max(200_000_000);
    Scale {
        t0: first.saturating_sub(pad),
        t1: last.saturating_add(pad),
    }
}

/// The windows to zoom into, in start order: all of them, or the
/// [`MAX_ZOOMS`] longest (unfinished ones count as longest).
fn zoomed(windows: &[Window]) -> Vec<&Window> {
    let mut chosen: Vec<&Window> = windows.iter().collect();
    if chosen.len() > MAX_ZOOMS {
        chosen.sort_by_key(|w| {
            (
                std::cmp::Reverse((w.open, w.end.saturating_sub(w.start))),
                w.start,
            )
        });
        chosen.truncate(MAX_ZOOMS);
        chosen.sort_by_key(|w| (w.start, w.number));
    }
    chosen
}

/// One rebalance zoomed in, with the lanes active around it; nothing when
/// no lane has anything to show there.
fn zoom(svg: &mut String, picture: &Picture, w: &Window, top: f64) -> Option<f64> {
    let scale = padded(w.start, w.end, 6);
    let active = |t: i64| (scale.t0..=scale.t1).contains(&t);
    let lanes = picture
        .lanes
        .iter()
        .filter(|l| {
            l.marks.iter().any(|m| active(m.ts))
                || l.parked
                    .iter()
                    .any(|(s, e)| *e >= scale.t0 && *s <= scale.t1)
        })
        .collect::<Vec<_>>();
    if lanes.is_empty() {
        return None;
    }
    svg.push_str(&format!(
        r##"<line x1="0" y1="{top:.1}" x2="{WIDTH}" y2="{top:.1}" stroke="#d5dbe4"/><text x="8" y="{:.1}" font-size="12" font-weight="bold" fill="#1f2630">Rebalance {} zoomed in</text>"##,
        top + 18.0,
        w.number
    ));
    let panel = Panel {
        lanes,
        scale,
        lane_h: ZOOM_LANE_H,
    };
    Some(panel::draw(svg, &panel, std::slice::from_ref(w), top + 8.0))
}

fn empty(group: &str, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        r##"<svg viewBox="0 0 {WIDTH} 40" width="100%" role="img" aria-label="timeline of group {0}" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="12"><text x="12" y="24" fill="#5b6472">No events for group {0} in the inputs.</text></svg>"##,
        escape(group)
    )
}

/// Mark shapes, then the trigger colours this picture uses; returns the y
/// below the legend.
fn legend(svg: &mut String, picture: &Picture, y: f64) -> f64 {
    let y = y + 6.0;
    let mut x = GUTTER;
    for (kind, text) in glyph::LEGEND {
        let icon = glyph::shape(kind, x + 2.0, y);
        legend_item(svg, &mut x, y, &icon, text);
    }
    let parked = format!(
        r##"<rect x="{:.1}" y="{:.1}" width="10" height="10" rx="2" fill="{}" fill-opacity="0.55" stroke="#2f6fb3" stroke-opacity="0.8"/>"##,
        x - 3.0,
        y - 5.0,
        glyph::PARKED
    );
    legend_item(svg, &mut x, y, &parked, "JoinGroup parked");
    let y = y + LEGEND_ROW;
    let mut x = GUTTER;
    svg.push_str(&format!(
        r##"<text x="8" y="{:.1}" fill="#5b6472">rebalance trigger</text>"##,
        y + 4.0
    ));
    for class in TriggerClass::ALL {
        if !picture.windows.iter().any(|w| w.class == class) {
            continue;
        }
        let swatch = format!(
            r##"<rect x="{:.1}" y="{:.1}" width="12" height="12" fill="{}" fill-opacity="0.35" stroke="{}"/>"##,
            x - 4.0,
            y - 6.0,
            class.css(),
            class.css()
        );
        legend_item(svg, &mut x, y, &swatch, class.name());
    }
    svg.push('\n');
    y + 12.0
}

/// One legend entry at `x`; moves `x` past it.
fn legend_item(svg: &mut String, x: &mut f64, y: f64, icon: &str, text: &str) {
    svg.push_str(&format!(
        r##"{icon}<text x="{:.1}" y="{:.1}" fill="#3d4552">{}</text>"##,
        *x + 12.0,
        y + 4.0,
        escape(text)
    ));
    *x += 22.0 + text.chars().count() as f64 * CHAR_W;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;
    use crate::report::Report;

    fn svg(report: &Report, group: &str) -> String {
        let mut out = Vec::new();
        write(&Index::new(report), group, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn draws_one_svg_with_a_lane_label_per_member() {
        let text = svg(&sample::incident(), "orders-service");
        assert_eq!(text.matches("<svg").count(), 1);
        assert!(text.contains("consumer-orders-2 / 8a7b6c5d…"));
        assert!(text.contains("nonode@nohost/&lt;0.1083.0&gt; / 9db8"));
    }

    #[test]
    fn rebalance_windows_are_labelled_with_their_trigger() {
        let text = svg(&sample::incident(), "orders-service");
        assert!(text.contains("5→6 member_joined 2.95 s"));
        assert!(text.contains("6→7 session_timeout 265 ms"));
    }

    #[test]
    fn heartbeats_on_the_same_pixel_are_drawn_once_and_counted() {
        let mut report = sample::kip848();
        let first = report.timeline[0].clone();
        for i in 0..1000 {
            let mut copy = first.clone();
            copy.ts = crate::time::Timestamp(first.ts.0 + i);
            report.timeline.push(copy);
        }
        report.timeline.sort_by_key(|e| e.ts);
        let text = svg(&report, "payments");
        assert!(
            text.contains("(+1000 more heartbeat here)"),
            "thinning lost the count"
        );
        assert!(text.matches("<circle").count() < 100);
    }

    #[test]
    fn each_rebalance_is_zoomed_in_below_the_overview() {
        let text = svg(&sample::incident(), "orders-service");
        assert!(text.contains("Rebalance 1 zoomed in"));
        assert!(text.contains("Rebalance 2 zoomed in"));
    }

    #[test]
    fn a_storm_zooms_into_its_longest_rebalances_only() {
        let mut report = sample::incident();
        let round = report.rebalances[2].clone();
        let line = report
            .timeline
            .iter()
            .find(|e| e.line == Some(3_301))
            .unwrap()
            .clone();
        for i in 0..10 {
            let mut copy = round.clone();
            copy.started_at = crate::time::Timestamp(round.started_at.0 + (i + 1) * 5_000_000_000);
            copy.completed_at = Some(crate::time::Timestamp(copy.started_at.0 + i * 1_000_000));
            copy.duration_ms = Some(i as f64);
            let mut seen = line.clone();
            seen.ts = copy.started_at;
            report.timeline.push(seen);
            report.rebalances.push(copy);
        }
        report.timeline.sort_by_key(|e| e.ts);
        let text = svg(&report, "billing-ledger");
        assert_eq!(text.matches("zoomed in</text>").count(), MAX_ZOOMS);
        assert!(text.contains("The 6 longest of 12 rebalances are zoomed in above."));
        // The unfinished one counts as longest; the 1 ms copy does not make it.
        assert!(text.contains("Rebalance 4 zoomed in"));
        assert!(!text.contains("Rebalance 6 zoomed in"));
    }

    #[test]
    fn a_rebalance_with_nothing_around_it_gets_no_empty_zoom() {
        let mut report = sample::incident();
        let mut lonely = report.rebalances[2].clone();
        lonely.started_at = sample::at(200_000);
        lonely.completed_at = Some(sample::at(200_500));
        report.rebalances.push(lonely);
        let text = svg(&report, "billing-ledger");
        assert!(text.contains("Rebalance 3 zoomed in"));
        assert!(!text.contains("Rebalance 5 zoomed in"));
    }

    #[test]
    fn a_group_without_events_says_so() {
        let text = svg(&sample::quiet(), "nobody");
        assert!(text.contains("No events for group nobody"));
    }
}
