//! What one connection's Fetch traffic already told, so that only news is
//! handed on, and the connection's KIP-227 fetch session.
//!
//! Takes: each Fetch request's [`FetchAsk`] (its session and the partitions
//! it lists) and the partition headers of each answer on one connection.
//! Gives: the positions of every partition the request fetches, less what
//! repeats: a consumer long-polling an idle partition asks for the same
//! offset twice a second for hours.
//!
//! The fetch session (KIP-227) follows Kafka's `FetchSessionHandler.
//! Builder.build` (client) and `FetchSession`/`FetchContext` (broker,
//! `FetchSession.java`): a full request (epoch 0, which opens a session, or
//! -1, sessionless; every request before v7) lists the whole partition set;
//! an incremental one (epoch > 0, the session id the broker answered) lists
//! only partitions added or changed and names the removed ones in
//! `forgotten_topics_data`; every partition of the session not named is
//! still fetched at its last position. So a partition's position is its
//! last listed one, and it is being fetched while it is in the session. A
//! new session id on an incremental request means the session's earlier
//! state was not seen: only what it lists is known.
//!
//! A partition is handed on when its position (or high watermark) changed,
//! when it entered the set (it was just assigned, or resumed), when records
//! were delivered (their last offset is the consumer's new position), when
//! its client was answered an assignment since the connection's last
//! request (`assigned` changed: SyncGroup or ConsumerGroupHeartbeat, so the
//! first Fetch after an assignment is exact even for a partition the
//! session kept unchanged), or when nothing of it was handed on for
//! [`REFRESH_NS`]; a request with nothing kept still counts as a sign of
//! life once per [`REFRESH_NS`]. Memory is bounded by [`MAX_TRACKED`]
//! partitions per connection.

use crate::event::{DataKind, Id, PartitionOffset, PartitionWatermark};
use crate::fast_hash::FastMap;
use crate::time::Timestamp;

use super::data_path::FetchAsk;

/// How often a repeating partition (or a request with no news) is handed on.
pub(crate) const REFRESH_NS: i64 = 1_000_000_000;

/// Partitions remembered per connection; past this the memory starts over.
const MAX_TRACKED: usize = 16 * 1024;

/// The round of a partition an incremental request forgot.
const OUT: u64 = u64::MAX;

#[derive(Clone, Copy, Debug)]
struct Seen {
    offset: i64,
    /// The session round (`FetchMemory::round`) it is in; [`OUT`]: forgotten.
    round: u64,
    /// When it was last handed on.
    told: Timestamp,
    high_watermark: i64,
    told_answer: Timestamp,
}

/// One connection's Fetch memory and fetch session.
#[derive(Debug, Default)]
pub(crate) struct FetchMemory {
    /// Bumped by every full request: partitions of older rounds left the set.
    round: u64,
    /// The session id incremental requests use: `None` after a full
    /// request that opened a session (epoch 0; the broker's answer names
    /// it, and the first incremental request uses that id), else the id
    /// (0: no session).
    session_id: Option<i32>,
    /// The client's assignment stamp at the last request.
    assigned: u64,
    last_told: Option<Timestamp>,
    seen: FastMap<Id, FastMap<i32, Seen>>,
    tracked: usize,
}

