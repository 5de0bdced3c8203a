//! Each group's coordinator history, and why every rebalance happened.
//!
//! Takes: the merged [`crate::timeline::Timeline`] of group events. Gives:
//! one [`GroupHistory`] per group: a [`GroupSummary`] and its
//! [`Rebalance`] records with trigger, evidence and confidence. Classic
//! groups (JoinGroup/SyncGroup) run through [`classic`], KIP-848 groups
//! (ConsumerGroupHeartbeat, epochs) through [`kip848`]; both write
//! [`round::Round`]s that [`resolve`] completes once the whole input is
//! known, since a LeaveGroup's meaning depends on what the member did next.

mod classic;
mod classic_log;
mod kip848;
mod members;
mod migration;
mod resolve;
mod round;
pub use round::MAX_ROUNDS_PER_GROUP;
pub mod trigger;

use std::collections::BTreeSet;

use crate::event::{BrokerLine, ClientLine, EventKind, GroupEvent};
use crate::fast_hash::FastMap;
use crate::report::{EvidenceLine, GroupSummary, Rebalance, Trigger};
use crate::spread;
use crate::time::Timestamp;

use members::MemberBook;
use round::Round;
use trigger::Kind;

/// A storm: at least this many unexpected rebalances ...
const STORM_COUNT: usize = 5;
/// ... within this window (ns). Netdata's guide calls more than two or three
/// an hour unstable; five in ten minutes is a loop or a rolling restart
/// without static membership, not bad luck.
pub(crate) const STORM_WINDOW_NS: i64 = 10 * 60 * 1_000_000_000;
/// A round starting this soon after the previous one completed, in a
/// cooperative group, is KIP-429's follow-up round.
const FOLLOW_UP_NS: i64 = 5_000_000_000;

/// One group's reconstructed history.
#[derive(Clone, Debug)]
pub struct GroupHistory {
    /// The group in brief.
    pub summary: GroupSummary,
    /// Its rebalances in start order, boxed as the report holds them
    /// ([`crate::report::Report::rebalances`]).
    pub rebalances: Vec<Box<Rebalance>>,
    /// Its earliest rebalances not kept ([`round::MAX_ROUNDS_PER_GROUP`]).
    pub rounds_let_go: usize,
}

/// Rebuilds every group's history from events in time order.
pub fn reconstruct(events: &[GroupEvent]) -> Vec<GroupHistory> {
    reconstruct_on(events, spread::workers_for(events.len()))
}

/// [`reconstruct`] on up to `workers` threads (the result is the same on
/// any number).
pub(crate) fn reconstruct_on(events: &[GroupEvent], workers: usize) -> Vec<GroupHistory> {
    // Once for the run, not once per group (that was quadratic in groups).
    let groupless = groupless_static_notes(events);
    // Gathered in a hash map, then put in name order once (a tree walk
    // compared group names byte by byte for every event).
    let mut by_group: FastMap<&str, Vec<&GroupEvent>> = FastMap::default();
    for ev in events {
        if let Some(g) = ev.group.as_deref() {
            by_group.entry(g).or_default().push(ev);
        }
    }
    let mut by_group: Vec<(&str, Vec<&GroupEvent>)> = by_group.into_iter().collect();
    by_group.sort_unstable_by_key(|(g, _)| *g);
    // Each group's history depends on its own events only: rebuilt on
    // every core, kept in name order.
    spread::map_in_order(&by_group, workers, |(group, evs)| {
        reconstruct_one(group, evs, &groupless)
    })
}

/// One group's history from its own events (time order), with the notes
/// of [`groupless_static_notes`] every group gets.
pub(crate) fn reconstruct_one(
    group: &str,
    evs: &[&GroupEvent],
    groupless: &[String],
) -> GroupHistory {
    let mut h = match consumer_protocol_refused(evs) {
        // Refused: the group never ran the consumer protocol.
        Some(note) => {
            let mut h = reconstruct_classic(group, evs, None);
            say_refused(&mut h, note);
            h
        }
        None => reconstruct_group(group, evs),
    };
    h.summary.notes.extend(groupless.iter().cloned());
    h
}

/// Kafka 2.3–2.4 log a static member's restart with no group
/// (GroupCoordinator.scala `updateStaticMemberAndRebalance`: "Static member
/// $groupInstanceId with unknown member id rejoins, assigning new member id
/// $newMemberId, while old member $oldMemberId will be removed."): which
/// group it was is not in the log, so no group gets it as a cause; every
/// group says what the log hides instead (capped: one note per line, at
/// most a few).
pub(crate) fn groupless_static_notes(events: &[GroupEvent]) -> Vec<String> {
    events
        .iter()
        .filter(|ev| {
            ev.group.is_none()
                && matches!(
                    ev.kind,
                    EventKind::Broker(BrokerLine::StaticMemberReplaced { .. })
                )
        })
        .take(8)
        .map(|ev| {
            format!(
                "{}: a static member restarted ({}; new member id {}) but this broker's log line names no group (Kafka 2.3–2.4 `updateStaticMemberAndRebalance`): it may be this group's; kgtrace does not guess, and counts no rebalance for it",
                ev.ts,
                ev.group_instance_id.as_deref().unwrap_or("instance id not logged"),
                ev.member_id.as_deref().unwrap_or("?")
            )
        })
        .collect()
}

