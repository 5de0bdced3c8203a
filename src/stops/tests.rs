//! Scenario tests of the stops stage: typed group and Fetch events shaped
//! like a classic consumer group's traffic, run through the group stage and
//! this one, checked against the stops and offsets a person would count.

use std::sync::Arc;

use crate::event::*;
use crate::group::reconstruct;
use crate::report::{PartitionStop, Rebalance};
use crate::time::Timestamp;

fn at(ms: i64) -> Timestamp {
    Timestamp(1_700_000_000_000_000_000 + ms * 1_000_000)
}

fn client(c: &str) -> ClientRef {
    ClientRef {
        client_id: Some(c.into()),
        address: Some(format!("10.0.0.{}:5000", c.len())),
        ..ClientRef::default()
    }
}

fn evidence(frame: u64) -> Evidence {
    Evidence {
        source: crate::event::Source::from("t.pcap"),
        at: Location::Frame { frame },
    }
}

/// Builds a group's events and its members' Fetch traffic.
#[derive(Default)]
struct Script {
    events: Vec<GroupEvent>,
    data: Vec<DataEvent>,
    exchange: u64,
    protocol: &'static str,
}

impl Script {
    fn new(protocol: &'static str) -> Script {
        Script {
            protocol,
            ..Script::default()
        }
    }

    fn push(&mut self, ms: i64, c: &str, member: &str, gen: Option<i32>, kind: EventKind) {
        let frame = self.events.len() as u64 + 1;
        self.events.push(GroupEvent {
            ts: at(ms),
            group: Some("g".into()),
            member_id: (!member.is_empty()).then(|| member.into()),
            group_instance_id: None,
            generation_id: gen,
            client: client(c).into(),
            kind,
            evidence: evidence(frame),
            truncated: false,
        });
    }

    fn x(&mut self) -> u64 {
        self.exchange += 1;
        self.exchange
    }

