//! One rebalance round while it is being observed, and its final record.
//!
//! Takes: what the classic or KIP-848 machine saw during one round (trigger
//! candidates, joins, syncs, evidence). Gives: [`crate::report::Rebalance`]
//! once the round closes and its causes have been resolved.

use std::collections::{BTreeMap, BTreeSet};

use crate::event::GroupEvent;
use crate::report::{EvidenceLine, MemberJoin, Rebalance, RemovedMember, Trigger};
use crate::time::Timestamp;

use super::trigger::{Confidence, Kind};

/// Evidence kept per round; more is counted, not stored, so a storm of
/// heartbeats cannot grow memory without bound.
pub const MAX_EVIDENCE: usize = 40;

/// Causes kept per round.
pub const MAX_CANDIDATES: usize = 256;

/// Other causes a record lists; more are counted in its notes.
pub const MAX_OTHER_TRIGGERS: usize = 20;

/// Closed rounds one group keeps for its records. A round costs about 16 KB
/// until the records are built (its evidence, joins, member sets and
/// assignments), so a group that rebalanced 80,000 times in one input would
/// need 1.3 GB: past this many, the oldest rounds are let go and counted
/// (the newest are what an incident asks about). Kafka has no limit on
/// generations; 10,000 rounds are a rebalance every 9 s for a whole day.
pub const MAX_ROUNDS_PER_GROUP: usize = 10_000;

/// A group's closed rounds, oldest first, at most [`MAX_ROUNDS_PER_GROUP`]:
/// the oldest are let go when more close, and what was let go is counted.
#[derive(Debug, Default)]
pub struct ClosedRounds {
    /// Boxed: a group's rounds (over 600 bytes each) were moved at every
    /// growth of the queue, into fresh pages, a tenth of a rebalance-dense
    /// log's rebuilding.
    rounds: std::collections::VecDeque<Box<Round>>,
    /// Rounds let go.
    pub let_go: usize,
    /// When the first round let go started.
    pub let_go_from: Option<Timestamp>,
    /// When the last round let go started.
    pub let_go_to: Option<Timestamp>,
}

impl ClosedRounds {
    /// Adds a closed round, letting the oldest go past the cap.
    pub fn push(&mut self, r: Round) {
        self.rounds.push_back(Box::new(r));
        if self.rounds.len() > MAX_ROUNDS_PER_GROUP {
            if let Some(old) = self.rounds.pop_front() {
                self.let_go += 1;
                self.let_go_from.get_or_insert(old.started_at);
                self.let_go_to = Some(old.started_at);
            }
        }
    }

    /// The newest closed round.
    pub fn last(&self) -> Option<&Round> {
        self.rounds.back().map(|r| &**r)
    }

    /// The newest closed round.
    pub fn last_mut(&mut self) -> Option<&mut Round> {
        self.rounds.back_mut().map(|r| &mut **r)
    }

    /// Whether no round has closed (letting go always keeps the newest).
    pub fn is_empty(&self) -> bool {
        self.rounds.is_empty()
    }

    /// The kept rounds, newest last.
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Round> {
        self.rounds.iter_mut().map(|r| &mut **r)
    }

    /// Takes the kept rounds out, oldest first, and says what was let go.
    pub fn take(&mut self) -> (Vec<Round>, Option<String>) {
        let rounds = std::mem::take(&mut self.rounds)
            .into_iter()
            .map(|r| *r)
            .collect();
        let note = (self.let_go > 0).then(|| {
            format!(
                "{} earlier rebalances (started {} to {}) were not kept: a group keeps its newest {} rounds (docs/limits.md); cut the input to their time (`editcap -A/-B` for a capture) to see them",
                self.let_go,
                self.let_go_from.map_or_else(|| "?".into(), |t| t.to_string()),
                self.let_go_to.map_or_else(|| "?".into(), |t| t.to_string()),
                MAX_ROUNDS_PER_GROUP
            )
        });
        (rounds, note)
    }
}

/// A possible cause, with what it rests on.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The kind.
    pub kind: Kind,
    /// How sure.
    pub confidence: Confidence,
    /// The member it is about.
    pub member_id: Option<String>,
    /// Its client id.
    pub client_id: Option<String>,
    /// Words.
    pub detail: String,
    /// When it was seen.
    pub at: Timestamp,
    /// Still to be judged once the whole input has been read.
    pub deferred: Deferred,
}

