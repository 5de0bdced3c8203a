//! Scenario tests: typed event sequences shaped like real clients' traffic,
//! checked against the rebalances a careful person would name.

use crate::event::*;
use crate::time::Timestamp;

use super::{reconstruct, GroupHistory};

/// Builds events for one group, frame numbers counting up.
struct Script {
    events: Vec<GroupEvent>,
    frame: u64,
    exchange: u64,
}

/// Each rebalance's `(previous_generation, generation)`, in order.
fn generations(h: &GroupHistory) -> Vec<(Option<i32>, Option<i32>)> {
    h.rebalances
        .iter()
        .map(|r| (r.previous_generation, r.generation))
        .collect()
}

fn secs(s: f64) -> Timestamp {
    Timestamp(1_700_000_000_000_000_000 + (s * 1e9) as i64)
}

impl Script {
    fn new() -> Script {
        Script {
            events: Vec::new(),
            frame: 0,
            exchange: 0,
        }
    }

    fn push(
        &mut self,
        at: f64,
        client: &str,
        member: &str,
        generation: Option<i32>,
        kind: EventKind,
    ) {
        self.frame += 1;
        self.events.push(GroupEvent {
            ts: secs(at),
            group: Some("g1".into()),
            member_id: Some(member.into()),
            group_instance_id: None,
            generation_id: generation,
            client: ClientRef {
                client_id: Some(client.into()),
                address: Some(format!("127.0.0.1:{}", 40000 + client.len())),
                ..ClientRef::default()
            }
            .into(),
            kind,
            truncated: false,
            evidence: Evidence {
                source: crate::event::Source::from("t.pcap"),
                at: Location::Frame { frame: self.frame },
            },
        });
    }

    fn next_exchange(&mut self) -> u64 {
        self.exchange += 1;
        self.exchange
    }

    /// A JoinGroup round trip: request at `at`, answer at `answered`.
    #[allow(clippy::too_many_arguments)]
    fn join(
        &mut self,
        at: f64,
        answered: f64,
        client: &str,
        asked: &str,
        got: &str,
        generation: i32,
        leader: &str,
        members: &[&str],
    ) {
        let x = self.next_exchange();
        self.push(
            at,
            client,
            asked,
            None,
            EventKind::JoinGroupRequest {
                exchange: x,
                session_timeout_ms: 10_000,
                rebalance_timeout_ms: Some(20_000),
                protocol_type: "consumer".into(),
                protocols: vec![OfferedProtocol {
                    name: "range".into(),
                    topics: vec!["orders".into()],
                    owned_partitions: vec![],
                }],
                reason: None,
                identity_cut: false,
            },
        );
        let members = members
            .iter()
            .map(|m| JoinedMember {
                member_id: m.to_string(),
                ..JoinedMember::default()
            })
            .collect();
        self.push(
            answered,
            client,
            got,
            Some(generation),
            EventKind::JoinGroupResponse {
                exchange: x,
                error: None,
                protocol_name: Some("range".into()),
                leader: leader.into(),
                members,
                parked_ms: Some((answered - at) * 1000.0),
            },
        );
    }

    fn member_id_required(&mut self, at: f64, client: &str, assigned: &str) {
        let x = self.next_exchange();
        self.push(
            at,
            client,
            "",
            None,
            EventKind::JoinGroupRequest {
                exchange: x,
                session_timeout_ms: 10_000,
                rebalance_timeout_ms: Some(20_000),
                protocol_type: "consumer".into(),
                protocols: vec![],
                reason: None,
                identity_cut: false,
            },
        );
        self.push(
            at + 0.001,
            client,
            assigned,
            None,
            EventKind::JoinGroupResponse {
                exchange: x,
                error: ErrorCode::from_code(79),
                protocol_name: None,
                leader: Default::default(),
                members: Box::default(),
                parked_ms: Some(1.0),
            },
        );
    }

    fn sync(&mut self, at: f64, client: &str, member: &str, generation: i32, partitions: &[i32]) {
        let x = self.next_exchange();
        self.push(
            at,
            client,
            member,
            Some(generation),
            EventKind::SyncGroupRequest {
                exchange: x,
                assignments: vec![],
            },
        );
        let assignment = vec![TopicPartitions {
            topic: "orders".into(),
            partitions: partitions.to_vec(),
        }];
        self.push(
            at + 0.002,
            client,
            member,
            Some(generation),
            EventKind::SyncGroupResponse {
                exchange: x,
                error: None,
                assignment,
            },
        );
    }

    fn heartbeat(&mut self, at: f64, client: &str, member: &str, generation: i32, error: i16) {
        let x = self.next_exchange();
        self.push(
            at,
            client,
            member,
            Some(generation),
            EventKind::HeartbeatRequest { exchange: x },
        );
        self.push(
            at + 0.001,
            client,
            member,
            Some(generation),
            EventKind::HeartbeatResponse {
                exchange: x,
                error: ErrorCode::from_code(error),
            },
        );
    }

    fn leave(&mut self, at: f64, client: &str, member: &str, reason: Option<&str>) {
        let x = self.next_exchange();
        let members = vec![LeavingMember {
            member_id: member.into(),
            group_instance_id: None,
            reason: reason.map(String::from),
        }];
        self.push(
            at,
            client,
            member,
            None,
            EventKind::LeaveGroupRequest {
                exchange: x,
                members,
            },
        );
    }

    /// An admin client's DeleteGroups answered for g1 (`error`: refused).
    fn deleted(&mut self, at: f64, error: Option<i16>) {
        let x = self.next_exchange();
        let kind = EventKind::GroupDeleted {
            exchange: x,
            error: error.and_then(ErrorCode::from_code),
        };
        self.push(at, "admin", "", None, kind);
        if let Some(ev) = self.events.last_mut() {
            ev.member_id = None;
        }
    }

    fn close(&mut self, at: f64, client: &str, member: &str) {
        self.push(
            at,
            client,
            member,
            None,
            EventKind::ConnectionClosed { reset: false },
        );
    }