/// A refused KIP-848 attempt: ConsumerGroupHeartbeats answered
/// UNSUPPORTED_VERSION, sent to a broker whose ApiVersions answer did not
/// list ConsumerGroupHeartbeat (API key 68), or a Java client that logged
/// the refusal, and no heartbeat accepted. Apache Kafka answers
/// UNSUPPORTED_VERSION when its group coordinator does not run the
/// consumer protocol (KafkaApis `handleConsumerGroupHeartbeat`: "consumer"
/// missing from `group.coordinator.rebalance.protocols`, or the old
/// coordinator); a broker that predates KIP-848 does not list the API at
/// all, and a client that checks ApiVersions first fails without sending
/// (NetworkClient: UnsupportedVersionException). The Java client then
/// stops ("The cluster does not support the new CONSUMER group protocol.
/// Set group.protocol=classic …": ConsumerHeartbeatRequestManager), so a
/// classic JoinGroup after it is the client restarted with the classic
/// protocol. Gives the words to say and when the refusal was seen.
fn consumer_protocol_refused(evs: &[&GroupEvent]) -> Option<(Timestamp, String)> {
    let mut refused: Option<(&GroupEvent, &str)> = None;
    for ev in evs {
        let how = match &ev.kind {
            EventKind::ConsumerGroupHeartbeatResponse { error: Some(e), .. }
                if e.name() == "UNSUPPORTED_VERSION" =>
            {
                "UNSUPPORTED_VERSION"
            }
            EventKind::ConsumerGroupHeartbeatRequest {
                broker_offers: Some(false),
                ..
            } => "its ApiVersions answer lists no ConsumerGroupHeartbeat, API key 68",
            EventKind::Client(ClientLine::HeartbeatFailed { error }) => match java_refusal(error) {
                Some(how) => how,
                None => continue,
            },
            EventKind::ConsumerGroupHeartbeatResponse { error: None, .. } => return None,
            _ => continue,
        };
        refused = refused.or(Some((ev, how)));
    }
    let (first, how) = refused?;
    let who = first.client.client_id.as_deref().unwrap_or("a client");
    let classic = evs.iter().find(|e| {
        e.ts >= first.ts
            && matches!(
                e.kind,
                EventKind::JoinGroupRequest { .. } | EventKind::Client(ClientLine::Joining { .. })
            )
    });
    let text = match classic {
        Some(j) => format!(
            "{who} asked for the consumer protocol (KIP-848 ConsumerGroupHeartbeat); the broker does not offer it ({how}); it fell back to classic (JoinGroup {:.1} s later)",
            j.ts.millis_since(first.ts) / 1000.0
        ),
        None => format!(
            "{who} asked for the consumer protocol (KIP-848 ConsumerGroupHeartbeat); the broker does not offer it ({how}); no classic JoinGroup followed: the consumer stopped (set group.protocol=classic, or enable the consumer protocol on the brokers)"
        ),
    };
    Some((first.ts, text))
}

/// What a Java consumer logs when the broker refuses the consumer protocol
/// ("ConsumerGroupHeartbeatRequest failed due to …", the text after "due
/// to"), in words for the note; `None` for other heartbeat failures.
/// kafka-clients 4.4 (ConsumerHeartbeatRequestManager
/// `handleSpecificExceptionInResponse` / `handleSpecificFailure`): "unsupported
/// version response on broker side: The cluster does not support the new
/// CONSUMER group protocol. …" when the broker answers UNSUPPORTED_VERSION,
/// "unsupported version while sending request: The node does not support
/// CONSUMER_GROUP_HEARTBEAT…" when its ApiVersions answer lacks the API
/// (NodeApiVersions). 3.7–4.0 (AbstractHeartbeatRequestManager
/// `onErrorResponse` / `onFailure`): "UNSUPPORTED_VERSION: <the broker's
/// message>" and "fatal error: The node does not support
/// CONSUMER_GROUP_HEARTBEAT…".
fn java_refusal(error: &str) -> Option<&'static str> {
    if error.contains("does not support the new CONSUMER group protocol") {
        Some("the client logged \"The cluster does not support the new CONSUMER group protocol\"")
    } else if error.starts_with("UNSUPPORTED_VERSION") {
        Some("the client logged its heartbeat answered UNSUPPORTED_VERSION")
    } else if error.contains("does not support CONSUMER_GROUP_HEARTBEAT") {
        Some("the client logged \"The node does not support CONSUMER_GROUP_HEARTBEAT\": its ApiVersions answer lists no API key 68")
    } else {
        None
    }
}