impl FetchMemory {
    /// The news of one Fetch request: `assigned` is its client's assignment
    /// stamp (changes when the client was answered an assignment).
    pub(crate) fn asked(
        &mut self,
        ask: Option<FetchAsk>,
        exchange: u64,
        ts: Timestamp,
        assigned: u64,
    ) -> Option<DataKind> {
        let ask = ask?;
        if self.tracked > MAX_TRACKED {
            self.seen.clear();
            self.tracked = 0;
        }
        let full = ask.is_full();
        let new_session = !full && self.session_id.is_some_and(|id| id != ask.session_id);
        // In the set before this request: the round as it was.
        let before = self.round;
        if full || new_session {
            self.round += 1;
        }
        self.session_id = match ask.epoch {
            0 => None,
            e if e < 0 => Some(0),
            _ => Some(ask.session_id),
        };
        let round = self.round;
        let retell = std::mem::replace(&mut self.assigned, assigned) != assigned;
        // Grown as news is found, not sized by the request: it waits in
        // the request until the answer comes (or is given up), and most of
        // a long-polling consumer's partitions are not news.
        let mut kept: Vec<PartitionOffset> = Vec::new();
        for p in ask.partitions {
            let topic = match self.seen.get_mut(&*p.topic) {
                Some(t) => t,
                None => self.seen.entry(p.topic.clone()).or_default(),
            };
            let news = match topic.get_mut(&p.partition) {
                Some(s) => {
                    let news = s.offset != p.offset
                        || s.round != before
                        || retell
                        || ts.0.saturating_sub(s.told.0) >= REFRESH_NS;
                    s.offset = p.offset;
                    s.round = round;
                    if news {
                        s.told = ts;
                    }
                    news
                }
                None => {
                    topic.insert(
                        p.partition,
                        Seen {
                            offset: p.offset,
                            round,
                            told: ts,
                            high_watermark: -1,
                            told_answer: Timestamp(i64::MIN),
                        },
                    );
                    self.tracked += 1;
                    true
                }
            };
            if news {
                kept.push(p);
            }
        }
        for (topic, partition) in &ask.forgotten {
            if let Some(s) = self
                .seen
                .get_mut(topic.as_str())
                .and_then(|t| t.get_mut(partition))
            {
                s.round = OUT;
            }
        }
        if !full {
            self.unlisted(ts, retell, &mut kept);
        }
        let alive = self
            .last_told
            .is_none_or(|t| ts.0.saturating_sub(t.0) >= REFRESH_NS);
        if kept.is_empty() && !alive {
            return None;
        }
        self.last_told = Some(ts);
        // Not shrunk (a reallocation per Fetch): grown from nothing, its
        // spare room is at most its own size while its request waits for
        // the answer, and it is folded into the stops stage's index as soon
        // as the exchange is normalized.
        Some(DataKind::FetchRequest {
            exchange,
            partitions: kept,
        })
    }

    /// The session's partitions an incremental request did not list (still
    /// fetched at their last position): handed on after an assignment, or
    /// once per [`REFRESH_NS`].
    fn unlisted(&mut self, ts: Timestamp, retell: bool, kept: &mut Vec<PartitionOffset>) {
        let round = self.round;
        for (topic, parts) in self.seen.iter_mut() {
            for (partition, s) in parts.iter_mut() {
                if s.round != round || s.told == ts {
                    continue;
                }
                if retell || ts.0.saturating_sub(s.told.0) >= REFRESH_NS {
                    s.told = ts;
                    kept.push(PartitionOffset {
                        topic: topic.clone(),
                        partition: *partition,
                        offset: s.offset,
                        error: None,
                    });
                }
            }
        }
    }

