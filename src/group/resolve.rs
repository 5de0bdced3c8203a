//! Judging causes once the whole input has been read.
//!
//! Takes: a closed [`Round`] and its group's member book and activity log.
//! Gives: the round's candidates completed: deferred LeaveGroups judged
//! (clean close or poll timeout, from what the member did next) and silent
//! members named when nothing else explains the round. The rules follow the
//! wire clues of real clients: a clean close commits, leaves and closes its
//! connection within seconds; a poll timeout leaves without closing and
//! rejoins once the application polls again (KIP-62); a session timeout is
//! a member whose requests stopped for its `session.timeout.ms`, often
//! answered UNKNOWN_MEMBER_ID when it comes back.

use crate::fast_hash::{FastMap, FastSet};
use crate::time::Timestamp;

use super::classic::{Activity, ActivityKind};
use super::members::MemberBook;
use super::round::{Candidate, Deferred, Round};
use super::trigger::{Confidence, Kind};

/// How long after a LeaveGroup a connection close still counts as part of a
/// clean shutdown.
const CLOSE_AFTER_LEAVE_NS: i64 = 10_000_000_000;

/// The smallest session timeout a broker accepts by default
/// (`group.min.session.timeout.ms`, GroupCoordinatorConfig).
const MIN_SESSION_TIMEOUT_MS: f64 = 6000.0;
/// A group's activity log indexed by kind and member id, and by kind and
/// client key, each list in time order: every question [`resolve`] asks of
/// it ("the first close of this member after t") is a binary search, so
/// judging all of a group's rounds stays n log n in its history (it was a
/// scan of the whole log per candidate and per silent member).
#[derive(Default)]
pub struct ActivityIndex<'a> {
    by_member: FastMap<(ActivityKind, &'a str), Vec<Timestamp>>,
    by_key: FastMap<(ActivityKind, &'a str), Vec<Timestamp>>,
}

impl<'a> ActivityIndex<'a> {
    /// Indexes `activity` (built once per group).
    pub fn new(activity: &'a [Activity]) -> Self {
        let mut index = ActivityIndex::default();
        for a in activity {
            if let Some(m) = a.member_id.as_deref() {
                index.by_member.entry((a.what, m)).or_default().push(a.at);
            }
            index
                .by_key
                .entry((a.what, a.client_key.as_str()))
                .or_default()
                .push(a.at);
        }
        for times in index
            .by_member
            .values_mut()
            .chain(index.by_key.values_mut())
        {
            times.sort_unstable();
        }
        index
    }

    /// The first time at or after `after` that `member` did `what`.
    pub(super) fn member_after(
        &self,
        what: ActivityKind,
        member: &str,
        after: Timestamp,
    ) -> Option<Timestamp> {
        first_at_or_after(self.by_member.get(&(what, member)), after)
    }

    /// The first time at or after `after` that client `key` did `what`.
    fn key_after(&self, what: ActivityKind, key: &str, after: Timestamp) -> Option<Timestamp> {
        first_at_or_after(self.by_key.get(&(what, key)), after)
    }

    /// The last time strictly before `before` that `member` did `what`.
    fn member_before(
        &self,
        what: ActivityKind,
        member: &str,
        before: Timestamp,
    ) -> Option<Timestamp> {
        last_before(self.by_member.get(&(what, member)), before)
    }

    /// The last time strictly before `before` that client `key` did `what`.
    fn key_before(&self, what: ActivityKind, key: &str, before: Timestamp) -> Option<Timestamp> {
        last_before(self.by_key.get(&(what, key)), before)
    }
}

/// What a silent member's connection shows after its last request: closed
/// without LeaveGroup (killed or crashed), or open and silent (frozen); and
/// whether it was told it was no longer a member when it came back.
pub(super) fn how_it_went_quiet(
    closed: Option<Timestamp>,
    evicted: Option<Timestamp>,
    last: Timestamp,
    started_at: Timestamp,
) -> String {
    let mut detail = match closed {
        Some(c) => format!("; its connection closed {:.1} s after its last request without LeaveGroup: the process was killed or crashed", secs(c, last)),
        None => "; its connection stayed open and silent: a frozen or paused process (GC, SIGSTOP) or a network problem".to_string(),
    };
    if let Some(e) = evicted {
        detail.push_str(&format!(
            "; when it came back {:.1} s later it was told it was no longer a member",
            secs(e, started_at)
        ));
    }
    detail
}

fn first_at_or_after(times: Option<&Vec<Timestamp>>, after: Timestamp) -> Option<Timestamp> {
    let times = times?;
    times.get(times.partition_point(|t| *t < after)).copied()
}

fn last_before(times: Option<&Vec<Timestamp>>, before: Timestamp) -> Option<Timestamp> {
    let times = times?;
    let i = times.partition_point(|t| *t < before);
    i.checked_sub(1).map(|i| times[i])
}

/// Judges every deferred candidate and, when needed, looks for silent members.
pub fn resolve(
    round: &mut Round,
    book: &MemberBook,
    activity: &ActivityIndex<'_>,
    newcomers: &[String],
) {
    credit_newcomers(round, book, newcomers);
    for c in &mut round.candidates {
        if let Deferred::Leave { client_key } = c.deferred.clone() {
            judge_leave(c, &client_key, book, activity);
        }
    }
    // A failed SyncGroup explains a round only if its member rejoined in it.
    // ... or if its rejoin was sent before this generation was
    // decided (tansu parks it and answers it generations later).
    let decided = round.join_completed_at;
    let joins = &round.joins;
    round.candidates.retain(|c| {
        c.kind != Kind::PreviousRebalanceFailed
            || c.member_id.as_ref().is_some_and(|m| {
                joins.contains_key(m)
                    || activity
                        .member_after(ActivityKind::Join, m, c.at)
                        .is_some_and(|at| decided.is_some_and(|d| at <= d))
            })
    });
    let explained = round
        .candidates
        .iter()
        .any(|c| c.confidence >= Confidence::Medium);
    if round.needs_cause || !explained {
        let mut silent = silent_members(round, book, activity);
        if silent.is_empty() {
            silent = silent_clients(round, activity);
        }
        if silent.is_empty() && !explained {
            silent = vanished_members(round, book);
        }
        for c in silent {
            if let Some(m) = &c.member_id {
                round
                    .removed
                    .entry(m.clone())
                    .or_insert_with(|| "session_timeout".into());
            }
            round.candidates.push(c);
        }
    } else {
        corroborate_expiries(round, book, activity);
    }
}

/// The broker's log names a member removed on heartbeat expiration
/// (GroupCoordinator.scala `onExpireHeartbeat`: "Member … has failed") but
/// not how it went quiet; the capture's silence of that same member says
/// it (its connection closed without LeaveGroup: killed; open: frozen).
/// Added as a candidate of the same kind and member, never a new cause:
/// its words go under the broker's ([`super::round::corroborating`]).
fn corroborate_expiries(round: &mut Round, book: &MemberBook, activity: &ActivityIndex<'_>) {
    let expired: Vec<String> = round
        .candidates
        .iter()
        .filter(|c| c.kind == Kind::SessionTimeout && c.detail.starts_with("broker:"))
        .filter_map(|c| c.member_id.clone())
        .collect();
    if expired.is_empty() {
        return;
    }
    for c in silent_members(round, book, activity) {
        if c.member_id.as_ref().is_some_and(|m| expired.contains(m)) {
            round.candidates.push(c);
        }
    }
}

/// The member that joined generation N must be a member of generation N.
/// A join whose member was answered only in a later generation did not
/// make this one (tansu parks joins for seconds and answers them rounds
/// later), so it yields; members first answered here are this round's
/// joiners even when their request was sent during an earlier round.
fn credit_newcomers(round: &mut Round, book: &MemberBook, newcomers: &[String]) {
    if round.generation.is_none() || round.joins.is_empty() || round.opened_mid_round {
        return;
    }
    let members = round.members_after();
    // A member list cut by the snap length may hold the joiner: nothing
    // shows it was answered only later.
    let known = !round.members_cut();
    let clients: FastSet<String> = members
        .iter()
        .filter_map(|m| book.client_id(m))
        .chain(round.joins.values().filter_map(|j| j.client_id.clone()))
        .collect();
    for c in &mut round.candidates {
        let in_round = c.member_id.as_ref().is_some_and(|m| members.contains(m))
            || c.client_id.as_ref().is_some_and(|id| clients.contains(id));
        if c.kind == Kind::MemberJoined && !in_round && known {
            c.confidence = Confidence::Low;
            c.detail.push_str(" (answered only in a later generation)");
        }
    }
    // Members and client ids already named as this round's joiners, kept
    // as sets so that crediting n newcomers is linear, not n².
    let mut named_members: FastSet<String> = FastSet::default();
    let mut named_clients: FastSet<String> = FastSet::default();
    for c in round
        .candidates
        .iter()
        .filter(|c| c.kind == Kind::MemberJoined && c.confidence == Confidence::High)
    {
        named_members.extend(c.member_id.clone());
        named_clients.extend(c.client_id.clone());
    }
    for m in newcomers {
        let client_id = match round.joins.get(m) {
            Some(j) => j.client_id.clone(),
            None => book.client_id(m),
        };
        let at = round
            .joins
            .get(m)
            .map_or(round.started_at, |j| j.requested_at);
        let named = named_members.contains(m)
            || client_id
                .as_ref()
                .is_some_and(|id| named_clients.contains(id));
        if !named {
            named_members.insert(m.clone());
            named_clients.extend(client_id.clone());
            round.candidates.push(Candidate {
                kind: Kind::MemberJoined,
                confidence: Confidence::High,
                member_id: Some(m.clone()),
                client_id,
                detail: "new member: first in this generation (its JoinGroup was parked during the previous round)".into(),
                at,
                deferred: Deferred::No,
            });
        }
    }
}

fn judge_leave(c: &mut Candidate, key: &str, book: &MemberBook, activity: &ActivityIndex<'_>) {
    let member = c.member_id.clone().unwrap_or_default();
    // The first close of this client or this member after the leave.
    let close = [
        activity.key_after(ActivityKind::Close, key, c.at),
        activity.member_after(ActivityKind::Close, &member, c.at),
    ]
    .into_iter()
    .flatten()
    .min()
    .filter(|at| at.0 - c.at.0 <= CLOSE_AFTER_LEAVE_NS);
    let rejoin = activity.key_after(ActivityKind::Join, key, c.at);
    let progress = [
        activity.member_before(ActivityKind::Commit, &member, c.at),
        activity.key_before(ActivityKind::Join, key, c.at),
    ]
    .into_iter()
    .flatten()
    .max();
    let rebalance_timeout = book.get(&member).and_then(|m| m.rebalance_timeout_ms);
    c.deferred = Deferred::No;
    if let Some(close) = close {
        c.kind = Kind::MemberLeft;
        c.confidence = Confidence::High;
        c.detail = format!("LeaveGroup without a reason, then its connection closed {:.1} s later: a clean shutdown", secs(close, c.at));
        return;
    }
    let rejoined = rejoin
        .map(|r| format!("; it rejoined {:.1} s later", secs(r, c.at)))
        .unwrap_or_default();
    if let (Some(p), Some(rt)) = (progress, rebalance_timeout) {
        let idle = secs(c.at, p);
        if idle * 1000.0 >= 0.8 * rt as f64 {
            c.kind = Kind::PollTimeout;
            c.confidence = if rejoin.is_some() {
                Confidence::High
            } else {
                Confidence::Medium
            };
            c.detail = format!("LeaveGroup without a reason after {idle:.1} s without progress (max.poll.interval.ms = {rt}); the connection stayed open{rejoined}");
            return;
        }
    }
    if rejoin.is_some() {
        c.kind = Kind::PollTimeout;
        c.confidence = Confidence::Medium;
        c.detail = format!("LeaveGroup without a reason while its connection stayed open{rejoined}: the pattern of a max.poll.interval.ms expiry");
        return;
    }
    c.kind = Kind::MemberLeft;
    c.confidence = Confidence::Medium;
    c.detail = "LeaveGroup without a reason; no connection close or rejoin seen afterwards".into();
}

fn secs(later: Timestamp, earlier: Timestamp) -> f64 {
    later.millis_since(earlier) / 1000.0
}

/// Clients of the previous generation whose member ids a snap length cut
/// from every request and answer, silent for their session timeout when
/// the round began: the same judgement as [`silent_members`], by
/// connection. Confidence stays below a member's: the member id is not
/// seen, and two consumers sharing a client id and host look like one.
fn silent_clients(round: &Round, activity: &ActivityIndex<'_>) -> Vec<Candidate> {
    let mut out = Vec::new();
    for s in &round.client_silences {
        let Some(st) = s.session_timeout_ms.filter(|t| *t > 0) else {
            continue;
        };
        let silent_ms = round.started_at.millis_since(s.last_seen);
        if silent_ms < 0.8 * f64::from(st) {
            continue;
        }
        let key = s.client_key.as_str();
        let evicted = activity.key_after(ActivityKind::Evicted, key, round.started_at);
        let closed = activity
            .key_before(ActivityKind::Close, key, Timestamp(round.started_at.0 + 1))
            .filter(|t| *t >= s.last_seen);
        let name = s.client_id.as_deref().unwrap_or(&s.client_key);
        let mut detail = format!(
            "no request from {name} for {:.1} s before the rebalance (session.timeout.ms = {st}); its member id is not in the captured bytes (snap length), so it is named by its connection",
            silent_ms / 1000.0
        );
        detail.push_str(&how_it_went_quiet(
            closed,
            evicted,
            s.last_seen,
            round.started_at,
        ));
        out.push(Candidate {
            kind: Kind::SessionTimeout,
            confidence: Confidence::Medium,
            member_id: None,
            client_id: s.client_id.clone(),
            detail,
            at: round.started_at,
            deferred: Deferred::No,
        });
    }
    out
}

/// Members that vanished from what the captured members were told, when
/// none of their own requests is in the inputs (only one host's
/// connections were captured): missing from the leader's member list, or
/// a leader replaced by another. Kafka keeps a leader while it is a member
/// and picks a new one only when it is removed (GroupMetadata.scala `add`
/// and `remove`; ClassicGroup.java `add`/`remove`), so either is the mark
/// of a member gone. How it went (session timeout or a LeaveGroup on a
/// connection not captured) cannot be told: low confidence, with a note.
fn vanished_members(round: &Round, book: &MemberBook) -> Vec<Candidate> {
    let generation = round
        .generation
        .map_or("the new generation".into(), |g| format!("generation {g}"));
    let after = round.members_after();
    let unseen = |m: &String| {
        !after.contains(m)
            && !round.removed.contains_key(m)
            && book.get(m).is_none_or(|x| x.last_seen.is_none())
    };
    let mut gone: Vec<(String, String)> = Vec::new();
    if round.saw_member_list {
        let before = round.members_before.iter().chain(&round.leader_before);
        for m in before.filter(|m| unseen(m)) {
            if !gone.iter().any(|(g, _)| g == m) {
                gone.push((
                    m.clone(),
                    format!("it is missing from the leader's member list of {generation}"),
                ));
            }
        }
    } else if let (Some(old), Some(new)) = (&round.leader_before, &round.leader_after) {
        if old != new && unseen(old) {
            gone.push((old.clone(), format!("it was the leader, and {generation} has another leader ({new}): Kafka replaces a leader only when it is removed")));
        }
    }
    gone.into_iter()
        .map(|(m, why)| Candidate {
            kind: Kind::SessionTimeout,
            confidence: Confidence::Low,
            client_id: book.client_id(&m),
            detail: format!("vanished: {why}; none of its own requests is in the inputs (one host's view), so whether its session timed out or it left on a connection that was not captured cannot be told"),
            member_id: Some(m),
            at: round.started_at,
            deferred: Deferred::No,
        })
        .collect()
}

/// Members silent when the round began who did not take part in it.
fn silent_members(
    round: &Round,
    book: &MemberBook,
    activity: &ActivityIndex<'_>,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    for s in &round.silences {
        if round.joins.contains_key(&s.member_id)
            || round.removed.get(&s.member_id).is_some_and(|h| h == "left")
        {
            continue;
        }
        let Some(last) = s.last_seen else { continue };
        let silent_ms = round.started_at.millis_since(last);
        let evicted = activity.member_after(ActivityKind::Evicted, &s.member_id, round.started_at);
        let closed = activity
            .member_after(ActivityKind::Close, &s.member_id, last)
            .filter(|at| *at <= round.started_at);
        // Silence shorter than the session timeout is no session timeout,
        // whatever happened after; without a known timeout, only long
        // silences count, and only weakly.
        let confidence = match s.session_timeout_ms {
            Some(st) if silent_ms >= 0.8 * st as f64 => {
                if evicted.is_some() {
                    Confidence::High
                } else {
                    Confidence::Medium
                }
            }
            Some(_) => continue,
            // A connection closed without LeaveGroup, then a round without
            // the member: a killed or crashed process whose session the
            // broker expired (KIP-848 members send no session timeout).
            // Brokers refuse sessions under group.min.session.timeout.ms
            // (6 s by default), so a shorter silence is no expiry.
            None if closed.is_some() && silent_ms >= 0.8 * MIN_SESSION_TIMEOUT_MS => {
                if evicted.is_some() {
                    Confidence::High
                } else {
                    Confidence::Medium
                }
            }
            None if silent_ms >= 10_000.0 => {
                if evicted.is_some() {
                    Confidence::Medium
                } else {
                    Confidence::Low
                }
            }
            None => continue,
        };
        let client = book.client_id(&s.member_id);
        let mut detail = format!(
            "no request from {} for {:.1} s before the rebalance (session.timeout.ms = {})",
            client.as_deref().unwrap_or(&s.member_id),
            silent_ms / 1000.0,
            s.session_timeout_ms
                .map_or("unknown".into(), |t| t.to_string())
        );
        detail.push_str(&how_it_went_quiet(closed, evicted, last, round.started_at));
        out.push(Candidate {
            kind: Kind::SessionTimeout,
            confidence,
            member_id: Some(s.member_id.clone()),
            client_id: client,
            detail,
            at: round.started_at,
            deferred: Deferred::No,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn act(at: i64, key: &str, member: Option<&str>, what: ActivityKind) -> Activity {
        Activity {
            at: Timestamp(at),
            client_key: key.into(),
            member_id: member.map(str::to_string),
            what,
        }
    }

    #[test]
    fn the_activity_index_answers_as_a_scan_would() {
        use ActivityKind::*;
        let log = vec![
            act(10, "c@h", Some("m1"), Join),
            act(20, "c@h", Some("m1"), Commit),
            act(30, "d@h", Some("m2"), Close),
            act(40, "c@h", Some("m1"), Close),
            act(40, "c@h", None, Join),
            act(50, "c@h", Some("m1"), Evicted),
        ];
        let index = ActivityIndex::new(&log);
        let t = Timestamp;
        assert_eq!(index.member_after(Close, "m1", t(31)), Some(t(40)));
        assert_eq!(index.member_after(Close, "m1", t(40)), Some(t(40)));
        assert_eq!(index.member_after(Close, "m1", t(41)), None);
        assert_eq!(index.key_after(Join, "c@h", t(11)), Some(t(40)));
        assert_eq!(index.key_before(Join, "c@h", t(40)), Some(t(10)));
        assert_eq!(index.member_before(Commit, "m1", t(20)), None);
        assert_eq!(index.member_before(Commit, "m1", t(21)), Some(t(20)));
        assert_eq!(index.member_after(Evicted, "m2", t(0)), None);
        assert_eq!(index.key_after(Close, "d@h", t(0)), Some(t(30)));
    }
}
