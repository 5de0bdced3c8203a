//! What one group's timeline picture shows, before any pixel is chosen.
//!
//! Takes: a [`Report`] and a group name. Gives: a [`Picture`]: a swimlane per
//! member (plus one for group-level log events), each with its marks (from
//! the timeline entries' `mark`), the parked JoinGroup intervals of each
//! round, and the rebalance windows. Entries that name no group (a
//! connection closing) join the lane of the member they name by
//! `member_id`, `client_id` or client address; an entry without a
//! `member_id` (a first JoinGroup, whose id is still empty) joins the lane
//! of the member with its `client_id` that appears next. Each round's
//! partition stops become bars ([`StopBar`]), at most [`MAX_STOP_BARS`] per
//! group ([`STOPS_PER_ROUND`] per round, the longest), on one row per
//! partition; the rest are counted.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::report::{Owner, PartitionStop, Rebalance, Report, StopWithoutRebalance, TimelineEntry};
use crate::time::Timestamp;

use super::glyph;
use crate::render::doc::TriggerClass;
use crate::render::human;

/// The picture of one group.
#[derive(Debug, Default)]
pub(crate) struct Picture {
    /// Lanes, top to bottom.
    pub(crate) lanes: Vec<Lane>,
    /// Rebalance windows, in start order.
    pub(crate) windows: Vec<Window>,
    /// First and last instant drawn, ns; `None` when nothing is drawn.
    pub(crate) range: Option<(i64, i64)>,
    /// Partition stops drawn, in row order then time.
    pub(crate) stops: Vec<StopBar>,
    /// Partition stops of the group's rounds not drawn (over the caps).
    pub(crate) stops_left_out: usize,
}

/// Partition-stop bars drawn per group at most, like the Markdown chart's
/// cap ([`crate::render::mermaid::MAX_TASKS`]).
pub(crate) const MAX_STOP_BARS: usize = 60;
/// Partition-stop bars drawn per round at most (its longest stops).
pub(crate) const STOPS_PER_ROUND: usize = 12;
/// Partition rows drawn per group at most.
pub(crate) const MAX_STOP_ROWS: usize = 24;

/// One partition stop drawn as a bar on its partition's row.
#[derive(Debug)]
pub(crate) struct StopBar {
    /// `topic-N`, the row.
    pub(crate) partition: String,
    /// When it stopped, ns.
    pub(crate) start: i64,
    /// When it resumed, ns; the picture's end when still stopped.
    pub(crate) end: i64,
    /// Still stopped at the end of the input: drawn open-ended.
    pub(crate) open: bool,
    /// The group's number of the rebalance that stopped it ("Rebalance N");
    /// 0 when no rebalance did (a static member's restart).
    pub(crate) round: usize,
    /// Short label beside the bar: `#N 11.4 s`, or `restart 5.1 s`.
    pub(crate) label: String,
    /// Tooltip: round, partition, owners, why and how long.
    pub(crate) title: String,
}

/// One swimlane.
#[derive(Debug, Default)]
pub(crate) struct Lane {
    /// Short label (client id and short member id).
    pub(crate) label: String,
    /// Full identity for the tooltip.
    pub(crate) title: String,
    /// The lane of group-level events (no member).
    pub(crate) is_group: bool,
    /// What was seen, in time order.
    pub(crate) marks: Vec<Mark>,
    /// JoinGroup requests parked at the broker: (sent, answered), ns.
    pub(crate) parked: Vec<(i64, i64)>,
    member_id: Option<String>,
    client_id: Option<String>,
    hosts: Vec<String>,
    first_seen: i64,
}

/// One event drawn on a lane.
#[derive(Debug, Clone)]
pub(crate) struct Mark {
    /// When, ns.
    pub(crate) ts: i64,
    /// The timeline entry's `mark`.
    pub(crate) kind: String,
    /// The event carried a Kafka error.
    pub(crate) error: bool,
    /// Tooltip text.
    pub(crate) title: String,
    /// What the legend calls it ([`glyph::legend_word`]).
    pub(crate) legend: &'static str,
}

