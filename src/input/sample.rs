//! The group events a run that writes its rows while it reads keeps for
//! one check: whether an input's events made no rebalance.
//!
//! Takes: the group events `decode` and `timeline` count and let go as
//! they write their rows ([`super::Collected::events_not_kept`]), as
//! they pass. Gives: copies of them, captures' and logs' apart, up to
//! [`SAMPLE_CAP`]; past it, none (and says so).
//!
//! The batch run rebuilds every group of its inputs and warns about an
//! input whose events made no rebalance ([`crate::no_rebalance`]): the
//! warning tells a person why the answer is empty. `decode` and
//! `timeline` in a format whose rows stand alone keep no event (on a busy
//! coordinator they grew with the capture), so they gave no such warning
//! where the same command in a table did. The inputs that warning is for
//! are small (a few requests, a capture cut before the join): this keeps
//! up to [`SAMPLE_CAP`] events so that the run can rebuild them at its
//! end as the batch run does; an input larger than that goes unchecked,
//! as before (its rows are the answer, and `rebalances` says what they
//! made).

use crate::event::GroupEvent;

/// Events kept, at most (about 200 bytes each with what they own: a few
/// MB). Past it nothing is kept.
pub const SAMPLE_CAP: usize = 20_000;

/// Copies of the events that passed, until more than [`SAMPLE_CAP`] did.
#[derive(Debug, Default)]
pub struct EventSample {
    /// Events from captures, in the order they passed.
    pub captured: Vec<GroupEvent>,
    /// Events from logs, in the order they passed.
    pub logged: Vec<GroupEvent>,
    /// More than [`SAMPLE_CAP`] events passed: the lists are empty.
    pub overflowed: bool,
}

impl EventSample {
    /// Keeps copies of `events` (from logs when `logged`), or lets
    /// everything go once more than [`SAMPLE_CAP`] have passed.
    pub(super) fn keep(&mut self, events: &[GroupEvent], logged: bool) {
        if self.overflowed || events.is_empty() {
            return;
        }
        if self.captured.len() + self.logged.len() + events.len() > SAMPLE_CAP {
            *self = EventSample {
                overflowed: true,
                ..EventSample::default()
            };
            return;
        }
        let to = if logged {
            &mut self.logged
        } else {
            &mut self.captured
        };
        to.extend_from_slice(events);
    }

    /// Adds what `other` kept (another input's, read apart), as if its
    /// events had passed here after these.
    pub(super) fn absorb(&mut self, other: EventSample) {
        if other.overflowed {
            *self = EventSample {
                overflowed: true,
                ..EventSample::default()
            };
        }
        self.keep(&other.captured, false);
        self.keep(&other.logged, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{ClientRef, EventKind, Evidence, Location};

    fn event(line: u64) -> GroupEvent {
        GroupEvent {
            ts: crate::time::Timestamp(0),
            group: Some("g".into()),
            member_id: None,
            group_instance_id: None,
            generation_id: None,
            client: std::sync::Arc::new(ClientRef::default()),
            kind: EventKind::Broker(crate::event::BrokerLine::GroupDead),
            evidence: Evidence {
                source: "log".into(),
                at: Location::Line { line },
            },
            truncated: false,
        }
    }

    #[test]
    fn keeps_captures_and_logs_apart_up_to_the_cap_and_then_nothing() {
        let mut sample = EventSample::default();
        let batch: Vec<GroupEvent> = (1..=10).map(event).collect();
        sample.keep(&batch, false);
        sample.keep(&batch[..3], true);
        assert_eq!((sample.captured.len(), sample.logged.len()), (10, 3));
        assert!(!sample.overflowed);
        let to_the_cap: Vec<GroupEvent> = (0..SAMPLE_CAP - 13).map(|i| event(i as u64)).collect();
        sample.keep(&to_the_cap, false);
        assert_eq!(sample.captured.len() + sample.logged.len(), SAMPLE_CAP);
        assert!(!sample.overflowed, "the cap itself is kept");
        sample.keep(&batch[..1], true);
        assert!(sample.overflowed);
        assert!(sample.captured.is_empty() && sample.logged.is_empty());
        sample.keep(&batch, false);
        assert!(sample.captured.is_empty(), "nothing kept once past the cap");
    }

    #[test]
    fn another_inputs_sample_adds_its_events_or_its_overflow() {
        let batch: Vec<GroupEvent> = (1..=10).map(event).collect();
        let (mut one, mut two) = (EventSample::default(), EventSample::default());
        one.keep(&batch[..4], true);
        two.keep(&batch[4..], true);
        two.keep(&batch[..2], false);
        one.absorb(two);
        assert_eq!((one.logged, one.captured.len()), (batch, 2));
        let mut one = EventSample::default();
        one.keep(&[event(1)], true);
        one.absorb(EventSample {
            overflowed: true,
            ..EventSample::default()
        });
        assert!(one.overflowed && one.logged.is_empty());
    }
}
