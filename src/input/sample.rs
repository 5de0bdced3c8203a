//! The group events a run that writes its rows while it reads keeps for
//! one check: whether an input's events made no rebalance.
//!
//! Takes: the group events `decode` and `timeline` count and let go as
//! they write their rows ([`super::Collected::events_not_kept`]), as
//! they pass. Gives: copies of them, captures' and logs' apart, up to
//! [`SAMPLE_CAP`] per input; of an input past it, none, only the groups it
//! named.
//!
//! The batch run rebuilds every group of its inputs and warns about an
//! input whose events made no rebalance ([`crate::no_rebalance`]): the
//! warning tells a person why the answer is empty. `decode` and
//! `timeline` in a format whose rows stand alone keep no event (on a busy
//! coordinator they grew with the capture), so they gave no such warning
//! where the same command in a table did. The inputs that warning is for
//! are small (a few requests, a capture cut before the join): this keeps
//! up to [`SAMPLE_CAP`] events of each input so that the run can rebuild
//! them at its end as the batch run does. An input larger than that goes
//! unchecked (its rows are the answer, and `rebalances` says what they
//! made), and the groups it named count as rebalanced for the others (its
//! events may have been what made their rounds), so that no input is
//! warned about that the batch run would not warn about (but for one
//! case: when captures went past the cap and logs beside them did not, in
//! `decode` of a directory holding both, the logs' clocks are not lined up
//! with the captures' for the check, and a group the logs share could be
//! judged from events in another order). Past [`TOTAL_CAP`] events over
//! all inputs (a directory of many logs), nothing is checked.

use crate::event::{GroupEvent, Id, Source};
use crate::fast_hash::{FastMap, FastSet};

/// Events kept per input, at most (about 200 bytes each with what they
/// own: a few MB). Past it none of that input's is kept.
pub const SAMPLE_CAP: usize = 20_000;

/// Events kept over all inputs, at most (a directory of many logs is one
/// input of many sources): past it nothing is checked.
pub const TOTAL_CAP: usize = 100_000;

/// Groups remembered of the inputs past the cap, at most: past it nothing
/// is checked.
const MAX_GROUPS_UNSEEN: usize = 10_000;

/// Copies of the events that passed, input by input, until more than
/// [`SAMPLE_CAP`] of one input did.
#[derive(Debug, Default)]
pub struct EventSample {
    /// Events from captures, in the order they passed.
    pub captured: Vec<GroupEvent>,
    /// Events from logs, in the order they passed.
    pub logged: Vec<GroupEvent>,
    /// Events kept so far by input; `None` once past the cap.
    kept: FastMap<Source, Option<usize>>,
    /// The groups named by inputs past the cap.
    pub unseen_groups: FastSet<Id>,
    /// More than [`MAX_GROUPS_UNSEEN`] groups were named by inputs past
    /// the cap: nothing can be checked.
    pub given_up: bool,
}

impl EventSample {
    /// Keeps copies of `events` (from logs when `logged`); an input's
    /// events past [`SAMPLE_CAP`] let all of its go, and only its groups
    /// are remembered.
    pub(super) fn keep(&mut self, events: &[GroupEvent], logged: bool) {
        for run in events.chunk_by(|a, b| Source::ptr_eq(&a.evidence.source, &b.evidence.source)) {
            if self.given_up {
                return;
            }
            self.keep_run(run, logged);
        }
    }

    /// [`Self::keep`] of events of one input.
    fn keep_run(&mut self, run: &[GroupEvent], logged: bool) {
        let Some(first) = run.first() else {
            return;
        };
        let source = &first.evidence.source;
        if self.captured.len() + self.logged.len() + run.len() > TOTAL_CAP {
            return self.give_up();
        }
        let kept = self.kept.entry(source.clone()).or_insert(Some(0));
        match kept {
            Some(n) if *n + run.len() <= SAMPLE_CAP => {
                *n += run.len();
                let to = if logged {
                    &mut self.logged
                } else {
                    &mut self.captured
                };
                to.extend_from_slice(run);
            }
            Some(n) => {
                let any = *n > 0;
                *kept = None;
                if any {
                    self.let_go(source.clone());
                }
                self.note_groups(run);
            }
            None => self.note_groups(run),
        }
    }

    /// Lets every event kept of `source` go, remembering their groups.
    fn let_go(&mut self, source: Source) {
        let mut gone = Vec::new();
        for list in [&mut self.captured, &mut self.logged] {
            let (of, rest): (Vec<GroupEvent>, Vec<GroupEvent>) = std::mem::take(list)
                .into_iter()
                .partition(|e| e.evidence.source == source);
            *list = rest;
            gone.extend(of);
        }
        self.note_groups(&gone);
    }

    /// Remembers the groups `events` name.
    fn note_groups(&mut self, events: &[GroupEvent]) {
        let mut last: Option<&Id> = None;
        for g in events.iter().filter_map(|e| e.group.as_ref()) {
            // Runs of one group's events are the rule: one lookup a run.
            if last.is_some_and(|l| Id::ptr_eq(l, g)) {
                continue;
            }
            last = Some(g);
            if !self.note_group(g) {
                return;
            }
        }
    }

    /// Remembers group `g`; false once too many are remembered (the
    /// sample gave up).
    fn note_group(&mut self, g: &Id) -> bool {
        if self.unseen_groups.contains(g) {
            return true;
        }
        if self.unseen_groups.len() >= MAX_GROUPS_UNSEEN {
            self.give_up();
            return false;
        }
        self.unseen_groups.insert(g.clone());
        true
    }

    fn give_up(&mut self) {
        *self = EventSample {
            given_up: true,
            ..EventSample::default()
        };
    }