/// A rebalance drawn as a shaded window.
#[derive(Debug)]
pub(crate) struct Window {
    /// Start and end, ns (end is the picture's end when it never completed).
    pub(crate) start: i64,
    /// End, ns.
    pub(crate) end: i64,
    /// Still in progress at the end of the input (status `in_progress`):
    /// drawn dashed, to the picture's end.
    pub(crate) open: bool,
    /// It completed: only completed rounds compete for the "longest" zoom
    /// panels (a superseded or unfinished one has no length of its own).
    pub(crate) finished: bool,
    /// Trigger family (colour).
    pub(crate) class: TriggerClass,
    /// Short label.
    pub(crate) label: String,
    /// 1-based number of the rebalance within its group (the incident
    /// report's "Rebalance N", [`crate::render::parts::round_numbers`]).
    pub(crate) number: usize,
}

/// The report split by group once, so that drawing every group's picture
/// stays linear in the report (a scan of the whole timeline per group made
/// `report --html` with 8 k groups take minutes).
pub(crate) struct Index<'a> {
    /// Entries naming each group, as (timeline position, entry).
    named: HashMap<&'a str, Vec<(usize, &'a TimelineEntry)>>,
    /// Entries naming no group, by member id, by client id (those without
    /// a member id) and by host (those with neither).
    by_member: HashMap<&'a str, Vec<(usize, &'a TimelineEntry)>>,
    by_client: HashMap<&'a str, Vec<(usize, &'a TimelineEntry)>>,
    by_host: HashMap<&'a str, Vec<(usize, &'a TimelineEntry)>>,
    /// Each group's rebalances with their number in the report (0-based).
    rounds: HashMap<&'a str, Vec<(usize, &'a Rebalance)>>,
    /// Each group's partition stops without a rebalance (a static member
    /// restarted within its session timeout).
    restarts: HashMap<&'a str, Vec<&'a StopWithoutRebalance>>,
    /// [`human::span`] of the report.
    span: Option<(Timestamp, Timestamp)>,
}

impl<'a> Index<'a> {
    /// Indexes `report`.
    pub(crate) fn new(report: &'a Report) -> Self {
        let mut index = Index {
            named: HashMap::new(),
            by_member: HashMap::new(),
            by_client: HashMap::new(),
            by_host: HashMap::new(),
            rounds: HashMap::new(),
            restarts: HashMap::new(),
            span: human::span(report),
        };
        for s in &report.stops_without_rebalance {
            index.restarts.entry(s.group.as_str()).or_default().push(s);
        }
        for (i, e) in report.timeline.iter().enumerate() {
            let (member, client) = (non_empty(&e.member_id), non_empty(&e.client_id));
            let list = match (
                e.group.as_deref(),
                member,
                client,
                non_empty(&e.client_host),
            ) {
                (Some(g), ..) => index.named.entry(g),
                (None, Some(m), ..) => index.by_member.entry(m),
                (None, None, Some(c), _) => index.by_client.entry(c),
                (None, None, None, Some(h)) => index.by_host.entry(h),
                (None, None, None, None) => continue,
            };
            list.or_default().push((i, e));
        }
        for (i, r) in report.rebalances.iter().enumerate() {
            index
                .rounds
                .entry(r.group.as_str())
                .or_default()
                .push((i, r));
        }
        index
    }
}

fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

/// Builds the picture of `group` (tests; [`picture_in`] draws reports).
#[cfg(test)]
pub(crate) fn picture(report: &Report, group: &str) -> Picture {
    picture_in(&Index::new(report), group)
}