/// Puts a refused KIP-848 attempt in the group's notes and in the first
/// rebalance after it.
fn say_refused(h: &mut GroupHistory, (at, text): (Timestamp, String)) {
    if let Some(r) = h.rebalances.iter_mut().find(|r| r.started_at >= at) {
        r.notes.push(text.clone());
    }
    h.summary.notes.insert(0, text);
}

/// A second deletion of a group this soon after one already applied is
/// the same deletion seen again (the broker's line and the DeleteGroups
/// answer, a log's clock and a capture's lined up only so closely): it
/// must not end the group its new members made meanwhile.
const SAME_DELETION_NS: i64 = 5_000_000_000;

/// Whether a deletion at `at` is the one applied at `last`, seen again
/// ([`SAME_DELETION_NS`]).
pub(super) fn same_deletion(last: Option<Timestamp>, at: Timestamp) -> bool {
    last.is_some_and(|t| at.0.saturating_sub(t.0) < SAME_DELETION_NS)
}

/// How a group's deletion was seen, for the notes around it: a
/// DeleteGroups answer names the admin client that asked and when; the
/// broker's "The following groups were deleted" line names no one.
pub(super) fn deletion(ev: &GroupEvent) -> String {
    match (&ev.kind, ev.client.client_id.as_deref()) {
        (EventKind::GroupDeleted { .. }, Some(client)) => format!(
            "the group was deleted (DeleteGroups from client {client}, answered at {})",
            ev.ts
        ),
        (EventKind::GroupDeleted { .. }, None) => {
            format!("the group was deleted (DeleteGroups answered at {})", ev.ts)
        }
        _ => "the group was deleted (DeleteGroups)".into(),
    }
}

/// The note on a deleted group's new first rebalance: `why` as
/// [`deletion`] words it; `unit` is "generation" (classic) or "epoch".
pub(super) fn made_again_note(why: &str, unit: &str) -> String {
    format!("{why}: this is the new group's first rebalance, from {unit} 0")
}

/// One group's history, stretch by stretch when it changed protocol
/// ([`migration`]): each stretch starts from what the one before handed
/// over (generation = group epoch, members).
fn reconstruct_group(group: &str, evs: &[&GroupEvent]) -> GroupHistory {
    let mut parts = Vec::new();
    let mut handover: Option<migration::Handover> = None;
    let segments = migration::segments(evs);
    let last = segments.len().saturating_sub(1);
    for (i, (protocol, range)) in segments.into_iter().enumerate() {
        let part = &evs[range];
        let h = match protocol {
            migration::Protocol::Consumer => kip848::reconstruct(group, part, handover.as_ref()),
            migration::Protocol::Classic => reconstruct_classic(group, part, handover.as_ref()),
        };
        // Only a stretch followed by another hands over (nearly every group
        // has one stretch: its member ids are not gathered for nothing);
        // a group deleted at the end of its stretch hands nothing over: the
        // next stretch is a new group made with the other protocol.
        if i < last {
            handover = (h.summary.state != "Dead").then(|| migration::handover(&h, part));
        }
        parts.push((protocol, h));
    }
    migration::join(group, parts)
}

fn is_kip848(ev: &GroupEvent) -> bool {
    matches!(
        ev.kind,
        EventKind::ConsumerGroupHeartbeatRequest { .. }
            | EventKind::ConsumerGroupHeartbeatResponse { .. }
            | EventKind::Broker(BrokerLine::GroupEpochBumped { .. })
            | EventKind::Broker(BrokerLine::MemberAssignmentState { .. })
            | EventKind::Broker(BrokerLine::TargetAssignmentComputed { .. })
            | EventKind::Client(ClientLine::Reconciling { .. })
            | EventKind::Client(ClientLine::MemberStateChanged { .. })
    )
}