    /// Two members, c1 then c2, ending Stable at generation 2.
    fn two_members_joined() -> Script {
        let mut s = Script::new();
        s.member_id_required(0.0, "c1", "m1");
        s.join(0.01, 3.0, "c1", "m1", "m1", 1, "m1", &["m1"]);
        s.sync(3.01, "c1", "m1", 1, &[0, 1]);
        s.heartbeat(4.0, "c1", "m1", 1, 0);
        s.member_id_required(5.0, "c2", "m2");
        s.join(5.01, 6.2, "c2", "m2", "m2", 2, "m1", &[]);
        s.heartbeat(6.0, "c1", "m1", 1, 27);
        s.join(6.01, 6.2, "c1", "m1", "m1", 2, "m1", &["m1", "m2"]);
        s.sync(6.3, "c1", "m1", 2, &[0]);
        s.sync(6.31, "c2", "m2", 2, &[1]);
        s
    }

    /// [`Script::two_members_joined`], then c2 leaves (LeaveGroup, then its
    /// connection closes) and c1 alone forms generation 3 with both
    /// partitions.
    fn c2_left_cleanly() -> Script {
        let mut s = Script::two_members_joined();
        s.leave(20.0, "c2", "m2", None);
        s.close(20.2, "c2", "m2");
        s.heartbeat(21.0, "c1", "m1", 2, 27);
        s.join(21.01, 21.05, "c1", "m1", "m1", 3, "m1", &["m1"]);
        s.sync(21.1, "c1", "m1", 3, &[0, 1]);
        s
    }
}

#[test]
fn members_joining_one_by_one_give_one_rebalance_each() {
    let s = Script::two_members_joined();
    let h = reconstruct(&s.events);
    let r = &h[0].rebalances;
    assert_eq!(r.len(), 2, "{r:#?}");
    assert_eq!(r[0].trigger.kind, "member_joined");
    assert!(r[0].expected, "forming a group is expected");
    assert_eq!(
        (r[1].previous_generation, r[1].generation),
        (Some(1), Some(2))
    );
    assert_eq!(r[1].trigger.kind, "member_joined");
    assert_eq!(r[1].trigger.client_id.as_deref(), Some("c2"));
    assert!(!r[1].expected);
    assert_eq!(r[1].members_after.len(), 2);
    assert_eq!(h[0].summary.state, "Stable");
    assert_eq!(h[0].summary.generations_seen, vec![1, 2]);
}

#[test]
fn the_last_member_to_rejoin_is_named_the_straggler() {
    let s = Script::two_members_joined();
    let h = reconstruct(&s.events);
    let straggler = h[0].rebalances[1]
        .straggler
        .as_ref()
        .expect("c1 rejoined a second after c2");
    assert_eq!(straggler.client_id.as_deref(), Some("c1"));
}

#[test]
fn a_leave_followed_by_a_connection_close_is_a_clean_leave() {
    let s = Script::c2_left_cleanly();
    let h = reconstruct(&s.events);
    let r = h[0].rebalances.last().unwrap();
    assert_eq!(r.trigger.kind, "member_left");
    assert_eq!(r.trigger.confidence, "high");
    assert_eq!(r.trigger.member_id.as_deref(), Some("m2"));
    assert_eq!(r.removed[0].how, "left");
}

#[test]
fn a_leave_without_close_then_a_rejoin_is_a_poll_timeout() {
    let mut s = Script::two_members_joined();
    s.heartbeat(10.0, "c2", "m2", 2, 0);
    s.leave(30.0, "c2", "m2", None);
    s.heartbeat(31.0, "c1", "m1", 2, 27);
    s.join(31.01, 31.05, "c1", "m1", "m1", 3, "m1", &["m1"]);
    s.sync(31.1, "c1", "m1", 3, &[0, 1]);
    s.member_id_required(40.0, "c2", "m2b");
    let h = reconstruct(&s.events);
    let r = &h[0].rebalances[2];
    assert_eq!(r.trigger.kind, "poll_timeout", "{:#?}", r.trigger);
    assert_eq!(r.trigger.client_id.as_deref(), Some("c2"));
}

#[test]
fn an_explicit_poll_timeout_reason_is_believed() {
    let mut s = Script::two_members_joined();
    s.leave(30.0, "c2", "m2", Some("consumer poll timeout has expired."));
    let h = reconstruct(&s.events);
    let r = h[0].rebalances.last().unwrap();
    assert_eq!(
        (r.trigger.kind.as_str(), r.trigger.confidence.as_str()),
        ("poll_timeout", "high")
    );
}

#[test]
fn a_silent_member_behind_rebalance_in_progress_is_a_session_timeout() {
    let mut s = Script::two_members_joined();
    s.heartbeat(8.0, "c2", "m2", 2, 0);
    s.heartbeat(9.0, "c1", "m1", 2, 0);
    s.heartbeat(19.5, "c1", "m1", 2, 27);
    s.join(19.51, 19.6, "c1", "m1", "m1", 3, "m1", &["m1"]);
    s.sync(19.7, "c1", "m1", 3, &[0, 1]);
    s.heartbeat(25.0, "c2", "m2", 2, 25);
    let h = reconstruct(&s.events);
    let r = h[0].rebalances.last().unwrap();
    assert_eq!(r.trigger.kind, "session_timeout", "{:#?}", r.trigger);
    assert_eq!(r.trigger.member_id.as_deref(), Some("m2"));
    assert_eq!(
        r.trigger.confidence, "high",
        "UNKNOWN_MEMBER_ID later confirms it"
    );
    assert!(
        r.trigger.detail.contains("stayed open"),
        "{}",
        r.trigger.detail
    );
    assert_eq!(r.removed[0].how, "session_timeout");
    assert_eq!(r.partitions_assigned, vec!["orders-1"]);
}

#[test]
fn a_killed_member_is_a_session_timeout_with_its_connection_closed() {
    let mut s = Script::two_members_joined();
    s.heartbeat(8.0, "c2", "m2", 2, 0);
    s.close(8.5, "c2", "m2");
    s.heartbeat(19.5, "c1", "m1", 2, 27);
    s.join(19.51, 19.6, "c1", "m1", "m1", 3, "m1", &["m1"]);
    s.sync(19.7, "c1", "m1", 3, &[0, 1]);
    let h = reconstruct(&s.events);
    let r = h[0].rebalances.last().unwrap();
    assert_eq!(r.trigger.kind, "session_timeout");
    assert_eq!(r.trigger.confidence, "medium");
    assert!(r.trigger.detail.contains("killed"), "{}", r.trigger.detail);
}

