//! One panel of a timeline picture: lanes over a time range.
//!
//! Takes: the lanes to show, a time range, the rebalance windows and a top
//! position. Gives: SVG for the window labels, lane stripes and labels,
//! tick lines, shaded windows, presence lines, parked bars and marks, a
//! row per stopped partition with its stop bars, and the axis; returns
//! where the panel ends. The overview and each zoomed
//! rebalance are panels, drawn the same way at different scales. Anything
//! outside the range is clipped to the plot.

use super::glyph::{self, LANE_STRIPE, PRESENCE};
use super::model::{Lane, Mark, StopBar, Window};
use super::{axis, CHAR_W, GUTTER, RIGHT, WIDTH};
use crate::render::escape::escape;
use crate::render::human;
use crate::time::Timestamp;

const LABEL_ROW: f64 = 17.0;
const MAX_LABEL_ROWS: usize = 4;
/// Windows in a panel beyond which labels are only numbers.
const FULL_LABELS: usize = 12;
const AXIS_H: f64 = 26.0;
/// Height of a stopped partition's row.
const STOP_ROW_H: f64 = 18.0;

/// Maps instants to x within the plot.
#[derive(Clone, Copy, Debug)]
pub(super) struct Scale {
    /// First instant, ns.
    pub(super) t0: i64,
    /// Last instant, ns.
    pub(super) t1: i64,
}

impl Scale {
    /// x of `t`, unclipped.
    pub(super) fn x(&self, t: i64) -> f64 {
        // In i128: a broken input can put instants at both ends of i64.
        let span = (i128::from(self.t1) - i128::from(self.t0)).max(1) as f64;
        let offset = (i128::from(t) - i128::from(self.t0)) as f64;
        GUTTER + offset / span * (WIDTH - GUTTER - RIGHT)
    }

    /// x of `t`, clipped to the plot.
    fn clip(&self, t: i64) -> f64 {
        self.x(t).clamp(GUTTER, WIDTH - RIGHT)
    }

    fn contains(&self, t: i64) -> bool {
        (self.t0..=self.t1).contains(&t)
    }
}

/// What one panel shows.
pub(super) struct Panel<'a> {
    /// Lanes, top to bottom.
    pub(super) lanes: Vec<&'a Lane>,
    /// Time range.
    pub(super) scale: Scale,
    /// Height of a lane.
    pub(super) lane_h: f64,
    /// Partition stops, in row order (partition) then time.
    pub(super) stops: Vec<&'a StopBar>,
}

/// Draws `panel` from `top`; returns the y below its axis.
pub(super) fn draw(svg: &mut String, panel: &Panel, windows: &[Window], top: f64) -> f64 {
    let scale = &panel.scale;
    let shown: Vec<&Window> = windows
        .iter()
        .filter(|w| w.end >= scale.t0 && w.start <= scale.t1)
        .collect();
    let labels = label_rows(&shown, scale);
    let rows = labels
        .iter()
        .flatten()
        .map(|l| l.row + 1)
        .max()
        .unwrap_or(0);
    let lanes_top = top + rows as f64 * LABEL_ROW + 4.0;
    let lanes_bottom = lanes_top + panel.lanes.len() as f64 * panel.lane_h;
    let stop_rows = stop_rows(&panel.stops);
    let bottom = lanes_bottom + stop_rows.len() as f64 * STOP_ROW_H;
    stripes(svg, &panel.lanes, lanes_top, panel.lane_h);
    stop_stripes(svg, &stop_rows, lanes_bottom);
    grid(svg, scale, lanes_top, bottom);
    for (w, label) in shown.iter().zip(&labels) {
        window(svg, w, scale, (lanes_top, bottom), label.as_ref(), top);
    }
    for (i, lane) in panel.lanes.iter().enumerate() {
        let y = lanes_top + i as f64 * panel.lane_h + panel.lane_h / 2.0;
        lane_body(svg, lane, scale, y);
    }
    for (i, (_, bars)) in stop_rows.iter().enumerate() {
        let y = lanes_bottom + i as f64 * STOP_ROW_H + STOP_ROW_H / 2.0;
        stop_row(svg, bars, scale, y);
    }
    bottom + AXIS_H
}

