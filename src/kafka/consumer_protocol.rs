//! The consumer protocol embedded in JoinGroup and SyncGroup bytes.
//!
//! Takes: a JoinGroup protocol's `metadata` (a ConsumerProtocolSubscription)
//! or a SyncGroup `assignment` (a ConsumerProtocolAssignment), each an
//! INT16 version followed by the struct. Gives: subscribed topics, owned
//! partitions, generation and rack, or the assigned partitions. Kafka reads
//! a version newer than it knows with its newest format (forward
//! compatibility, `ConsumerProtocol.checkSubscriptionVersion`, KIP-429), so
//! newer versions are clamped to the newest kafka-protocol has (v3) instead
//! of being rejected as the crate would.

use std::cell::Cell;

use bytes::{Buf, Bytes};
use kafka_protocol::messages::{ConsumerProtocolAssignment, ConsumerProtocolSubscription};
use kafka_protocol::protocol::Message;

use crate::event::TopicPartitions;

/// Heap bytes that one decoded message may keep in its lists (members,
/// protocols, assignments, topics, partitions): twice the largest frame
/// buffered (`KafkaConfig::max_frame_len`, 16 MiB). A 16 MiB JoinGroup of
/// 5.5 M one-byte topics would otherwise expand 50-fold (897 MB each).
pub(crate) const MAX_KEPT_PER_MESSAGE: usize = 32 << 20;

/// What one list element costs against a [`Budget`]: a string-bearing
/// entry its text plus 64 bytes of bookkeeping (`String`, `Vec` headers,
/// allocator), a partition number [`PARTITION_COST`].
pub(crate) fn entry_cost(text_len: usize) -> usize {
    64 + text_len
}

/// What a partition number costs: 4 bytes on the wire, but each one
/// assigned becomes a member's `topic-N` entry and a row of the round's
/// partition stops later on (about 400 bytes in all: a SyncGroup assigning
/// 4 M partitions took 1.69 GB), so it is charged like a string entry.
pub(crate) const PARTITION_COST: usize = 64;

/// Bytes a decoded message may still keep in its lists; what does not fit
/// is dropped and counted, never decoded into memory.
#[derive(Debug)]
pub(crate) struct Budget {
    left: Cell<usize>,
    dropped: Cell<usize>,
}

impl Budget {
    /// A budget of `bytes`.
    pub(crate) fn new(bytes: usize) -> Budget {
        Budget {
            left: Cell::new(bytes),
            dropped: Cell::new(0),
        }
    }

    /// Takes `cost` bytes for one element: false (and the element counted
    /// as dropped) when they do not fit.
    pub(crate) fn fits(&self, cost: usize) -> bool {
        let left = self.left.get();
        if cost <= left {
            self.left.set(left - cost);
            true
        } else {
            self.dropped.set(self.dropped.get() + 1);
            false
        }
    }

    /// The first of `items` whose `cost` fits, in order; the rest dropped.
    pub(crate) fn keep<'a, T>(&self, items: &'a [T], cost: impl Fn(&T) -> usize) -> &'a [T] {
        let n = items.iter().take_while(|i| self.fits(cost(i))).count();
        if n < items.len() {
            self.dropped.set(self.dropped.get() + items.len() - n - 1);
        }
        &items[..n]
    }

    /// Partition numbers that fit ([`PARTITION_COST`] each).
    pub(crate) fn partitions(&self, p: &[i32]) -> Vec<i32> {
        self.keep(p, |_| PARTITION_COST).to_vec()
    }

    /// Elements dropped so far.
    pub(crate) fn dropped(&self) -> usize {
        self.dropped.get()
    }

    /// Bytes still free.
    pub(crate) fn left(&self) -> usize {
        self.left.get()
    }
}

/// A decoded ConsumerProtocolSubscription, fields kept only where the
/// version has them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Subscription {
    /// Subscribed topics.
    pub topics: Vec<String>,
    /// Partitions the member owns (v1+, KIP-429).
    pub owned_partitions: Vec<TopicPartitions>,
    /// Generation the member last knew (v2+, KIP-792).
    pub generation_id: Option<i32>,
    /// Rack (v3+, KIP-881).
    pub rack_id: Option<String>,
}

/// Reads the version prefix and clamps it to `max`; `None` for an empty or
/// negative-version buffer (Kafka rejects negative versions).
fn clamped_version(bytes: &mut Bytes, max: i16) -> Option<i16> {
    if bytes.remaining() < 2 {
        return None;
    }
    let version = bytes.get_i16();
    (version >= 0).then_some(version.min(max))
}

/// Decodes JoinGroup member metadata of protocol type `consumer`, keeping
/// what fits in `budget`.
pub(crate) fn subscription(metadata: &Bytes, budget: &Budget) -> Option<Subscription> {
    let mut buf = metadata.clone();
    let version = clamped_version(&mut buf, ConsumerProtocolSubscription::VERSIONS.max)?;
    let s = super::guard::decode::<ConsumerProtocolSubscription>(&mut buf, version).ok()?;
    Some(Subscription {
        topics: budget
            .keep(&s.topics, |t| entry_cost(t.len()))
            .iter()
            .map(|t| t.to_string())
            .collect(),
        owned_partitions: budget
            .keep(&s.owned_partitions, |tp| entry_cost(tp.topic.len()))
            .iter()
            .map(|tp| TopicPartitions {
                topic: tp.topic.to_string(),
                partitions: budget.partitions(&tp.partitions),
            })
            .collect(),
        generation_id: (version >= 2).then_some(s.generation_id),
        rack_id: if version >= 3 {
            s.rack_id.map(|r| r.to_string())
        } else {
            None
        },
    })
}