/// A candidate whose kind depends on what happens after it.
#[derive(Clone, Debug, PartialEq)]
pub enum Deferred {
    /// Final as it is.
    No,
    /// A LeaveGroup without a reason: a clean close or a poll timeout?
    Leave {
        /// Client key (client id + host) of the leaver.
        client_key: String,
    },
}

/// A member that was silent when the round began.
#[derive(Clone, Debug)]
pub struct Silence {
    /// The member.
    pub member_id: String,
    /// Its last request before the round.
    pub last_seen: Option<Timestamp>,
    /// Its session timeout, if its JoinGroup was seen.
    pub session_timeout_ms: Option<i32>,
}

/// A client of the group whose member id the inputs never showed (a
/// snap length cut it from every request and answer), silent when the
/// round began: known by its connection's client id alone.
#[derive(Clone, Debug)]
pub struct ClientSilence {
    /// Client key (client id + host).
    pub client_key: String,
    /// Its client id.
    pub client_id: Option<String>,
    /// Its last group request or answer before the round.
    pub last_seen: Timestamp,
    /// Its session timeout, from its JoinGroup request.
    pub session_timeout_ms: Option<i32>,
}

/// A round under observation.
#[derive(Clone, Debug, Default)]
pub struct Round {
    /// First evidence.
    pub started_at: Timestamp,
    /// Generation before.
    pub previous_generation: Option<i32>,
    /// The first round of a group deleted and made again: the generation
    /// the old group had ([`Rebalance::made_again_from`]).
    pub made_again_from: Option<i32>,
    /// Members when it began.
    pub members_before: Vec<String>,
    /// Assignments when it began, per member.
    pub assignment_before: BTreeMap<String, Vec<String>>,
    /// Members' silence when it began.
    pub silences: Vec<Silence>,
    /// Silence of the previous generation's clients whose member ids were
    /// never seen (a snap length cut them), when it began.
    pub client_silences: Vec<ClientSilence>,
    /// The leader when it began, and the one its JoinGroup answers named:
    /// Kafka keeps a leader while it is a member, so a new one means the
    /// old one was removed (a one-host view sees no more than that).
    pub leader_before: Option<String>,
    /// The leader this round's JoinGroup answers named.
    pub leader_after: Option<String>,
    /// Possible causes in the order seen.
    pub candidates: Vec<Candidate>,
    /// Evidence lines (bounded).
    pub evidence: Vec<EvidenceLine>,
    /// Evidence beyond [`MAX_EVIDENCE`].
    pub evidence_dropped: usize,
    /// Causes beyond [`MAX_CANDIDATES`].
    pub candidates_dropped: usize,
    /// Generation it produced.
    pub generation: Option<i32>,
    /// First JoinGroup answer with the generation, or "Stabilized".
    pub join_completed_at: Option<Timestamp>,
    /// Last SyncGroup answer or "Assignment received".
    pub completed_at: Option<Timestamp>,
    /// Joins by member id.
    pub joins: BTreeMap<String, MemberJoin>,
    /// Members the leader was told about.
    pub expected: BTreeSet<String>,
    /// Members whose SyncGroup was answered.
    pub synced: BTreeSet<String>,
    /// Member count the broker logged, if only logs saw it.
    pub logged_members: Option<u32>,
    /// Assignments received, per member.
    pub assignment_after: BTreeMap<String, Vec<String>>,
    /// Members seen leaving, with how.
    pub removed: BTreeMap<String, String>,
    /// Capture and/or log.
    pub seen_in: BTreeSet<&'static str>,
    /// Words about what could not be seen.
    pub notes: Vec<String>,
    /// Opened only by a first JoinGroup that was answered MEMBER_ID_REQUIRED.
    pub tentative: bool,
    /// A REBALANCE_IN_PROGRESS answer or a bare log line opened it: the cause
    /// has to be looked for.
    pub needs_cause: bool,
    /// The group's chosen protocol (assignor) in this round.
    pub protocol_name: Option<String>,
    /// Client reasons that mark an expected round.
    pub expected_reason: Option<String>,
    /// The group's state when the round began (`Unknown` when not yet seen).
    pub state_before: String,
    /// The inputs begin inside this round: who is new cannot be told.
    pub opened_mid_round: bool,
    /// a JoinGroup answer with the leader's member list was seen.
    pub saw_member_list: bool,
    /// A successful JoinGroup answer of this round was cut by the
    /// capture's snap length: its member list (and perhaps its ids) is
    /// unknown, so who is in the generation cannot be read from it.
    pub list_cut: bool,
    /// While this round waited for its generation, the previous
    /// generation's SyncGroup was answered without error: the broker was
    /// not rebalancing (Kafka answers SyncGroup REBALANCE_IN_PROGRESS once
    /// a rebalance is under way), so what opened this round started none.
    pub disproved: bool,
    /// The broker said the group became Empty ("is now empty", or every
    /// member left): a state change, not a rebalance of anyone.
    pub emptied: bool,
    /// The broker answered the same generation again with another member
    /// list (tansu does; Apache Kafka always bumps the generation).
    pub broker_repeated: bool,
    /// The `group.instance.id` of a JoinGroup with an empty member id in
    /// this round: a static member's new process (or one that reset its
    /// member id), whether or not the member it replaces was seen.
    pub static_join: Option<String>,
    /// Opened by evidence that does not start a rebalance on its own (a
    /// client asking to join, a known member's JoinGroup): dropped unless
    /// confirmed.
    pub weak: bool,
    /// A "Preparing to rebalance" line, a new generation or a
    /// REBALANCE_IN_PROGRESS answer confirmed the round.
    pub confirmed: bool,
    /// What the broker's version and log level hide about this round's
    /// cause, said when nothing else explains it.
    pub log_hides: Option<String>,
    /// The group's members once the round closed (including members the
    /// round did not show rejoining but that are still alive).
    pub members_final: Option<BTreeSet<String>>,
}

