//! Inputs whose group events make no rebalance: said, never silent.
//!
//! Takes: the per-input accounting, the merged events and the rebuilt
//! histories. Gives: for each input that gave group events of which no group
//! has a rebalance, a warning on that input (`--format json`'s `inputs`) and a
//! `no_rebalance` diagnostic (a warning on stderr) saying, from counts, what
//! was found and why no round could be told: events naming no group, or no
//! join (a JoinGroup, a ConsumerGroupHeartbeat at epoch 0, a joining log
//! line) among them.

use crate::event::Source;
use std::collections::{BTreeMap, BTreeSet};

use crate::describe::describe;
use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::event::GroupEvent;
use crate::group::GroupHistory;
use crate::report::InputSummary;

/// Groups and kinds named in a warning; the rest are counted.
const NAMED: usize = 4;

/// What one input's events hold.
#[derive(Debug, Default)]
struct Found {
    events: u64,
    joins: u64,
    groups: BTreeSet<String>,
    kinds: BTreeSet<String>,
    /// One of its groups is known to have rebalanced: no warning will be
    /// given for it, so its later events are not described.
    rebalanced: bool,
}

/// What each input's events hold, counted as the events come (`watch`
/// counts them as it reads; the batch run from its merged events).
#[derive(Debug, Default)]
pub struct Sources {
    found: BTreeMap<String, Found>,
}

impl Sources {
    /// Adds what `other` counted.
    pub fn merge(&mut self, other: Sources) {
        for (source, f) in other.found {
            let mine = self.found.entry(source).or_default();
            mine.events += f.events;
            mine.joins += f.joins;
            mine.groups.extend(f.groups);
            mine.kinds.extend(f.kinds);
            mine.rebalanced |= f.rebalanced;
        }
    }

    /// Counts one event under its input.
    pub fn add(&mut self, ev: &GroupEvent) {
        self.add_unless_rebalanced(ev, |_| false);
    }

    /// [`Self::add`], for a reader of events as they come that knows some
    /// groups that rebalanced already (`rebalanced`): an input one of whose
    /// groups did gets no warning, so the events after it need no
    /// describing (a tenth of a streamed log's run).
    pub fn add_unless_rebalanced(&mut self, ev: &GroupEvent, rebalanced: impl Fn(&str) -> bool) {
        let source: &str = &ev.evidence.source;
        if !self.found.contains_key(source) {
            self.found.insert(source.to_string(), Found::default());
        }
        let Some(f) = self.found.get_mut(source) else {
            return;
        };
        if f.rebalanced {
            return;
        }
        if let Some(g) = ev.group.as_deref().filter(|g| rebalanced(g)) {
            f.groups.insert(g.to_string());
            f.rebalanced = true;
            return;
        }
        let said = describe(ev);
        f.events += 1;
        f.joins += u64::from(said.mark == "join");
        if let Some(g) = ev.group.as_deref().filter(|g| !f.groups.contains(*g)) {
            f.groups.insert(g.to_string());
        }
        let api = api_of(&said.kind);
        if !f.kinds.contains(api) {
            f.kinds.insert(api.to_string());
        }
    }
}

/// Warns about every input with events but no rebalance in any of its groups.
pub fn explain(
    inputs: &mut [InputSummary],
    events: &[GroupEvent],
    folded: &[(Source, u64)],
    histories: &[GroupHistory],
    diags: &mut Diagnostics,
) {
    explain_beside(inputs, events, folded, histories, |_| false, diags);
}

/// [`explain`] of some of the inputs' events, beside events not there
/// whose groups `unseen` names: such a group may have rebalanced, so an
/// input naming it gets no warning.
pub fn explain_beside(
    inputs: &mut [InputSummary],
    events: &[GroupEvent],
    folded: &[(Source, u64)],
    histories: &[GroupHistory],
    unseen: impl Fn(&str) -> bool,
    diags: &mut Diagnostics,
) {
    let rebalanced = rebalanced_groups(histories);
    let rebalanced = |g: &str| rebalanced.contains(g) || unseen(g);
    // An input any of whose groups rebalanced gets no warning, so only the
    // other inputs' events are counted: describing every event of a dense
    // capture was 1.5 % of its run.
    let mut told: Vec<&str> = Vec::new();
    for ev in events {
        let source: &str = &ev.evidence.source;
        if !told.contains(&source) && ev.group.as_deref().is_some_and(rebalanced) {
            told.push(source);
        }
    }
    let mut sources = Sources::default();
    events
        .iter()
        .filter(|ev| !told.contains(&&*ev.evidence.source))
        .for_each(|ev| sources.add(ev));
    warn_folded(inputs, sources, folded, rebalanced, diags);
}