fn reconstruct_classic(
    group: &str,
    events: &[&GroupEvent],
    handover: Option<&migration::Handover>,
) -> GroupHistory {
    let mut g = classic::Classic::new(group);
    if let Some(h) = handover {
        // ClassicGroup.java `fromConsumerGroup`: the classic group starts
        // Stable at the consumer group's epoch with its members.
        g.generation = h.generation;
        g.current = h.members.clone();
    }
    for ev in events {
        g.apply(ev);
    }
    if let Some(r) = g.round.as_mut() {
        if let Some(wait) = waiting_for(r) {
            r.notes.push(wait);
        }
    }
    g.close_round();
    let rounds_let_go = g.done.let_go;
    let (mut rounds, let_go) = g.done.take();
    g.notes.extend(let_go);
    rounds.retain(|r| !(r.tentative && r.generation.is_none()));
    rounds.retain(|r| match unconfirmed(r) {
        Some(note) => {
            g.notes.push(note);
            false
        }
        None => true,
    });
    for r in rounds
        .iter_mut()
        .filter(|r| r.generation.is_some() && r.generation == r.previous_generation)
    {
        r.notes.push(format!(
            "the broker rebalanced but kept generation {}: Apache Kafka always moves to a new generation (GroupCoordinator `initNextGeneration`); this broker (e.g. tansu) repeats it",
            r.generation.unwrap_or_default()
        ));
    }
    let mut rebalances: Vec<Box<Rebalance>> = Vec::with_capacity(rounds.len());
    let mut previous: Option<usize> = None;
    let mut seen: BTreeSet<String> = BTreeSet::new();
    // Whether the previous round showed the whole membership (the leader's
    // member list): if not (a follower's one-host view), a member first
    // named by this round's list may have been there all along.
    let mut knew_members = true;
    let activity = resolve::ActivityIndex::new(&g.activity);
    for r in &mut rounds {
        seen.extend(r.members_before.iter().cloned());
        // a member first named by the leader's member list is new here
        // too, even when it is answered only generations later.
        let listed = r
            .expected
            .iter()
            .filter(|_| r.saw_member_list && knew_members);
        let newcomers: Vec<String> = r
            .joins
            .keys()
            .chain(listed)
            .filter(|m| !seen.contains(*m))
            .cloned()
            .collect::<BTreeSet<String>>()
            .into_iter()
            .collect();
        seen.extend(newcomers.iter().cloned());
        seen.extend(r.expected.iter().cloned());
        knew_members = r.saw_member_list || r.generation.is_none();
        resolve::resolve(r, &g.book, &activity, &newcomers);
    }
    for i in 0..rounds.len() {
        let r = &rounds[i];
        if is_empty_departure(r) {
            previous = Some(i);
            continue;
        }
        if is_tail_of_unseen_round(r, &rounds_after(&rounds, r)) {
            g.notes.push(format!(
                "the inputs begin at the end of a rebalance to generation {} (its start and cause were not seen)",
                r.generation.map_or("?".into(), |x| x.to_string())
            ));
            previous = Some(i);
            continue;
        }
        if is_quiet_static_restart(r) {
            g.notes.push(static_restart_note(r));
            continue;
        }
        let mut rec = record(group, "classic", &mut rounds[i], &g.book);
        if let (Some(p), Some(prev)) = (previous, rebalances.last()) {
            follow_up(&mut rec, &rounds[i], &rounds[p], prev, &g.assignors);
        }
        rebalances.push(Box::new(rec));
        previous = Some(i);
    }
    mark_storms(&mut rebalances);
    let mut summary = summarise(&g, &rebalances);
    summary.rebalance_count += rounds_let_go as u64;
    summary.notes.extend(g.notes.iter().cloned());
    GroupHistory {
        summary,
        rebalances,
        rounds_let_go,
    }
}

/// What a round the inputs end inside is waiting for, in Kafka's terms
/// (GroupCoordinator.scala: the join phase completes in `onCompleteJoin`
/// when every known member has rejoined or the rebalance timeout expires;
/// the sync phase when the leader's SyncGroup is stored).
fn waiting_for(r: &Round) -> Option<String> {
    if r.completed_at.is_some() && (r.expected.is_empty() || r.all_synced()) {
        return None;
    }
    Some(match r.generation {
        None => "the inputs end inside this rebalance's join phase: it waits for every known member to rejoin (JoinGroup), at most the rebalance timeout (max.poll.interval.ms)".into(),
        Some(g) if r.completed_at.is_none() => format!(
            "the inputs end before generation {g} was assigned: it waits for the leader's SyncGroup"
        ),
        Some(g) => format!(
            "the inputs end before every member had synced generation {g}: it waits for their SyncGroup"
        ),
    })
}

/// Why a round is no rebalance, if it is not: a known member's rejoin
/// answered with the same generation (GroupCoordinator.scala
/// `doCurrentMemberJoinGroup`: "for followers with no actual change to
/// their metadata, just return group information for the current
/// generation"; a round the broker did start, by a REBALANCE_IN_PROGRESS
/// answer or a removal, and then answered with the same generation is kept:
/// that broker repeated it), or a round opened by a client's request that no
/// "Preparing" line, new generation or REBALANCE_IN_PROGRESS confirmed.
fn unconfirmed(r: &Round) -> Option<String> {
    let same = r.generation.is_some() && r.generation == r.previous_generation;
    if same && !r.broker_repeated && (!r.confirmed || r.disproved) {
        let who: Vec<&str> = r.joins.keys().map(String::as_str).collect();
        return Some(format!(
            "{}: {} rejoined and got generation {} back: no rebalance",
            r.started_at,
            if who.is_empty() {
                "a member".to_string()
            } else {
                who.join(", ")
            },
            r.generation.unwrap_or_default()
        ));
    }
    let new_generation = r.generation.is_some() && r.generation != r.previous_generation;
    if r.weak && !r.confirmed && !new_generation {
        return Some(format!(
            "{}: a member asked to rejoin, but nothing shows the broker rebalancing (no \"Preparing\" line, new generation or REBALANCE_IN_PROGRESS)",
            r.started_at
        ));
    }
    None
}