impl Round {
    /// A round starting at `at` after `previous_generation`.
    pub fn new(at: Timestamp, previous_generation: Option<i32>) -> Round {
        Round {
            started_at: at,
            previous_generation,
            ..Round::default()
        }
    }

    /// Adds one event as evidence (bounded).
    pub fn cite(&mut self, ev: &GroupEvent) {
        self.seen_in.insert(match ev.evidence.at {
            crate::event::Location::Frame { .. } => "capture",
            crate::event::Location::Line { .. } => "log",
        });
        if self.evidence.len() < MAX_EVIDENCE {
            self.evidence.push(crate::describe::evidence_line(ev));
        } else {
            self.evidence_dropped += 1;
        }
    }

    /// Adds a possible cause (bounded: a storm of joins must not grow a
    /// round without limit; the first ones are kept, the rest counted).
    pub fn suspect(&mut self, candidate: Candidate) {
        if self.candidates.len() >= MAX_CANDIDATES {
            self.candidates_dropped += 1;
            return;
        }
        self.candidates.push(candidate);
    }

    /// Records a member's join in this round.
    pub fn record_join(
        &mut self,
        member_id: &str,
        client_id: Option<String>,
        at: Timestamp,
        parked_ms: Option<f64>,
    ) {
        let after = at.millis_since(self.started_at).max(0.0);
        self.joins
            .entry(member_id.to_string())
            .and_modify(|j| {
                if j.parked_ms.is_none() {
                    j.parked_ms = parked_ms;
                }
            })
            .or_insert(MemberJoin {
                member_id: member_id.to_string(),
                client_id,
                requested_at: at,
                parked_ms,
                after_start_ms: after,
            });
    }

    /// True when the round formed the group from nothing: no members before,
    /// and the group was Empty, or Dead (deleted: the next JoinGroup makes a
    /// new group, Empty, GroupCoordinator.scala `handleJoinGroup` through
    /// `getOrMaybeCreateGroup`), or unseen, at generation 0 or unknown.
    pub fn forms_group(&self) -> bool {
        self.members_before.is_empty()
            && match self.state_before.as_str() {
                "Empty" | "Dead" => true,
                "Unknown" | "" => self.previous_generation.is_none_or(|g| g == 0),
                _ => false,
            }
    }

    /// True once every member the leader was told about has synced.
    pub fn all_synced(&self) -> bool {
        !self.expected.is_empty() && self.expected.iter().all(|m| self.synced.contains(m))
    }

    /// Whether the round's membership is unknown because the snap length
    /// cut its JoinGroup answers (and no whole member list was seen).
    pub fn members_cut(&self) -> bool {
        self.list_cut && !self.saw_member_list
    }

    /// Members after the round, by id.
    pub fn members_after(&self) -> BTreeSet<String> {
        let mut after: BTreeSet<String> = self.expected.clone();
        after.extend(self.joins.keys().cloned());
        after.extend(self.synced.iter().cloned());
        after
    }
}

