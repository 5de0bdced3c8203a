//! Which `__consumer_offsets` partition, and so which broker, coordinates a
//! group.
//!
//! Takes: a `group_id` and the partition count of `__consumer_offsets`
//! (`offsets.topic.num.partitions`, default 50). Gives: the partition, by
//! the broker's own rule: `Utils.abs(groupId.hashCode()) % partitions`
//! (`GroupMetadataManager.partitionFor`; `Utils.abs` maps
//! `Integer.MIN_VALUE` to 0), with Java's `String.hashCode` over UTF-16
//! code units.

/// Java's `String.hashCode()`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16
/// code units, in wrapping 32-bit arithmetic.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(unit as i32))
}

/// Kafka's `Utils.abs`: `Integer.MIN_VALUE` becomes 0, not itself.
fn kafka_abs(n: i32) -> i32 {
    if n == i32::MIN {
        0
    } else {
        n.abs()
    }
}

/// The `__consumer_offsets` partition that owns `group_id`.
pub fn partition_for(group_id: &str, partitions: u32) -> u32 {
    (kafka_abs(java_string_hash(group_id)) as u32) % partitions.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_like_java() {
        // Values of "".hashCode(), "a".hashCode() and "hello".hashCode() in Java.
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99_162_322);
    }

    #[test]
    fn hashes_surrogate_pairs_as_two_utf16_units() {
        // U+1F600 is D83D DE00 in UTF-16: 0xD83D * 31 + 0xDE00.
        assert_eq!(java_string_hash("\u{1F600}"), 0xD83D * 31 + 0xDE00);
    }

    #[test]
    fn places_groups_like_the_broker_logs_them() {
        // Public Kafka 3.7 and 4.x logs name these partitions for these groups:
        // "avro-consumer2" on __consumer_offsets-33, "demo-group" on -15 (50 partitions).
        assert_eq!(partition_for("avro-consumer2", 50), 33);
        assert_eq!(partition_for("demo-group", 50), 15);
    }
}
