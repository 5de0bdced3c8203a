//! What one connection's Fetch traffic already told, so that only news is
//! handed on.
//!
//! Takes: the positions of each Fetch request and the partition headers of
//! each answer on one connection. Gives: the same, less what repeats: a
//! consumer long-polling an idle partition asks for the same offset twice a
//! second for hours. A partition is kept when its position (or high
//! watermark) changed, when it was missing from the connection's previous
//! request (it was just assigned, or resumed), when records were delivered
//! (their last offset is the consumer's new position), or when nothing of it
//! was handed on for [`REFRESH_NS`]; a request with nothing kept still
//! counts as a sign of life once per [`REFRESH_NS`]. So positions are exact,
//! and a resume at an unchanged position on the same connection straight
//! after the same position was asked is seen at most [`REFRESH_NS`] late.
//! Memory is bounded by [`MAX_TRACKED`] partitions per connection.

use std::collections::HashMap;

use crate::event::{DataKind, PartitionWatermark};
use crate::time::Timestamp;

/// How often a repeating partition (or a request with no news) is handed on.
pub(crate) const REFRESH_NS: i64 = 1_000_000_000;

/// Partitions remembered per connection; past this the memory starts over.
const MAX_TRACKED: usize = 16 * 1024;

#[derive(Clone, Copy, Debug)]
struct Seen {
    offset: i64,
    /// The request sequence number that last named it.
    seq: u64,
    /// When it was last handed on.
    told: Timestamp,
    high_watermark: i64,
    told_answer: Timestamp,
}

/// One connection's Fetch memory.
#[derive(Debug, Default)]
pub(crate) struct FetchMemory {
    seq: u64,
    last_told: Option<Timestamp>,
    seen: HashMap<String, HashMap<i32, Seen>>,
    tracked: usize,
}

impl FetchMemory {
    /// Filters a decoded request's data-path event (only Fetch requests are
    /// filtered).
    pub(crate) fn asked(&mut self, data: Option<DataKind>, ts: Timestamp) -> Option<DataKind> {
        let Some(DataKind::FetchRequest {
            exchange,
            partitions,
        }) = data
        else {
            return data;
        };
        self.seq += 1;
        if self.tracked > MAX_TRACKED {
            self.seen.clear();
            self.tracked = 0;
        }
        let seq = self.seq;
        let kept: Vec<_> = partitions
            .into_iter()
            .filter(|p| {
                let fresh = Seen {
                    offset: p.offset,
                    seq,
                    told: ts,
                    high_watermark: -1,
                    told_answer: Timestamp(i64::MIN),
                };
                if !self.seen.contains_key(p.topic.as_str()) {
                    self.seen.insert(p.topic.clone(), HashMap::new());
                }
                let Some(topic) = self.seen.get_mut(p.topic.as_str()) else {
                    return true;
                };
                match topic.get_mut(&p.partition) {
                    Some(s) => {
                        let news = s.offset != p.offset
                            || s.seq + 1 != seq
                            || ts.0.saturating_sub(s.told.0) >= REFRESH_NS;
                        s.offset = p.offset;
                        s.seq = seq;
                        if news {
                            s.told = ts;
                        }
                        news
                    }
                    None => {
                        topic.insert(p.partition, fresh);
                        self.tracked += 1;
                        true
                    }
                }
            })
            .collect();
        let alive = self
            .last_told
            .is_none_or(|t| ts.0.saturating_sub(t.0) >= REFRESH_NS);
        if kept.is_empty() && !alive {
            return None;
        }
        self.last_told = Some(ts);
        Some(DataKind::FetchRequest {
            exchange,
            partitions: kept,
        })
    }

    /// Filters a Fetch answer's partition headers.
    pub(crate) fn answered(
        &mut self,
        partitions: Vec<PartitionWatermark>,
        ts: Timestamp,
    ) -> Vec<PartitionWatermark> {
        partitions
            .into_iter()
            .filter(|p| {
                if p.last_offset.is_some() || p.error.is_some() {
                    return true;
                }
                let seen = self.seen.get_mut(p.topic.as_str());
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
    use crate::event::PartitionOffset;

    fn ask(m: &mut FetchMemory, ms: i64, parts: &[(i32, i64)]) -> Option<Vec<(i32, i64)>> {
        let partitions = parts
            .iter()
            .map(|&(partition, offset)| PartitionOffset {
                topic: "t".into(),
                partition,
                offset,
                error: None,
            })
            .collect();
        let data = Some(DataKind::FetchRequest {
            exchange: 1,
            partitions,
        });
        match m.asked(data, Timestamp(ms * 1_000_000)) {
            Some(DataKind::FetchRequest { partitions, .. }) => {
                Some(partitions.iter().map(|p| (p.partition, p.offset)).collect())
            }
            _ => None,
        }
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
}