/// Milliseconds rounded to whole microseconds, so sums print without float noise.
pub fn round_us(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

/// Picks the cause: the most confident candidate, the earliest among equals.
pub fn choose(candidates: &[Candidate]) -> (Option<&Candidate>, Vec<&Candidate>) {
    let best = candidates
        .iter()
        .enumerate()
        .max_by(|(ia, a), (ib, b)| a.confidence.cmp(&b.confidence).then(ib.cmp(ia)));
    let Some((best_i, best)) = best else {
        return (None, Vec::new());
    };
    // The same kind by the same client is one cause, whether or not its
    // member id was known yet when it was seen.
    let who = |c: &Candidate| c.client_id.clone().or_else(|| c.member_id.clone());
    let mut seen = BTreeSet::new();
    seen.insert((best.kind, who(best)));
    let others = candidates
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != best_i)
        .map(|(_, c)| c)
        .filter(|c| seen.insert((c.kind, who(c))))
        .collect();
    (Some(best), others)
}

/// The words of the candidates [`choose`] folded into `best` (the same
/// kind by the same client, seen another way) that `best` does not already
/// say: under the broker's "member failed, removed on heartbeat
/// expiration", the capture's "its connection closed … without LeaveGroup:
/// the process was killed or crashed" is what tells a kill from a freeze.
pub fn corroborating<'a>(candidates: &'a [Candidate], best: &Candidate) -> Vec<&'a str> {
    // A broker's line carries the member id only; the wire knows both.
    let same_member = |c: &Candidate| match (&c.member_id, &best.member_id) {
        (Some(a), Some(b)) => a == b,
        _ => c.client_id.is_some() && c.client_id == best.client_id,
    };
    let mut out: Vec<&str> = Vec::new();
    for c in candidates {
        let same = c.kind == best.kind && same_member(c);
        // Only the wire's words under the broker's, of an expiry: how the
        // member went quiet, which the broker's log does not say.
        let same = same
            && best.kind == Kind::SessionTimeout
            && best.detail.starts_with("broker:")
            && !c.detail.starts_with("broker:");
        if same
            && !c.detail.is_empty()
            && !best.detail.contains(c.detail.as_str())
            && !out.contains(&c.detail.as_str())
        {
            out.push(&c.detail);
        }
    }
    out
}

/// A candidate as the report shows it.
pub fn trigger_of(c: &Candidate) -> Trigger {
    Trigger {
        kind: c.kind.name().to_string(),
        member_id: c.member_id.clone(),
        client_id: c.client_id.clone(),
        detail: c.detail.clone(),
        confidence: c.confidence.name().to_string(),
    }
}

/// The report's "nothing explains it" trigger.
pub fn unknown_trigger(detail: &str) -> Trigger {
    Trigger {
        kind: Kind::Unknown.name().to_string(),
        member_id: None,
        client_id: None,
        detail: detail.to_string(),
        confidence: Confidence::Low.name().to_string(),
    }
}

/// The straggler: the last member to send JoinGroup, when it held others up.
pub fn straggler(joins: &[MemberJoin]) -> Option<MemberJoin> {
    if joins.len() < 2 {
        return None;
    }
    let first = joins.iter().map(|j| j.requested_at).min()?;
    let last = joins.iter().max_by_key(|j| j.requested_at)?;
    // Under 100 ms apart, members joined together: nobody held the others up.
    (last.requested_at.millis_since(first) >= 100.0).then(|| last.clone())
}

/// Removed members as the report shows them.
pub fn removed_members(
    removed: &BTreeMap<String, String>,
    client_of: impl Fn(&str) -> Option<String>,
) -> Vec<RemovedMember> {
    removed
        .iter()
        .map(|(m, how)| RemovedMember {
            member_id: m.clone(),
            client_id: client_of(m),
            how: how.clone(),
        })
        .collect()
}

