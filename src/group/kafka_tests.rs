//! Apache Kafka's coordinator rules, one test per behaviour (issue 10).
//!
//! Takes: broker log lines written here from the wording of Apache Kafka's
//! source (each test quotes the file and function the line comes from),
//! read through the real log reader; and, where the wire tells the story,
//! scripted captures shaped like Kafka's coordinator. Gives: the
//! rebalances kgtrace must name. Nothing here is copied from a real log.

use std::io::Cursor;

use crate::diagnostic::Diagnostics;
use crate::event::GroupEvent;
use crate::logs::{read_log, LogOptions};
use crate::report::Rebalance;

use super::{reconstruct, GroupHistory};

/// A Scala coordinator (0.11–3.x) line at second `s` of the day.
fn scala(s: f64, msg: &str) -> String {
    let (whole, ms) = (s as u64, ((s.fract()) * 1000.0).round() as u64);
    format!(
        "[2024-05-01 10:{:02}:{:02},{ms:03}] INFO [GroupCoordinator 1]: {msg} (kafka.coordinator.group.GroupCoordinator)\n",
        whole / 60,
        whole % 60
    )
}

/// A Java coordinator (3.7+) line at second `s`.
fn java(s: f64, msg: &str) -> String {
    let (whole, ms) = (s as u64, ((s.fract()) * 1000.0).round() as u64);
    format!(
        "[2024-05-01 10:{:02}:{:02},{ms:03}] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] {msg} (org.apache.kafka.coordinator.group.GroupMetadataManager)\n",
        whole / 60,
        whole % 60
    )
}

/// A Java consumer (AbstractCoordinator) line at second `s`.
fn client(s: f64, msg: &str) -> String {
    let (whole, ms) = (s as u64, ((s.fract()) * 1000.0).round() as u64);
    format!(
        "[2024-05-01 10:{:02}:{:02},{ms:03}] INFO [Consumer clientId=c-2, groupId=g] {msg} (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)\n",
        whole / 60,
        whole % 60
    )
}

fn events(text: &str) -> Vec<GroupEvent> {
    let (mut diags, mut out) = (Diagnostics::default(), Vec::new());
    let summary = read_log(
        Cursor::new(text.as_bytes()),
        crate::event::Source::from("server.log"),
        &LogOptions::default(),
        &mut diags,
        &mut out,
    )
    .expect("in-memory log");
    assert_eq!(
        summary.unknown_group_lines, 0,
        "a line was not read: {text}"
    );
    out
}

fn history(text: &str, group: &str) -> GroupHistory {
    reconstruct(&events(text))
        .into_iter()
        .find(|h| h.summary.group == group)
        .unwrap_or_else(|| panic!("no group {group}"))
}

fn gens(r: &Rebalance) -> (Option<i32>, Option<i32>) {
    (r.previous_generation, r.generation)
}