    /// Filters a Fetch answer's partition headers.
    pub(crate) fn answered(
        &mut self,
        partitions: Vec<PartitionWatermark>,
        ts: Timestamp,
    ) -> Vec<PartitionWatermark> {
        // Collected in place and not shrunk: folded into the stops stage's
        // index as soon as it is normalized, not held (a shrink was a
        // reallocation per Fetch answer).
        partitions
            .into_iter()
            .filter(|p| {
                if p.last_offset.is_some() || p.error.is_some() {
                    return true;
                }
                let seen = self.seen.get_mut(&*p.topic);
                let Some(s) = seen.and_then(|t| t.get_mut(&p.partition)) else {
                    return true;
                };
                let news = s.high_watermark != p.high_watermark
                    || ts.0.saturating_sub(s.told_answer.0) >= REFRESH_NS;
                s.high_watermark = p.high_watermark;
                if news {
                    s.told_answer = ts;
                }
                news
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fetch(
        m: &mut FetchMemory,
        ms: i64,
        (session_id, epoch): (i32, i32),
        parts: &[(i32, i64)],
        forgotten: &[i32],
        assigned: u64,
    ) -> Option<Vec<(i32, i64)>> {
        let ask = FetchAsk {
            session_id,
            epoch,
            partitions: parts
                .iter()
                .map(|&(partition, offset)| PartitionOffset {
                    topic: "t".into(),
                    partition,
                    offset,
                    error: None,
                })
                .collect(),
            forgotten: forgotten.iter().map(|p| ("t".to_string(), *p)).collect(),
        };
        match m.asked(Some(ask), 1, Timestamp(ms * 1_000_000), assigned) {
            Some(DataKind::FetchRequest { partitions, .. }) => {
                let mut v: Vec<(i32, i64)> =
                    partitions.iter().map(|p| (p.partition, p.offset)).collect();
                v.sort_unstable();
                Some(v)
            }
            _ => None,
        }
    }

    fn ask(m: &mut FetchMemory, ms: i64, parts: &[(i32, i64)]) -> Option<Vec<(i32, i64)>> {
        fetch(m, ms, (0, -1), parts, &[], 0)
    }

    #[test]
    fn hands_on_positions_that_move_partitions_that_reappear_and_a_refresh() {
        let mut m = FetchMemory::default();
        assert_eq!(
            ask(&mut m, 0, &[(0, 5), (1, 9)]),
            Some(vec![(0, 5), (1, 9)])
        );
        // Same positions 500 ms later: nothing new, not yet a sign of life.
        assert_eq!(ask(&mut m, 500, &[(0, 5), (1, 9)]), None);
        // Partition 0 moved.
        assert_eq!(ask(&mut m, 700, &[(0, 8), (1, 9)]), Some(vec![(0, 8)]));
        // Partition 1 missing from a request, then back at the same offset.
        assert_eq!(ask(&mut m, 900, &[(0, 8)]), None);
        assert_eq!(ask(&mut m, 950, &[(0, 8), (1, 9)]), Some(vec![(1, 9)]));
        // A second after the last news on each: refreshed.
        assert_eq!(
            ask(&mut m, 2000, &[(0, 8), (1, 9)]),
            Some(vec![(0, 8), (1, 9)])
        );
    }

    #[test]
    fn an_incremental_fetch_session_keeps_fetching_the_partitions_it_does_not_list() {
        let mut m = FetchMemory::default();
        // Full request opening a session (epoch 0); the broker answered id 7.
        assert_eq!(
            fetch(&mut m, 0, (0, 0), &[(0, 5), (1, 9)], &[], 0),
            Some(vec![(0, 5), (1, 9)])
        );
        // Incremental: only partition 0 moved; 1 is still fetched at 9.
        assert_eq!(
            fetch(&mut m, 400, (7, 1), &[(0, 6)], &[], 0),
            Some(vec![(0, 6)])
        );
        // An assignment answered to the client since: its first Fetch tells
        // the whole session, listed or not.
        assert_eq!(
            fetch(&mut m, 800, (7, 2), &[], &[], 1),
            Some(vec![(0, 6), (1, 9)])
        );
        // Partition 1 forgotten: no longer refreshed; 0 refreshed a second on.
        assert_eq!(fetch(&mut m, 1200, (7, 3), &[], &[1], 1), None);
        assert_eq!(fetch(&mut m, 1900, (7, 4), &[], &[], 1), Some(vec![(0, 6)]));
        // Added back at the same position: it entered the set, so it is news.
        assert_eq!(
            fetch(&mut m, 2000, (7, 5), &[(1, 9)], &[], 1),
            Some(vec![(1, 9)])
        );
        // A new session id on an incremental request: the earlier set is
        // not known to be in it; only what it lists is.
        assert_eq!(fetch(&mut m, 3500, (8, 1), &[], &[], 1), Some(vec![]));
    }
}