/// Builds the picture of `group` from the report's [`Index`].
pub(crate) fn picture_in(index: &Index<'_>, group: &str) -> Picture {
    let numbered: &[(usize, &Rebalance)] = index.rounds.get(group).map_or(&[], Vec::as_slice);
    let rounds: Vec<&Rebalance> = numbered.iter().map(|(_, r)| *r).collect();
    let named: &[(usize, &TimelineEntry)] = index.named.get(group).map_or(&[], Vec::as_slice);
    let mut lanes = member_lanes(named, &rounds);
    let group_lane = place_entries(index, named, group, &mut lanes);
    add_parked(&mut lanes, &rounds);
    if !group_lane.marks.is_empty() || lanes.is_empty() {
        lanes.insert(0, group_lane);
    }
    let range = observed_range(index.span, &lanes, &rounds);
    let end = range.map(|(_, end)| end).unwrap_or(0);
    let windows = rounds
        .iter()
        .enumerate()
        .map(|(n, r)| {
            let next = rounds.get(n + 1).map(|x| x.started_at.0);
            window(r, n + 1, next, end)
        })
        .collect();
    let restarts: &[&StopWithoutRebalance] = index.restarts.get(group).map_or(&[], Vec::as_slice);
    let (stops, stops_left_out) = stop_bars(&rounds, restarts, end);
    Picture {
        lanes,
        windows,
        range,
        stops,
        stops_left_out,
    }
}

/// The stops to draw, bounded: each round's [`STOPS_PER_ROUND`] longest
/// with a plausible start, in round order, then the stops no rebalance
/// explains (a static member's restart), until [`MAX_STOP_BARS`] bars or
/// [`MAX_STOP_ROWS`] partitions; and how many were left out. Sorted by
/// partition (topic, then number), then start.
fn stop_bars(
    rounds: &[&Rebalance],
    restarts: &[&StopWithoutRebalance],
    end: i64,
) -> (Vec<StopBar>, usize) {
    let mut bars = Vec::new();
    let mut rows: HashSet<&str> = HashSet::new();
    let mut left_out = 0;
    let causes = rounds
        .iter()
        .enumerate()
        .map(|(n, r)| (Cause::Round(n + 1), r.partitions.as_slice()))
        .chain(restarts.iter().map(|s| {
            let who = s.group_instance_id.as_deref().unwrap_or("?");
            (Cause::Restart(who), s.partitions.as_slice())
        }));
    for (cause, partitions) in causes {
        let mut taken = 0;
        for p in partitions {
            let new_row = !rows.contains(p.partition.as_str());
            let fits = taken < STOPS_PER_ROUND
                && bars.len() < MAX_STOP_BARS
                && (!new_row || rows.len() < MAX_STOP_ROWS)
                && p.stopped_at.is_plausible();
            if !fits {
                left_out += 1;
                continue;
            }
            rows.insert(&p.partition);
            bars.push(stop_bar(p, cause, end));
            taken += 1;
        }
    }
    bars.sort_by(|a, b| {
        partition_key(&a.partition)
            .cmp(&partition_key(&b.partition))
            .then(a.start.cmp(&b.start))
    });
    (bars, left_out)
}

/// What stopped a partition: the group's rebalance number N, or a static
/// member (its `group.instance.id`) restarting with no rebalance.
#[derive(Clone, Copy, Debug)]
enum Cause<'a> {
    Round(usize),
    Restart(&'a str),
}

/// `orders-10` sorts after `orders-9`: (topic, number), else the name.
fn partition_key(name: &str) -> (&str, Option<u64>, &str) {
    match name.rsplit_once('-') {
        Some((topic, n)) => match n.parse() {
            Ok(n) => (topic, Some(n), name),
            Err(_) => (name, None, name),
        },
        None => (name, None, name),
    }
}

fn stop_bar(p: &PartitionStop, cause: Cause<'_>, picture_end: i64) -> StopBar {
    let resumed = p.resumed_at.filter(|t| t.is_plausible()).map(|t| t.0);
    let open = resumed.is_none();
    let end = resumed.unwrap_or(picture_end).max(p.stopped_at.0);
    let how_long = match (open, p.stopped_ms) {
        (true, _) => "still stopped".to_string(),
        (false, ms) => human::maybe_duration(ms),
    };
    let owner = |o: Option<&Owner>| match o {
        Some(o) => human::member_label(Some(&o.member_id), o.client_id.as_deref()),
        None => "nobody".into(),
    };
    let (what, when) = match resumed {
        Some(t) => (
            format!("stopped {how_long}"),
            format!(
                "{} to {}",
                human::clock(p.stopped_at),
                human::clock(Timestamp(t))
            ),
        ),
        None => (
            "still stopped at the end of the input".to_string(),
            format!("since {}", human::clock(p.stopped_at)),
        ),
    };
    let (round, tag, heading) = match cause {
        Cause::Round(n) => (n, format!("#{n}"), format!("Rebalance {n}")),
        Cause::Restart(who) => (
            0,
            "restart".to_string(),
            format!(
                "Static member {} restarted, no rebalance",
                human::one_line(who)
            ),
        ),
    };
    let title = format!(
        "{heading}: {} {what} ({})\n{} → {}\n{when}",
        human::one_line(&p.partition),
        human::one_line(&p.why_stopped),
        owner(p.from.as_ref()),
        owner(p.to.as_ref()),
    );
    StopBar {
        partition: human::one_line(&p.partition),
        start: p.stopped_at.0,
        end,
        open,
        round,
        label: format!("{tag} {how_long}"),
        title,
    }
}