/// Builds the final record's common part; the caller fills members and
/// trigger. The round's evidence moves into the record (copying it was a
/// tenth of rebuilding a rebalance-dense log's groups).
pub fn skeleton(group: &str, protocol: &str, r: &mut Round) -> Rebalance {
    let mut joins: Vec<MemberJoin> = r.joins.values().cloned().collect();
    joins.sort_by_key(|j| j.requested_at);
    let mut notes = r.notes.clone();
    if r.candidates_dropped > 0 {
        notes.push(format!(
            "{} more possible causes not weighed",
            r.candidates_dropped
        ));
    }
    if r.evidence_dropped > 0 {
        notes.push(format!(
            "{} more evidence lines not listed",
            r.evidence_dropped
        ));
    }
    Rebalance {
        group: group.to_string(),
        protocol: protocol.to_string(),
        previous_generation: r.previous_generation,
        made_again_from: r.made_again_from,
        generation: r.generation,
        started_at: r.started_at,
        join_completed_at: r.join_completed_at,
        completed_at: r.completed_at,
        duration_ms: r
            .completed_at
            .map(|c| round_us(c.millis_since(r.started_at))),
        straggler: straggler(&joins),
        joins,
        // Held until the run ends: without the room the list grew into.
        evidence: {
            let mut e = std::mem::take(&mut r.evidence);
            e.shrink_to_fit();
            e
        },
        seen_in: r.seen_in.iter().map(|s| s.to_string()).collect(),
        notes,
        ..Rebalance::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(kind: Kind, confidence: Confidence, at: i64) -> Candidate {
        Candidate {
            kind,
            confidence,
            member_id: None,
            client_id: None,
            detail: String::new(),
            at: Timestamp(at),
            deferred: Deferred::No,
        }
    }

    #[test]
    fn the_most_confident_candidate_wins_and_ties_go_to_the_earliest() {
        let c = vec![
            cand(Kind::MemberJoined, Confidence::Medium, 1),
            cand(Kind::SessionTimeout, Confidence::High, 2),
            cand(Kind::MemberLeft, Confidence::High, 3),
        ];
        let (best, others) = choose(&c);
        assert_eq!(best.unwrap().kind, Kind::SessionTimeout);
        assert_eq!(others.len(), 2);
    }

    #[test]
    fn a_cause_seen_twice_keeps_the_words_of_both() {
        let mut broker = cand(Kind::SessionTimeout, Confidence::High, 2);
        broker.client_id = Some("c2".into());
        broker.detail = "broker: member failed".into();
        let mut echo = cand(Kind::SessionTimeout, Confidence::High, 3);
        echo.client_id = Some("c2".into());
        echo.detail = "broker: preparing to rebalance".into();
        let mut wire = cand(Kind::SessionTimeout, Confidence::Medium, 1);
        wire.client_id = Some("c2".into());
        wire.detail = "its connection closed: killed".into();
        let mut other = cand(Kind::SessionTimeout, Confidence::Medium, 1);
        other.client_id = Some("c3".into());
        other.detail = "someone else".into();
        let c = vec![wire, broker, other, echo];
        let (best, _) = choose(&c);
        assert_eq!(best.unwrap().detail, "broker: member failed");
        assert_eq!(
            corroborating(&c, best.unwrap()),
            vec!["its connection closed: killed"]
        );
    }

    #[test]
    fn joins_within_100ms_have_no_straggler() {
        let j = |at: i64| MemberJoin {
            requested_at: Timestamp(at),
            ..MemberJoin::default()
        };
        assert!(straggler(&[j(0), j(50_000_000)]).is_none());
        assert_eq!(
            straggler(&[j(0), j(3_000_000_000)]).unwrap().requested_at,
            Timestamp(3_000_000_000)
        );
    }

    #[test]
    fn a_group_past_its_round_cap_keeps_the_newest_rounds_and_counts_the_rest() {
        let mut kept = ClosedRounds::default();
        for i in 0..MAX_ROUNDS_PER_GROUP + 3 {
            kept.push(Round {
                started_at: Timestamp(i as i64 * 1_000_000_000),
                generation: Some(i as i32 + 1),
                ..Round::default()
            });
        }
        assert_eq!(kept.last_mut().and_then(|r| r.generation), Some(10_003));
        let (rounds, note) = kept.take();
        assert_eq!(rounds.len(), MAX_ROUNDS_PER_GROUP);
        assert_eq!(rounds[0].generation, Some(4), "the three oldest went");
        let note = note.expect("what was let go is said");
        assert!(
            note.starts_with("3 earlier rebalances (started 1970-01-01T00:00:00"),
            "{note}"
        );
        assert!(note.contains("00:00:02"), "{note}");
    }

    #[test]
    fn a_group_under_its_round_cap_keeps_every_round_and_says_nothing() {
        let mut kept = ClosedRounds::default();
        kept.push(Round::default());
        let (rounds, note) = kept.take();
        assert_eq!((rounds.len(), note), (1, None));
    }
}
