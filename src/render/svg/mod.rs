//! The timeline picture of one group, as inline SVG.
//!
//! Takes: a [`crate::report::Report`] (its [`Index`]) and a group name. Gives: one `<svg>` element. On top,
//! the overview: a swimlane per member (label: client id and short member
//! id), a time axis with round UTC ticks, a mark per event (join, sync,
//! heartbeat, heartbeat error, leave, close, commit, broker log line),
//! JoinGroup requests parked at the broker as bars, and each rebalance as a
//! window shaded in its trigger family's colour and labelled with
//! generation, trigger and duration; below the lanes, a row per stopped
//! partition with a bar per stop (`#N` is the group's rebalance number;
//! a stop still open at the end is drawn open-ended, dashed, with an
//! arrow; at most [`model::MAX_STOP_BARS`], the rest counted; at most
//! [`MAX_MEMBER_LANES`] member lanes, the rest counted). Below it,
//! each rebalance zoomed in (the
//! [`MAX_ZOOMS`] longest when there are more), because a three-second round
//! is a sliver on a day's axis. A legend, naming only what this picture
//! draws, closes the overview. Every mark has
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
use model::{Picture, StopBar, Window};
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
/// Member lanes the overview draws per group at most (even: half from
/// the start, half from the end). A real group of 50 consumers (the lab's
/// `ak39_ck_fifty`) is drawn whole.
pub(crate) const MAX_MEMBER_LANES: usize = 100;

/// Writes the picture of `group`.
pub(crate) fn write(index: &Index<'_>, group: &str, out: &mut dyn Write) -> io::Result<()> {
    let picture = model::picture_in(index, group);
    let Some((first, last)) = picture.range else {
        return empty(group, out);
    };
    let mut body = String::new();
    let (lanes, members) = overview_lanes(&picture.lanes);
    let overview = Panel {
        lanes,
        scale: padded(first, last, 40),
        lane_h: LANE_H,
        stops: picture.stops.iter().collect(),
    };
    let mut y = panel::draw(&mut body, &overview, &picture.windows, 8.0);
    if members > MAX_MEMBER_LANES {
        y = note(&mut body, y + 4.0, &members_left_out(members));
    }
    if picture.stops_left_out > 0 {
        y = note(&mut body, y + 4.0, &stops_left_out(&picture));
    }
    y = legend(&mut body, &picture, y + 8.0);
    for w in zoomed(&picture.windows) {
        if let Some(end) = zoom(&mut body, &picture, w, y + 14.0) {
            y = end;
        }
    }
    if picture.windows.len() > MAX_ZOOMS {
        let text = format!(
            "The {MAX_ZOOMS} longest of {} rebalances are zoomed in above.",
            picture.windows.len()
        );
        y = note(&mut body, y, &text);
    }
    let height = y + 8.0;
    let open = format!(
        r##"<svg viewBox="0 0 {WIDTH} {height:.0}" width="100%" role="img" aria-label="timeline of group {}" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="11">"##,
        escape(group)
    );
    writeln!(out, "{open}\n{body}</svg>")
}

/// A grey line of text below `y`; returns the y below it.
fn note(svg: &mut String, y: f64, text: &str) -> f64 {
    svg.push_str(&format!(
        r##"<text x="8" y="{:.1}" fill="#5b6472">{}</text>"##,
        y + 8.0,
        escape(text)
    ));
    y + 14.0
}

/// The overview's lanes: the group's own and every member's, or past
/// [`MAX_MEMBER_LANES`] members the first and the last half of that many
/// by first sight (a storm's beginning and its end: a member that rejoins
/// under a new id each round, or a new client each round, made a lane
/// per round, and a storm of 10,000 rounds drew a page of 100 MB, 2,000
/// screens high); and how many members the group has. Zoomed rounds
/// still draw every member active in them.
fn overview_lanes(lanes: &[model::Lane]) -> (Vec<&model::Lane>, usize) {
    let members = lanes.iter().filter(|l| !l.is_group).count();
    let (first, last) = (
        MAX_MEMBER_LANES / 2,
        members.saturating_sub(MAX_MEMBER_LANES / 2),
    );
    let mut member = 0;
    let drawn = lanes
        .iter()
        .filter(|l| {
            if l.is_group {
                return true;
            }
            member += 1;
            members <= MAX_MEMBER_LANES || member <= first || member > last
        })
        .collect();
    (drawn, members)
}