    /// JoinGroup asked at `ms`, answered at `answered` with generation `gen`.
    fn join(&mut self, ms: i64, answered: i64, c: &str, m: &str, gen: i32, members: &[&str]) {
        let x = self.x();
        let protocol = self.protocol.to_string();
        self.push(
            ms,
            c,
            m,
            None,
            EventKind::JoinGroupRequest {
                exchange: x,
                session_timeout_ms: 10_000,
                rebalance_timeout_ms: Some(5_000),
                protocol_type: "consumer".into(),
                protocols: vec![OfferedProtocol {
                    name: protocol.clone(),
                    topics: vec!["t".into()],
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
            c,
            m,
            Some(gen),
            EventKind::JoinGroupResponse {
                exchange: x,
                error: None,
                protocol_name: Some(protocol.into()),
                leader: "A".into(),
                members,
                parked_ms: None,
            },
        );
    }

    /// SyncGroup answered at `ms` with error `code` (no assignment).
    fn sync_failed(&mut self, ms: i64, c: &str, m: &str, gen: i32, code: i16) {
        self.sync_answer(ms, c, m, gen, ErrorCode::from_code(code), vec![]);
    }

    /// SyncGroup answered at `ms` with partitions of topic `t`.
    fn sync(&mut self, ms: i64, c: &str, m: &str, gen: i32, partitions: &[i32]) {
        let assignment = vec![TopicPartitions {
            topic: "t".into(),
            partitions: partitions.to_vec(),
        }];
        self.sync_answer(ms, c, m, gen, None, assignment);
    }

    /// A SyncGroup request at `ms - 1` and its answer at `ms`.
    fn sync_answer(
        &mut self,
        ms: i64,
        c: &str,
        m: &str,
        gen: i32,
        error: Option<ErrorCode>,
        assignment: Vec<TopicPartitions>,
    ) {
        let x = self.x();
        self.push(
            ms - 1,
            c,
            m,
            Some(gen),
            EventKind::SyncGroupRequest {
                exchange: x,
                assignments: vec![],
            },
        );
        self.push(
            ms,
            c,
            m,
            Some(gen),
            EventKind::SyncGroupResponse {
                exchange: x,
                error,
                assignment,
            },
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn commit(&mut self, ms: i64, c: &str, m: &str, gen: i32, p: i32, offset: i64, error: i16) {
        let x = self.x();
        let offsets = vec![PartitionOffset {
            topic: "t".into(),
            partition: p,
            offset,
            error: None,
        }];
        self.push(
            ms,
            c,
            m,
            Some(gen),
            EventKind::OffsetCommitRequest {
                exchange: x,
                partitions: 1,
                offsets,
            },
        );
        let answered = vec![PartitionOffset {
            topic: "t".into(),
            partition: p,
            offset: -1,
            error: ErrorCode::from_code(error),
        }];
        self.push(
            ms + 1,
            c,
            m,
            Some(gen),
            EventKind::OffsetCommitResponse {
                exchange: x,
                error: ErrorCode::from_code(error),
                partitions: answered,
            },
        );
    }

    fn offset_fetch(&mut self, ms: i64, c: &str, p: i32, offset: i64) {
        let x = self.x();
        let offsets = vec![PartitionOffset {
            topic: "t".into(),
            partition: p,
            offset,
            error: None,
        }];
        self.push(
            ms,
            c,
            "",
            None,
            EventKind::OffsetFetch {
                exchange: x,
                error: None,
                offsets,
            },
        );
    }

    fn leave(&mut self, ms: i64, c: &str, m: &str, reason: Option<&str>) {
        let x = self.x();
        let members = vec![LeavingMember {
            member_id: m.into(),
            group_instance_id: None,
            reason: reason.map(String::from),
        }];
        self.push(
            ms,
            c,
            m,
            None,
            EventKind::LeaveGroupRequest {
                exchange: x,
                members,
            },
        );
        self.push(
            ms + 1,
            c,
            m,
            None,
            EventKind::LeaveGroupResponse {
                exchange: x,
                error: None,
            },
        );
    }

    /// A Fetch of `t-p` at `offset`, answered with `hw` (and records up to
    /// `delivered` when given).
    fn fetch(&mut self, ms: i64, c: &str, p: i32, offset: i64, hw: i64, delivered: Option<i64>) {
        let x = self.x();
        let cl = Arc::new(client(c));
        self.data.push(DataEvent {
            ts: at(ms),
            client: cl.clone(),
            kind: DataKind::FetchRequest {
                exchange: x,
                partitions: vec![PartitionOffset {
                    topic: "t".into(),
                    partition: p,
                    offset,
                    error: None,
                }],
            },
            evidence: evidence(0),
        });
        self.data.push(DataEvent {
            ts: at(ms + 2),
            client: cl,
            kind: DataKind::FetchResponse {
                exchange: x,
                partitions: vec![PartitionWatermark {
                    topic: "t".into(),
                    partition: p,
                    error: None,
                    high_watermark: hw,
                    last_stable_offset: hw,
                    last_offset: delivered,
                }],
            },
            evidence: evidence(0),
        });
    }

    /// A ConsumerGroupHeartbeat at `ms` with `member_epoch` `epoch` and
    /// owned list `owned` (topic id [`TOPIC_ID`]), answered 1 ms later with
    /// epoch `answer` and `assignment` (None: unchanged).
    fn hb(
        &mut self,
        ms: i64,
        m: &str,
        (epoch, owned): (i32, Option<&[i32]>),
        (answer, assignment): (i32, Option<&[i32]>),
    ) {
        let x = self.x();
        let tps = |p: &[i32]| {
            vec![TopicPartitions {
                topic: TOPIC_ID.into(),
                partitions: p.to_vec(),
            }]
        };
        let c = m.to_lowercase();
        self.push(
            ms,
            &c,
            m,
            Some(epoch),
            EventKind::ConsumerGroupHeartbeatRequest {
                exchange: x,
                member_epoch: epoch,
                rebalance_timeout_ms: 5_000,
                subscribed_topic_names: (epoch == 0).then(|| vec!["t".into()].into()),
                server_assignor: None,
                owned: owned.map(|o| tps(o).into()),
                broker_offers: None,
            },
        );
        if epoch < 0 {
            return;
        }
        self.push(
            ms + 1,
            &c,
            m,
            Some(answer),
            EventKind::ConsumerGroupHeartbeatResponse {
                exchange: x,
                error: None,
                error_message: None,
                member_epoch: answer,
                heartbeat_interval_ms: 5_000,
                assignment: assignment.map(tps),
            },
        );
    }

    /// A Metadata answer naming [`TOPIC_ID`] `t`.
    fn metadata(&mut self) {
        self.data.push(DataEvent {
            ts: at(0),
            client: Arc::new(client("a")),
            kind: DataKind::TopicIds {
                topics: vec![("t".into(), TOPIC_ID.into())],
            },
            evidence: evidence(0),
        });
    }

    fn run(self) -> Vec<Rebalance> {
        self.histories()
            .into_iter()
            .flat_map(|h| h.rebalances)
            .map(|r| *r)
            .collect()
    }

    fn histories(mut self) -> Vec<crate::group::GroupHistory> {
        self.events.sort_by_key(|e| e.ts);
        let mut h = reconstruct(&self.events);
        super::apply(&mut h, &self.events, &self.data);
        h
    }
}

const TOPIC_ID: &str = "5f1c2a9e-0000-4000-8000-00000000000t";

/// KIP-848: A alone owns t-0 and t-1 at epoch 1 (acknowledged), fetching
/// them; B joins at 1000 (epoch 2) and is given nothing yet.
fn kip848_pair() -> Script {
    let mut s = Script::new("consumer");
    s.metadata();
    s.hb(0, "A", (0, Some(&[])), (1, Some(&[0, 1])));
    s.hb(50, "A", (1, Some(&[0, 1])), (1, None));
    s.fetch(100, "a", 0, 5, 20, None);
    s.fetch(100, "a", 1, 7, 30, None);
    s.hb(1000, "B", (0, Some(&[])), (2, Some(&[])));
    s
}

/// A alone owns t-0 and t-1 in generation 1, fetching them.
fn a_alone(protocol: &'static str) -> Script {
    let mut s = Script::new(protocol);
    s.join(0, 5, "a", "A", 1, &["A"]);
    s.sync(10, "a", "A", 1, &[0, 1]);
    s.fetch(100, "a", 0, 5, 20, None);
    s.fetch(100, "a", 1, 7, 30, Some(11));
    // Its next Fetch asks from 12: poll() returned 7..=11.
    s.fetch(500, "a", 1, 12, 30, None);
    s.commit(900, "a", "A", 1, 1, 4, 0);
    s
}

fn stop<'a>(r: &'a Rebalance, p: &str) -> &'a PartitionStop {
    r.partitions
        .iter()
        .find(|x| x.partition == p)
        .unwrap_or_else(|| panic!("no stop of {p} in {:#?}", r.partitions))
}

fn round(rs: &[Rebalance], gen: i32) -> &Rebalance {
    rs.iter()
        .find(|r| r.generation == Some(gen))
        .unwrap_or_else(|| panic!("no generation {gen} in {rs:#?}"))
}

#[test]
fn a_commit_inside_the_round_ends_the_old_owners_processing_so_records_fetched_past_it_are_not_read_twice(
) {
    // ConsumerCoordinator.onJoinPrepare: the old owner commits what it
    // consumed before rejoining. A had fetched up to 12 but committed 10
    // inside the round; B starts at 10: nothing is processed twice.
    let mut s = a_alone("range");
    s.join(1000, 1300, "b", "B", 2, &["A", "B"]);
    s.commit(1100, "a", "A", 1, 1, 10, 0);
    s.join(1200, 1300, "a", "A", 2, &["A", "B"]);
    s.sync(1350, "a", "A", 2, &[0]);
    s.sync(1350, "b", "B", 2, &[1]);
    s.offset_fetch(1360, "b", 1, 10);
    s.fetch(1400, "b", 1, 10, 30, None);
    let rs = s.run();
    let moved = stop(round(&rs, 2), "t-1");
    assert_eq!(moved.last_fetched_offset, Some(12));
    assert_eq!(moved.last_committed_offset, Some(10));
    assert_eq!(moved.resume_offset, Some(10));
    assert_eq!((moved.reprocessed, moved.skipped), (Some(0), Some(0)));
}

#[test]
fn records_delivered_but_not_yet_returned_by_poll_are_not_counted_as_read_twice() {
    // A's last answer delivered 12..=15 but A never fetched past them: the
    // Java consumer fetches a partition again only once poll() returned its
    // buffered records (AbstractFetch.fetchablePartitions), so they may
    // still have been buffered when A stopped, and the revocation drops
    // them. The position (12) is what A's application was given.
    let mut s = a_alone("range");
    s.fetch(950, "a", 1, 12, 30, Some(15));
    s.join(1000, 1300, "b", "B", 2, &["A", "B"]);
    s.join(1200, 1300, "a", "A", 2, &["A", "B"]);
    s.sync(1350, "a", "A", 2, &[0]);
    s.sync(1350, "b", "B", 2, &[1]);
    s.offset_fetch(1360, "b", 1, 4);
    s.fetch(1400, "b", 1, 4, 30, None);
    let rs = s.run();
    let moved = stop(round(&rs, 2), "t-1");
    assert_eq!(moved.last_fetched_offset, Some(12));
    assert_eq!((moved.reprocessed, moved.skipped), (Some(8), Some(0)));
}

#[test]
fn an_eager_round_revokes_everything_at_the_join_and_counts_the_records_read_twice() {
    let mut s = a_alone("range");
    s.join(1000, 1300, "b", "B", 2, &["A", "B"]);
    s.join(1200, 1300, "a", "A", 2, &["A", "B"]);
    s.sync(1350, "a", "A", 2, &[0]);
    s.sync(1350, "b", "B", 2, &[1]);
    s.offset_fetch(1360, "b", 1, 4);
    s.fetch(1380, "a", 0, 5, 20, None);
    s.fetch(1400, "b", 1, 4, 30, None);
    let rs = s.run();
    let r = round(&rs, 2);
    assert_eq!(r.status, "completed");
    let moved = stop(r, "t-1");
    assert_eq!(moved.why_stopped, "revoked");
    assert_eq!(moved.from.as_ref().unwrap().member_id, "A");
    assert_eq!(moved.to.as_ref().unwrap().client_id.as_deref(), Some("b"));
    assert_eq!(
        (moved.stopped_at, moved.resumed_at),
        (at(1200), Some(at(1400)))
    );
    assert_eq!(moved.stopped_ms, Some(200.0));
    // A read up to offset 11 (its next Fetch asked from 12); the last
    // commit said 4; B starts at 4: 8 records are read twice.
    assert_eq!(moved.last_committed_offset, Some(4));
    assert_eq!(moved.committed_at, Some(at(900)));
    assert_eq!(moved.last_fetched_offset, Some(12));
    assert_eq!(moved.resume_offset, Some(4));
    assert_eq!((moved.reprocessed, moved.skipped), (Some(8), Some(0)));
    assert_eq!(moved.lag_at_stop, Some(18));
    assert_eq!(moved.lag_at_resume, Some(26));
    // Eager: even the partition A keeps stopped, from its JoinGroup.
    let kept = stop(r, "t-0");
    assert_eq!(
        (kept.stopped_at, kept.resumed_at),
        (at(1200), Some(at(1380)))
    );
    let span = r.stop.as_ref().unwrap();
    assert_eq!((span.started_at, span.ended_at), (at(1200), Some(at(1400))));
    assert_eq!(span.partitions_stopped, Some(2));
}

#[test]
fn a_capture_started_after_the_previous_sync_group_infers_the_old_owner_from_its_fetches_and_commits(
) {
    // No JoinGroup or SyncGroup of generation 1 captured: A is only seen
    // heartbeating in it, fetching t-0 and t-1 and committing t-2. A
    // consumer fetches and commits only what it is assigned
    // (ConsumerCoordinator.onJoinComplete -> assignFromSubscribed; the
    // fetcher asks only assigned, fetchable partitions), so A owned them.
    let mut s = Script::new("range");
    let x = s.x();
    s.push(
        50,
        "a",
        "A",
        Some(1),
        EventKind::HeartbeatRequest { exchange: x },
    );
    s.fetch(100, "a", 0, 5, 20, None);
    s.fetch(100, "a", 1, 7, 30, None);
    s.commit(900, "a", "A", 1, 2, 40, 0);
    s.join(1000, 1300, "b", "B", 2, &["A", "B"]);
    s.join(1200, 1300, "a", "A", 2, &["A", "B"]);
    s.sync(1350, "a", "A", 2, &[0]);
    s.sync(1350, "b", "B", 2, &[1, 2]);
    s.fetch(1380, "a", 0, 5, 20, None);
    s.fetch(1400, "b", 1, 7, 30, None);
    s.fetch(1450, "b", 2, 40, 50, None);
    let rs = s.run();
    let r = round(&rs, 2);
    for (p, to, resumed) in [("t-0", "A", 1380), ("t-1", "B", 1400), ("t-2", "B", 1450)] {
        let moved = stop(r, p);
        assert_eq!(moved.from.as_ref().unwrap().member_id, "A", "{p}");
        assert_eq!(moved.to.as_ref().unwrap().member_id, to, "{p}");
        assert_eq!(moved.why_stopped, "revoked", "{p}");
        assert_eq!(
            (moved.stopped_at, moved.resumed_at),
            (at(1200), Some(at(resumed))),
            "{p}"
        );
        assert!(
            moved
                .notes
                .iter()
                .any(|n| n.contains("owner inferred from its Fetch requests")),
            "{p}: {:?}",
            moved.notes
        );
    }
    assert_eq!(stop(r, "t-1").last_fetched_offset, Some(7));
    assert_eq!(r.partitions.len(), 3);
}

#[test]
fn a_cooperative_round_stops_only_what_moves_until_the_follow_up_hands_it_over() {
    let mut s = a_alone("cooperative-sticky");
    s.join(1000, 1300, "b", "B", 2, &["A", "B"]);
    s.join(1200, 1300, "a", "A", 2, &["A", "B"]);
    s.sync(1350, "a", "A", 2, &[0]);
    s.sync(1350, "b", "B", 2, &[]);
    s.join(1500, 1600, "a", "A", 3, &["A", "B"]);
    s.join(1500, 1600, "b", "B", 3, &["A", "B"]);
    s.sync(1650, "a", "A", 3, &[0]);
    s.sync(1650, "b", "B", 3, &[1]);
    s.fetch(1700, "b", 1, 4, 30, None);
    let rs = s.run();
    let r = round(&rs, 2);
    assert!(r.partitions.iter().all(|p| p.partition != "t-0"), "{r:#?}");
    let moved = stop(r, "t-1");
    assert_eq!(moved.why_stopped, "revoked");
    // Revoked when A's SyncGroup answer left it out; resumed by B's Fetch
    // after the follow-up round.
    assert_eq!(
        (moved.stopped_at, moved.resumed_at),
        (at(1350), Some(at(1700)))
    );
    assert_eq!(moved.to.as_ref().unwrap().member_id, "B");
    assert!(round(&rs, 3).partitions.is_empty());
}

#[test]
fn a_cooperative_member_whose_sync_group_failed_keeps_its_partitions_until_it_leaves() {
    // KIP-429: a cooperative member gives partitions up only once its own
    // SyncGroup answer leaves them out (ConsumerCoordinator.onJoinComplete);
    // a SyncGroup answered REBALANCE_IN_PROGRESS just rejoins keeping the
    // assignment (librdkafka rd_kafka_cgrp_handle_SyncGroup_memberstate).
    // A never completes generation 2 or 3, so t-0 and t-1 do not stop
    // there; they stop at A's LeaveGroup and resume with B.
    let mut s = a_alone("cooperative-sticky");
    s.join(1000, 1300, "b", "B", 2, &["A", "B"]);
    s.join(1200, 1300, "a", "A", 2, &["A", "B"]);
    s.sync(1350, "b", "B", 2, &[]);
    s.sync_failed(1360, "a", "A", 2, 27);
    s.join(1400, 1500, "a", "A", 3, &["A", "B"]);
    s.join(1400, 1500, "b", "B", 3, &["A", "B"]);
    s.sync(1550, "b", "B", 3, &[]);
    s.sync_failed(1560, "a", "A", 3, 27);
    s.fetch(1800, "a", 1, 12, 30, None);
    s.leave(2000, "a", "A", None);
    s.join(2100, 2200, "b", "B", 4, &["B"]);
    s.sync(2250, "b", "B", 4, &[0, 1]);
    s.fetch(2300, "b", 0, 5, 20, None);
    s.fetch(2300, "b", 1, 12, 30, None);
    let rs = s.run();
    for gen in [2, 3] {
        assert!(round(&rs, gen).partitions.is_empty(), "{rs:#?}");
    }
    for p in ["t-0", "t-1"] {
        let stop = stop(round(&rs, 4), p);
        assert_eq!(stop.why_stopped, "owner_left");
        assert_eq!(stop.from.as_ref().unwrap().member_id, "A");
        assert_eq!(
            (stop.stopped_at, stop.resumed_at),
            (at(2000), Some(at(2300)))
        );
    }
}

#[test]
fn an_owner_leaving_stops_its_partitions_at_its_leave_group() {
    let mut s = a_alone("range");
    s.join(200, 205, "b", "B", 2, &["A", "B"]);
    s.join(210, 215, "a", "A", 2, &["A", "B"]);
    s.sync(220, "a", "A", 2, &[0]);
    s.sync(220, "b", "B", 2, &[1]);
    s.leave(2000, "a", "A", Some("the consumer is being closed"));
    s.join(2100, 2200, "b", "B", 3, &["B"]);
    s.sync(2250, "b", "B", 3, &[0, 1]);
    s.fetch(2300, "b", 0, 5, 20, None);
    let rs = s.run();
    let p = stop(round(&rs, 3), "t-0");
    assert_eq!(p.why_stopped, "owner_left");
    assert_eq!((p.stopped_at, p.resumed_at), (at(2000), Some(at(2300))));
}

#[test]
fn an_owner_not_polling_stopped_a_max_poll_interval_before_its_leave() {
    let mut s = a_alone("range");
    s.leave(9000, "a", "A", Some("consumer poll timeout has expired."));
    s.join(9100, 9200, "b", "B", 2, &["B"]);
    s.sync(9250, "b", "B", 2, &[0, 1]);
    // No commit for t-0: B resets to latest (OffsetFetch -1) and starts at
    // 20, past A's position 5: 15 records skipped.
    s.offset_fetch(9260, "b", 0, -1);
    s.fetch(9300, "b", 0, 20, 20, None);
    let rs = s.run();
    let p = stop(round(&rs, 2), "t-0");
    assert_eq!(p.why_stopped, "owner_not_polling");
    // max.poll.interval.ms (JoinGroup rebalance_timeout_ms) is 5000: 9000 - 5000.
    assert_eq!(p.stopped_at, at(4000));
    assert_eq!(p.stopped_ms, Some(5300.0));
    assert_eq!(
        (p.last_fetched_offset, p.resume_offset),
        (Some(5), Some(20))
    );
    assert_eq!((p.reprocessed, p.skipped), (Some(0), Some(15)));
    assert!(
        p.notes.iter().any(|n| n.contains("auto.offset.reset")),
        "{:?}",
        p.notes
    );
}

#[test]
fn a_commit_failed_in_the_round_is_named() {
    let mut s = a_alone("range");
    s.join(1000, 1300, "b", "B", 2, &["A", "B"]);
    s.commit(1100, "a", "A", 1, 1, 9, 27); // REBALANCE_IN_PROGRESS
    s.join(1200, 1300, "a", "A", 2, &["A", "B"]);
    s.sync(1350, "a", "A", 2, &[0]);
    s.sync(1350, "b", "B", 2, &[1]);
    s.fetch(1400, "b", 1, 4, 30, None);
    let rs = s.run();
    let p = stop(round(&rs, 2), "t-1");
    assert_eq!(p.commit_failed.as_deref(), Some("REBALANCE_IN_PROGRESS"));
    // The failed commit does not count as committed.
    assert_eq!(p.last_committed_offset, Some(4));
}

#[test]
fn a_partition_committed_beside_one_that_failed_counts_as_committed() {
    let mut s = a_alone("range");
    s.join(1000, 1300, "b", "B", 2, &["A", "B"]);
    // One commit of t-0 and t-1; the answer fails t-1 only (its first
    // error, REBALANCE_IN_PROGRESS, is also the answer's `error`).
    let x = s.x();
    let offset = |partition, offset, error| PartitionOffset {
        topic: "t".into(),
        partition,
        offset,
        error: ErrorCode::from_code(error),
    };
    s.push(
        1100,
        "a",
        "A",
        Some(1),
        EventKind::OffsetCommitRequest {
            exchange: x,
            partitions: 2,
            offsets: vec![offset(0, 6, 0), offset(1, 9, 0)],
        },
    );
    s.push(
        1101,
        "a",
        "A",
        Some(1),
        EventKind::OffsetCommitResponse {
            exchange: x,
            error: ErrorCode::from_code(27),
            partitions: vec![offset(1, -1, 27)],
        },
    );
    s.join(1200, 1300, "a", "A", 2, &["A", "B"]);
    s.sync(1350, "a", "A", 2, &[0]);
    s.sync(1350, "b", "B", 2, &[1]);
    let rs = s.run();
    let r = round(&rs, 2);
    assert_eq!(stop(r, "t-0").last_committed_offset, Some(6));
    assert_eq!(stop(r, "t-0").commit_failed, None);
    assert_eq!(stop(r, "t-1").last_committed_offset, Some(4));
    assert_eq!(
        stop(r, "t-1").commit_failed.as_deref(),
        Some("REBALANCE_IN_PROGRESS")
    );
}

#[test]
fn a_round_the_input_ends_in_is_in_progress_and_names_who_it_waits_for() {
    let mut s = a_alone("range");
    s.join(200, 205, "b", "B", 2, &["A", "B"]);
    s.join(210, 215, "a", "A", 2, &["A", "B"]);
    s.sync(220, "a", "A", 2, &[0]);
    s.sync(220, "b", "B", 2, &[1]);
    // The leader A rejoins while Stable, which starts a round in Kafka
    // (GroupCoordinator.doCurrentMemberJoinGroup: the leader, or changed
    // metadata); B never rejoins before the input ends.
    let x = s.x();
    s.push(
        3000,
        "a",
        "A",
        None,
        EventKind::JoinGroupRequest {
            exchange: x,
            session_timeout_ms: 10_000,
            rebalance_timeout_ms: Some(5_000),
            protocol_type: "consumer".into(),
            protocols: vec![],
            reason: None,
            identity_cut: false,
        },
    );
    let rs = s.run();
    let last = rs.last().unwrap();
    assert_eq!(last.status, "in_progress", "{rs:#?}");
    assert_eq!(last.waiting_for, vec!["b".to_string()]);
    assert!(rs[..rs.len() - 1].iter().all(|r| r.status != "in_progress"));
}

#[test]
fn the_worst_stop_is_the_longest_partition_stop_with_its_cause() {
    let mut s = a_alone("range");
    s.leave(9000, "a", "A", Some("consumer poll timeout has expired."));
    s.join(9100, 9200, "b", "B", 2, &["B"]);
    s.sync(9250, "b", "B", 2, &[0, 1]);
    s.fetch(9300, "b", 0, 5, 20, None);
    s.fetch(9400, "b", 1, 12, 30, None);
    let rs = s.run();
    let w = super::worst_stop(&rs, &[], None).unwrap();
    assert_eq!(w.partition.as_deref(), Some("t-1"));
    assert_eq!(w.why_stopped, "owner_not_polling");
    assert_eq!(w.stopped_ms, 5400.0);
    assert_eq!((w.previous_generation, w.generation), (Some(1), Some(2)));
}

#[test]
fn a_kip848_revocation_stops_at_the_answer_that_drops_it_and_resumes_at_the_next_owners_first_fetch(
) {
    // AbstractMembershipManager.maybeReconcile pauses fetching of what the
    // answer no longer holds; the coordinator hands it to B only once A's
    // request no longer lists it (CurrentAssignmentBuilder).
    let mut s = kip848_pair();
    s.hb(1200, "A", (1, None), (2, Some(&[0])));
    s.fetch(1300, "a", 1, 9, 30, None);
    s.hb(1500, "A", (2, Some(&[0])), (2, None));
    s.hb(1600, "B", (2, None), (2, Some(&[1])));
    s.fetch(1700, "b", 1, 9, 30, None);
    let rs = s.run();
    let p = stop(round(&rs, 2), "t-1");
    assert_eq!(p.why_stopped, "revoked");
    assert_eq!((p.stopped_at, p.resumed_at), (at(1201), Some(at(1700))));
    assert_eq!(p.from.as_ref().map(|o| o.member_id.as_str()), Some("A"));
    assert_eq!(p.to.as_ref().map(|o| o.member_id.as_str()), Some("B"));
    assert_eq!(p.last_fetched_offset, Some(9));
    assert_eq!((p.reprocessed, p.skipped), (Some(0), Some(0)));
    assert!(
        round(&rs, 2)
            .partitions
            .iter()
            .all(|x| x.partition != "t-0"),
        "t-0 stays with A"
    );
}

#[test]
fn a_kip848_member_leaving_with_epoch_minus_one_stops_its_partitions_at_the_leave() {
    let mut s = kip848_pair();
    s.hb(2000, "A", (-1, None), (0, None));
    s.hb(2100, "B", (2, Some(&[])), (3, Some(&[0, 1])));
    s.fetch(2300, "b", 0, 5, 20, None);
    let rs = s.run();
    let p = stop(round(&rs, 3), "t-0");
    assert_eq!(p.why_stopped, "owner_left");
    assert_eq!((p.stopped_at, p.resumed_at), (at(2000), Some(at(2300))));
    // No Fetch of t-1 by B: resumed at the answer handing it over.
    let q = stop(round(&rs, 3), "t-1");
    assert_eq!(q.resumed_at, Some(at(2101)));
    assert!(q.notes[0].contains("ConsumerGroupHeartbeat answer"));
}

#[test]
fn a_kip848_owner_removed_without_leaving_stopped_at_its_last_request() {
    // A goes quiet after its Fetch at 100 and heartbeat at 1100; the
    // coordinator fences it after its session timeout and gives B all.
    let mut s = kip848_pair();
    s.hb(1100, "A", (1, None), (1, None));
    s.hb(8000, "B", (2, Some(&[])), (3, Some(&[0, 1])));
    s.fetch(8100, "b", 0, 5, 20, None);
    let rs = s.run();
    let p = stop(round(&rs, 3), "t-0");
    assert_eq!(p.why_stopped, "owner_silent");
    assert_eq!((p.stopped_at, p.resumed_at), (at(1100), Some(at(8100))));
    assert_eq!(p.stopped_ms, Some(7000.0));
}

#[test]
fn a_kip848_topic_id_no_metadata_answer_named_is_shown_by_id() {
    let mut s = Script::new("consumer");
    s.hb(0, "A", (0, Some(&[])), (1, Some(&[0])));
    s.hb(50, "A", (1, Some(&[0])), (1, None));
    s.hb(1000, "B", (0, Some(&[])), (2, Some(&[])));
    s.hb(1200, "A", (1, None), (2, Some(&[])));
    s.hb(1600, "B", (2, None), (2, Some(&[0])));
    let rs = s.run();
    let p = stop(round(&rs, 2), &format!("{TOPIC_ID}-0"));
    assert_eq!(p.stopped_at, at(1201));
}

#[test]
fn a_static_member_restarted_within_its_session_stops_its_partitions_without_a_rebalance() {
    // A (group.instance.id i-a) goes quiet after its commit at 900 (a
    // static member's close sends no LeaveGroup); its new process A2 joins
    // with the same instance id and is answered generation 1 again: no
    // round (GroupCoordinator: a known static member rejoining a Stable
    // group), but t-0 and t-1 waited from 900 to A2's first Fetch.
    let mut s = a_alone("range");
    s.join(3000, 3005, "a", "A2", 1, &["A2"]);
    s.sync(3010, "a", "A2", 1, &[0, 1]);
    s.fetch(3100, "a", 1, 10, 30, None);
    for e in &mut s.events {
        e.group_instance_id = Some("i-a".into());
        // A new process asks with an empty member id.
        if matches!(e.kind, EventKind::JoinGroupRequest { .. })
            && e.member_id.as_deref() == Some("A2")
        {
            e.member_id = None;
        }
    }
    let h = s.histories();
    assert_eq!(h[0].rebalances.len(), 1, "{:#?}", h[0].rebalances);
    let stops = &h[0].summary.stops_without_rebalance;
    assert_eq!(stops.len(), 1, "{stops:#?}");
    assert_eq!(stops[0].cause, "static_member_restarted");
    assert_eq!(stops[0].group_instance_id.as_deref(), Some("i-a"));
    let p = stops[0]
        .partitions
        .iter()
        .find(|p| p.partition == "t-1")
        .unwrap();
    assert_eq!(p.why_stopped, "owner_silent");
    assert_eq!((p.stopped_at, p.resumed_at), (at(900), Some(at(3100))));
    assert_eq!(p.to.as_ref().map(|o| o.member_id.as_str()), Some("A2"));
    // Committed 4, fetched up to 12, restarted from 10 (its Fetch): the
    // records between its commit and its position were read again.
    assert_eq!(p.reprocessed, Some(2));
    let w = super::worst_stop(h[0].rebalances.iter().map(|r| &**r), stops, None).unwrap();
    assert_eq!(
        (w.stopped_ms, w.partition.as_deref()),
        (2200.0, Some("t-1"))
    );
}

/// The restart of a static member shown by its new process's JoinGroup
/// (empty member id, same `group.instance.id`) after the old connection
/// ended, whatever member id the broker answers: here the old one again
/// (tansu does this; Apache Kafka gives a new one).
fn static_restart_answered_with_the_old_member_id(old_connection_ends: bool) -> Script {
    let mut s = a_alone("range");
    if old_connection_ends {
        s.push(
            950,
            "a",
            "A",
            None,
            EventKind::ConnectionClosed { reset: false },
        );
    }
    s.join(3000, 3005, "a", "A", 1, &["A"]);
    s.sync(3010, "a", "A", 1, &[0, 1]);
    s.fetch(3100, "a", 1, 10, 30, None);
    let rejoin = s
        .events
        .iter()
        .rposition(|e| matches!(e.kind, EventKind::JoinGroupRequest { .. }))
        .unwrap();
    s.events[rejoin].member_id = None;
    for e in &mut s.events {
        e.group_instance_id = Some("i-a".into());
    }
    s
}

#[test]
fn a_static_members_new_process_is_found_from_its_join_even_when_answered_with_the_old_member_id() {
    let h = static_restart_answered_with_the_old_member_id(true).histories();
    assert_eq!(h[0].rebalances.len(), 1, "{:#?}", h[0].rebalances);
    let stops = &h[0].summary.stops_without_rebalance;
    assert_eq!(stops.len(), 1, "{stops:#?}");
    let p = stops[0]
        .partitions
        .iter()
        .find(|p| p.partition == "t-1")
        .unwrap();
    assert_eq!(p.why_stopped, "owner_silent");
    // Stopped at its last request (the commit at 900), not the close.
    assert_eq!((p.stopped_at, p.resumed_at), (at(900), Some(at(3100))));
    assert!(
        p.notes.iter().any(|n| n.contains("old member id")),
        "{:?}",
        p.notes
    );
}

#[test]
fn a_static_member_resetting_its_member_id_on_a_live_connection_is_no_restart() {
    // Same JoinGroup, but the old connection never ended: the same
    // process may have reset its member id (AbstractCoordinator
    // `resetGenerationOnLeaveGroup` after a poll timeout); not a restart.
    let h = static_restart_answered_with_the_old_member_id(false).histories();
    assert!(
        h[0].summary.stops_without_rebalance.is_empty(),
        "{:#?}",
        h[0].summary.stops_without_rebalance
    );
}

/// Every fixture read as one run (captures and logs, classic and KIP-848)
/// with a generated log of many groups: the groups rebuilt and costed on
/// several threads are exactly what one thread gives.
#[test]
fn groups_rebuilt_and_costed_on_several_threads_equal_one_threads() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let dir = tempfile::tempdir().unwrap();
    let generated = dir.path().join("server.log");
    let mut file = std::fs::File::create(&generated).unwrap();
    crate::logs::synth::write_synthetic_log(&mut file, 2_000_000, 12).unwrap();
    drop(file);
    let inputs = vec![root.join("lab"), root.join("kafka"), generated];
    let mut collected =
        crate::input::read_inputs(&inputs, &Default::default(), false, true).unwrap();
    let clients = std::mem::take(&mut collected.data).finish();
    let timeline = crate::timeline::merge(collected.captured, collected.logged);
    let run = |workers| {
        let mut h = crate::group::reconstruct_on(&timeline.events, workers);
        super::apply_index_on(
            &mut h,
            &timeline.events,
            &clients,
            super::Commits::Events,
            workers,
        );
        assert!(h.len() > 20 && h.iter().filter(|h| !h.rebalances.is_empty()).count() > 20);
        format!("{h:?}")
    };
    let alone = run(1);
    for workers in [2, 3, 7] {
        assert!(run(workers) == alone, "{workers} threads");
    }
}

#[test]
fn a_lag_from_absurd_offsets_on_the_wire_saturates_instead_of_wrapping() {
    let mut s = a_alone("range");
    s.join(1000, 1300, "b", "B", 2, &["A", "B"]);
    s.join(1200, 1300, "a", "A", 2, &["A", "B"]);
    s.sync(1350, "a", "A", 2, &[0]);
    s.sync(1350, "b", "B", 2, &[1]);
    s.fetch(1400, "b", 1, i64::MIN, i64::MAX, None);
    let rs = s.run();
    let moved = stop(round(&rs, 2), "t-1");
    assert_eq!(moved.resume_offset, Some(i64::MIN));
    assert_eq!(moved.lag_at_resume, Some(i64::MAX));
}