/// Puts each timeline entry of the group (or naming none but matching a
/// member) on its member's lane, in timeline order; returns the lane of the
/// rest. Entries naming no group are looked up by the lanes' member ids,
/// client ids and hosts rather than scanned.
fn place_entries<'a>(
    index: &Index<'a>,
    named: &[(usize, &'a TimelineEntry)],
    group: &str,
    lanes: &mut [Lane],
) -> Lane {
    let mut group_lane = Lane {
        label: "group events".into(),
        title: format!("events of group {group} that name no member"),
        is_group: true,
        ..Lane::default()
    };
    let mut entries: Vec<(usize, &TimelineEntry)> = named.to_vec();
    let mut members = HashSet::new();
    let mut clients = HashSet::new();
    let mut hosts = HashSet::new();
    for l in lanes.iter() {
        members.extend(l.member_id.as_deref());
        clients.extend(l.client_id.as_deref());
        hosts.extend(l.hosts.iter().map(String::as_str));
    }
    let unnamed = |map: &HashMap<&str, Vec<(usize, &'a TimelineEntry)>>, keys: HashSet<&str>| {
        keys.into_iter()
            .flat_map(|k| map.get(k).into_iter().flatten().copied())
            .collect::<Vec<_>>()
    };
    entries.extend(unnamed(&index.by_member, members));
    entries.extend(unnamed(&index.by_client, clients));
    entries.extend(unnamed(&index.by_host, hosts));
    entries.sort_unstable_by_key(|(i, _)| *i);
    let placed: Vec<(Option<usize>, &TimelineEntry)> = {
        let lookup = LaneLookup::new(lanes);
        entries
            .into_iter()
            .map(|(_, e)| (lookup.lane_of(lanes, e), e))
            .collect()
    };
    for (lane, e) in placed {
        let named = e.group.as_deref() == Some(group);
        match lane {
            Some(i) => lanes[i].marks.push(mark(e)),
            None if named => group_lane.marks.push(mark(e)),
            _ => {}
        }
    }
    group_lane
}

/// First and last instant to draw. A rebalance that never completed lasted
/// at least until the inputs end, so the range reaches that far.
fn observed_range(
    span: Option<(Timestamp, Timestamp)>,
    lanes: &[Lane],
    rounds: &[&Rebalance],
) -> Option<(i64, i64)> {
    let range = range(lanes, rounds);
    match (range, span) {
        (Some((first, last)), Some((_, inputs_end)))
            if rounds
                .iter()
                .any(|r| r.completed_at.is_none() || still_stopped(r)) =>
        {
            Some((first, last.max(inputs_end.0)))
        }
        _ => range,
    }
}

/// A partition of the round is still stopped at the end of the input.
fn still_stopped(r: &Rebalance) -> bool {
    r.partitions
        .iter()
        .any(|p| p.stopped_at.is_plausible() && p.resumed_at.is_none())
}

/// One lane per `member_id` seen in the group, ordered by first sight.
fn member_lanes(named: &[(usize, &TimelineEntry)], rounds: &[&Rebalance]) -> Vec<Lane> {
    let mut by_id: BTreeMap<&str, Lane> = BTreeMap::new();
    for (_, e) in named {
        let Some(id) = e.member_id.as_deref().filter(|m| !m.is_empty()) else {
            continue;
        };
        let lane = by_id
            .entry(id)
            .or_insert_with(|| new_lane(id, e.client_id.as_deref(), e.ts.0));
        lane.first_seen = lane.first_seen.min(e.ts.0);
        if lane.client_id.is_none() {
            lane.client_id = e.client_id.clone();
        }
        if let Some(host) = e.client_host.as_ref().filter(|h| !lane.hosts.contains(h)) {
            lane.hosts.push(host.clone());
        }
    }
    for j in rounds.iter().flat_map(|r| &r.joins) {
        by_id
            .entry(&j.member_id)
            .or_insert_with(|| new_lane(&j.member_id, j.client_id.as_deref(), j.requested_at.0));
    }
    let mut lanes: Vec<Lane> = by_id.into_values().collect();
    lanes.sort_by(|a, b| (a.first_seen, &a.member_id).cmp(&(b.first_seen, &b.member_id)));
    for lane in &mut lanes {
        lane.title = lane_title(lane);
    }
    lanes
}

fn new_lane(member_id: &str, client_id: Option<&str>, first_seen: i64) -> Lane {
    Lane {
        label: human::member_label(Some(member_id), client_id),
        member_id: Some(member_id.to_string()),
        client_id: client_id.map(str::to_string),
        first_seen,
        ..Lane::default()
    }
}

fn lane_title(lane: &Lane) -> String {
    let mut parts = vec![format!(
        "member_id {}",
        human::or_dash(lane.member_id.as_deref())
    )];
    parts.push(format!(
        "client_id {}",
        human::or_dash(lane.client_id.as_deref())
    ));
    if !lane.hosts.is_empty() {
        parts.push(format!("host {}", human::one_line(&lane.hosts.join(", "))));
    }
    parts.join("\n")
}

/// The lanes by member id, client id and host, so that finding an entry's
/// lane is a lookup, not a scan of every lane (a group of 80 k members).
struct LaneLookup<'l> {
    by_member: HashMap<&'l str, usize>,
    by_client: HashMap<&'l str, Vec<usize>>,
    by_host: HashMap<&'l str, usize>,
}