#[test]
fn the_kip394_two_step_join_is_one_join_not_two() {
    let mut s = Script::new();
    s.member_id_required(0.0, "c1", "m1");
    s.join(0.01, 3.0, "c1", "m1", "m1", 1, "m1", &["m1"]);
    s.sync(3.01, "c1", "m1", 1, &[0]);
    let h = reconstruct(&s.events);
    assert_eq!(h[0].rebalances.len(), 1);
    assert_eq!(h[0].rebalances[0].joins.len(), 1);
}

#[test]
fn a_capture_starting_mid_rebalance_says_so() {
    let mut s = Script::new();
    s.push(
        0.0,
        "c1",
        "m1",
        Some(4),
        EventKind::JoinGroupResponse {
            exchange: 99,
            error: None,
            protocol_name: Some("range".into()),
            leader: "m1".into(),
            members: Box::default(),
            parked_ms: None,
        },
    );
    s.sync(0.1, "c1", "m1", 4, &[0]);
    let h = reconstruct(&s.events);
    let r = &h[0].rebalances[0];
    assert_eq!(r.trigger.kind, "unknown");
    assert!(r.notes.iter().any(|n| n.contains("begin inside")));
}

fn log_event(
    at: f64,
    line: u64,
    member: Option<&str>,
    generation: Option<i32>,
    kind: BrokerLine,
) -> GroupEvent {
    GroupEvent {
        ts: secs(at),
        group: Some("g1".into()),
        member_id: member.map(Into::into),
        group_instance_id: None,
        generation_id: generation,
        client: ClientRef {
            broker: Some("broker 1".into()),
            ..ClientRef::default()
        }
        .into(),
        kind: EventKind::Broker(kind),
        truncated: false,
        evidence: Evidence {
            source: crate::event::Source::from("server.log"),
            at: Location::Line { line },
        },
    }
}

#[test]
fn a_log_only_rebalance_takes_its_cause_from_the_broker_reason() {
    let events = vec![
        log_event(
            0.0,
            1,
            Some("c-1-abc"),
            None,
            BrokerLine::PreparingRebalance {
                state: "Stable".into(),
                old_generation: 1,
                reason: Some("removing member c-1-abc on heartbeat expiration".into()),
                client_reason: None,
            },
        ),
        log_event(
            3.0,
            2,
            None,
            Some(2),
            BrokerLine::Stabilized {
                generation: 2,
                members: Some(1),
                protocol: None,
                leader: None,
            },
        ),
        log_event(
            3.1,
            3,
            None,
            Some(2),
            BrokerLine::AssignmentReceived {
                generation: 2,
                members: Some(1),
            },
        ),
    ];
    let h = reconstruct(&events);
    let r = &h[0].rebalances[0];
    assert_eq!(r.trigger.kind, "session_timeout");
    assert_eq!(r.trigger.confidence, "high");
    assert_eq!((r.previous_generation, r.generation), (Some(1), Some(2)));
    assert_eq!(r.duration_ms, Some(3100.0));
    assert_eq!(r.evidence[0].line, Some(1));
    assert_eq!(h[0].summary.state, "Stable");
}

#[test]
fn many_rebalances_in_minutes_are_a_storm() {
    let mut events = Vec::new();
    for i in 0..7 {
        let t = i as f64 * 30.0;
        events.push(log_event(
            t,
            1,
            Some("x"),
            None,
            BrokerLine::PreparingRebalance {
                state: "Stable".into(),
                old_generation: i,
                reason: Some("Adding new member x with group instance id None".into()),
                client_reason: None,
            },
        ));
        events.push(log_event(
            t + 1.0,
            2,
            None,
            Some(i + 1),
            BrokerLine::Stabilized {
                generation: i + 1,
                members: Some(2),
                protocol: None,
                leader: None,
            },
        ));
        events.push(log_event(
            t + 1.1,
            3,
            None,
            Some(i + 1),
            BrokerLine::AssignmentReceived {
                generation: i + 1,
                members: Some(2),
            },
        ));
    }
    let h = reconstruct(&events);
    assert_eq!(h[0].rebalances.len(), 7);
    assert!(h[0].summary.storm);
}

#[test]
fn a_kip848_join_bumps_the_epoch() {
    let mut s = Script::new();
    s.push(
        0.0,
        "c1",
        "m1",
        Some(0),
        EventKind::ConsumerGroupHeartbeatRequest {
            exchange: 1,
            member_epoch: 0,
            rebalance_timeout_ms: 300_000,
            subscribed_topic_names: Some(vec!["orders".into()].into()),
            server_assignor: Some("uniform".into()),
            owned: Some(Box::default()),
            broker_offers: None,
        },
    );
    s.push(
        0.01,
        "c1",
        "m1",
        Some(1),
        EventKind::ConsumerGroupHeartbeatResponse {
            exchange: 1,
            error: None,
            error_message: None,
            member_epoch: 1,
            heartbeat_interval_ms: 5000,
            assignment: Some(vec![TopicPartitions {
                topic: "orders".into(),
                partitions: vec![0, 1],
            }]),
        },
    );
    let h = reconstruct(&s.events);
    assert_eq!(h[0].summary.protocol, "consumer");
    let r = &h[0].rebalances[0];
    assert_eq!((r.previous_generation, r.generation), (None, Some(1)));
    assert_eq!(r.trigger.kind, "member_joined");
}

/// Issue 10 point 3. GroupCoordinator.scala `doCurrentMemberJoinGroup`,
/// case Stable: "for followers with no actual change to their metadata,
/// just return group information for the current generation which will
/// allow them to issue SyncGroup". A follower's rejoin answered with the
/// same generation is no rebalance: no "2 → 2" row, a group note instead.
#[test]
fn a_follower_rejoining_while_stable_with_unchanged_metadata_is_no_rebalance() {
    let mut s = Script::two_members_joined();
    s.heartbeat(10.0, "c2", "m2", 2, 0);
    s.join(20.0, 20.001, "c2", "m2", "m2", 2, "m1", &[]);
    s.sync(20.01, "c2", "m2", 2, &[1]);
    s.heartbeat(23.0, "c1", "m1", 2, 0);
    let h = reconstruct(&s.events);
    let rows = generations(&h[0]);
    assert_eq!(rows, vec![(None, Some(1)), (Some(1), Some(2))]);
    assert!(
        h[0].summary
            .notes
            .iter()
            .any(|n| n.contains("got generation 2 back")),
        "{:?}",
        h[0].summary.notes
    );
}