/// Point 1. GroupCoordinator.scala `onExpireHeartbeat` logs "Member M in
/// group G has failed, removing it from the group" and
/// `removeMemberAndUpdateGroup` → `maybePrepareRebalance` → `prepareRebalance`
/// logs "Preparing to rebalance group G in state PreparingRebalance with old
/// generation N (__consumer_offsets-P) (reason: removing member M on
/// heartbeat expiration)". A log ending there shows a rebalance in progress,
/// not an emptied group: only `onCompleteJoin`'s "is now empty" says that.
#[test]
fn a_log_ending_inside_a_rebalance_reports_the_unfinished_round() {
    let log = [
        scala(0.0, "Member c-1-a in group g has failed, removing it from the group"),
        scala(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 4 (__consumer_offsets-3) (reason: removing member c-1-a on heartbeat expiration)"),
    ]
    .concat();
    let h = history(&log, "g");
    assert_eq!(h.rebalances.len(), 1, "{:#?}", h.rebalances);
    let r = &h.rebalances[0];
    assert_eq!(r.trigger.kind, "session_timeout");
    assert_eq!(gens(r), (Some(4), None));
    assert!(r.completed_at.is_none() && r.duration_ms.is_none());
    assert!(
        r.notes.iter().any(|n| n.contains("waits for")),
        "{:?}",
        r.notes
    );
    assert_ne!(h.summary.state, "Empty");
}

/// Point 1, the other half: `onCompleteJoin` (GroupCoordinator.scala) logs
/// "Group G with generation N is now empty (__consumer_offsets-P)" when the
/// join phase ends with nobody: that, and only that, empties the group.
#[test]
fn a_group_empties_only_when_the_broker_says_it_is_now_empty() {
    let log = [
        scala(0.0, "Member c-1-a in group g has failed, removing it from the group"),
        scala(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 4 (__consumer_offsets-3) (reason: removing member c-1-a on heartbeat expiration)"),
        scala(0.0, "Group g with generation 5 is now empty (__consumer_offsets-3)"),
    ]
    .concat();
    let h = history(&log, "g");
    assert!(h.rebalances.is_empty(), "{:#?}", h.rebalances);
    assert_eq!(h.summary.state, "Empty");
}

/// Point 2. GroupCoordinator.scala `doNewMemberJoinGroup` (2.2+, KIP-394):
/// "Dynamic Member with unknown member id joins group G in Stable state.
/// Created a new member id M and request the member to rejoin with this id."
/// answers MEMBER_ID_REQUIRED and changes nothing; the rebalance starts with
/// the second JoinGroup (`addMemberAndRebalance` → "Preparing to rebalance
/// … (reason: Adding new member M …)"). A first step never followed is no
/// round at all.
#[test]
fn the_kip394_first_step_opens_no_round() {
    let lone = scala(
        0.0,
        "Dynamic Member with unknown member id joins group g in Stable state. Created a new member id c-2-b and request the member to rejoin with this id.",
    );
    assert!(history(&lone, "g").rebalances.is_empty());
    let log = [
        lone,
        scala(600.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 3 (__consumer_offsets-3) (reason: Adding new member c-2-b with group instance id None; client reason: need to re-join with the given member-id: c-2-b)"),
        scala(603.0, "Stabilized group g generation 4 (__consumer_offsets-3) with 2 members"),
        scala(603.1, "Assignment received from leader c-1-a for group g for generation 4. The group has 2 members, 0 of which are static."),
    ]
    .concat();
    let h = history(&log, "g");
    assert_eq!(h.rebalances.len(), 1, "{:#?}", h.rebalances);
    let r = &h.rebalances[0];
    assert_eq!(gens(r), (Some(3), Some(4)));
    assert_eq!(r.trigger.kind, "member_joined");
    assert_eq!(r.duration_ms, Some(3100.0));
}

/// Point 2. GroupCoordinator.scala `updateStaticMemberAndRebalance`: a
/// static member rejoining while Stable with the same protocol logs "Static
/// member with groupInstanceId=I and unknown member id joins group G in
/// Stable state. Replacing previously mapped member O with this
/// groupInstanceId." then "Static member which joins during Stable stage
/// and doesn't affect selectProtocol will not trigger rebalance.": a note,
/// and the next real rebalance keeps its own cause.
#[test]
fn a_static_member_replaced_while_stable_is_a_note_not_a_round() {
    let log = [
        scala(0.0, "Static member with groupInstanceId=inst-1 and unknown member id joins group g in Stable state. Replacing previously mapped member inst-1-0d3c with this groupInstanceId."),
        scala(0.0, "Static member which joins during Stable stage and doesn't affect selectProtocol will not trigger rebalance."),
        scala(900.0, "Member c-3-z in group g has failed, removing it from the group"),
        scala(900.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 7 (__consumer_offsets-3) (reason: removing member c-3-z on heartbeat expiration)"),
        scala(903.0, "Stabilized group g generation 8 (__consumer_offsets-3) with 2 members"),
        scala(903.1, "Assignment received from leader inst-1-9a9a for group g for generation 8. The group has 2 members, 1 of which are static."),
    ]
    .concat();
    let h = history(&log, "g");
    assert_eq!(h.rebalances.len(), 1, "{:#?}", h.rebalances);
    let r = &h.rebalances[0];
    assert_eq!(r.trigger.kind, "session_timeout");
    assert_eq!(r.duration_ms, Some(3100.0));
    assert!(
        h.summary.notes.iter().any(|n| n.contains("inst-1")),
        "{:?}",
        h.summary.notes
    );
}

/// Point 2. GroupCoordinator.scala `validateCurrentMember`: "Request
/// memberId=M for static member with groupInstanceId=I is fenced by current
/// memberId=C during operation heartbeat" answers FENCED_INSTANCE_ID to the
/// old process; the group does not move.
#[test]
fn a_fenced_static_member_request_opens_no_round() {
    let log = scala(
        0.0,
        "Request memberId=inst-1-old for static member with groupInstanceId=inst-1 is fenced by current memberId=inst-1-new during operation heartbeat",
    );
    // The line names no group; give it one, as a tagged Java line would.
    let mut evs = events(&log);
    assert_eq!(evs.len(), 1);
    evs[0].group = Some("g".into());
    let h = reconstruct(&evs).remove(0);
    assert!(h.rebalances.is_empty(), "{:#?}", h.rebalances);
    assert!(
        h.summary.notes.iter().any(|n| n.contains("fenced")),
        "{:?}",
        h.summary.notes
    );
}

/// Point 4. `prepareRebalance` transitions to PreparingRebalance and then
/// logs "in state ${group.currentState}": the state in the line is the one
/// after. A group forming from Empty is known from `doNewMemberJoinGroup`'s
/// "… joins group G in Empty state …" or from "old generation 0"; its round
/// is expected.
#[test]
fn a_group_forming_from_old_generation_zero_is_an_expected_formation() {
    let log = [
        scala(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 0 (__consumer_offsets-3) (reason: Adding new member c-1-a with group instance id None; client reason: need to re-join with the given member-id: c-1-a)"),
        scala(3.0, "Stabilized group g generation 1 (__consumer_offsets-3) with 1 members"),
        scala(3.0, "Assignment received from leader c-1-a for group g for generation 1. The group has 1 members, 0 of which are static."),
    ]
    .concat();
    let h = history(&log, "g");
    let r = &h.rebalances[0];
    assert_eq!(gens(r), (Some(0), Some(1)));
    assert!(r.expected, "{r:#?}");
}

/// Point 4: a group that became Dead (deleted, or its offsets expired,
/// "Group G transitioned to Dead in generation N") is re-created at
/// generation 0: the broker's "old generation 0" wins over kgtrace's count,
/// the row reads 0 → 1, never "N → 1".
#[test]
fn a_group_recreated_after_dead_goes_from_zero_to_one() {
    let log = [
        scala(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 5 (__consumer_offsets-3) (reason: Removing member c-1-a on LeaveGroup; client reason: the consumer is being closed)"),
        scala(0.0, "Group g with generation 6 is now empty (__consumer_offsets-3)"),
        scala(0.0, "Member MemberMetadata(memberId=c-1-a, groupInstanceId=None, clientId=c-1, clientHost=/10.0.0.1, sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range)) has left group g through explicit `LeaveGroup`; client reason: the consumer is being closed"),
        scala(500.0, "Group g transitioned to Dead in generation 6"),
        scala(900.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 0 (__consumer_offsets-3) (reason: Adding new member c-1-b with group instance id None; client reason: need to re-join with the given member-id: c-1-b)"),
        scala(903.0, "Stabilized group g generation 1 (__consumer_offsets-3) with 1 members"),
        scala(903.0, "Assignment received from leader c-1-b for group g for generation 1. The group has 1 members, 0 of which are static."),
    ]
    .concat();
    let h = history(&log, "g");
    let last = h.rebalances.last().expect("the re-formation");
    assert_eq!(gens(last), (Some(0), Some(1)));
    assert!(last.expected, "{last:#?}");
    assert_eq!(h.rebalances.len(), 1, "the emptying is no rebalance");
}

/// Point 5. A grepped log keeps only the "Preparing" lines: each
/// `prepareRebalance` logs the generation it leaves, so 5, 6, 7 are three
/// rounds (the joins completing 6 and 7 were cut away by the grep).
#[test]
fn grepped_preparing_lines_with_advancing_generations_are_separate_rounds() {
    let log = [
        scala(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 5 (__consumer_offsets-3) (reason: removing member c-1-a on heartbeat expiration)"),
        scala(60.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 6 (__consumer_offsets-3) (reason: Adding new member c-1-b with group instance id None; client reason: need to re-join with the given member-id: c-1-b)"),
        scala(120.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 7 (__consumer_offsets-3) (reason: Leader c-2-x re-joining group during Stable; client reason: cached metadata has changed)"),
    ]
    .concat();
    let h = history(&log, "g");
    let seen: Vec<_> = h
        .rebalances
        .iter()
        .map(|r| (r.previous_generation, r.trigger.kind.as_str()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (Some(5), "session_timeout"),
            (Some(6), "member_joined"),
            (Some(7), "metadata_changed")
        ]
    );
    // 5 → 6 and 6 → 7 are proven by the next line's old generation.
    assert_eq!(h.rebalances[0].generation, Some(6));
    assert_eq!(h.rebalances[1].generation, Some(7));
}

/// Point 6. GroupCoordinator.scala `doCurrentMemberJoinGroup`: a follower
/// whose protocol metadata bytes differ rejoins while Stable →
/// `updateMemberAndRebalance` with "Updating metadata for member M during
/// Stable; client reason: R". With cooperative-sticky the owned partitions
/// are in those bytes, so right after a round that revoked partitions this
/// is KIP-429's second round: expected, carrying the first round's cause.
#[test]
fn updating_metadata_during_stable_in_a_cooperative_group_is_the_kip429_follow_up() {
    let log = [
        scala(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 3 (__consumer_offsets-3) (reason: Adding new member c-3-c with group instance id None; client reason: need to re-join with the given member-id: c-3-c)"),
        scala(3.0, "Stabilized group g generation 4 (__consumer_offsets-3) with 3 members"),
        scala(3.1, "Assignment received from leader c-1-a for group g for generation 4. The group has 3 members, 0 of which are static."),
        scala(3.2, "Preparing to rebalance group g in state PreparingRebalance with old generation 4 (__consumer_offsets-3) (reason: Updating metadata for member c-2-b during Stable; client reason: need to revoke partitions and re-join)"),
        scala(3.3, "Stabilized group g generation 5 (__consumer_offsets-3) with 3 members"),
        scala(3.4, "Assignment received from leader c-1-a for group g for generation 5. The group has 3 members, 0 of which are static."),
    ]
    .concat();
    let h = history(&log, "g");
    assert_eq!(h.rebalances.len(), 2, "{:#?}", h.rebalances);
    let second = &h.rebalances[1];
    assert_eq!(second.trigger.kind, "member_joined", "{second:#?}");
    assert!(second.expected);
}

/// Point 6 without a client reason (2.6.1–3.1 log none): the same line
/// right after a completed round of a group whose client log (ConsumerCoordinator
/// `onJoinComplete`'s "Successfully joined group with generation …") names
/// cooperative-sticky.
#[test]
fn updating_metadata_without_reason_right_after_a_cooperative_round_is_the_follow_up() {
    let log = [
        scala(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 3 (__consumer_offsets-3) (reason: removing member c-3-c on heartbeat expiration)"),
        scala(3.0, "Stabilized group g generation 4 (__consumer_offsets-3) with 2 members"),
        scala(3.1, "Assignment received from leader c-1-a for group g for generation 4"),
        client(3.15, "Successfully joined group with generation Generation{generationId=4, memberId='c-2-b', protocol='cooperative-sticky'}"),
        scala(3.2, "Preparing to rebalance group g in state PreparingRebalance with old generation 4 (__consumer_offsets-3) (reason: Updating metadata for member c-2-b during Stable)"),
        scala(3.3, "Stabilized group g generation 5 (__consumer_offsets-3) with 2 members"),
        scala(3.4, "Assignment received from leader c-1-a for group g for generation 5"),
    ]
    .concat();
    let h = history(&log, "g");
    assert_eq!(h.rebalances.len(), 2, "{:#?}", h.rebalances);
    let second = &h.rebalances[1];
    assert_eq!(second.trigger.kind, "session_timeout", "{second:#?}");
    assert!(second.expected);
}

/// Point 10. GroupCoordinator.scala `doSyncGroup`: when `storeGroup` fails,
/// `maybePrepareRebalance(group, s"Error $error when storing group
/// assignment during SyncGroup (member: $memberId)")` (3.4+; "error when …"
/// 2.1–2.8, "Error when …" 3.0–3.3). NOT_COORDINATOR means the coordinator
/// moved; other errors are the log's storage failing.
#[test]
fn an_error_storing_the_group_assignment_names_coordinator_or_storage() {
    let line = |err: &str| {
        scala(
            0.0,
            &format!("Preparing to rebalance group g in state PreparingRebalance with old generation 3 (__consumer_offsets-3) (reason: Error {err} when storing group assignment during SyncGroup (member: c-1-a))"),
        )
    };
    let moved = history(&line("NOT_COORDINATOR"), "g");
    assert_eq!(moved.rebalances[0].trigger.kind, "coordinator_changed");
    let storage = history(&line("REQUEST_TIMED_OUT"), "g");
    assert_eq!(storage.rebalances[0].trigger.kind, "storage_error");
    let old = scala(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 3 (__consumer_offsets-3) (reason: error when storing group assignment during SyncGroup (member: c-1-a))");
    assert_eq!(
        history(&old, "g").rebalances[0].trigger.kind,
        "storage_error"
    );
}

/// Point 10, pending sync expiry. GroupMetadataManager.java
/// `expirePendingSync` (3.7+) logs at DEBUG "Group G removed members who
/// haven't sent their sync requests: [m]" (plural; the Scala
/// `removePendingSyncMembers` writes "sync request") and prepares the
/// rebalance with "Removing [m] on pending sync request expiration".
#[test]
fn pending_sync_expiry_in_the_java_plural_wording_is_read() {
    let log = [
        java(0.0, "Group g removed members who haven't sent their sync requests: [c-2-b]"),
        java(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 3 (reason: Removing [c-2-b] on pending sync request expiration)."),
    ]
    .concat();
    let h = history(&log, "g");
    let r = &h.rebalances[0];
    assert_eq!(r.trigger.kind, "pending_sync_expired");
    assert!(r.removed.iter().any(|m| m.member_id == "c-2-b"), "{r:#?}");
}

/// Point 10, Java `GroupMetadataManager` wording of the storage failure:
/// "Error " + error + " when storing group assignment" + "during SyncGroup
/// (member: M)." (no space: "assignmentduring").
#[test]
fn the_java_storing_assignment_error_without_a_space_is_read() {
    let log = java(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 3 (reason: Error NOT_LEADER_OR_FOLLOWER when storing group assignmentduring SyncGroup (member: c-1-a).).");
    assert_eq!(
        history(&log, "g").rebalances[0].trigger.kind,
        "coordinator_changed"
    );
}

/// A static Java consumer's line (`[Consumer instanceId=I, clientId=C, groupId=G]`).
fn static_client(s: f64, msg: &str) -> String {
    let (whole, ms) = (s as u64, ((s.fract()) * 1000.0).round() as u64);
    format!(
        "[2024-05-01 10:{:02}:{:02},{ms:03}] WARN [Consumer instanceId=inst-1, clientId=c-1, groupId=g] {msg} (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)\n",
        whole / 60,
        whole % 60
    )
}

/// Point 2. AbstractCoordinator `maybeLeaveGroup`: "Starting from 2.3,
/// only dynamic members will send LeaveGroupRequest to the broker, consumer
/// with valid group.instance.id is viewed as static member that never sends
/// LeaveGroup". A static member's poll timeout starts no round.
#[test]
fn a_static_members_poll_timeout_opens_no_round() {
    let log = static_client(0.0, "consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer than the configured max.poll.interval.ms, which typically implies that the poll loop is spending too much time processing messages. You can address this either by increasing max.poll.interval.ms or by reducing the maximum size of batches returned in poll() with max.poll.records.");
    let h = history(&log, "g");
    assert!(h.rebalances.is_empty(), "{:#?}", h.rebalances);
    assert!(
        h.summary
            .notes
            .iter()
            .any(|n| n.contains("static member inst-1")),
        "{:?}",
        h.summary.notes
    );
}

/// Point 8. GroupCoordinator.scala `prepareRebalance`: an Empty group's
/// join waits in `InitialDelayedJoin` (group.initial.rebalance.delay.ms,
/// 3 s): the 3 s between "Preparing" (old generation 0) and "Stabilized"
/// is the broker's wait, said in a note, with no straggler.
#[test]
fn the_initial_rebalance_delay_is_the_brokers_wait_not_a_straggler() {
    let log = [
        scala(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 0 (__consumer_offsets-3) (reason: Adding new member c-1-a with group instance id None; client reason: need to re-join with the given member-id: c-1-a)"),
        scala(3.0, "Stabilized group g generation 1 (__consumer_offsets-3) with 1 members"),
        scala(3.01, "Assignment received from leader c-1-a for group g for generation 1. The group has 1 members, 0 of which are static."),
    ]
    .concat();
    let r = &history(&log, "g").rebalances[0];
    assert!(r.straggler.is_none());
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("group.initial.rebalance.delay.ms")),
        "{:?}",
        r.notes
    );
}

/// Point 8. GroupCoordinator.scala `onCompleteJoin` (2.8+): "Group G
/// removed dynamic members who haven't joined: Set(M)": M held the join
/// phase for the whole rebalance timeout.
#[test]
fn a_member_that_never_rejoins_is_the_straggler_of_the_rebalance_timeout() {
    let log = [
        scala(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 3 (__consumer_offsets-3) (reason: Adding new member c-3-c with group instance id None; client reason: need to re-join with the given member-id: c-3-c)"),
        scala(300.0, "Group g removed dynamic members who haven't joined: Set(c-2-b)"),
        scala(300.0, "Stabilized group g generation 4 (__consumer_offsets-3) with 2 members"),
        scala(300.01, "Assignment received from leader c-1-a for group g for generation 4. The group has 2 members, 0 of which are static."),
    ]
    .concat();
    let r = &history(&log, "g").rebalances[0];
    assert!(r
        .removed
        .iter()
        .any(|m| m.member_id == "c-2-b" && m.how == "rebalance_timeout"));
    assert!(
        r.notes.iter().any(|n| n.contains("c-2-b never rejoined")),
        "{:?}",
        r.notes
    );
}

/// Point 8. GroupCoordinator.scala `onExpirePendingMember` (KIP-394):
/// "Pending member M in group G has been removed after session timeout
/// expiration." The member that got MEMBER_ID_REQUIRED and never came back
/// held the join phase until then.
#[test]
fn a_pending_member_that_never_rejoins_holds_the_join_phase_until_its_session_times_out() {
    let log = [
        scala(0.0, "Member c-9-z in group g has failed, removing it from the group"),
        scala(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 3 (__consumer_offsets-3) (reason: removing member c-9-z on heartbeat expiration)"),
        scala(45.0, "Pending member c-2-b in group g has been removed after session timeout expiration."),
        scala(45.0, "Stabilized group g generation 4 (__consumer_offsets-3) with 1 members"),
    ]
    .concat();
    let r = &history(&log, "g").rebalances[0];
    assert!(
        r.notes.iter().any(|n| n.contains("pending member c-2-b")),
        "{:?}",
        r.notes
    );
}

/// Point 9. GroupMetadata.scala `generateMemberId`: a static member's id is
/// `groupInstanceId + "-" + UUID`, a dynamic one's `clientId + "-" + UUID`:
/// the prefix of a static member's id is not its client id.
#[test]
fn a_static_member_id_prefix_is_its_instance_id_not_its_client_id() {
    let log = [
        scala(0.0, "Static member with groupInstanceId=inst-7 and unknown member id joins group g in Stable state. Created a new member id inst-7-0f0e0d0c-0b0a-4909-8807-060504030201 for this member and add to the group."),
        scala(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 3 (__consumer_offsets-3) (reason: Adding new member inst-7-0f0e0d0c-0b0a-4909-8807-060504030201 with group instance id Some(inst-7); client reason: not provided)"),
        scala(2.0, "Stabilized group g generation 4 (__consumer_offsets-3) with 2 members"),
    ]
    .concat();
    let r = &history(&log, "g").rebalances[0];
    assert_eq!(r.trigger.kind, "member_joined");
    assert_ne!(r.trigger.client_id.as_deref(), Some("inst-7"), "{r:#?}");
}

/// Point 7. GroupMetadataManager.java (KIP-848): a join or a subscription
/// change logs "Bumped group epoch to E"; a leave ("Member M left the
/// consumer group.") or a fence ("Member M fenced from the group because
/// its session expired.") removes the member and bumps the epoch with no
/// such line; "Computed a new target assignment for epoch E" shows every
/// bump. "Computed new subscription metadata" with no member's update is a
/// metadata change. There is no join phase: nobody is removed for a
/// rebalance timeout.
#[test]
fn kip848_leaves_and_fences_are_rounds_of_their_own_shown_by_the_target_assignment() {
    let t = |e: i32| {
        format!("[GroupId g] Computed a new target assignment for epoch {e} with 'uniform' assignor in 1ms.")
    };
    let log = [
        java(0.0, "[GroupId g] Member m1 joins the consumer group."),
        java(0.0, "[GroupId g] Bumped group epoch to 1."),
        java(0.0, &t(1)),
        java(10.0, "[GroupId g] Member m2 joins the consumer group."),
        java(10.0, "[GroupId g] Bumped group epoch to 2."),
        java(10.0, &t(2)),
        java(20.0, "[GroupId g] Member m2 left the consumer group."),
        java(20.0, &t(3)),
        java(30.0, "[GroupId g] Member m1 fenced from the group because its session expired."),
        java(30.0, &t(4)),
        java(40.0, "[GroupId g] Computed new subscription metadata: {a=TopicMetadata(id=x, name=a, numPartitions=6)}."),
        java(40.0, "[GroupId g] Bumped group epoch to 5."),
        java(40.0, &t(5)),
    ]
    .concat();
    let h = history(&log, "g");
    let seen: Vec<_> = h
        .rebalances
        .iter()
        .map(|r| (r.generation, r.trigger.kind.as_str()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (Some(1), "member_joined"),
            (Some(2), "member_joined"),
            (Some(3), "member_left"),
            (Some(4), "session_timeout"),
            (Some(5), "metadata_changed"),
        ]
    );
    assert!(h
        .rebalances
        .iter()
        .flat_map(|r| &r.removed)
        .all(|m| m.how != "rebalance_timeout"));
    assert!(h.rebalances[3].removed.iter().any(|m| m.member_id == "m1"));
}

/// Point 7. GroupMetadataManager.java `consumerGroupHeartbeat` bumps the
/// group epoch at each join ("Bumped group epoch to E with metadata hash
/// H.") but reconciles members only to the TARGET assignment epoch
/// (`maybeReconcile(…, targetAssignmentEpoch, …)`), computed for the group
/// epoch current when it runs ("Computed a new target assignment for epoch
/// E with 'A' assignor in Tms."). A bump superseded before its target was
/// computed is an epoch no member reaches: it and the next bump are one
/// round (2 → 4), caused by the first join.
#[test]
fn kip848_an_epoch_bump_without_its_target_assignment_is_folded_into_the_next() {
    let t = |e: i32| {
        format!("[GroupId g] Computed a new target assignment for epoch {e} with 'uniform' assignor in 1ms.")
    };
    let log = [
        java(
            0.0,
            "[GroupId g] Member m1 joins the consumer group using the consumer protocol.",
        ),
        java(
            0.0,
            "[GroupId g] Bumped group epoch to 2 with metadata hash 7.",
        ),
        java(0.2, &t(2)),
        java(
            10.0,
            "[GroupId g] Member m2 joins the consumer group using the consumer protocol.",
        ),
        java(
            10.0,
            "[GroupId g] Bumped group epoch to 3 with metadata hash 7.",
        ),
        java(
            10.5,
            "[GroupId g] Member m3 joins the consumer group using the consumer protocol.",
        ),
        java(
            10.5,
            "[GroupId g] Bumped group epoch to 4 with metadata hash 7.",
        ),
        java(10.5, &t(4)),
        java(
            20.0,
            "[GroupId g] Member m4 joins the consumer group using the consumer protocol.",
        ),
        java(
            20.0,
            "[GroupId g] Bumped group epoch to 5 with metadata hash 7.",
        ),
        java(20.0, &t(5)),
    ]
    .concat();
    let h = history(&log, "g");
    let seen: Vec<_> = h.rebalances.iter().map(|r| gens(r)).collect();
    assert_eq!(
        seen,
        vec![(None, Some(2)), (Some(2), Some(4)), (Some(4), Some(5))]
    );
    let r = &h.rebalances[1];
    assert_eq!(r.trigger.kind, "member_joined");
    assert_eq!(r.trigger.member_id.as_deref(), Some("m2"));
    assert!(
        r.notes.iter().any(|n| n.contains("no target assignment")),
        "{:?}",
        r.notes
    );
}

/// A log whose target assignment lines were grepped away keeps one round
/// per "Bumped group epoch" line: without any target line the log cannot
/// show a superseded bump.
#[test]
fn kip848_bumps_without_any_target_line_stay_one_round_each() {
    let log = [
        java(0.0, "[GroupId g] Member m1 joins the consumer group."),
        java(0.0, "[GroupId g] Bumped group epoch to 1."),
        java(10.0, "[GroupId g] Member m2 joins the consumer group."),
        java(10.0, "[GroupId g] Bumped group epoch to 2."),
    ]
    .concat();
    let seen: Vec<_> = history(&log, "g")
        .rebalances
        .iter()
        .map(|r| gens(r))
        .collect();
    assert_eq!(seen, vec![(None, Some(1)), (Some(1), Some(2))]);
}

/// Point 10, versions. 0.11–2.0 `prepareRebalance` logs "Preparing to
/// rebalance group G with old generation N (__consumer_offsets-P)" with no
/// reason, and that version's INFO level hides LeaveGroup (DEBUG) and, in
/// 0.10, member failure (TRACE): no guess, a note saying what is hidden.
#[test]
fn a_reasonless_preparing_line_of_an_old_broker_says_what_its_log_level_hides() {
    let log = old_broker_round(
        "Preparing to rebalance group g with old generation 7 (__consumer_offsets-3)",
    );
    let r = &history(&log, "g").rebalances[0];
    assert_eq!(r.trigger.kind, "unknown");
    assert!(
        r.notes.iter().any(|n| n.contains("only at DEBUG")),
        "{:?}",
        r.notes
    );
}

/// Point 10, "≤ 2.6.0 removes non-rejoiners silently": a 2.1–2.7 broker
/// logs a reason but its "Stabilized" line has no member count, and up to
/// 2.6.0 `onCompleteJoin` dropped members that did not rejoin without a
/// line; the round says so. A 2.8+ "with K members" line does not.
#[test]
fn a_stabilized_line_without_member_count_says_a_silent_removal_may_be_missing() {
    let old = old_broker_round(
        "Preparing to rebalance group g in state PreparingRebalance with old generation 7 \
         (__consumer_offsets-3) (reason: Adding new member c-1 with group instance id None)",
    );
    let r = &history(&old, "g").rebalances[0];
    assert!(
        r.notes.iter().any(|n| n.contains("up to 2.6.0")),
        "{:?}",
        r.notes
    );
    let new = old.replace(
        "generation 8 (__consumer_offsets-3)",
        "generation 8 (__consumer_offsets-3) with 2 members",
    );
    let r = &history(&new, "g").rebalances[0];
    assert!(
        !r.notes.iter().any(|n| n.contains("up to 2.6.0")),
        "{:?}",
        r.notes
    );
}

/// A 0.11–2.7 round of group g, 7 → 8, as the Scala coordinator logs it
/// after `preparing`: "Stabilized" and "Assignment received" without
/// member counts (`onCompleteJoin`, `doSyncGroup` of those versions).
fn old_broker_round(preparing: &str) -> String {
    [
        scala(0.0, preparing),
        scala(
            2.0,
            "Stabilized group g generation 8 (__consumer_offsets-3)",
        ),
        scala(
            2.1,
            "Assignment received from leader for group g for generation 8",
        ),
    ]
    .concat()
}

/// A classic member id as GroupMetadataManager.java / ClassicGroup.java
/// `generateMemberId` makes it: `<client id>-<UUID>`.
fn classic_id(client: &str) -> String {
    format!("{client}-3aa9599b-c4c3-4dbe-be7e-94f81ef0a2bf")
}

/// Point 7, mixed and migrated groups: the online upgrade. A
/// ConsumerGroupHeartbeat joining a classic group makes
/// GroupMetadataManager.java `getOrMaybeCreateConsumerGroup` call
/// `convertToConsumerGroup` ("[GroupId G] Converted the classic group to a
/// consumer group."); ConsumerGroup.java `fromClassicGroup` sets the group
/// epoch to the classic generation, and the joining member bumps it
/// ("Bumped group epoch to E"). The classic members stay: each of their
/// JoinGroups is logged "Member M joins the consumer group using the classic
/// protocol." (`classicGroupJoinToConsumerGroup` →
/// `getOrMaybeSubscribeDynamicConsumerGroupMember` with createIfNotExists)
/// without a bump, and their LeaveGroup
/// (`classicGroupLeaveToConsumerGroup`: "Dynamic member M has left group
/// through explicit `LeaveGroup` request") bumps the epoch.
#[test]
fn a_classic_group_upgraded_online_keeps_its_generations_then_counts_group_epochs() {
    let (c1, c2) = (classic_id("c1"), classic_id("c2"));
    let target = |e: i32| {
        format!("[GroupId g] Computed a new target assignment for epoch {e} with 'uniform' assignor in 1ms.")
    };
    let log = [
        java(0.0, &format!("Pending dynamic member with id {c1} joins group g in Empty state. Adding to the group now.")),
        java(0.0, &format!("Preparing to rebalance group g in state PreparingRebalance with old generation 0 (reason: Adding new member {c1} with group instance id null; client reason: need to re-join with the given member-id: {c1}).")),
        java(0.5, &format!("Pending dynamic member with id {c2} joins group g in PreparingRebalance state. Adding to the group now.")),
        java(3.0, "Stabilized group g generation 1 with 2 members."),
        java(3.1, &format!("Assignment received from leader {c1} for group g for generation 1. The group has 2 members, 0 of which are static.")),
        java(10.0, "[GroupId g] Converted the classic group to a consumer group."),
        java(10.0, "[GroupId g] Member m3 joins the consumer group using the consumer protocol."),
        java(10.0, "[GroupId g] Bumped group epoch to 2 with metadata hash 42."),
        java(10.1, &target(2)),
        java(10.2, &format!("[GroupId g] Member {c1} joins the consumer group using the classic protocol.")),
        java(10.2, &format!("[GroupId g] Member {c2} joins the consumer group using the classic protocol.")),
        java(20.0, &format!("[GroupId g] Dynamic member {c1} has left group through explicit `LeaveGroup` request; client reason: the consumer is being closed")),
        java(20.0, "[GroupId g] Bumped group epoch to 3 with metadata hash 42."),
        java(20.1, &target(3)),
        java(20.5, &format!("[GroupId g] Member {c2} joins the consumer group using the classic protocol.")),
    ]
    .concat();
    let h = history(&log, "g");
    let seen: Vec<_> = h
        .rebalances
        .iter()
        .map(|r| {
            (
                r.protocol.as_str(),
                gens(r),
                r.trigger.kind.as_str(),
                r.trigger.member_id.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            ("classic", (Some(0), Some(1)), "member_joined", c1.clone()),
            (
                "consumer",
                (Some(1), Some(2)),
                "member_joined",
                "m3".to_string()
            ),
            ("consumer", (Some(2), Some(3)), "member_left", c1.clone()),
        ]
    );
    assert_eq!(h.summary.protocol, "consumer");
    assert_eq!(h.summary.generations_seen, vec![1, 2, 3]);
    assert!(
        h.summary
            .notes
            .iter()
            .any(|n| n.contains("converted the classic group to a consumer group")),
        "{:?}",
        h.summary.notes
    );
}

/// Point 7, the online downgrade: when the last member using the consumer
/// protocol leaves ("[GroupId G] Member M left the consumer group."),
/// GroupMetadataManager.java `convertToClassicGroup` makes a classic group
/// at the group epoch (ClassicGroup.java `fromConsumerGroup`) and calls
/// `prepareRebalance` with "Downgrade group G from consumer to classic for
/// member leaving.", then logs "Converted the consumer group to a classic
/// group.": the next round is classic, from the epoch to the next
/// generation, caused by that leave, and no epoch is bumped for it.
#[test]
fn a_consumer_group_downgraded_online_goes_on_with_classic_generations_from_its_epoch() {
    let c2 = classic_id("c2");
    let target = |e: i32| {
        format!("[GroupId g] Computed a new target assignment for epoch {e} with 'uniform' assignor in 1ms.")
    };
    let log = [
        java(0.0, "[GroupId g] Member m1 joins the consumer group using the consumer protocol."),
        java(0.0, "[GroupId g] Bumped group epoch to 1."),
        java(0.1, &target(1)),
        java(5.0, &format!("[GroupId g] Member {c2} joins the consumer group using the classic protocol.")),
        java(5.0, "[GroupId g] Bumped group epoch to 2."),
        java(5.1, &target(2)),
        java(9.0, &format!("[GroupId g] Member {c2} joins the consumer group using the classic protocol.")),
        java(10.0, "[GroupId g] Member m1 left the consumer group."),
        java(10.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 2 (reason: Downgrade group g from consumer to classic for member leaving.)."),
        java(10.0, "[GroupId g] Converted the consumer group to a classic group."),
        java(11.0, "Stabilized group g generation 3 with 1 members."),
        java(11.1, &format!("Assignment received from leader {c2} for group g for generation 3. The group has 1 members, 0 of which are static.")),
    ]
    .concat();
    let h = history(&log, "g");
    let seen: Vec<_> = h
        .rebalances
        .iter()
        .map(|r| (r.protocol.as_str(), gens(r), r.trigger.kind.as_str()))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("consumer", (None, Some(1)), "member_joined"),
            ("consumer", (Some(1), Some(2)), "member_joined"),
            ("classic", (Some(2), Some(3)), "member_left"),
        ]
    );
    // Named like the upgrade's round (by the member whose join or leave
    // converted the group), with the broker's downgrade reason beside it.
    let last = &h.rebalances[2];
    assert_eq!(last.trigger.member_id.as_deref(), Some("m1"));
    assert!(
        last.other_triggers
            .iter()
            .any(|t| t.kind == "protocol_migration"),
        "{last:?}"
    );
    assert_eq!(h.summary.protocol, "classic");
    assert_eq!(h.summary.generation, Some(3));
}

/// A KIP-848 Java consumer's reconciliation block at second `s`, worded as
/// AbstractMembershipManager.java `maybeReconcile` logs it ("Reconciling
/// assignment with local epoch {}\n\tMember: {}\n\tAssigned partitions: {}
/// …"); `localEpoch` is the epoch of the target assignment the MEMBER
/// reconciles to.
fn reconciling(s: f64, member: &str, epoch: i32, assigned: &str) -> String {
    let (whole, ms) = (s as u64, ((s.fract()) * 1000.0).round() as u64);
    format!(
        "[2024-05-01 10:{:02}:{:02},{ms:03}] INFO [Consumer clientId=c-1, groupId=g] Reconciling assignment with local epoch {epoch}\n\
         \tMember:                                    {member}\n\
         \tAssigned partitions:                       [{assigned}]\n\
         \tCurrent owned partitions:                  []\n\
         \tAdded partitions (assigned - owned):       [{assigned}]\n\
         \tRevoked partitions (owned - assigned):     []\n \
         (org.apache.kafka.clients.consumer.internals.ConsumerMembershipManager)\n",
        whole / 60,
        whole % 60
    )
}

/// Point 7: the client's "Reconciling assignment with local epoch E" is the
/// member's epoch, not a group epoch bump. From a client log alone each
/// reconciliation is one row numbered by the member's epochs
/// (`consumer_member`: the group may have bumped epochs the member skipped,
/// 1 → 3 here), the first after its join (local epoch 0) its own join, the
/// others of a cause the client cannot see; beside the broker's log it is
/// client evidence of the round of epoch E.
#[test]
fn a_clients_reconciling_lines_are_evidence_of_their_epochs_round_never_a_round_of_their_own() {
    let client_log = [
        reconciling(0.5, "m1", 0, ""),
        reconciling(1.0, "m1", 1, "t-0, t-1"),
        reconciling(11.0, "m1", 3, "t-0"),
        reconciling(11.5, "m1", 3, "t-0"),
    ]
    .concat();
    let alone = history(&client_log, "g");
    let rows: Vec<_> = alone
        .rebalances
        .iter()
        .map(|r| (gens(r), r.protocol.as_str(), r.trigger.kind.as_str()))
        .collect();
    assert_eq!(
        rows,
        vec![
            ((Some(0), Some(1)), "consumer_member", "member_joined"),
            ((Some(1), Some(3)), "consumer_member", "unknown"),
        ]
    );
    assert!(alone.rebalances.iter().all(|r| !r.expected));
    assert!(
        alone
            .summary
            .notes
            .iter()
            .any(|n| n.contains("not the group epoch")),
        "{:?}",
        alone.summary.notes
    );

    let target = |e: i32| {
        format!("[GroupId g] Computed a new target assignment for epoch {e} with 'uniform' assignor in 1ms.")
    };
    let broker_log = [
        java(
            0.0,
            "[GroupId g] Member m1 joins the consumer group using the consumer protocol.",
        ),
        java(0.0, "[GroupId g] Bumped group epoch to 1."),
        java(0.1, &target(1)),
        java(
            5.0,
            "[GroupId g] Member m2 joins the consumer group using the consumer protocol.",
        ),
        java(5.0, "[GroupId g] Bumped group epoch to 2."),
        java(5.1, &target(2)),
        java(
            10.0,
            "[GroupId g] Member m3 joins the consumer group using the consumer protocol.",
        ),
        java(10.0, "[GroupId g] Bumped group epoch to 3."),
        java(10.1, &target(3)),
    ]
    .concat();
    let mut evs = events(&broker_log);
    evs.extend(events(&client_log));
    evs.sort_by_key(|e| e.ts);
    let both = reconstruct(&evs)
        .into_iter()
        .find(|h| h.summary.group == "g")
        .expect("group g");
    let rows: Vec<_> = both.rebalances.iter().map(|r| gens(r)).collect();
    assert_eq!(
        rows,
        vec![(None, Some(1)), (Some(1), Some(2)), (Some(2), Some(3))],
        "one row per group epoch, none for the client's lines"
    );
    let cites_client = |r: &Rebalance| {
        r.evidence
            .iter()
            .any(|e| e.text.to_ascii_lowercase().contains("reconcil"))
    };
    assert!(cites_client(&both.rebalances[0]));
    assert!(!cites_client(&both.rebalances[1]));
    assert!(cites_client(&both.rebalances[2]));
}

/// Point 4: "… joins group G in Empty state …" is logged before the member
/// is added (GroupCoordinator.scala `doNewMemberJoinGroup` "Dynamic member
/// with unknown member id joins group ${group.groupId} in
/// ${group.currentState} state. Created a new member id …" and
/// `doPendingMemberJoinGroup` "Pending dynamic member with id $memberId
/// joins group ${group.groupId} in ${group.currentState} state. Adding to
/// the group now."; the same words in GroupMetadataManager.java): the group
/// was Empty, so the round is its formation (expected, the initial delay is
/// the broker's) even at an old generation above 0 (an emptied group keeps
/// its generation, `GroupMetadata.scala`). The same round after a join in
/// Stable state is no formation.
#[test]
fn a_join_in_empty_state_makes_the_round_a_formation_at_any_old_generation() {
    let m = classic_id("c-1");
    let log = |state: &str| {
        [
            scala(0.0, &format!("Dynamic member with unknown member id joins group g in {state} state. Created a new member id {m} and request the member to rejoin with this id.")),
            scala(0.01, &format!("Pending dynamic member with id {m} joins group g in {state} state. Adding to the group now.")),
            scala(0.01, &format!("Preparing to rebalance group g in state PreparingRebalance with old generation 6 (__consumer_offsets-3) (reason: Adding new member {m} with group instance id None; client reason: need to re-join with the given member-id: {m})")),
            scala(3.0, "Stabilized group g generation 7 (__consumer_offsets-3) with 1 members"),
            scala(3.01, &format!("Assignment received from leader {m} for group g for generation 7. The group has 1 members, 0 of which are static.")),
        ]
        .concat()
    };
    let h = history(&log("Empty"), "g");
    assert_eq!(h.rebalances.len(), 1, "{:#?}", h.rebalances);
    let r = &h.rebalances[0];
    assert_eq!(gens(r), (Some(6), Some(7)));
    assert_eq!(r.trigger.kind, "member_joined");
    assert!(r.expected, "{r:#?}");
    assert!(
        r.expected_reason
            .as_deref()
            .is_some_and(|e| e.contains("formation")),
        "{r:#?}"
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("group.initial.rebalance.delay.ms")),
        "{:?}",
        r.notes
    );

    let stable = &history(&log("Stable"), "g").rebalances[0];
    assert_eq!(gens(stable), (Some(6), Some(7)));
    assert!(!stable.expected, "{stable:#?}");
}

/// Point 10, versions. Kafka 2.3–2.4 GroupCoordinator.scala
/// `updateStaticMemberAndRebalance` logs "Static member $groupInstanceId
/// with unknown member id rejoins, assigning new member id $newMemberId,
/// while old member $oldMemberId will be removed." and "Static member joins
/// during ${group.currentState} stage will not trigger rebalance." with no
/// group: the group's story says what the log hides, opens no round and
/// names no cause.
#[test]
fn a_static_member_line_naming_no_group_gives_a_note_not_a_guess() {
    let log = [
        scala(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 3 (__consumer_offsets-3) (reason: Adding new member c-1-a with group instanceid None)"),
        scala(3.0, "Stabilized group g generation 4 (__consumer_offsets-3)"),
        scala(3.1, "Assignment received from leader for group g for generation 4"),
        scala(300.0, "Static member Some(i1) with unknown member id rejoins, assigning new member id i1-new, while old member i1-old will be removed."),
        scala(300.001, "Static member joins during Stable stage will not trigger rebalance."),
    ]
    .concat();
    let h = history(&log, "g");
    assert_eq!(h.rebalances.len(), 1, "{:#?}", h.rebalances);
    assert!(
        h.summary
            .notes
            .iter()
            .any(|n| n.contains("names no group") && n.contains("i1-new")),
        "{:?}",
        h.summary.notes
    );
}

/// Point 2: a client's request to rejoin is not a rebalance.
/// AbstractCoordinator.java `requestRejoin` logs "Request joining group
/// due to: R"; the broker may answer the member's JoinGroup with the
/// current generation (GroupCoordinator.scala `doCurrentMemberJoinGroup`).
/// With no "Preparing" line, new generation or REBALANCE_IN_PROGRESS the
/// suspected round is dropped and said in a note.
#[test]
fn a_suspected_round_that_nothing_confirms_is_dropped_with_a_note() {
    let log = client(
        0.0,
        "Request joining group due to: cached metadata has changed from [a] to [a, b]",
    );
    let h = history(&log, "g");
    assert!(h.rebalances.is_empty(), "{:#?}", h.rebalances);
    assert!(
        h.summary
            .notes
            .iter()
            .any(|n| n.contains("nothing shows the broker rebalancing")),
        "{:?}",
        h.summary.notes
    );
    // The same request followed by the broker's "Preparing" line is a round.
    let confirmed = [
        log,
        scala(0.5, "Preparing to rebalance group g in state PreparingRebalance with old generation 3 (__consumer_offsets-3) (reason: Leader c-2-b re-joining group during Stable; client reason: cached metadata has changed from [a] to [a, b])"),
        scala(1.0, "Stabilized group g generation 4 (__consumer_offsets-3) with 2 members"),
    ]
    .concat();
    let r = &history(&confirmed, "g").rebalances;
    assert_eq!(r.len(), 1, "{r:#?}");
    assert_eq!(r[0].trigger.kind, "metadata_changed");
}

/// Point 4: "Group G with generation N is now empty" (GroupCoordinator.scala
/// `onCompleteJoin`) leaves the group Empty at generation N (an emptied
/// group keeps its generation, GroupMetadata.scala); the next "Preparing …
/// with old generation N" is the group forming again: expected, not "N+1
/// from a stable group".
#[test]
fn a_group_that_the_broker_said_is_now_empty_forms_again_as_an_expected_round() {
    let log = [
        scala(0.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 5 (__consumer_offsets-3) (reason: Removing member c-1-a on LeaveGroup; client reason: the consumer is being closed)"),
        scala(0.0, "Group g with generation 6 is now empty (__consumer_offsets-3)"),
        scala(600.0, "Preparing to rebalance group g in state PreparingRebalance with old generation 6 (__consumer_offsets-3) (reason: Adding new member c-1-b with group instance id None; client reason: need to re-join with the given member-id: c-1-b)"),
        scala(603.0, "Stabilized group g generation 7 (__consumer_offsets-3) with 1 members"),
        scala(603.0, "Assignment received from leader c-1-b for group g for generation 7. The group has 1 members, 0 of which are static."),
    ]
    .concat();
    let h = history(&log, "g");
    assert_eq!(h.rebalances.len(), 1, "{:#?}", h.rebalances);
    let r = &h.rebalances[0];
    assert_eq!(gens(r), (Some(6), Some(7)));
    assert_eq!(r.trigger.kind, "member_joined");
    assert!(r.expected, "{r:#?}");
}

/// Point 7: a classic member inside a consumer group that does not send
/// SyncGroup in time. GroupMetadataManager.java
/// `scheduleConsumerGroupSyncTimeout` →
/// `consumerGroupFenceMemberOperation(…, "the member failed to sync within
/// timeout.")` logs "[GroupId G] Member M fenced from the group because the
/// member failed to sync within timeout." and bumps the epoch: its own
/// kind, not a session timeout.
#[test]
fn kip848_a_classic_member_fenced_for_not_syncing_is_a_pending_sync_expiry() {
    let m = classic_id("c2");
    let log = [
        java(0.0, "[GroupId g] Member m1 joins the consumer group using the consumer protocol."),
        java(0.0, "[GroupId g] Bumped group epoch to 1."),
        java(0.1, "[GroupId g] Computed a new target assignment for epoch 1 with 'uniform' assignor in 1ms."),
        java(30.0, &format!("[GroupId g] Member {m} fenced from the group because the member failed to sync within timeout.")),
        java(30.0, "[GroupId g] Computed a new target assignment for epoch 2 with 'uniform' assignor in 1ms."),
    ]
    .concat();
    let h = history(&log, "g");
    let last = h.rebalances.last().expect("the fence's round");
    assert_eq!(gens(last), (Some(1), Some(2)));
    assert_eq!(last.trigger.kind, "pending_sync_expired", "{last:#?}");
    assert_eq!(last.trigger.member_id.as_deref(), Some(m.as_str()));
}

/// Point 10: GroupCoordinator.scala `updateStaticMemberAndRebalance`
/// (2.4+), when storing a replaced static member's new id fails: "Failed
/// to persist metadata for group G: E" (GroupMetadataManager.java 3.7+:
/// "Failed to persist metadata for group G static member M with group
/// instance id I due to E. Reverting to old member id O."). The old member
/// id is restored; no rebalance: a note.
#[test]
fn a_failure_to_persist_a_static_members_metadata_is_a_note_not_a_round() {
    for line in [
        scala(0.0, "Failed to persist metadata for group g: The coordinator is not available."),
        java(0.0, "Failed to persist metadata for group g static member inst-1-new with group instance id inst-1 due to The coordinator is not available.. Reverting to old member id inst-1-old."),
    ] {
        let h = history(&line, "g");
        assert!(h.rebalances.is_empty(), "{:#?}", h.rebalances);
        assert!(
            h.summary
                .notes
                .iter()
                .any(|n| n.contains("could not store a static member's new member id")),
            "{:?}",
            h.summary.notes
        );
    }
}

/// The leader's client log names the member a round let in.
/// ConsumerCoordinator.java `onLeaderElected` logs "Finished assignment
/// for group at generation N: {M=Assignment(partitions=[…]), …}" with
/// every member of generation N; a follower's heartbeat answered
/// REBALANCE_IN_PROGRESS logs "Request joining group due to: group is
/// already rebalancing" (AbstractCoordinator.java `HeartbeatResponseHandler`).
/// A member id in generation 2's map and not in generation 1's joined.
#[test]
fn a_member_new_in_the_leaders_assignment_map_is_the_join_that_started_the_round() {
    let (a, b) = (classic_id("c-1"), classic_id("c-2").replace("3aa9", "9f9f"));
    let log = [
        client(0.0, "(Re-)joining group"),
        client(0.05, &format!("Successfully joined group with generation Generation{{generationId=1, memberId='{a}', protocol='range'}}")),
        client(0.06, &format!("Finished assignment for group at generation 1: {{{a}=Assignment(partitions=[t-0, t-1])}}")),
        client(0.07, &format!("Successfully synced group in generation Generation{{generationId=1, memberId='{a}', protocol='range'}}")),
        client(20.0, "Request joining group due to: group is already rebalancing"),
        client(20.02, "(Re-)joining group"),
        client(20.03, &format!("Successfully joined group with generation Generation{{generationId=2, memberId='{a}', protocol='range'}}")),
        client(20.04, &format!("Finished assignment for group at generation 2: {{{b}=Assignment(partitions=[t-1]), {a}=Assignment(partitions=[t-0])}}")),
        client(20.05, &format!("Successfully synced group in generation Generation{{generationId=2, memberId='{a}', protocol='range'}}")),
    ]
    .concat();
    let h = history(&log, "g");
    let last = h.rebalances.last().expect("the second round");
    assert_eq!(gens(last), (Some(1), Some(2)));
    assert_eq!(last.trigger.kind, "member_joined", "{last:#?}");
    assert_eq!(last.trigger.member_id.as_deref(), Some(b.as_str()));
}

/// A KIP-848 group deleted and made again, as Apache Kafka 4.4 logged it
/// in the lab (`lab/ak_scenarios.py` `k848_recreated`): both members
/// leave (the last leave bumps the epoch "with metadata hash 0", no target
/// is computed: nobody to assign to), DeleteGroups removes the group
/// (GroupCoordinatorShard.java: "The following groups were deleted: g. A
/// total of N offsets were removed."), and two new members make a group of
/// the same name whose epochs start again (`getOrMaybeCreateConsumerGroup`).
fn recreated_log(deleted_line: bool) -> String {
    let t = |e: i32| {
        format!("[GroupId g] Computed a new target assignment for epoch {e} with 'uniform' assignor in 0ms.")
    };
    let mut lines = vec![
        java(
            0.0,
            "[GroupId g] Member m1 joins the consumer group using the consumer protocol.",
        ),
        java(
            0.0,
            "[GroupId g] Bumped group epoch to 2 with metadata hash -761.",
        ),
        java(0.1, &t(2)),
        java(
            0.2,
            "[GroupId g] Member m2 joins the consumer group using the consumer protocol.",
        ),
        java(
            0.2,
            "[GroupId g] Bumped group epoch to 3 with metadata hash -761.",
        ),
        java(1.2, &t(3)),
        java(9.0, "[GroupId g] Member m2 left the consumer group."),
        java(
            9.0,
            "[GroupId g] Bumped group epoch to 4 with metadata hash -761.",
        ),
        java(9.1, "[GroupId g] Member m1 left the consumer group."),
        java(
            9.1,
            "[GroupId g] Bumped group epoch to 5 with metadata hash 0.",
        ),
    ];
    if deleted_line {
        lines.push("[2024-05-01 10:00:12,300] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] The following groups were deleted: g. A total of 9 offsets were removed. (org.apache.kafka.coordinator.group.GroupCoordinatorShard)\n".into());
    }
    lines.extend([
        java(
            16.5,
            "[GroupId g] Member m3 joins the consumer group using the consumer protocol.",
        ),
        java(
            16.5,
            "[GroupId g] Bumped group epoch to 2 with metadata hash -761.",
        ),
        java(16.5, &t(2)),
        java(
            16.6,
            "[GroupId g] Member m4 joins the consumer group using the consumer protocol.",
        ),
        java(
            16.6,
            "[GroupId g] Bumped group epoch to 3 with metadata hash -761.",
        ),
        java(17.6, &t(3)),
    ]);
    lines.concat()
}

#[test]
fn a_consumer_group_deleted_and_made_again_has_the_new_groups_rounds_too() {
    // Before, epochs 2 and 3 of the new group were below the 5 held and
    // ignored: its rounds were missing and the round of the leaves stayed
    // open, holding every later line.
    for deleted_line in [true, false] {
        let h = history(&recreated_log(deleted_line), "g");
        let seen: Vec<_> = h
            .rebalances
            .iter()
            .map(|r| {
                (
                    gens(r),
                    r.trigger.kind.as_str(),
                    r.trigger.member_id.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            vec![
                ((None, Some(2)), "member_joined", Some("m1")),
                ((Some(2), Some(3)), "member_joined", Some("m2")),
                ((Some(3), Some(5)), "member_left", Some("m2")),
                ((None, Some(2)), "member_joined", Some("m3")),
                ((Some(2), Some(3)), "member_joined", Some("m4")),
            ],
            "deleted line {deleted_line}"
        );
        // Every member gone: the group was empty, the round over at its bump.
        let leaves = &h.rebalances[2];
        assert_eq!(leaves.completed_at, leaves.join_completed_at);
        assert!(leaves.completed_at.is_some());
        assert!(
            leaves
                .notes
                .iter()
                .any(|n| n.contains("every member had left")),
            "{:?}",
            leaves.notes
        );
    }
}

#[test]
fn a_lower_epoch_while_members_remain_is_a_line_out_of_turn_not_a_new_group() {
    let log = [
        java(
            0.0,
            "[GroupId g] Member m1 joins the consumer group using the consumer protocol.",
        ),
        java(
            0.0,
            "[GroupId g] Bumped group epoch to 2 with metadata hash -761.",
        ),
        java(
            0.2,
            "[GroupId g] Member m2 joins the consumer group using the consumer protocol.",
        ),
        java(
            0.2,
            "[GroupId g] Bumped group epoch to 3 with metadata hash -761.",
        ),
        java(9.0, "[GroupId g] Member m2 left the consumer group."),
        // m1 is still in the group: an older broker's line, not a new group.
        java(
            9.5,
            "[GroupId g] Bumped group epoch to 2 with metadata hash -761.",
        ),
    ]
    .concat();
    let h = history(&log, "g");
    let seen: Vec<_> = h.rebalances.iter().map(|r| gens(r)).collect();
    assert_eq!(seen, vec![(None, Some(2)), (Some(2), Some(3))]);
}

#[test]
fn a_deletion_line_naming_two_groups_reaches_both() {
    let line = "[2024-05-01 10:00:12,300] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] The following groups were deleted: a, b. A total of 2 offsets were removed. (org.apache.kafka.coordinator.group.GroupCoordinatorShard)\n";
    let evs = events(line);
    let groups: Vec<_> = evs.iter().map(|e| e.group.as_deref()).collect();
    assert_eq!(groups, vec![Some("a"), Some("b")]);
    assert!(evs.iter().all(|e| e.evidence == evs[0].evidence));
}