/// The stops grouped by partition, rows in the order the bars come.
fn stop_rows<'a>(stops: &[&'a StopBar]) -> Vec<(&'a str, Vec<&'a StopBar>)> {
    let mut rows: Vec<(&str, Vec<&StopBar>)> = Vec::new();
    for bar in stops {
        match rows.last_mut() {
            Some((p, bars)) if *p == bar.partition => bars.push(bar),
            _ => rows.push((&bar.partition, vec![bar])),
        }
    }
    rows
}

/// The stopped partitions' rows: a tinted band with the partition's name.
fn stop_stripes(svg: &mut String, rows: &[(&str, Vec<&StopBar>)], top: f64) {
    for (i, (partition, _)) in rows.iter().enumerate() {
        let y = top + i as f64 * STOP_ROW_H;
        let fill = if i % 2 == 0 {
            glyph::STOP_STRIPE
        } else {
            "#ffffff"
        };
        let label = truncate(
            &format!("stopped {partition}"),
            ((GUTTER - 16.0) / 6.4) as usize,
        );
        svg.push_str(&format!(
            r##"<rect x="0" y="{y:.1}" width="{WIDTH}" height="{STOP_ROW_H}" fill="{fill}"/><g><title>partition {}: consumption stopped by a rebalance</title><text x="8" y="{:.1}" font-size="11" fill="#5b3a29">{}</text></g>"##,
            escape(partition),
            y + STOP_ROW_H / 2.0 + 4.0,
            escape(&label)
        ));
        svg.push('\n');
    }
}

/// One partition's stop bars within the range, each with its tooltip; a
/// bar still stopped at the end is drawn open (no right edge, dashed,
/// with an arrow). A label (`#N 11.4 s`) follows a bar where it fits
/// before the next one.
fn stop_row(svg: &mut String, bars: &[&StopBar], scale: &Scale, y: f64) {
    let visible: Vec<&&StopBar> = bars
        .iter()
        .filter(|b| b.end >= scale.t0 && b.start <= scale.t1)
        .collect();
    for (i, bar) in visible.iter().enumerate() {
        let x0 = scale.clip(bar.start);
        let x1 = scale.clip(bar.end).max(x0 + 2.0);
        let (top, h) = (y - 5.0, 10.0);
        let shape = if bar.open {
            format!(
                r##"<rect x="{x0:.1}" y="{top:.1}" width="{:.1}" height="{h}" fill="{}" fill-opacity="0.45"/><path d="M{x0:.1} {top:.1}H{x1:.1}M{x0:.1} {:.1}H{x1:.1}M{x0:.1} {top:.1}V{:.1}" stroke="{}" stroke-width="1.4" stroke-dasharray="4 3" fill="none"/><path d="M{x1:.1} {:.1}l7 6l-7 6Z" fill="{}"/>"##,
                x1 - x0,
                glyph::STOP_BAR,
                top + h,
                top + h,
                glyph::STOP_BAR,
                y - 6.0,
                glyph::STOP_BAR
            )
        } else {
            format!(
                r##"<rect x="{x0:.1}" y="{top:.1}" width="{:.1}" height="{h}" rx="1.5" fill="{}"/>"##,
                x1 - x0,
                glyph::STOP_BAR
            )
        };
        let after = visible
            .get(i + 1)
            .map_or(WIDTH - RIGHT, |next| scale.clip(next.start));
        let before = match i {
            0 => GUTTER,
            _ => scale.clip(visible[i - 1].end),
        };
        let text_x = x1 + if bar.open { 10.0 } else { 4.0 };
        let width = bar.label.chars().count() as f64 * CHAR_W;
        // After the bar, else before it (an open bar reaching the edge).
        let at = if text_x + width <= after {
            Some((text_x, "start"))
        } else if x0 - 4.0 - width >= before + 4.0 {
            Some((x0 - 4.0, "end"))
        } else {
            None
        };
        let text = match at {
            Some((x, anchor)) => format!(
                r##"<text x="{x:.1}" y="{:.1}" text-anchor="{anchor}" fill="#5b3a29" font-weight="bold">{}</text>"##,
                y + 4.0,
                escape(&bar.label)
            ),
            None => String::new(),
        };
        svg.push_str(&format!(
            "<g><title>{}</title>{shape}{text}</g>",
            escape(&bar.title)
        ));
    }
    svg.push('\n');
}