/// Issue 10 point 3. ILLEGAL_GENERATION (22) on Heartbeat
/// (GroupCoordinator.scala `validateHeartbeat`: `generationId !=
/// group.generationId`) tells a member it missed a round; the client keeps
/// its member id (AbstractCoordinator `HeartbeatResponseHandler` resets only
/// the generation) and rejoins: a consequence, not a member joining.
#[test]
fn illegal_generation_on_heartbeat_opens_no_round_and_is_not_a_join() {
    let mut s = Script::two_members_joined();
    s.heartbeat(10.0, "c2", "m2", 1, 22);
    let h = reconstruct(&s.events);
    assert_eq!(h[0].rebalances.len(), 2, "{:#?}", h[0].rebalances);
    assert!(h[0].rebalances.iter().all(|r| r.started_at < secs(10.0)));
}

/// Issue 10 point 2. COORDINATOR_LOAD_IN_PROGRESS (14),
/// COORDINATOR_NOT_AVAILABLE (15) or NOT_COORDINATOR (16) answered to a
/// heartbeat: the partition moved or is loading, the new coordinator loads
/// the group at the same generation (GroupMetadataManager
/// `loadGroupsAndOffsets`; AbstractCoordinator `HeartbeatResponseHandler`
/// only marks the coordinator unknown) and heartbeats go on at generation
/// 2: no round, whichever of the three.
#[test]
fn coordinator_failover_at_the_same_generation_is_no_rebalance() {
    for error in [14, 15, 16] {
        let mut s = Script::two_members_joined();
        s.heartbeat(10.0, "c1", "m1", 2, error);
        s.heartbeat(10.5, "c1", "m1", 2, 0);
        s.heartbeat(11.0, "c2", "m2", 2, 0);
        let h = reconstruct(&s.events);
        assert_eq!(
            h[0].rebalances.len(),
            2,
            "error {error}: {:#?}",
            h[0].rebalances
        );
        assert_eq!(h[0].summary.generation, Some(2), "error {error}");
    }
}

/// Issue 10 point 9 (KIP-814). A static leader restarted within its
/// session timeout rejoins with an empty member id and its
/// group.instance.id. GroupCoordinator.scala `updateStaticMemberAndRebalance`
/// (GroupMetadataManager.java `updateStaticMemberThenRebalanceOrCompleteJoin`)
/// while Stable with an unchanged protocol replaces the member id and
/// answers at the CURRENT generation ("Static member which joins during
/// Stable stage and doesn't affect selectProtocol will not trigger
/// rebalance"); JoinGroup v9+ gives the leader the member list with
/// `SkipAssignment` set, and its SyncGroup at that generation carries no
/// assignment. No round: a note.
#[test]
fn a_static_leader_rejoining_while_stable_gets_the_member_list_without_a_round() {
    let mut s = Script::two_members_joined();
    s.heartbeat(10.0, "c2", "m2", 2, 0);
    s.close(14.0, "c1", "m1");
    s.join(
        15.0,
        15.002,
        "c1",
        "",
        "i1-new",
        2,
        "i1-new",
        &["i1-new", "m2"],
    );
    for ev in &mut s.events {
        let instance = ev.client.client_id.as_deref().map(|c| c.replace('c', "i"));
        ev.group_instance_id = instance.map(Into::into);
    }
    s.sync(15.01, "c1", "i1-new", 2, &[0]);
    s.heartbeat(18.0, "c2", "m2", 2, 0);
    s.heartbeat(18.5, "c1", "i1-new", 2, 0);
    let h = reconstruct(&s.events);
    let rows: Vec<_> = h[0]
        .rebalances
        .iter()
        .map(|r| (r.previous_generation, r.generation, r.trigger.kind.clone()))
        .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(
        h[0].summary.notes.iter().any(|n| n.contains("i1")),
        "{:?}",
        h[0].summary.notes
    );
}

/// Issue 10. After a LeaveGroup the Java client sends its next JoinGroup
/// with the leave's text as the reason ("consumer pro-actively leaving the
/// group": AbstractCoordinator.java `resetGenerationOnLeaveGroup` ->
/// `resetStateAndRejoin` sets `rejoinReason`). With an empty member id it
/// is a new member (GroupMetadataManager.java
/// `classicGroupJoinNewDynamicMember`): `member_joined`, the reason is
/// context only.
#[test]
fn a_join_carrying_its_own_earlier_leaves_reason_is_a_join() {
    let mut s = Script::two_members_joined();
    s.leave(30.0, "c2", "m2", Some("consumer poll timeout has expired."));
    s.heartbeat(31.0, "c1", "m1", 2, 27);
    s.join(31.01, 31.05, "c1", "m1", "m1", 3, "m1", &["m1"]);
    s.sync(31.1, "c1", "m1", 3, &[0, 1]);
    s.member_id_required(40.0, "c2", "m2b");
    let at = s.events.len() - 2;
    if let EventKind::JoinGroupRequest { reason, .. } = &mut s.events[at].kind {
        *reason = Some("consumer pro-actively leaving the group".into());
    }
    s.join(40.01, 41.0, "c2", "m2b", "m2b", 4, "m1", &[]);
    s.heartbeat(40.5, "c1", "m1", 3, 27);
    s.join(40.51, 41.0, "c1", "m1", "m1", 4, "m1", &["m1", "m2b"]);
    s.sync(41.1, "c1", "m1", 4, &[0]);
    s.sync(41.11, "c2", "m2b", 4, &[1]);
    let h = reconstruct(&s.events);
    let rows: Vec<_> = h[0]
        .rebalances
        .iter()
        .map(|r| (r.previous_generation, r.generation, r.trigger.kind.as_str()))
        .collect();
    assert_eq!(
        rows[2..],
        [
            (Some(2), Some(3), "poll_timeout"),
            (Some(3), Some(4), "member_joined")
        ],
        "{rows:?}"
    );
    let last = h[0].rebalances.last().unwrap();
    assert_eq!(last.trigger.client_id.as_deref(), Some("c2"));
}