/// Decodes a SyncGroup assignment of protocol type `consumer`, keeping
/// what fits in `budget`. An empty buffer is an empty assignment
/// (followers send none; errors carry none).
pub(crate) fn assignment(bytes: &Bytes, budget: &Budget) -> Option<Vec<TopicPartitions>> {
    if bytes.is_empty() {
        return Some(Vec::new());
    }
    let mut buf = bytes.clone();
    let version = clamped_version(&mut buf, ConsumerProtocolAssignment::VERSIONS.max)?;
    let a = super::guard::decode::<ConsumerProtocolAssignment>(&mut buf, version).ok()?;
    Some(
        budget
            .keep(&a.assigned_partitions, |tp| entry_cost(tp.topic.len()))
            .iter()
            .map(|tp| TopicPartitions {
                topic: tp.topic.to_string(),
                partitions: budget.partitions(&tp.partitions),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use bytes::{BufMut, BytesMut};
    use kafka_protocol::messages::consumer_protocol_subscription::TopicPartition;
    use kafka_protocol::messages::TopicName;
    use kafka_protocol::protocol::{Encodable, StrBytes};

    use super::*;

    fn roomy() -> Budget {
        Budget::new(MAX_KEPT_PER_MESSAGE)
    }

    #[test]
    fn a_subscription_past_the_budget_keeps_what_fits_and_counts_the_rest() {
        let bytes = encoded_subscription(3, 3, &[]);
        // "orders" costs 70; its owned partitions entry 70, each partition 64.
        let budget = Budget::new(70 + 70 + PARTITION_COST);
        let s = subscription(&bytes, &budget).unwrap();
        assert_eq!(s.topics, vec!["orders"]);
        assert_eq!(s.owned_partitions[0].partitions, vec![0]);
        assert_eq!(budget.dropped(), 1);
        assert_eq!(budget.left(), 0);
        let empty = Budget::new(10);
        let s = subscription(&bytes, &empty).unwrap();
        assert!(s.topics.is_empty() && s.owned_partitions.is_empty());
        assert_eq!(empty.dropped(), 2);
    }

    fn encoded_subscription(version_on_wire: i16, encode_as: i16, trailing: &[u8]) -> Bytes {
        let s = ConsumerProtocolSubscription::default()
            .with_topics(vec![StrBytes::from_static_str("orders")])
            .with_owned_partitions(vec![TopicPartition::default()
                .with_topic(TopicName(StrBytes::from_static_str("orders")))
                .with_partitions(vec![0, 2])])
            .with_generation_id(7)
            .with_rack_id(Some(StrBytes::from_static_str("rack-a")));
        let mut buf = BytesMut::new();
        buf.put_i16(version_on_wire);
        s.encode(&mut buf, encode_as).unwrap();
        buf.put_slice(trailing);
        buf.freeze()
    }

    #[test]
    fn reads_a_v3_subscription_with_owned_partitions_generation_and_rack() {
        let s = subscription(&encoded_subscription(3, 3, &[]), &roomy()).unwrap();
        assert_eq!(s.topics, vec!["orders"]);
        assert_eq!(s.owned_partitions[0].partitions, vec![0, 2]);
        assert_eq!(s.generation_id, Some(7));
        assert_eq!(s.rack_id.as_deref(), Some("rack-a"));
    }

    #[test]
    fn reads_a_subscription_newer_than_known_with_the_newest_format() {
        // A v5 subscription: v3's fields followed by fields we do not know.
        let s = subscription(&encoded_subscription(5, 3, &[0, 0, 0, 42]), &roomy()).unwrap();
        assert_eq!(s.topics, vec!["orders"]);
        assert_eq!(s.generation_id, Some(7));
    }

    #[test]
    fn ignores_fields_a_v0_subscription_does_not_have() {
        let s = subscription(&encoded_subscription(0, 0, &[]), &roomy()).unwrap();
        assert_eq!(s.topics, vec!["orders"]);
        assert!(s.owned_partitions.is_empty());
        assert_eq!(s.generation_id, None);
        assert_eq!(s.rack_id, None);
    }

    #[test]
    fn rejects_garbage_metadata_without_panicking() {
        assert_eq!(
            subscription(&Bytes::from_static(&[0, 1, 0xff, 0xff, 0xff]), &roomy()),
            None
        );
        assert_eq!(
            subscription(&Bytes::from_static(&[0xff, 0xff]), &roomy()),
            None
        );
        assert_eq!(
            assignment(&Bytes::from_static(&[0, 0, 0, 0, 0, 9]), &roomy()),
            None
        );
        assert_eq!(assignment(&Bytes::new(), &roomy()), Some(vec![]));
    }
}