fn stripes(svg: &mut String, lanes: &[&Lane], top: f64, lane_h: f64) {
    for (i, lane) in lanes.iter().enumerate() {
        let y = top + i as f64 * lane_h;
        let fill = if i % 2 == 0 { LANE_STRIPE } else { "#ffffff" };
        svg.push_str(&format!(
            r##"<rect x="0" y="{y:.1}" width="{WIDTH}" height="{lane_h}" fill="{fill}"/>"##
        ));
        let label = truncate(&lane.label, ((GUTTER - 16.0) / 6.9) as usize);
        let colour = if lane.is_group { "#5b6472" } else { "#1f2630" };
        svg.push_str(&format!(
            r##"<g><title>{}</title><text x="8" y="{:.1}" font-size="12" fill="{colour}">{}</text></g>"##,
            escape(&lane.title),
            y + lane_h / 2.0 + 4.0,
            escape(&label)
        ));
        svg.push('\n');
    }
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// Tick lines through the lanes, the axis line and its labels.
fn grid(svg: &mut String, scale: &Scale, top: f64, bottom: f64) {
    let (ticks, step) = axis::ticks(scale.t0, scale.t1);
    svg.push_str(&format!(
        r##"<line x1="{GUTTER}" y1="{bottom:.1}" x2="{:.1}" y2="{bottom:.1}" stroke="#8a93a0"/>"##,
        WIDTH - RIGHT
    ));
    for t in ticks {
        let x = scale.x(t);
        let label = axis::label(t, step);
        svg.push_str(&format!(
            r##"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{:.1}" stroke="#d5dbe4"/>"##,
            bottom + 4.0
        ));
        // A label that would run off the right edge is left out.
        if x + label.len() as f64 * CHAR_W / 2.0 <= WIDTH - 2.0 {
            svg.push_str(&format!(
                r##"<text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#3d4552">{label}</text>"##,
                bottom + 17.0
            ));
        }
    }
    svg.push_str(&format!(
        r##"<text x="8" y="{:.1}" fill="#5b6472">{} UTC</text>"##,
        bottom + 17.0,
        human::date(Timestamp(scale.t0))
    ));
    svg.push('\n');
}

/// Where a window's label goes.
#[derive(Debug, PartialEq)]
struct Label {
    row: usize,
    x: f64,
    text: String,
}

/// Places each window's label in the first row where it does not overlap
/// the previous one. With more than [`FULL_LABELS`] windows (a storm),
/// labels shrink to `#N`, the rebalance's number; a label with no free row
/// is left out. The window's tooltip and its zoomed panel still name it.
fn label_rows(windows: &[&Window], scale: &Scale) -> Vec<Option<Label>> {
    let short = windows.len() > FULL_LABELS;
    let mut row_ends: Vec<f64> = Vec::new();
    windows
        .iter()
        .map(|w| {
            let text = if short {
                format!("#{}", w.number)
            } else {
                w.label.clone()
            };
            place(&mut row_ends, scale.clip(w.start), text)
        })
        .collect()
}

fn place(row_ends: &mut Vec<f64>, start: f64, text: String) -> Option<Label> {
    let width = text.chars().count() as f64 * CHAR_W + 10.0;
    let x = start.min(WIDTH - RIGHT - width).max(GUTTER);
    let row = match row_ends.iter().position(|end| *end < x) {
        Some(row) => row,
        None if row_ends.len() < MAX_LABEL_ROWS => {
            row_ends.push(f64::MIN);
            row_ends.len() - 1
        }
        None => return None,
    };
    row_ends[row] = x + width;
    Some(Label { row, x, text })
}

fn window(
    svg: &mut String,
    w: &Window,
    scale: &Scale,
    (top, bottom): (f64, f64),
    label: Option<&Label>,
    panel_top: f64,
) {
    let colour = w.class.css();
    let x0 = scale.clip(w.start);
    let x1 = scale.clip(w.end).max(x0 + 2.0);
    let dash = if w.open {
        r#" stroke-dasharray="4 3""#
    } else {
        ""
    };
    let label_y = label.map(|l| panel_top + l.row as f64 * LABEL_ROW + 12.0);
    let mut edges = String::new();
    if scale.contains(w.start) {
        edges.push_str(&format!(
            r##"<line x1="{x0:.1}" y1="{:.1}" x2="{x0:.1}" y2="{bottom:.1}" stroke="{colour}" stroke-width="1.5"/>"##,
            label_y.map_or(top, |y| y + 3.0)
        ));
    }
    if scale.contains(w.end) {
        edges.push_str(&format!(
            r##"<line x1="{x1:.1}" y1="{top:.1}" x2="{x1:.1}" y2="{bottom:.1}" stroke="{colour}"{dash}/>"##
        ));
    }
    let text = match (label, label_y) {
        (Some(l), Some(y)) => format!(
            r##"<text x="{:.1}" y="{y:.1}" fill="{colour}" font-weight="bold">{}</text>"##,
            l.x + 3.0,
            escape(&l.text)
        ),
        _ => String::new(),
    };
    svg.push_str(&format!(
        r##"<g><title>Rebalance {}: {}</title><rect x="{x0:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{colour}" fill-opacity="0.16"/>{edges}{text}</g>"##,
        w.number,
        escape(&w.label),
        x1 - x0,
        bottom - top,
    ));
    svg.push('\n');
}

/// A lane's presence line, parked bars and marks within the range.
fn lane_body(svg: &mut String, lane: &Lane, scale: &Scale, y: f64) {
    if !lane.is_group {
        presence(svg, lane, scale, y);
    }
    parked(svg, lane, scale, y);
    marks(svg, lane, scale, y);
    svg.push('\n');
}

/// A thick light line from a member's first to its last event.
fn presence(svg: &mut String, lane: &Lane, scale: &Scale, y: f64) {
    let first = lane.marks.iter().map(|m| m.ts).min();
    let last = lane.marks.iter().map(|m| m.ts).max();
    let (Some(first), Some(last)) = (first, last) else {
        return;
    };
    if last >= scale.t0 && first <= scale.t1 {
        svg.push_str(&format!(
            r##"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{PRESENCE}" stroke-width="5" stroke-linecap="round"/>"##,
            scale.clip(first),
            scale.clip(last)
        ));
    }
}

/// JoinGroup requests parked at the broker, as bars.
fn parked(svg: &mut String, lane: &Lane, scale: &Scale, y: f64) {
    let visible = lane
        .parked
        .iter()
        .filter(|(s, e)| *e >= scale.t0 && *s <= scale.t1);
    for &(start, end) in visible {
        let (x0, x1) = (scale.clip(start), scale.clip(end));
        svg.push_str(&format!(
            r##"<g><title>JoinGroup parked at the broker for {}</title><rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="12" rx="2" fill="{}" fill-opacity="0.55" stroke="#2f6fb3" stroke-opacity="0.8"/></g>"##,
            human::duration((end - start) as f64 / 1e6),
            y - 6.0,
            (x1 - x0).max(1.0),
            glyph::PARKED
        ));
    }
}

/// The marks within the range, thinned, each with its tooltip.
fn marks(svg: &mut String, lane: &Lane, scale: &Scale, y: f64) {
    let visible: Vec<&Mark> = lane.marks.iter().filter(|m| scale.contains(m.ts)).collect();
    for (mark, more) in thinned(&visible, scale) {
        let x = scale.x(mark.ts);
        let mut title = mark.title.clone();
        if more > 0 {
            title.push_str(&format!("\n(+{more} more {} here)", mark.kind));
        }
        let ring = if mark.error && mark.kind != "heartbeat_failed" {
            glyph::error_ring(x, y)
        } else {
            String::new()
        };
        svg.push_str(&format!(
            "<g><title>{}</title>{}{ring}</g>",
            escape(&title),
            glyph::shape(&mark.kind, x, y)
        ));
    }
}

/// Marks in time order, each with how many more of its kind fell within
/// 1.5 px of it and were not drawn (marks with an error are always drawn).
fn thinned<'a>(marks: &[&'a Mark], scale: &Scale) -> Vec<(&'a Mark, usize)> {
    let mut sorted = marks.to_vec();
    sorted.sort_by_key(|m| m.ts);
    let mut drawn: Vec<(&Mark, usize)> = Vec::new();
    let mut last_of_kind: Vec<(&str, usize)> = Vec::new();
    for m in sorted {
        let x = scale.x(m.ts);
        let same = last_of_kind
            .iter()
            .find(|(k, _)| *k == m.kind)
            .map(|(_, i)| *i);
        match same {
            Some(i) if (scale.x(drawn[i].0.ts) - x).abs() < 1.5 && !m.error => drawn[i].1 += 1,
            _ => {
                drawn.push((m, 0));
                let index = drawn.len() - 1;
                match last_of_kind.iter_mut().find(|(k, _)| *k == m.kind) {
                    Some(entry) => entry.1 = index,
                    None => last_of_kind.push((&m.kind, index)),
                }
            }
        }
    }
    drawn
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::doc::TriggerClass;

    #[test]
    fn label_rows_never_overlap() {
        let scale = Scale { t0: 0, t1: 1_000 };
        let windows: Vec<Window> = (0..3)
            .map(|i| Window {
                start: i * 10,
                end: i * 10 + 5,
                open: false,
                finished: true,
                class: TriggerClass::Join,
                label: "1→2 member_joined 10 ms".into(),
                number: i as usize + 1,
            })
            .collect();
        let refs: Vec<&Window> = windows.iter().collect();
        let rows: Vec<usize> = label_rows(&refs, &scale)
            .iter()
            .flatten()
            .map(|l| l.row)
            .collect();
        assert_eq!(rows, [0, 1, 2]);
    }

    #[test]
    fn in_a_storm_labels_shrink_to_numbers_then_give_way() {
        let scale = Scale { t0: 0, t1: 1_000 };
        let windows: Vec<Window> = (0..40)
            .map(|i| Window {
                start: i * 5,
                end: i * 5 + 1,
                open: false,
                finished: true,
                class: TriggerClass::Join,
                label: "1→2 member_joined 10 ms".into(),
                number: i as usize + 1,
            })
            .collect();
        let refs: Vec<&Window> = windows.iter().collect();
        let labels = label_rows(&refs, &scale);
        let texts: Vec<&str> = labels.iter().flatten().map(|l| l.text.as_str()).collect();
        assert!(
            texts.len() > 10 && texts.iter().all(|t| t.starts_with('#')),
            "{texts:?}"
        );
        assert!(labels.iter().any(Option::is_none));
        for row in 0..MAX_LABEL_ROWS {
            let mut spans: Vec<(f64, f64)> = labels
                .iter()
                .flatten()
                .filter(|l| l.row == row)
                .map(|l| (l.x, l.x + l.text.chars().count() as f64 * CHAR_W + 10.0))
                .collect();
            spans.sort_by(|a, b| a.0.total_cmp(&b.0));
            assert!(
                spans.windows(2).all(|p| p[0].1 < p[1].0),
                "row {row} overlaps"
            );
        }
    }

    #[test]
    fn clipping_keeps_windows_inside_the_plot() {
        let scale = Scale {
            t0: 1_000,
            t1: 2_000,
        };
        assert_eq!(scale.clip(0), GUTTER);
        assert_eq!(scale.clip(5_000), WIDTH - RIGHT);
    }
}