/// Issue 10 point 9 (KIP-814), the capture starting after the group formed:
/// the old leader's group.instance.id was never seen (its heartbeats here
/// carry none), so nothing ties the new process to the member it replaces.
/// Kafka's rule does not need that tie: a JoinGroup with an empty member id
/// and a group.instance.id answered at the CURRENT generation is
/// GroupCoordinator.scala `updateStaticMemberAndRebalance`, case Stable,
/// "Static member which joins during Stable stage and doesn't affect
/// selectProtocol will not trigger rebalance" (GroupMetadataManager.java
/// `updateStaticMemberThenRebalanceOrCompleteJoin`): v9+ gives the leader
/// the member list with SkipAssignment, and nobody else rejoins. No round.
#[test]
fn a_static_leader_rejoining_a_stable_group_seen_only_mid_stream_opens_no_round() {
    let mut s = Script::new();
    s.heartbeat(1.0, "c1", "m1", 2, 0);
    s.heartbeat(1.2, "c2", "m2", 2, 0);
    s.heartbeat(4.0, "c1", "m1", 2, 0);
    s.heartbeat(4.2, "c2", "m2", 2, 0);
    s.close(5.0, "c1", "m1");
    let first = s.events.len();
    s.join(
        8.0,
        8.002,
        "c1",
        "",
        "i1-new",
        2,
        "i1-new",
        &["i1-new", "m2"],
    );
    for ev in &mut s.events[first..] {
        ev.group_instance_id = Some("i1".into());
    }
    s.sync(8.01, "c1", "i1-new", 2, &[0]);
    s.heartbeat(8.5, "c2", "m2", 2, 0);
    s.heartbeat(11.0, "c1", "i1-new", 2, 0);
    s.heartbeat(11.2, "c2", "m2", 2, 0);
    let h = reconstruct(&s.events);
    let rows: Vec<_> = h[0]
        .rebalances
        .iter()
        .map(|r| (r.previous_generation, r.generation, r.trigger.kind.clone()))
        .collect();
    assert!(rows.is_empty(), "{rows:?}");
    assert!(
        h[0].summary
            .notes
            .iter()
            .any(|n| n.contains("static member i1") && n.contains("KIP-814")),
        "{:?}",
        h[0].summary.notes
    );
}

#[test]
fn a_join_cut_inside_its_member_id_opens_no_round_as_a_new_member_would() {
    let mut s = Script::two_members_joined();
    // A stable group; then a JoinGroup whose member id the snap length
    // cut: read as Kafka's empty id it would be a new member's join.
    let x = s.next_exchange();
    s.push(
        10.0,
        "c1",
        "",
        None,
        EventKind::JoinGroupRequest {
            exchange: x,
            session_timeout_ms: 10_000,
            rebalance_timeout_ms: Some(20_000),
            protocol_type: Default::default(),
            protocols: vec![],
            reason: None,
            identity_cut: true,
        },
    );
    if let Some(e) = s.events.last_mut() {
        e.member_id = None;
        e.truncated = true;
    }
    let h = reconstruct(&s.events);
    assert_eq!(h[0].rebalances.len(), 2, "{:#?}", h[0].rebalances);
    assert_eq!(h[0].summary.state, "Stable");
}

impl Script {
    /// A ConsumerGroupHeartbeat exchange (KIP-848): the member sends
    /// `sent_epoch` (0 joins) and is answered `epoch` with `partitions` of
    /// topic "t" (None: assignment unchanged), heartbeat interval 1 s.
    fn cgh(
        &mut self,
        at: f64,
        client: &str,
        member: &str,
        sent_epoch: i32,
        epoch: i32,
        partitions: Option<&[i32]>,
    ) {
        let x = self.next_exchange();
        self.push(
            at,
            client,
            member,
            Some(sent_epoch),
            EventKind::ConsumerGroupHeartbeatRequest {
                exchange: x,
                member_epoch: sent_epoch,
                rebalance_timeout_ms: 300_000,
                subscribed_topic_names: (sent_epoch == 0).then(|| vec!["t".into()].into()),
                server_assignor: None,
                owned: None,
                broker_offers: None,
            },
        );
        self.push(
            at + 0.002,
            client,
            member,
            Some(epoch),
            EventKind::ConsumerGroupHeartbeatResponse {
                exchange: x,
                error: None,
                error_message: None,
                member_epoch: epoch,
                heartbeat_interval_ms: 1000,
                assignment: partitions.map(|p| {
                    vec![TopicPartitions {
                        topic: "t".into(),
                        partitions: p.to_vec(),
                    }]
                }),
            },
        );
    }
}