/// Whether any round follows `r`.
fn rounds_after(rounds: &[Round], r: &Round) -> bool {
    rounds.last().is_some_and(|last| !std::ptr::eq(last, r))
}

/// A round of which the inputs show only a "Stabilized" or JoinGroup answer
/// at their very start, superseded before it completed: it describes the
/// group's state when the inputs begin, not a rebalance anyone can judge.
fn is_tail_of_unseen_round(r: &Round, followed: &bool) -> bool {
    r.opened_mid_round && r.completed_at.is_none() && *followed
}

/// A round in which everybody left and nobody joined: the group emptied,
/// nobody was stopped, so it is a state change, not a rebalance.
fn is_empty_departure(r: &Round) -> bool {
    // Only the broker's word (`onCompleteJoin`'s "is now empty") or every
    // member seen leaving empties a group; a log-only round does not know
    // its members, so an empty `members_before` proves nothing.
    r.emptied && r.joins.is_empty()
}

/// Writes the record of one resolved round.
fn record(group: &str, protocol: &str, r: &mut Round, book: &MemberBook) -> Rebalance {
    let mut out = round::skeleton(group, protocol, r);
    let r: &Round = r;
    let (best, others) = round::choose(&r.candidates);
    out.trigger = match best {
        Some(c) => round::trigger_of(c),
        None => round::unknown_trigger(unexplained(&out.evidence)),
    };
    if let Some(best) = best {
        for words in round::corroborating(&r.candidates, best) {
            out.trigger.detail.push_str("; also: ");
            out.trigger.detail.push_str(words);
        }
    }
    if best.is_none() {
        out.notes.extend(r.log_hides.iter().cloned());
    }
    if out.trigger.member_id.is_some() && out.trigger.client_id.is_none() {
        out.trigger.client_id = out
            .trigger
            .member_id
            .as_deref()
            .and_then(|m| book.client_id(m));
    }
    let more = others.len().saturating_sub(round::MAX_OTHER_TRIGGERS);
    out.other_triggers = others
        .into_iter()
        .take(round::MAX_OTHER_TRIGGERS)
        .map(round::trigger_of)
        .collect();
    if more > 0 {
        out.notes
            .push(format!("{more} more other causes not listed"));
    }
    let after = r.members_final.clone().unwrap_or_else(|| r.members_after());
    out.members_before = book.summaries(&r.members_before);
    // The book holds each member's LAST assignment; a round shows what the
    // member held when the round began.
    for m in &mut out.members_before {
        if let Some(a) = r.assignment_before.get(&m.member_id) {
            m.assignment = a.clone();
        }
    }
    out.members_after = book.summaries(book.one_per_instance(&after));
    // Likewise after: what the round's answers gave, never a later
    // round's assignment. A member whose answer is not seen keeps what it
    // held where the protocol lets it (KIP-429 cooperative rebalancing and
    // KIP-848: a member only gives up what it is told to revoke,
    // ConsumerCoordinator.java `onJoinComplete`, CurrentAssignmentBuilder
    // .java); under the eager protocol it revoked everything when it
    // rejoined (`onJoinPrepare`), so it shows none.
    let keeps = protocol != "classic"
        || r.protocol_name
            .as_deref()
            .is_some_and(|p| p.contains("cooperative"));
    let mut unseen = Vec::new();
    for m in &mut out.members_after {
        let before = r.assignment_before.get(&m.member_id).filter(|_| keeps);
        let given = r.assignment_after.get(&m.member_id);
        if given.is_none() && before.is_none() {
            unseen.push(m.client_id.clone().unwrap_or_else(|| m.member_id.clone()));
        }
        m.assignment = given.or(before).cloned().unwrap_or_default();
    }
    // Where the inputs show the round's assignments, an empty one must not
    // read as "given nothing" when that member's answer is simply missing.
    if !r.assignment_after.is_empty() && !unseen.is_empty() && r.completed_at.is_some() {
        out.notes.push(format!(
            "the assignment of {} in this round is not in the inputs (its SyncGroup answer was not seen): shown empty",
            unseen.join(", ")
        ));
    }
    let mut removed = r.removed.clone();
    // Only the classic protocol has a join phase that drops members who do
    // not rejoin in time; a KIP-848 member leaves or is fenced by name.
    for m in r.members_before.iter().filter(|_| protocol == "classic") {
        if !after.is_empty() && !after.contains(m) {
            removed
                .entry(m.clone())
                .or_insert_with(|| "rebalance_timeout".into());
        }
    }
    removed.retain(|m, _| !after.contains(m) || r.generation.is_none());
    out.removed = round::removed_members(&removed, |m| book.client_id(m));
    (out.partitions_revoked, out.partitions_assigned) = moved_partitions(r);
    (out.expected, out.expected_reason) = expectation(r, &out);
    if r.forms_group() {
        initial_delay(r, &mut out);
    }
    out
}

