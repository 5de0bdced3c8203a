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

use bytes::{Buf, Bytes};
use kafka_protocol::messages::{ConsumerProtocolAssignment, ConsumerProtocolSubscription};
use kafka_protocol::protocol::Message;

use crate::event::TopicPartitions;

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

/// Decodes JoinGroup member metadata of protocol type `consumer`.
pub(crate) fn subscription(metadata: &Bytes) -> Option<Subscription> {
    let mut buf = metadata.clone();
    let version = clamped_version(&mut buf, ConsumerProtocolSubscription::VERSIONS.max)?;
    let s = super::guard::decode::<ConsumerProtocolSubscription>(&mut buf, version).ok()?;
    Some(Subscription {
        topics: s.topics.iter().map(|t| t.to_string()).collect(),
        owned_partitions: s
            .owned_partitions
            .iter()
            .map(|tp| TopicPartitions {
                topic: tp.topic.to_string(),
                partitions: tp.partitions.clone(),
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

/// Decodes a SyncGroup assignment of protocol type `consumer`. An empty
/// buffer is an empty assignment (followers send none; errors carry none).
pub(crate) fn assignment(bytes: &Bytes) -> Option<Vec<TopicPartitions>> {
    if bytes.is_empty() {
        return Some(Vec::new());
    }
    let mut buf = bytes.clone();
    let version = clamped_version(&mut buf, ConsumerProtocolAssignment::VERSIONS.max)?;
    let a = super::guard::decode::<ConsumerProtocolAssignment>(&mut buf, version).ok()?;
    Some(
        a.assigned_partitions
            .iter()
            .map(|tp| TopicPartitions {
                topic: tp.topic.to_string(),
                partitions: tp.partitions.clone(),
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
        let s = subscription(&encoded_subscription(3, 3, &[])).unwrap();
        assert_eq!(s.topics, vec!["orders"]);
        assert_eq!(s.owned_partitions[0].partitions, vec![0, 2]);
        assert_eq!(s.generation_id, Some(7));
        assert_eq!(s.rack_id.as_deref(), Some("rack-a"));
    }

    #[test]
    fn reads_a_subscription_newer_than_known_with_the_newest_format() {
        // A v5 subscription: v3's fields followed by fields we do not know.
        let s = subscription(&encoded_subscription(5, 3, &[0, 0, 0, 42])).unwrap();
        assert_eq!(s.topics, vec!["orders"]);
        assert_eq!(s.generation_id, Some(7));
    }

    #[test]
    fn ignores_fields_a_v0_subscription_does_not_have() {
        let s = subscription(&encoded_subscription(0, 0, &[])).unwrap();
        assert_eq!(s.topics, vec!["orders"]);
        assert!(s.owned_partitions.is_empty());
        assert_eq!(s.generation_id, None);
        assert_eq!(s.rack_id, None);
    }

    #[test]
    fn rejects_garbage_metadata_without_panicking() {
        assert_eq!(
            subscription(&Bytes::from_static(&[0, 1, 0xff, 0xff, 0xff])),
            None
        );
        assert_eq!(subscription(&Bytes::from_static(&[0xff, 0xff])), None);
        assert_eq!(assignment(&Bytes::from_static(&[0, 0, 0, 0, 0, 9])), None);
        assert_eq!(assignment(&Bytes::new()), Some(vec![]));
    }
}