/// Says that the overview draws [`MAX_MEMBER_LANES`] of `members` lanes.
fn members_left_out(members: usize) -> String {
    format!(
        "{MAX_MEMBER_LANES} of {members} members' lanes drawn (the first {} and the last {} seen); the zoomed rebalances draw every member active in them, and the report's tables and --format json name every member.",
        MAX_MEMBER_LANES / 2,
        MAX_MEMBER_LANES / 2
    )
}

/// Says how many partition stops the bars leave out and where they are.
fn stops_left_out(picture: &Picture) -> String {
    let drawn = picture.stops.len();
    let all = drawn + picture.stops_left_out;
    format!(
        "{drawn} of {all} partition stops drawn (at most {} per rebalance, {} per group, {} partitions); the report's partition tables and --format json list all {all}.",
        model::STOPS_PER_ROUND,
        model::MAX_STOP_BARS,
        model::MAX_STOP_ROWS
    )
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
/// [`MAX_ZOOMS`] longest completed ones (a superseded or unfinished round
/// has no length of its own, so it comes last).
fn zoomed(windows: &[Window]) -> Vec<&Window> {
    let mut chosen: Vec<&Window> = windows.iter().collect();
    if chosen.len() > MAX_ZOOMS {
        chosen.sort_by_key(|w| {
            (
                std::cmp::Reverse((w.finished, w.end.saturating_sub(w.start))),
                w.start,
            )
        });
        chosen.truncate(MAX_ZOOMS);
        chosen.sort_by_key(|w| (w.start, w.number));
    }
    chosen
}

/// One rebalance zoomed in, with the lanes active around it and the
/// partitions it stopped; nothing when there is nothing to show there.
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
    let stops: Vec<&StopBar> = picture
        .stops
        .iter()
        .filter(|s| s.round == w.number)
        .collect();
    if lanes.is_empty() && stops.is_empty() {
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
        stops,
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

/// The shapes this picture draws, each with the words for what it marks
/// here ([`glyph::legend_word`]), the parked and stop bars when drawn, then
/// the trigger colours of its windows; returns the y below the legend.
fn legend(svg: &mut String, picture: &Picture, y: f64) -> f64 {
    let mut at = (GUTTER, y + 6.0);
    for (shape, words) in mark_items(picture) {
        legend_item(
            svg,
            &mut at,
            &|x, y| glyph::shape(shape, x + 2.0, y),
            &words,
        );
    }
    let marks = || picture.lanes.iter().flat_map(|l| &l.marks);
    if marks().any(|m| m.error && m.kind != "heartbeat_failed") {
        let ring = |x: f64, y: f64| glyph::error_ring(x + 2.0, y);
        legend_item(svg, &mut at, &ring, "Kafka error");
    }
    if picture.lanes.iter().any(|l| !l.parked.is_empty()) {
        let parked = |x: f64, y: f64| {
            format!(
                r##"<rect x="{:.1}" y="{:.1}" width="10" height="10" rx="2" fill="{}" fill-opacity="0.55" stroke="#2f6fb3" stroke-opacity="0.8"/>"##,
                x - 3.0,
                y - 5.0,
                glyph::PARKED
            )
        };
        legend_item(svg, &mut at, &parked, "JoinGroup parked");
    }
    if !picture.stops.is_empty() {
        let bar = |x: f64, y: f64| {
            format!(
                r##"<rect x="{:.1}" y="{:.1}" width="12" height="8" rx="1.5" fill="{}"/>"##,
                x - 4.0,
                y - 4.0,
                glyph::STOP_BAR
            )
        };
        let mut text = "partition stopped (#N: its rebalance".to_string();
        if picture.stops.iter().any(|s| s.round == 0) {
            text.push_str("; restart: a static member restarted, no rebalance");
        }
        if picture.stops.iter().any(|s| s.open) {
            text.push_str("; dashed with ▸: still stopped at the end");
        }
        text.push(')');
        legend_item(svg, &mut at, &bar, &text);
    }
    let mut at = (GUTTER, at.1 + LEGEND_ROW);
    svg.push_str(&format!(
        r##"<text x="8" y="{:.1}" fill="#5b6472">rebalance trigger</text>"##,
        at.1 + 4.0
    ));
    for class in TriggerClass::ALL {
        if !picture.windows.iter().any(|w| w.class == class) {
            continue;
        }
        let swatch = |x: f64, y: f64| {
            format!(
                r##"<rect x="{:.1}" y="{:.1}" width="12" height="12" fill="{}" fill-opacity="0.35" stroke="{}"/>"##,
                x - 4.0,
                y - 6.0,
                class.css(),
                class.css()
            )
        };
        legend_item(svg, &mut at, &swatch, class.name());
    }
    if picture.windows.iter().any(|w| w.open) {
        let edge = |x: f64, y: f64| {
            format!(
                r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#5b6472" stroke-dasharray="4 3"/>"##,
                y - 7.0,
                y + 7.0
            )
        };
        legend_item(
            svg,
            &mut at,
            &edge,
            "dashed edge: still in progress at the end",
        );
    }
    svg.push('\n');
    at.1 + 12.0
}

/// Each shape drawn in the picture, in legend order, with the distinct
/// words of its marks, sorted, joined by commas.
fn mark_items(picture: &Picture) -> Vec<(&'static str, String)> {
    let mut words: Vec<Vec<&str>> = vec![Vec::new(); glyph::SHAPES.len()];
    for m in picture.lanes.iter().flat_map(|l| &l.marks) {
        let shape = glyph::shape_of(&m.kind);
        if let Some(i) = glyph::SHAPES.iter().position(|s| *s == shape) {
            if !words[i].contains(&m.legend) {
                words[i].push(m.legend);
            }
        }
    }
    glyph::SHAPES
        .iter()
        .zip(words)
        .filter(|(_, w)| !w.is_empty())
        .map(|(shape, mut w)| {
            w.sort_unstable();
            (*shape, w.join(", "))
        })
        .collect()
}

/// One legend entry at `at`, wrapping to a new row at the right edge;
/// moves `at` past it. `icon` draws the entry's icon at (x, y).
fn legend_item(
    svg: &mut String,
    at: &mut (f64, f64),
    icon: &dyn Fn(f64, f64) -> String,
    text: &str,
) {
    let width = 22.0 + text.chars().count() as f64 * CHAR_W;
    if at.0 > GUTTER && at.0 + width > WIDTH - RIGHT {
        *at = (GUTTER, at.1 + LEGEND_ROW);
    }
    let (x, y) = *at;
    svg.push_str(&format!(
        r##"{}<text x="{:.1}" y="{:.1}" fill="#3d4552">{}</text>"##,
        icon(x, y),
        x + 12.0,
        y + 4.0,
        escape(text)
    ));
    at.0 += width;
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
        // Numbered within the group: the first round, then the unfinished
        // one, then the copies (0 to 9 ms). The unfinished one has no
        // length of its own and does not fill a "longest" panel; neither
        // does the 0 ms copy.
        assert!(text.contains("Rebalance 1 zoomed in"));
        assert!(text.contains("Rebalance 12 zoomed in"));
        assert!(!text.contains("Rebalance 2 zoomed in"));
        assert!(!text.contains("Rebalance 3 zoomed in"));
    }

    #[test]
    fn a_rebalance_with_nothing_around_it_gets_no_empty_zoom() {
        let mut report = sample::incident();
        let mut lonely = report.rebalances[2].clone();
        lonely.started_at = sample::at(200_000);
        lonely.completed_at = Some(sample::at(200_500));
        report.rebalances.push(lonely);
        let text = svg(&report, "billing-ledger");
        // Numbered within the group: the lonely copy is its third round.
        assert!(text.contains("Rebalance 1 zoomed in"));
        assert!(!text.contains("Rebalance 3 zoomed in"));
    }

    /// The incident sample with a stop of `orders-5`, still stopped at the
    /// end of the input, in billing-ledger's unfinished round (its 2nd).
    fn with_an_open_stop() -> Report {
        let mut report = sample::incident();
        let mut open = report.rebalances[1].partitions[0].clone();
        open.partition = "orders-5".into();
        open.stopped_at = sample::at(262_500);
        open.resumed_at = None;
        open.stopped_ms = None;
        let stuck = report
            .rebalances
            .iter_mut()
            .rfind(|r| r.group == "billing-ledger")
            .unwrap();
        stuck.partitions.push(open);
        report
    }

    #[test]
    fn each_partition_stop_is_a_bar_numbered_like_its_rebalance() {
        let text = svg(&sample::incident(), "orders-service");
        // Both stops belong to orders-service's 2nd round (the report's 2nd too).
        assert!(text.contains("stopped orders-3</text>"));
        assert!(text.contains("stopped orders-4</text>"));
        assert!(text.contains(
            "<title>Rebalance 2: orders-3 stopped 45.81 s (owner_silent)\nconsumer-orders-2 / 8a7b6c5d… → nonode@nohost/&lt;0.1083.0&gt; / 9db8\n12:02:24.600000 to 12:03:10.410000</title>"
        ));
        assert!(text.contains(">#2 45.81 s</text>"));
        assert_eq!(
            text.matches(glyph::STOP_BAR).count(),
            2 * 2 + 1,
            "overview, zoom, legend"
        );
        // The zoomed-in first round stopped nothing: its panel has no stop row.
        let first_zoom = &text[text.find("Rebalance 1 zoomed in").unwrap()
            ..text.find("Rebalance 2 zoomed in").unwrap()];
        assert!(!first_zoom.contains("stopped orders"));
        assert!(text.contains("partition stopped (#N: its rebalance)"));
    }

    #[test]
    fn a_stop_still_open_at_the_end_is_drawn_open_and_says_so() {
        let report = with_an_open_stop();
        let text = svg(&report, "billing-ledger");
        let bar = text
            .split("<g><title>")
            .find(|g| g.starts_with("Rebalance 2: orders-5"))
            .expect("a bar for the open stop");
        assert!(
            bar.contains("orders-5 still stopped at the end of the input (owner_silent)"),
            "{bar}"
        );
        assert!(bar.contains("since 12:04:22.500000"));
        assert!(bar.contains("stroke-dasharray"), "dashed: {bar}");
        let label =
            r##"text-anchor="end" fill="#5b3a29" font-weight="bold">#2 still stopped</text>"##;
        assert!(bar.contains(label), "{bar}");
        assert!(
            bar.contains("l7 6l-7 6Z"),
            "an arrow at its open end: {bar}"
        );
        let p = model::picture(&report, "billing-ledger");
        let open = p.stops.iter().find(|s| s.partition == "orders-5").unwrap();
        assert!(open.open);
        assert_eq!(Some(open.end), p.range.map(|r| r.1), "to the picture's end");
        assert!(text.contains("dashed with ▸: still stopped at the end"));
    }

    #[test]
    fn stop_bars_are_capped_and_the_rest_counted() {
        let mut report = sample::incident();
        let stop = report.rebalances[1].partitions[0].clone();
        let round = report.rebalances[1].clone();
        report.rebalances.retain(|r| r.group != "orders-service");
        for i in 0..10 {
            let mut r = round.clone();
            r.started_at = crate::time::Timestamp(round.started_at.0 + i * 1_000_000);
            r.partitions = (0..20)
                .map(|p| {
                    let mut s = stop.clone();
                    s.partition = format!("orders-{p}");
                    s
                })
                .collect();
            report.rebalances.push(r);
        }
        let text = svg(&report, "orders-service");
        let bars = text
            .matches(&format!(r#"rx="1.5" fill="{}""#, glyph::STOP_BAR))
            .count();
        // 12 per round, 60 per group; the legend's swatch is one more. The
        // first five rounds fill the cap; zoom panels repeat their bars.
        assert!(text.contains(
            "60 of 200 partition stops drawn (at most 12 per rebalance, 60 per group, 24 partitions); the report&#39;s partition tables and --format json list all 200."
        ));
        let rows = text.matches("</title><text x=\"8\"").count();
        assert!(bars > 60, "{bars}");
        assert!(text.contains("stopped orders-11</text>"));
        assert!(!text.contains("stopped orders-12</text>"));
        assert!(rows > 12);
    }

    #[test]
    fn past_a_hundred_members_the_overview_draws_the_first_and_last_fifty_and_counts_the_rest() {
        let mut report = sample::incident();
        let seen = sample::member_event(&report, "orders-service");
        let lanes = |text: &str| text.matches("</title><text x=\"8\"").count();
        let before = lanes(&svg(&report, "orders-service"));
        // A member a minute for 200 minutes after the input, each with an
        // id of its own (a client rejoining under a new id each round):
        // far from every round, so no zoom draws them.
        let last = report.timeline.iter().map(|e| e.ts.0).max().unwrap();
        for i in 0..200i64 {
            let mut e = seen.clone();
            e.ts = crate::time::Timestamp(last + (i + 60) * 60_000_000_000);
            e.member_id = Some(format!("storm-member-{i:03}"));
            e.client_id = Some(format!("storm-client-{i:03}"));
            report.timeline.push(e);
        }
        let text = svg(&report, "orders-service");
        let members = text
            .split("members&#39; lanes drawn")
            .next()
            .and_then(|t| t.rsplit('>').next())
            .unwrap();
        assert!(members.starts_with("100 of "), "{members}");
        assert!(text.contains("(the first 50 and the last 50 seen)"));
        // Every lane the sample drew before is among the first fifty.
        assert!(before <= 50, "{before}");
        assert!(text.contains("storm-member-199"));
        assert!(text.contains("storm-member-150"));
        assert!(!text.contains("storm-member-149"));
        assert!(!text.contains("storm-member-100"));
        assert!(lanes(&text) >= 100, "{}", lanes(&text));
        // A hundred members or fewer: every lane, no note.
        report.timeline.retain(|e| {
            e.member_id
                .as_deref()
                .is_none_or(|m| m < "storm-member-090" || !m.starts_with("storm"))
        });
        let text = svg(&report, "orders-service");
        assert!(!text.contains("lanes drawn"));
        assert!(text.contains("storm-member-089"));
    }

    #[test]
    fn the_legend_names_only_what_is_drawn() {
        let mut report = sample::kip848();
        let text = svg(&report, "payments");
        assert!(
            !text.contains(">broker log"),
            "nothing from a broker log is drawn"
        );
        assert!(!text.contains(">FindCoordinator<"));
        // A capture-only FindCoordinator exchange: the diamond is named for it.
        let mut find = report.timeline[0].clone();
        find.kind = "FindCoordinator request".into();
        find.mark = "coordinator".into();
        find.frame = Some(7);
        find.line = None;
        report.timeline.insert(0, find);
        let text = svg(&report, "payments");
        assert!(text.contains(">FindCoordinator</text>"));
        assert!(!text.contains(">broker log"));
    }

    #[test]
    fn a_group_without_events_says_so() {
        let text = svg(&sample::quiet(), "nobody");
        assert!(text.contains("No events for group nobody"));
    }
}