/// GroupCoordinator.scala `prepareRebalance`: a group leaving Empty waits in
/// an `InitialDelayedJoin` for group.initial.rebalance.delay.ms (3 s by
/// default), longer while new members keep arriving, up to the rebalance
/// timeout: that wait is the broker's, nobody straggled.
fn initial_delay(r: &Round, out: &mut Rebalance) {
    let Some(done) = r.join_completed_at else {
        return;
    };
    let waited = done.millis_since(r.started_at);
    if waited >= 1_000.0 {
        out.straggler = None;
        out.notes.push(format!(
            "the {:.1} s join phase is the broker's group.initial.rebalance.delay.ms wait for a group leaving Empty (3 s by default, extended while members keep joining), not a straggler",
            waited / 1000.0
        ));
    }
}

/// Words for a round nothing explains, saying what was seen and where the
/// cause may be found.
fn unexplained(evidence: &[EvidenceLine]) -> &'static str {
    let told = evidence.iter().any(|e| {
        e.text.contains("REBALANCE_IN_PROGRESS")
            || e.text.to_ascii_lowercase().contains("already rebalancing")
    });
    if told {
        "members were told the group is rebalancing (REBALANCE_IN_PROGRESS), but its cause is not in the inputs: \
         another member's join or leave, or the coordinator's own decision; add the broker's server.log or \
         capture the other members' connections"
    } else {
        "nothing in the inputs explains this rebalance: its cause happened before the inputs begin, or on a \
         connection that was not captured"
    }
}

fn moved_partitions(r: &Round) -> (Vec<String>, Vec<String>) {
    if r.assignment_after.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let before: BTreeSet<(&String, &String)> = r
        .assignment_before
        .iter()
        .flat_map(|(m, ps)| ps.iter().map(move |p| (m, p)))
        .collect();
    let after: BTreeSet<(&String, &String)> = r
        .assignment_after
        .iter()
        .flat_map(|(m, ps)| ps.iter().map(move |p| (m, p)))
        .collect();
    let revoked: BTreeSet<String> = before
        .difference(&after)
        .map(|(_, p)| (*p).clone())
        .collect();
    let assigned: BTreeSet<String> = after
        .difference(&before)
        .map(|(_, p)| (*p).clone())
        .collect();
    let mut revoked: Vec<String> = revoked.into_iter().collect();
    let mut assigned: Vec<String> = assigned.into_iter().collect();
    members::sort_partitions(&mut revoked);
    members::sort_partitions(&mut assigned);
    (revoked, assigned)
}

/// Whether a round is expected on its own (a client reason saying so, or a
/// group forming); cooperative follow-ups are judged in [`follow_up`].
fn expectation(r: &Round, out: &Rebalance) -> (bool, Option<String>) {
    if let Some(reason) = &r.expected_reason {
        return (true, Some(reason.clone()));
    }
    // A member's own epochs (a KIP-848 client log alone) say nothing of
    // the group forming: its first row is its join.
    if out.trigger.kind == Kind::MemberJoined.name()
        && out.protocol != kip848::MEMBER_VIEW
        && r.forms_group()
    {
        return (
            true,
            Some("group formation: the first members joined an empty group".into()),
        );
    }
    (false, None)
}

/// KIP-429: in a cooperative group, the round right after a rebalance that
/// revoked partitions is the members rejoining to hand them over. It has no
/// cause of its own; it carries the cause of the round it follows and is
/// expected. Only the first follow-up counts: a third round in a row is no
/// longer the protocol's doing.
fn follow_up(
    rec: &mut Rebalance,
    r: &Round,
    previous: &Round,
    prev: &Rebalance,
    assignors: &BTreeSet<String>,
) {
    let cooperative = assignors.iter().any(|a| a.contains("cooperative"))
        || r.protocol_name
            .as_deref()
            .is_some_and(|p| p.contains("cooperative"))
        || r.expected_reason
            .as_deref()
            .is_some_and(|e| e.contains("KIP-429"));
    let ended = previous.completed_at.or(previous.join_completed_at);
    let soon_after =
        ended.is_some_and(|c| r.started_at >= c && r.started_at.0 - c.0 <= FOLLOW_UP_NS);
    let causeless = matches!(rec.trigger.kind.as_str(), "leader_rejoined" | "unknown");
    if !(cooperative && soon_after && causeless) || prev.trigger.kind == "unknown" {
        return;
    }
    rec.other_triggers.insert(0, rec.trigger.clone());
    if prev.expected || prev.trigger.kind == "previous_rebalance_failed" {
        // Rounds after a failed or follow-up round: the same churn goes on
        // (a member still catching up), but it is no longer the protocol's
        // planned second round, so nothing here is expected.
        rec.trigger = Trigger {
            detail: format!(
                "right after the {} round at {}, with no cause of its own: the same members still catching up",
                prev.trigger.kind, prev.started_at
            ),
            confidence: "low".into(),
            ..prev.trigger.clone()
        };
        return;
    }
    rec.trigger = Trigger {
        detail: format!(
            "cooperative follow-up round (KIP-429) of the {} rebalance at {}: members rejoin to hand over revoked partitions",
            prev.trigger.kind, prev.started_at
        ),
        confidence: "medium".into(),
        ..prev.trigger.clone()
    };
    rec.expected = true;
    rec.expected_reason = Some("cooperative follow-up round (KIP-429)".into());
}