    /// Whether an input went past the cap (its events are not all here).
    pub fn overflowed(&self) -> bool {
        self.given_up || self.kept.values().any(Option::is_none)
    }

    /// Adds what `other` kept (other inputs', read apart), as if their
    /// events had passed here after these.
    pub(super) fn absorb(&mut self, other: EventSample) {
        if other.given_up {
            return self.give_up();
        }
        for (source, kept) in other.kept {
            let was = self.kept.get(&source).copied();
            match (kept, was) {
                (None, Some(Some(n))) => {
                    self.kept.insert(source.clone(), None);
                    if n > 0 {
                        self.let_go(source);
                    }
                }
                (None, None) => {
                    self.kept.insert(source, None);
                }
                _ => {}
            }
        }
        for g in &other.unseen_groups {
            if !self.note_group(g) {
                return;
            }
        }
        // Through `keep`: each input's cap holds over both samples, and
        // an input past it here keeps nothing from there.
        self.keep(&other.captured, false);
        self.keep(&other.logged, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{ClientRef, EventKind, Evidence, Location};

    fn event(source: &Source, group: &str, line: u64) -> GroupEvent {
        GroupEvent {
            ts: crate::time::Timestamp(0),
            group: Some(group.into()),
            member_id: None,
            group_instance_id: None,
            generation_id: None,
            client: std::sync::Arc::new(ClientRef::default()),
            kind: EventKind::Broker(crate::event::BrokerLine::GroupDead),
            evidence: Evidence {
                source: source.clone(),
                at: Location::Line { line },
            },
            truncated: false,
        }
    }

    fn events(source: &Source, group: &str, n: usize) -> Vec<GroupEvent> {
        (0..n).map(|i| event(source, group, i as u64)).collect()
    }

    #[test]
    fn each_input_is_kept_up_to_the_cap_and_one_past_it_leaves_only_its_groups() {
        let (a, b): (Source, Source) = ("a.log".into(), "b.pcap".into());
        let mut sample = EventSample::default();
        sample.keep(&events(&a, "orders", 10), true);
        sample.keep(&events(&b, "billing", 3), false);
        assert_eq!((sample.logged.len(), sample.captured.len()), (10, 3));
        sample.keep(&events(&a, "orders", SAMPLE_CAP - 10), true);
        assert_eq!(sample.logged.len(), SAMPLE_CAP, "the cap itself is kept");
        assert!(!sample.overflowed());
        sample.keep(&events(&a, "payments", 1), true);
        assert!(sample.overflowed());
        assert!(sample.logged.is_empty(), "none of a's kept");
        assert_eq!(sample.captured.len(), 3, "b's kept");
        let mut unseen: Vec<&str> = sample.unseen_groups.iter().map(|g| g.as_str()).collect();
        unseen.sort_unstable();
        assert_eq!(unseen, ["orders", "payments"]);
        sample.keep(&events(&a, "refunds", 2), true);
        assert!(sample.logged.is_empty() && sample.unseen_groups.contains("refunds"));
        sample.keep(&events(&b, "billing", 2), false);
        assert_eq!(sample.captured.len(), 5);
    }

    #[test]
    fn another_inputs_sample_adds_its_events_or_its_groups() {
        let (a, b): (Source, Source) = ("a.log".into(), "b.log".into());
        let (mut one, mut two) = (EventSample::default(), EventSample::default());
        one.keep(&events(&a, "orders", 4), true);
        two.keep(&events(&b, "billing", 6), true);
        one.absorb(two);
        assert_eq!(one.logged.len(), 10);
        assert!(!one.overflowed());
        let mut three = EventSample::default();
        three.keep(&events(&b, "refunds", SAMPLE_CAP + 1), true);
        one.absorb(three);
        assert!(one.overflowed());
        assert!(
            one.logged.iter().all(|e| e.evidence.source == a),
            "b's let go"
        );
        assert!(one.unseen_groups.contains("refunds") && one.unseen_groups.contains("billing"));
    }

    #[test]
    fn absorbing_holds_each_inputs_cap_over_both_samples() {
        let a: Source = "a.log".into();
        let (mut one, mut two) = (EventSample::default(), EventSample::default());
        one.keep(&events(&a, "orders", SAMPLE_CAP), true);
        two.keep(&events(&a, "billing", 1), true);
        one.absorb(two);
        assert!(one.overflowed() && one.logged.is_empty());
        assert!(one.unseen_groups.contains("billing"));
        // An input past the cap here keeps nothing from there.
        let mut three = EventSample::default();
        three.keep(&events(&a, "refunds", 3), true);
        one.absorb(three);
        assert!(one.logged.is_empty() && one.unseen_groups.contains("refunds"));
    }

    #[test]
    fn more_than_the_total_cap_over_all_inputs_gives_the_check_up() {
        let mut sample = EventSample::default();
        for i in 0..TOTAL_CAP / SAMPLE_CAP {
            let source: Source = format!("{i}.log").as_str().into();
            sample.keep(&events(&source, "g", SAMPLE_CAP), true);
        }
        assert!(!sample.given_up);
        sample.keep(&events(&"last.log".into(), "g", 1), true);
        assert!(sample.given_up && sample.logged.is_empty());
    }

    #[test]
    fn too_many_groups_past_the_cap_give_the_check_up() {
        let a: Source = "a.log".into();
        let mut sample = EventSample::default();
        sample.keep(&events(&a, "g", SAMPLE_CAP + 1), true);
        let many: Vec<GroupEvent> = (0..=MAX_GROUPS_UNSEEN)
            .map(|i| event(&a, &format!("g{i}"), 0))
            .collect();
        sample.keep(&many, true);
        assert!(sample.given_up && sample.overflowed());
    }
}