impl<'l> LaneLookup<'l> {
    fn new(lanes: &'l [Lane]) -> Self {
        let mut l = LaneLookup {
            by_member: lanes_by_member(lanes),
            by_client: HashMap::new(),
            by_host: HashMap::new(),
        };
        for (i, lane) in lanes.iter().enumerate() {
            if let Some(c) = lane.client_id.as_deref() {
                l.by_client.entry(c).or_default().push(i);
            }
            for h in &lane.hosts {
                l.by_host.entry(h.as_str()).or_insert(i);
            }
        }
        l
    }

    /// The lane an entry belongs to, if any member lane fits: the lane of
    /// its member id; else the next lane of its client id to appear (the
    /// last if none appears later); else the first lane of its host.
    fn lane_of(&self, lanes: &[Lane], e: &TimelineEntry) -> Option<usize> {
        if let Some(id) = non_empty(&e.member_id) {
            return self.by_member.get(id).copied();
        }
        if let Some(client) = non_empty(&e.client_id) {
            // The client's lanes in lane order, which is first sight's
            // (`member_lanes`): the first seen at or after the entry is
            // found by halving, not by a scan (a client rejoining under a
            // new id each round of a storm has a lane per round).
            let same = self.by_client.get(client)?;
            let next = same.partition_point(|&i| lanes[i].first_seen < e.ts.0);
            return same.get(next).or(same.last()).copied();
        }
        self.by_host.get(non_empty(&e.client_host)?).copied()
    }
}

fn mark(e: &TimelineEntry) -> Mark {
    let mut title = format!("{} {}", human::clock(e.ts), human::one_line(&e.kind));
    if let Some(g) = e.generation {
        title.push_str(&format!(" (generation {g})"));
    }
    if let Some(error) = &e.error {
        title.push_str(&format!(" {}", human::one_line(error)));
    }
    if !e.detail.is_empty() {
        title.push_str(&format!("\n{}", human::one_line(&e.detail)));
    }
    title.push_str(&format!(
        "\n{}",
        human::evidence(&e.source, e.frame, e.line)
    ));
    Mark {
        ts: e.ts.0,
        kind: e.mark.clone(),
        error: e.error.as_deref().is_some_and(|x| !x.is_empty()),
        title,
        legend: glyph::legend_word(&e.mark, &e.kind, e.frame.is_none() && e.line.is_some()),
    }
}