/// A static member (KIP-345) that rejoins with a new member id while the
/// others stay put: the broker hands it the old assignment without a
/// rebalance ("Static member which joins during Stable stage and doesn't
/// affect the selected protocol will not trigger a rebalance",
/// `GroupMetadataManager`).
///
/// The member it replaces need not have been seen (a capture starting
/// after the group formed): a JoinGroup with an empty member id and a
/// group.instance.id answered at the generation the group already had can
/// only be a KNOWN instance rejoining while Stable (GroupCoordinator.scala
/// `doStaticNewMemberJoinGroup` -> `updateStaticMemberAndRebalance`, case
/// Stable; GroupMetadataManager.java `classicGroupJoinNewStaticMember` ->
/// `updateStaticMemberThenRebalanceOrCompleteJoin`): an unknown instance
/// is added with a rebalance (`addMemberAndRebalance`), which bumps the
/// generation.
fn is_quiet_static_restart(r: &Round) -> bool {
    let same_generation = r.generation.is_some() && r.generation == r.previous_generation;
    let replaced = r
        .candidates
        .iter()
        .any(|c| c.kind == Kind::StaticMemberReplaced);
    let unknown_holder = r.static_join.is_some()
        && !r.broker_repeated
        && r.removed.is_empty()
        && r.candidates.iter().all(|c| {
            matches!(
                c.kind,
                Kind::MemberJoined | Kind::StaticMemberReplaced | Kind::LeaderRejoined
            )
        });
    same_generation && r.joins.len() <= 1 && (replaced || unknown_holder)
}

fn static_restart_note(r: &Round) -> String {
    let who = r
        .candidates
        .iter()
        .find(|c| c.kind == Kind::StaticMemberReplaced)
        .map(|c| c.detail.clone())
        .unwrap_or_else(|| {
            let new_id = r.joins.keys().next().map_or("?", String::as_str);
            format!(
                "static member {} rejoined with an empty member id and got member id {new_id} at the same generation (the member it replaced was not seen with that group.instance.id)",
                r.static_join.as_deref().unwrap_or("?"),
            )
        });
    // KIP-814 (JoinGroup v9+): a static leader is answered the member list
    // with SkipAssignment set, so it watches metadata without a new round.
    let leader = r
        .leader_after
        .as_ref()
        .filter(|l| r.joins.contains_key(*l) && r.saw_member_list)
        .map(|_| "; it is the leader and was given the member list without a new round (KIP-814)")
        .unwrap_or_default();
    format!(
        "{} at {}, without a rebalance (generation stayed {}){leader}",
        who,
        r.started_at,
        r.generation.unwrap_or_default()
    )
}

fn mark_storms(rebalances: &mut [Box<Rebalance>]) {
    let mut starts: Vec<i64> = rebalances
        .iter()
        .filter(|r| !r.expected)
        .map(|r| r.started_at.0)
        .collect();
    starts.sort_unstable();
    let stormy = stormy_starts(&starts);
    for r in rebalances.iter_mut().filter(|r| !r.expected) {
        let t = r.started_at.0;
        // Equal starts are all inside or all outside every window.
        let i = starts.partition_point(|&s| s < t);
        r.storm = stormy.get(i).copied().unwrap_or(false);
    }
}