/// [`explain`], from counts made group by group as the groups were rebuilt
/// (their events let go since): `sources` counted the events naming no
/// group and those of every group that did not rebalance; `told` are the
/// inputs that gave an event of one that did (no warning for them).
pub fn explain_counted(
    inputs: &mut [InputSummary],
    mut sources: Sources,
    told: &BTreeSet<Source>,
    folded: &[(Source, u64)],
    histories: &[GroupHistory],
    diags: &mut Diagnostics,
) {
    let rebalanced = rebalanced_groups(histories);
    sources
        .found
        .retain(|source, _| !told.contains(source.as_str()));
    warn_folded(inputs, sources, folded, |g| rebalanced.contains(g), diags);
}

/// The groups with at least one rebalance.
fn rebalanced_groups(histories: &[GroupHistory]) -> BTreeSet<&str> {
    histories
        .iter()
        .filter(|h| !h.rebalances.is_empty())
        .map(|h| h.summary.group.as_str())
        .collect()
}

/// [`warn`], the events `folded` out of each input counted in.
fn warn_folded(
    inputs: &mut [InputSummary],
    mut sources: Sources,
    folded: &[(Source, u64)],
    rebalanced: impl Fn(&str) -> bool,
    diags: &mut Diagnostics,
) {
    for (source, n) in folded {
        if let Some(f) = sources.found.get_mut(&**source) {
            // Heartbeats of runs whose ends were counted: more of a kind
            // and a group already named.
            f.events += n;
        }
    }
    warn(inputs, &sources, rebalanced, diags);
}

/// Warns about every input in `sources` none of whose groups `rebalanced`.
pub fn warn(
    inputs: &mut [InputSummary],
    sources: &Sources,
    rebalanced: impl Fn(&str) -> bool,
    diags: &mut Diagnostics,
) {
    for input in inputs.iter_mut().filter(|i| i.warning.is_none()) {
        let Some(f) = sources.found.get(input.path.as_str()) else {
            continue;
        };
        if f.groups.iter().any(|g| rebalanced(g)) {
            continue;
        }
        let w = warning(&input.kind, f);
        diags.add(DiagnosticKind::NoRebalance, &input.path, "input", w.clone());
        input.warning = Some(w);
    }
}

/// `SyncGroup` from `SyncGroup request`: the API, not the direction.
fn api_of(kind: &str) -> &str {
    kind.strip_suffix(" request")
        .or_else(|| kind.strip_suffix(" response"))
        .unwrap_or(kind)
}

/// The warning's words, from the counts alone.
fn warning(input_kind: &str, f: &Found) -> String {
    let plural = |n: u64, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let kinds = named(f.kinds.iter().map(String::as_str), f.kinds.len());
    let what = plural(f.events, "group event");
    if f.groups.is_empty() {
        return format!("{what} ({kinds}) but none names a group, so no rebalance can be told");
    }
    let groups = named(f.groups.iter().map(String::as_str), f.groups.len());
    let of = if f.groups.len() == 1 {
        "group"
    } else {
        "groups"
    };
    let why = if f.joins == 0 {
        let none = if input_kind == "capture" {
            "no JoinGroup, no ConsumerGroupHeartbeat at epoch 0"
        } else {
            "no line of a member joining"
        };
        format!(
            "the {input_kind} holds no join ({none}): no group rebalanced while it was \
             recorded, or the {input_kind} starts mid-generation"
        )
    } else {
        format!(
            "its {} make no round kgtrace can tell from what was recorded",
            plural(f.joins, "join event")
        )
    };
    format!("{what} ({kinds}) of {of} {groups} but no rebalance: {why}")
}