/// The first lane of each member id.
fn lanes_by_member(lanes: &[Lane]) -> HashMap<&str, usize> {
    let mut by_member = HashMap::new();
    for (i, lane) in lanes.iter().enumerate() {
        if let Some(m) = lane.member_id.as_deref() {
            by_member.entry(m).or_insert(i);
        }
    }
    by_member
}

/// Each round's parked JoinGroup requests on their members' lanes, looked
/// up by member id (a storm of rounds under new member ids makes tens of
/// thousands of lanes: searched for each join, they took minutes).
fn add_parked(lanes: &mut [Lane], rounds: &[&Rebalance]) {
    let parked: Vec<(usize, (i64, i64))> = {
        let by_member = lanes_by_member(lanes);
        rounds
            .iter()
            .flat_map(|r| &r.joins)
            .filter_map(|j| {
                let ms = j.parked_ms.filter(|ms| ms.is_finite() && *ms > 0.0)?;
                let lane = *by_member.get(j.member_id.as_str())?;
                let start = j.requested_at.0;
                Some((lane, (start, start.saturating_add((ms * 1e6) as i64))))
            })
            .collect()
    };
    for (lane, interval) in parked {
        lanes[lane].parked.push(interval);
    }
}

fn range(lanes: &[Lane], rounds: &[&Rebalance]) -> Option<(i64, i64)> {
    let marks = lanes.iter().flat_map(|l| l.marks.iter().map(|m| m.ts));
    let parked = lanes
        .iter()
        .flat_map(|l| l.parked.iter().flat_map(|p| [p.0, p.1]));
    let windows = rounds
        .iter()
        .flat_map(|r| std::iter::once(r.started_at.0).chain(r.completed_at.map(|t| t.0)));
    let stops = rounds
        .iter()
        .flat_map(|r| &r.partitions)
        .flat_map(|p| [Some(p.stopped_at), p.resumed_at])
        .flatten()
        .filter(|t| t.is_plausible())
        .map(|t| t.0);
    marks
        .chain(parked)
        .chain(windows)
        .chain(stops)
        .fold(None, |acc, t| match acc {
            None => Some((t, t)),
            Some((a, b)) => Some((a.min(t), b.max(t))),
        })
}