/// Marks the storms of the records starting at or after `from` as
/// [`mark_storms`] marks a whole history, counting `earlier` besides them:
/// the starts, before `from`, of the unexpected rounds no longer among the
/// records (the streaming engine's windows rebuild a group's recent
/// rounds only; the rounds before them are final, and a storm may span
/// both).
pub(crate) fn mark_storms_after(
    rebalances: &mut [Box<Rebalance>],
    earlier: &[Timestamp],
    from: Timestamp,
) {
    let later = |r: &&mut Box<Rebalance>| !r.expected && r.started_at >= from;
    let mut starts: Vec<i64> = earlier
        .iter()
        .map(|t| t.0)
        .filter(|t| *t < from.0)
        .collect();
    starts.extend(rebalances.iter_mut().filter(later).map(|r| r.started_at.0));
    starts.sort_unstable();
    let stormy = stormy_starts(&starts);
    for r in rebalances.iter_mut().filter(later) {
        let i = starts.partition_point(|&s| s < r.started_at.0);
        r.storm = stormy.get(i).copied().unwrap_or(false);
    }
}

/// For sorted `starts`: whether each lies in some window of
/// STORM_WINDOW_NS that begins at a start and holds STORM_COUNT starts.
/// Two pointers and a difference array: linear after the sort (it was a
/// cubic scan, 94 s for 80 k rebalances in one group).
fn stormy_starts(starts: &[i64]) -> Vec<bool> {
    let n = starts.len();
    let mut cover = vec![0i64; n + 1];
    let mut end = 0;
    for (i, &lo) in starts.iter().enumerate() {
        let hi = lo.saturating_add(STORM_WINDOW_NS);
        end = end.max(i);
        while end < n && starts[end] <= hi {
            end += 1;
        }
        // starts[i..end] lie in [lo, hi].
        if end - i >= STORM_COUNT {
            cover[i] += 1;
            cover[end] -= 1;
        }
    }
    let mut depth = 0;
    cover[..n]
        .iter()
        .map(|c| {
            depth += c;
            depth > 0
        })
        .collect()
}

fn summarise(g: &classic::Classic, rebalances: &[Box<Rebalance>]) -> GroupSummary {
    let (first, last) = g.span.map_or((None, None), |(a, b)| (Some(a), Some(b)));
    let hours = match (first, last) {
        (Some(a), Some(b)) if b.millis_since(a) >= 60_000.0 => {
            Some(b.millis_since(a) / 3_600_000.0)
        }
        _ => None,
    };
    let mut notes = Vec::new();
    for r in rebalances {
        for j in &r.joins {
            if g.book
                .get(&j.member_id)
                .is_none_or(|m| m.first_seen.is_none())
            {
                notes.push(format!(
                    "no traffic from member {} before {}",
                    j.member_id, r.started_at
                ));
            }
        }
    }
    notes.dedup();
    GroupSummary {
        group: g.group.clone(),
        protocol: "classic".into(),
        protocol_type: g.protocol_type.clone(),
        assignors: g.assignors.iter().cloned().collect(),
        state: g.state.to_string(),
        generation: g.generation,
        generations_seen: g.generations_seen.iter().copied().collect(),
        members: g.book.summaries(g.book.one_per_instance(&g.current)),
        leader: g.leader.clone(),
        coordinator: g.coordinator.clone(),
        rebalance_count: rebalances.len() as u64,
        rebalances_per_hour: hours.map(|h| rebalances.len() as f64 / h),
        rebalancing_ms: round::round_us(rebalances.iter().filter_map(|r| r.duration_ms).sum()),
        storm: rebalances.iter().any(|r| r.storm),
        states: g.states.clone(),
        first_seen: first,
        last_seen: last,
        notes,
        ..GroupSummary::default()
    }
}

#[cfg(test)]
mod kafka_tests;
#[cfg(test)]
mod refused_tests;
#[cfg(test)]
mod tests;

#[cfg(test)]
mod storm_tests {
    use super::{stormy_starts, STORM_COUNT, STORM_WINDOW_NS};

    /// The definition, checked the slow way: some window starting at a
    /// start holds `t` and at least STORM_COUNT starts.
    fn stormy_by_definition(starts: &[i64], t: i64) -> bool {
        starts.iter().any(|&lo| {
            let hi = lo + STORM_WINDOW_NS;
            (lo..=hi).contains(&t)
                && starts.iter().filter(|&&x| (lo..=hi).contains(&x)).count() >= STORM_COUNT
        })
    }

    #[test]
    fn storms_found_in_linear_time_match_the_definition() {
        let minute = 60_000_000_000;
        let mut starts: Vec<i64> = Vec::new();
        // Bursts, lone rounds, equal starts and a burst just too sparse.
        starts.extend((0..6).map(|i| i * minute));
        starts.push(30 * minute);
        starts.extend([50 * minute; 5]);
        starts.extend((0..5).map(|i| 100 * minute + i * 3 * minute));
        starts.extend((0..7).map(|i| 200 * minute + i * minute / 2));
        starts.sort_unstable();
        let fast = stormy_starts(&starts);
        for (i, &t) in starts.iter().enumerate() {
            assert_eq!(
                fast[i],
                stormy_by_definition(&starts, t),
                "start {i} at {t}"
            );
        }
        assert!(fast.iter().any(|s| *s) && fast.iter().any(|s| !*s));
    }
}