/// Issue 10 point 7, from a capture alone. GroupMetadataManager.java
/// `consumerGroupHeartbeat` bumps the group epoch once per joining member
/// (`groupEpoch += 1`) and answers with the TARGET assignment epoch, which
/// lags while the next target is not computed yet: two members joining at
/// once may both be answered epoch 2, the second with an empty assignment
/// (the target of 2 does not hold it). Its join made epoch 3: the 2 → 3
/// round is its join, not a round of unknown cause.
#[test]
fn kip848_a_second_joiner_answered_at_the_first_ones_epoch_is_the_cause_of_the_next() {
    let mut s = Script::new();
    // Both joins are sent before either is answered.
    s.cgh(0.0, "c1", "m1", 0, 2, Some(&[0, 1, 2, 3]));
    s.cgh(0.001, "c2", "m2", 0, 2, Some(&[]));
    s.cgh(1.0, "c1", "m1", 2, 3, Some(&[0, 1]));
    s.cgh(1.5, "c2", "m2", 2, 3, Some(&[2, 3]));
    s.events.sort_by_key(|e| e.ts);
    let h = reconstruct(&s.events);
    let rows: Vec<_> = h[0]
        .rebalances
        .iter()
        .map(|r| {
            (
                r.previous_generation,
                r.generation,
                r.trigger.kind.as_str(),
                r.trigger.member_id.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (None, Some(2), "member_joined", "m1".to_string()),
            (Some(2), Some(3), "member_joined", "m2".to_string()),
        ]
    );
}

/// Issue 10 point 7, from a capture alone: a KIP-848 member whose
/// heartbeats stop is fenced when its session expires
/// (GroupMetadataManager.java `scheduleConsumerGroupSessionTimeout` →
/// `consumerGroupFenceMemberOperation(…, "the member session expired.")`),
/// which bumps the group epoch with nothing on the wire but the others'
/// answers at the new epoch. Silent for longer than its heartbeat interval
/// and absent from the new epoch: a session timeout. A member that keeps
/// heartbeating is not named.
#[test]
fn kip848_a_member_silent_until_the_next_epoch_is_a_session_timeout() {
    let mut s = Script::new();
    s.cgh(0.0, "c1", "m1", 0, 1, Some(&[0, 1]));
    s.cgh(1.0, "c2", "m2", 0, 2, Some(&[1]));
    s.cgh(1.5, "c1", "m1", 1, 2, Some(&[0]));
    for i in 0..8 {
        s.cgh(2.0 + f64::from(i), "c1", "m1", 2, 2, None);
    }
    s.cgh(2.2, "c2", "m2", 2, 2, None);
    // m2 stops at 2.2 s; the broker fences it and m1 is answered epoch 3.
    s.cgh(10.0, "c1", "m1", 2, 3, Some(&[0, 1]));
    let h = reconstruct(&s.events);
    let last = h[0].rebalances.last().expect("the fence's round");
    assert_eq!(
        (last.previous_generation, last.generation),
        (Some(2), Some(3))
    );
    assert_eq!(last.trigger.kind, "session_timeout", "{last:#?}");
    assert_eq!(last.trigger.member_id.as_deref(), Some("m2"));
    assert!(last.removed.iter().any(|m| m.member_id == "m2"));
    assert!(last.removed.iter().all(|m| m.member_id != "m1"));
}

/// Issue 10/13: a KIP-848 round ends when the last member of the new epoch
/// reached it with its assignment, not at the last heartbeat before the
/// next bump. CurrentAssignmentBuilder.java `computeNextAssignment` keeps a
/// member that still has partitions to revoke at its previous epoch and
/// moves it to the target epoch once they are gone; GroupMetadataManager.java
/// `consumerGroupHeartbeat` then answers every heartbeat with that same
/// epoch, with no assignment while it is unchanged.
#[test]
fn kip848_a_round_ends_when_its_last_member_reaches_the_new_epoch() {
    let mut s = Script::new();
    s.cgh(0.0, "c1", "m1", 0, 1, Some(&[0, 1, 2, 3]));
    s.cgh(1.0, "c2", "m2", 0, 2, Some(&[]));
    // m1 told to revoke at its old epoch, then moved to epoch 2.
    s.cgh(1.2, "c1", "m1", 1, 1, Some(&[0, 1]));
    s.cgh(1.3, "c1", "m1", 1, 2, None);
    // m2 gets the released partitions: the last member reaching epoch 2.
    s.cgh(1.8, "c2", "m2", 2, 2, Some(&[2, 3]));
    // Steady heartbeats at epoch 2 until m3 joins.
    for i in 0..8 {
        s.cgh(2.3 + f64::from(i), "c1", "m1", 2, 2, None);
        s.cgh(2.8 + f64::from(i), "c2", "m2", 2, 2, None);
    }
    s.cgh(11.0, "c3", "m3", 0, 3, Some(&[]));
    s.events.sort_by_key(|e| e.ts);
    let h = reconstruct(&s.events);
    let r = h[0]
        .rebalances
        .iter()
        .find(|r| r.generation == Some(2))
        .expect("the 1 → 2 round");
    let after_m2 = r.completed_at.map(|t| t.millis_since(secs(1.8)));
    assert!(
        after_m2.is_some_and(|ms| (0.0..10.0).contains(&ms)),
        "{r:#?}"
    );
}

/// Issue 9: "who had it before, who got it after" is the assignment at the
/// round, never the member's last one. Round 1 → 2 began while m1 held
/// both partitions (its generation 1 SyncGroup); it must not show m1's
/// later, smaller assignment, nor m2's generation 3 one after round 2.
#[test]
fn members_before_and_after_show_the_assignment_of_their_round_not_a_later_one() {
    let s = Script::c2_left_cleanly();
    let h = reconstruct(&s.events);
    let r = &h[0].rebalances;
    let held = |ms: &[crate::report::MemberSummary], id: &str| {
        ms.iter()
            .find(|m| m.member_id == id)
            .map(|m| m.assignment.len())
    };
    assert_eq!(held(&r[1].members_before, "m1"), Some(2), "{:#?}", r[1]);
    assert_eq!(held(&r[1].members_after, "m1"), Some(1), "{:#?}", r[1]);
    assert_eq!(held(&r[2].members_before, "m1"), Some(1), "{:#?}", r[2]);
    assert_eq!(held(&r[2].members_after, "m1"), Some(2), "{:#?}", r[2]);
}

impl Script {
    /// KIP-848 members c1/m1 and c2/m2 joined, both reconciled to epoch 3.
    fn kip848_pair_at_epoch_3() -> Script {
        let mut s = Script::new();
        s.cgh(0.0, "c1", "m1", 0, 2, Some(&[0, 1]));
        s.cgh(0.2, "c2", "m2", 0, 2, Some(&[]));
        s.cgh(1.2, "c1", "m1", 2, 3, Some(&[0]));
        s.cgh(1.3, "c2", "m2", 2, 3, Some(&[1]));
        s
    }

    /// [`Script::kip848_pair_at_epoch_3`], then both members leave at 9 s
    /// (epoch -1, answered -1): the group is empty.
    fn kip848_pair_left() -> Script {
        let mut s = Script::kip848_pair_at_epoch_3();
        s.cgh(9.0, "c1", "m1", -1, -1, None);
        s.cgh(9.0, "c2", "m2", -1, -1, None);
        s
    }

    /// [`Script::two_members_joined`], then both leave at 20 s, each with
    /// its own LeaveGroup: the group is empty at generation 2.
    fn two_members_left() -> Script {
        let mut s = Script::two_members_joined();
        s.leave(20.0, "c1", "m1", None);
        s.leave(20.1, "c2", "m2", None);
        s
    }

    /// c3/m3 joins alone at `at` (KIP-394's two steps), answered generation
    /// 1 three seconds later, and syncs both partitions.
    fn c3_alone_at(&mut self, at: f64) {
        self.member_id_required(at, "c3", "m3");
        self.join(at + 0.01, at + 3.0, "c3", "m3", "m3", 1, "m3", &["m3"]);
        self.sync(at + 3.01, "c3", "m3", 1, &[0, 1]);
    }
}

/// Each record's generations and the client of its trigger.
fn generations_and_cause(
    h: &super::GroupHistory,
) -> Vec<(Option<i32>, Option<i32>, Option<String>)> {
    h.rebalances
        .iter()
        .map(|r| {
            (
                r.previous_generation,
                r.generation,
                r.trigger.client_id.clone(),
            )
        })
        .collect()
}

/// A KIP-848 group emptied, deleted and made again, from a capture alone:
/// both members leave (ConsumerGroupHeartbeat epoch -1, answered -1), and
/// two new members are answered epochs 2 and 3 again, below the 3 held
/// (Apache Kafka 4.4 in the lab, `lab/ak_scenarios.py` `k848_recreated`: a
/// consumer group's epoch only grows while it lives, and a deleted one
/// starts again). Before, both were taken for answers out of turn and the
/// new group had no rounds.
#[test]
fn kip848_epochs_starting_again_after_every_member_left_are_a_new_group() {
    let mut s = Script::kip848_pair_left();
    s.cgh(16.5, "c3", "m3", 0, 2, Some(&[0, 1]));
    s.cgh(16.6, "c4", "m4", 0, 2, Some(&[]));
    s.cgh(17.6, "c3", "m3", 2, 3, Some(&[0]));
    s.cgh(17.7, "c4", "m4", 2, 3, Some(&[1]));
    let h = reconstruct(&s.events);
    let seen = generations_and_cause(&h[0]);
    assert_eq!(
        seen,
        vec![
            (None, Some(2), Some("c1".into())),
            (Some(2), Some(3), Some("c2".into())),
            (None, Some(2), Some("c3".into())),
            (Some(2), Some(3), Some("c4".into())),
        ],
        "{:#?}",
        h[0].rebalances
    );
    // The new group's first round starts at its first join, not at the
    // old members' leaves.
    assert_eq!(h[0].rebalances[2].started_at, secs(16.5));
}

/// The same answers with a member still in the group: an answer out of turn.
#[test]
fn kip848_a_lower_epoch_while_a_member_remains_opens_no_round() {
    let mut s = Script::kip848_pair_at_epoch_3();
    s.cgh(9.0, "c2", "m2", -1, -1, None);
    s.cgh(9.5, "c1", "m1", 3, 2, None);
    let h = reconstruct(&s.events);
    let seen: Vec<_> = h[0].rebalances.iter().map(|r| r.generation).collect();
    assert_eq!(seen, vec![Some(2), Some(3)], "{:#?}", h[0].rebalances);
}

/// Both members of a classic group leave, each with its own LeaveGroup (a
/// client names only itself before KIP-345's batches): the second leave
/// empties the group (GroupCoordinator.scala `onCompleteJoin`: "Group G
/// with generation N is now empty"), which is no rebalance. A member
/// answered generation 1 afterwards joined a group deleted and made again
/// (Apache Kafka 4.4 in the lab, `lab/ak_scenarios.py` `classic_recreated`):
/// a new group's first round, not "2 → 1".
#[test]
fn a_classic_group_emptied_by_its_members_leaves_then_made_again_starts_afresh() {
    let mut s = Script::two_members_left();
    s.c3_alone_at(30.0);
    let h = reconstruct(&s.events);
    let seen = generations_and_cause(&h[0]);
    assert_eq!(
        seen,
        vec![
            (None, Some(1), Some("c1".into())),
            (Some(1), Some(2), Some("c2".into())),
            (None, Some(1), Some("c3".into())),
        ],
        "{:#?}",
        h[0].rebalances
    );
    assert!(h[0].rebalances[2]
        .notes
        .iter()
        .any(|n| n.contains("made again")));
}

/// The same group, its deletion seen on the wire: an admin client's
/// DeleteGroups answered without error after both members left (Apache
/// Kafka 4.4 in the lab, `classic_recreated`: the capture holds the
/// request and its answer). The new group's first round says who deleted
/// it, and is a group forming like any other (the group was Dead: the next
/// JoinGroup makes a new, Empty one).
#[test]
fn a_classic_group_deleted_on_the_wire_names_the_admin_in_the_new_groups_first_round() {
    let mut s = Script::two_members_left();
    s.deleted(25.0, None);
    s.c3_alone_at(30.0);
    let h = reconstruct(&s.events);
    let seen = generations_and_cause(&h[0]);
    assert_eq!(seen[2], (None, Some(1), Some("c3".into())), "{seen:?}");
    let new = &h[0].rebalances[2];
    assert!(
        new.notes
            .iter()
            .any(|n| n.contains("deleted (DeleteGroups from client admin")),
        "{:#?}",
        new.notes
    );
    assert!(new.expected, "{new:#?}");
    assert!(h[0].summary.states.iter().any(|s| s.state == "Dead"));
}

/// A refused DeleteGroups (GROUP_NOT_EMPTY: Kafka deletes only a group
/// without members) changes nothing: the group's generations go on.
#[test]
fn a_refused_deletion_leaves_the_group_as_it_was() {
    let mut s = Script::two_members_joined();
    s.deleted(15.0, Some(68));
    s.leave(20.0, "c2", "m2", None);
    s.join(20.5, 21.0, "c1", "m1", "m1", 3, "m1", &["m1"]);
    s.sync(21.01, "c1", "m1", 3, &[0, 1]);
    let h = reconstruct(&s.events);
    let seen = generations(&h[0]);
    assert_eq!(seen.last(), Some(&(Some(2), Some(3))), "{seen:?}");
    assert!(!h[0].summary.states.iter().any(|s| s.state == "Dead"));
}

/// A deletion the broker confirmed ends the group even when the inputs
/// never showed its members leave (a capture started late, a log rotated):
/// Kafka deletes only an empty group. The same deletion seen again soon
/// after (the broker's line beside the answer, clocks a little apart),
/// once the new group has a member, is only cited.
#[test]
fn a_confirmed_deletion_ends_the_group_once_and_a_repeat_after_new_joins_is_ignored() {
    let mut s = Script::two_members_joined();
    s.deleted(15.0, None);
    s.member_id_required(16.0, "c3", "m3");
    s.join(16.01, 17.0, "c3", "m3", "m3", 1, "m3", &["m3"]);
    s.sync(17.01, "c3", "m3", 1, &[0, 1]);
    s.deleted(17.5, None);
    s.member_id_required(18.0, "c4", "m4");
    s.join(18.01, 19.0, "c4", "m4", "m4", 2, "m3", &["m3", "m4"]);
    s.join(18.02, 19.0, "c3", "m3", "m3", 2, "m3", &["m3", "m4"]);
    let h = reconstruct(&s.events);
    let seen = generations(&h[0]);
    assert_eq!(
        seen,
        vec![
            (None, Some(1)),
            (Some(1), Some(2)),
            (None, Some(1)),
            (Some(1), Some(2))
        ],
        "{:#?}",
        h[0].rebalances
    );
}

/// A KIP-848 group deleted on the wire once both members left: the new
/// group's first round names the admin client that deleted it.
#[test]
fn kip848_a_deletion_on_the_wire_is_named_in_the_new_groups_first_round() {
    let mut s = Script::kip848_pair_left();
    s.deleted(12.0, None);
    s.cgh(16.5, "c3", "m3", 0, 2, Some(&[0, 1]));
    s.cgh(16.6, "c4", "m4", 0, 2, Some(&[]));
    let h = reconstruct(&s.events);
    let seen = generations_and_cause(&h[0]);
    assert_eq!(seen[2], (None, Some(2), Some("c3".into())), "{seen:?}");
    assert!(
        h[0].rebalances[2]
            .notes
            .iter()
            .any(|n| n.contains("DeleteGroups from client admin")),
        "{:#?}",
        h[0].rebalances[2].notes
    );
}

/// KIP-848: a deletion the broker confirmed ends the group though the
/// inputs never showed its members leave; the new group's epochs then
/// open rounds of their own.
#[test]
fn kip848_a_confirmed_deletion_ends_the_group_though_its_leaves_were_unseen() {
    let mut s = Script::kip848_pair_at_epoch_3();
    s.deleted(12.0, None);
    s.cgh(16.5, "c3", "m3", 0, 2, Some(&[0, 1]));
    let h = reconstruct(&s.events);
    let seen = generations_and_cause(&h[0]);
    assert_eq!(
        seen.last(),
        Some(&(None, Some(2), Some("c3".into()))),
        "{seen:?}"
    );
}

/// The same deletion seen twice, with no member in between (two captures
/// of one exchange, or the broker's line and the answer): the new group's
/// first round still hands over from the old group's generation, once.
#[test]
fn a_deletion_seen_twice_carries_the_old_generation_once() {
    let mut s = Script::two_members_left();
    s.deleted(25.0, None);
    s.deleted(25.2, None);
    s.c3_alone_at(30.0);
    let h = reconstruct(&s.events);
    let new = &h[0].rebalances[2];
    assert_eq!(
        (new.previous_generation, new.made_again_from),
        (None, Some(2)),
        "{new:#?}"
    );
    let notes = new.notes.iter().filter(|n| n.contains("deleted")).count();
    assert_eq!(notes, 1, "{:#?}", new.notes);
}

/// A repeat of the deletion inside the new group's first round (between
/// its JoinGroup answer and SyncGroup) ends nothing: the round completes
/// and the group's next round is 1 -> 2.
#[test]
fn a_repeated_deletion_inside_the_new_groups_first_round_ends_nothing() {
    let mut s = Script::two_members_left();
    s.deleted(25.0, None);
    s.member_id_required(26.0, "c3", "m3");
    s.join(26.01, 27.0, "c3", "m3", "m3", 1, "m3", &["m3"]);
    s.deleted(27.2, None);
    s.sync(27.5, "c3", "m3", 1, &[0, 1]);
    s.member_id_required(40.0, "c4", "m4");
    s.join(40.01, 41.0, "c4", "m4", "m4", 2, "m3", &[]);
    s.join(40.02, 41.0, "c3", "m3", "m3", 2, "m3", &["m3", "m4"]);
    let h = reconstruct(&s.events);
    let seen: Vec<_> = h[0]
        .rebalances
        .iter()
        .map(|r| (r.previous_generation, r.generation, r.made_again_from))
        .collect();
    assert_eq!(
        seen[2..],
        [(None, Some(1), Some(2)), (Some(1), Some(2), None)],
        "{:#?}",
        h[0].rebalances
    );
}

/// The broker's deletion line read just before the DeleteGroups answer
/// (a log's clock a little ahead): one deletion, named by the answer, and
/// the old generation carried to the new group's first round.
#[test]
fn the_brokers_dead_line_then_the_answer_are_one_deletion_named_by_the_answer() {
    let mut s = Script::two_members_left();
    s.push(
        24.9,
        "broker",
        "",
        None,
        EventKind::Broker(BrokerLine::GroupDead),
    );
    s.deleted(25.0, None);
    s.member_id_required(30.0, "c3", "m3");
    s.join(30.01, 33.0, "c3", "m3", "m3", 1, "m3", &["m3"]);
    let h = reconstruct(&s.events);
    let new = &h[0].rebalances[2];
    assert_eq!(new.made_again_from, Some(2), "{new:#?}");
    assert!(
        new.notes.iter().any(|n| n.contains("from client admin")),
        "{:#?}",
        new.notes
    );
}

/// A round still open when the deletion is answered was over with the
/// group empty (Kafka deletes only an empty group): it does not stay open
/// as a rebalance still in progress; like every round that only emptied
/// the group (`is_empty_departure`) it is no rebalance of anyone.
#[test]
fn a_round_open_at_a_deletion_does_not_stay_in_progress() {
    let mut s = Script::two_members_joined();
    s.leave(20.0, "c2", "m2", None);
    // c1 rejoins and is never answered (it left unseen).
    s.join(20.5, 20.6, "c1", "m1", "m1", 3, "m1", &["m1"]);
    s.events.pop();
    s.deleted(25.0, None);
    let h = reconstruct(&s.events);
    let open: Vec<_> = h[0]
        .rebalances
        .iter()
        .filter(|r| r.completed_at.is_none())
        .collect();
    assert!(open.is_empty(), "{open:#?}");
}

/// A classic group emptied and deleted, then made again by consumers of
/// the KIP-848 protocol: a new group, not an online conversion (the broker
/// converts only a live group, GroupMetadataManager
/// `convertToConsumerGroup`): no generation is handed over as an epoch.
#[test]
fn a_classic_group_deleted_then_made_by_consumer_protocol_members_is_no_conversion() {
    let mut s = Script::two_members_left();
    s.deleted(25.0, None);
    s.cgh(30.0, "c3", "m3", 0, 1, Some(&[0, 1]));
    let h = reconstruct(&s.events);
    let notes = &h[0].summary.notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("made again with the consumer protocol")),
        "{notes:#?}"
    );
    assert!(!notes.iter().any(|n| n.contains("converted")), "{notes:#?}");
    let last = h[0].rebalances.last().expect("the new group's round");
    assert_eq!(last.previous_generation, None, "{last:#?}");
}