/// The window of round `r`: to its completion; a superseded round to the
/// start of the round that replaced it (`next`); a round still in progress
/// at the end of the input to the picture's end, dashed.
fn window(r: &Rebalance, number: usize, next: Option<i64>, picture_end: i64) -> Window {
    let superseded = r.completed_at.is_none() && r.status == "superseded";
    let open = r.completed_at.is_none() && !superseded;
    let end = match (r.completed_at, superseded) {
        (Some(t), _) => t.0,
        (None, true) => next.unwrap_or(r.started_at.0),
        (None, false) => picture_end,
    }
    .max(r.started_at.0);
    let duration = match r.duration_ms {
        Some(ms) => human::duration(ms),
        None if superseded => "superseded".into(),
        None if r.status == "in_progress" => "in progress".into(),
        None => "never completed".into(),
    };
    let label = format!(
        "{} {} {duration}",
        human::generation_step(r.previous_generation, r.generation).replace(' ', ""),
        human::one_line(&r.trigger.kind)
    );
    Window {
        start: r.started_at.0,
        end,
        open,
        finished: r.completed_at.is_some(),
        class: TriggerClass::of(&r.trigger.kind),
        label,
        number,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample;

    #[test]
    fn one_lane_per_member_plus_one_for_group_level_log_events() {
        let p = picture(&sample::incident(), "orders-service");
        let labels: Vec<&str> = p.lanes.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "group events",
                "consumer-orders-1 / 3f1e7c2a…",
                "consumer-orders-2 / 8a7b6c5d…",
                "nonode@nohost/<0.1083.0> / 9db8"
            ]
        );
        assert_eq!(p.windows.len(), 2);
    }

    #[test]
    fn a_first_join_without_member_id_lands_on_its_clients_lane() {
        let p = picture(&sample::incident(), "orders-service");
        let brod = &p.lanes[3];
        assert_eq!(brod.marks[0].ts, sample::at(41_250).0);
        assert_eq!(brod.marks[0].kind, "join");
    }

    #[test]
    fn a_connection_close_without_group_lands_on_the_lane_with_its_address() {
        let p = picture(&sample::incident(), "orders-service");
        assert!(p.lanes[2].marks.iter().any(|m| m.kind == "close"));
        assert!(p.lanes[1].marks.iter().all(|m| m.kind != "close"));
    }

    #[test]
    fn a_rebalance_that_never_completed_runs_to_the_end_of_the_picture() {
        let p = picture(&sample::incident(), "billing-ledger");
        assert_eq!(p.lanes.len(), 1);
        let last = p.windows.last().unwrap();
        assert!(last.open);
        assert_eq!(Some(last.end), p.range.map(|r| r.1));
        assert_eq!(
            last.end,
            sample::at(270_000).0,
            "the capture ends at 12:04:30"
        );
    }

    #[test]
    fn a_static_members_restart_is_drawn_as_a_stop_with_no_rebalance() {
        let mut report = sample::incident();
        let mut stop = report.rebalances[1].partitions[0].clone();
        stop.partition = "orders-9".into();
        report.stops_without_rebalance.push(StopWithoutRebalance {
            group: "orders-service".into(),
            generation: Some(7),
            cause: "static_member_restarted".into(),
            group_instance_id: Some("orders-static-1".into()),
            partitions: vec![stop],
        });
        let p = picture(&report, "orders-service");
        let bar = p.stops.iter().find(|s| s.partition == "orders-9").unwrap();
        assert_eq!(bar.round, 0, "no rebalance's number");
        assert!(bar.label.starts_with("restart "), "{}", bar.label);
        assert!(
            bar.title
                .starts_with("Static member orders-static-1 restarted, no rebalance: orders-9"),
            "{}",
            bar.title
        );
        let other = picture(&report, "billing-ledger");
        assert!(other.stops.iter().all(|s| s.round > 0));
    }

    #[test]
    fn a_first_join_lands_on_the_next_lane_of_its_client_to_appear_or_its_last() {
        // A client that rejoins under a new member id each time: a lane
        // per id, first seen at 100, 200 and 300 s; its first JoinGroups
        // (no member id yet) go to the lane that appears next.
        let mut report = sample::incident();
        let seen = sample::member_event(&report, "orders-service");
        let entry = |s: i64, member: Option<&str>, kind: &str| {
            let mut e = seen.clone();
            e.ts = sample::at(s * 1000);
            e.member_id = member.map(str::to_string);
            e.client_id = Some("rejoiner".into());
            e.client_host = None;
            e.mark = kind.into();
            e
        };
        for (s, id) in [(100, "r-1"), (200, "r-2"), (300, "r-3")] {
            report.timeline.push(entry(s, Some(id), "heartbeat"));
        }
        for s in [50, 150, 250, 350] {
            report.timeline.push(entry(s, None, "join"));
        }
        report.timeline.sort_by_key(|e| e.ts);
        let p = picture(&report, "orders-service");
        let joins_at = |id: &str| -> Vec<i64> {
            let lane = p.lanes.iter().find(|l| l.title.contains(id)).unwrap();
            lane.marks
                .iter()
                .filter(|m| m.kind == "join")
                .map(|m| m.ts / 1_000_000_000 - sample::at(0).0 / 1_000_000_000)
                .collect()
        };
        assert_eq!(joins_at("r-1"), [50]);
        assert_eq!(joins_at("r-2"), [150]);
        assert_eq!(joins_at("r-3"), [250, 350]);
    }

    #[test]
    fn parked_joins_are_drawn_on_their_members_lane() {
        let p = picture(&sample::incident(), "orders-service");
        let brod = &p.lanes[3];
        assert!(brod
            .parked
            .contains(&(sample::at(41_250).0, sample::at(44_172).0)));
    }
}