/// The first [`NAMED`] items, then how many more.
fn named<'a>(items: impl Iterator<Item = &'a str>, total: usize) -> String {
    let mut s: Vec<&str> = items.take(NAMED).collect();
    let more = total.saturating_sub(NAMED);
    let tail = format!("+{more} more");
    if more > 0 {
        s.push(&tail);
    }
    s.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(events: u64, joins: u64, groups: &[&str], kinds: &[&str]) -> Found {
        Found {
            events,
            joins,
            groups: groups.iter().map(|g| g.to_string()).collect(),
            kinds: kinds.iter().map(|k| k.to_string()).collect(),
            rebalanced: false,
        }
    }

    fn beat(source: &Source, group: &str, frame: u64) -> GroupEvent {
        use crate::event::{EventKind, Evidence, Location};
        GroupEvent {
            ts: crate::time::Timestamp(frame as i64),
            group: Some(group.into()),
            member_id: Some("m".into()),
            group_instance_id: None,
            generation_id: Some(1),
            client: std::sync::Arc::default(),
            kind: EventKind::HeartbeatRequest { exchange: frame },
            evidence: Evidence {
                source: source.clone(),
                at: Location::Frame { frame },
            },
            truncated: false,
        }
    }

    #[test]
    fn an_input_stops_being_counted_once_one_of_its_groups_rebalanced_and_gets_no_warning() {
        let (a, b): (Source, Source) = (Source::from("a.pcap"), Source::from("b.pcap"));
        let mut sources = Sources::default();
        let rebalanced = |g: &str| g == "g1";
        sources.add_unless_rebalanced(&beat(&a, "g0", 1), rebalanced);
        sources.add_unless_rebalanced(&beat(&a, "g1", 2), rebalanced);
        sources.add_unless_rebalanced(&beat(&a, "g2", 3), rebalanced);
        sources.add_unless_rebalanced(&beat(&b, "g2", 4), rebalanced);
        let f = &sources.found["a.pcap"];
        assert!(f.rebalanced);
        assert_eq!(f.events, 1);
        assert_eq!(f.groups.iter().collect::<Vec<_>>(), ["g0", "g1"]);
        let mut inputs: Vec<InputSummary> = ["a.pcap", "b.pcap"]
            .iter()
            .map(|p| InputSummary {
                path: p.to_string(),
                kind: "capture".into(),
                ..InputSummary::default()
            })
            .collect();
        let mut diags = Diagnostics::default();
        warn(&mut inputs, &sources, rebalanced, &mut diags);
        assert!(inputs[0].warning.is_none());
        let w = inputs[1].warning.as_deref().unwrap_or_default();
        assert!(
            w.starts_with("1 group event (Heartbeat) of group g2"),
            "{w}"
        );
    }

    #[test]
    fn heartbeats_folded_away_count_among_their_inputs_events() {
        let source: Source = Source::from("c.pcap");
        let mut inputs = vec![InputSummary {
            path: "c.pcap".into(),
            kind: "capture".into(),
            ..InputSummary::default()
        }];
        let mut diags = Diagnostics::default();
        let folded = [(source.clone(), 40)];
        let beats = [beat(&source, "g", 1), beat(&source, "g", 2)];
        explain(&mut inputs, &beats, &folded, &[], &mut diags);
        let w = inputs[0].warning.as_deref().unwrap_or_default();
        assert!(
            w.starts_with("42 group events (Heartbeat) of group g"),
            "{w}"
        );
    }

    #[test]
    fn events_naming_no_group_are_said_to_name_none() {
        let w = warning("capture", &found(1, 0, &[], &["FindCoordinator"]));
        assert_eq!(
            w,
            "1 group event (FindCoordinator) but none names a group, so no rebalance can be told"
        );
    }

    #[test]
    fn a_log_without_a_join_says_it_holds_no_joining_line() {
        let w = warning("log", &found(3, 0, &["g"], &["MemberLeft"]));
        assert!(
            w.starts_with(
                "3 group events (MemberLeft) of group g but no rebalance: the log holds no join \
                 (no line of a member joining)"
            ),
            "{w}"
        );
    }

    #[test]
    fn joins_that_make_no_round_are_counted_and_many_groups_are_cut_at_four() {
        let w = warning(
            "capture",
            &found(9, 2, &["a", "b", "c", "d", "e"], &["JoinGroup"]),
        );
        assert!(
            w.starts_with("9 group events (JoinGroup) of groups a, b, c, d, +1 more"),
            "{w}"
        );
        assert!(
            w.ends_with("its 2 join events make no round kgtrace can tell from what was recorded"),
            "{w}"
        );
    }

    #[test]
    fn api_of_drops_the_direction_only() {
        assert_eq!(api_of("SyncGroup request"), "SyncGroup");
        assert_eq!(api_of("Heartbeat response"), "Heartbeat");
        assert_eq!(api_of("Preparing to rebalance"), "Preparing to rebalance");
    }
}
