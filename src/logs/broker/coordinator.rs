//! Coordinator ownership and housekeeping: elected / resigned, loading and
//! unloading `__consumer_offsets` partitions and the groups in them, expired
//! offsets (kafka-log-formats.md §2.4 Scala, §3.3 Java runtime), plus the
//! lines that are known but state no group event.
//!
//! Takes: a coordinator message with its prefix removed. Gives: a [`Parsed`]
//! event, or `None`.

use crate::event::{BrokerLine, EventKind};
use crate::logs::parsed::{number, optional_value, regex, starts_with_ci, text, Parsed};

fn broker(line: BrokerLine) -> EventKind {
    EventKind::Broker(line)
}

fn loaded(partition: Option<i32>, epoch: Option<i32>) -> EventKind {
    broker(BrokerLine::CoordinatorLoaded { partition, epoch })
}

fn unloaded(partition: Option<i32>) -> EventKind {
    broker(BrokerLine::CoordinatorUnloaded { partition })
}

/// A `__consumer_offsets` partition as printed: `__consumer_offsets-12`,
/// `[__consumer_offsets,12]` (0.9–0.10.1), or a bare number (2.8 "for
/// partition 12").
const PARTITION: &str = r"(?:__consumer_offsets-|\[__consumer_offsets,)?(\d+)\]?";

/// Partition takeover: "Elected as the group coordinator for partition P[ in
/// epoch E]" (2.8+), "Loading offsets and group metadata from TP" (≤0.10.2),
/// "Scheduling loading of offsets and group metadata from TP[ for epoch E]"
/// (0.11+), Java "Scheduling loading of metadata from TP with epoch E" (3.6+).
pub(crate) fn partition_loaded(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(&format!(
        r"(?-u)^(?:Elected as the group coordinator for partition|Loading offsets and group metadata from|Scheduling loading of (?:offsets and group )?metadata from) {PARTITION}(?: (?:in|for|with) epoch (\d+))?$"
    ));
    let caps = re.captures(msg)?;
    Some(Parsed::new(loaded(number(&caps, 1), number(&caps, 2))))
}

/// Partition given up: "Resigned as the group coordinator for partition P[ in
/// epoch E]" (epoch printed `Some(5)`, `None`, `OptionalInt[5]`), "Scheduling
/// unloading of offsets and group metadata from TP", Java "Scheduling
/// unloading of metadata for TP with epoch E".
pub(crate) fn partition_unloaded(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(&format!(
        r"(?-u)^(?:Resigned as the group coordinator for partition|Scheduling unloading of offsets and group metadata from|Scheduling unloading of metadata for) {PARTITION}(?: (?:in|with) epoch (\S+))?$"
    ));
    let caps = re.captures(msg)?;
    let epoch = text(&caps, 2)
        .and_then(|e| optional_value(&e))
        .and_then(|e| e.parse().ok());
    Some(Parsed::new(unloaded(number(&caps, 1))).generation(epoch))
}

/// One group found or dropped with its partition: "Loading group metadata for
/// G with generation N", "Unloading group metadata for G with generation N"
/// (Scala), "Loaded classic|generic|consumer group G with K members." and
/// (after a `[GroupId=G]` tag) "Unloading group metadata for generation N." /
/// "Unloaded group metadata for group epoch N." (Java).
pub(crate) fn group_loaded(msg: &[u8]) -> Option<Parsed> {
    let scala =
        regex!(r"(?-u)^(Loading|Unloading) group metadata for (.+?) with generation (-?\d+)$");
    if let Some(c) = scala.captures(msg) {
        let kind = if &c[1] == b"Loading" {
            loaded(None, None)
        } else {
            unloaded(None)
        };
        return Some(
            Parsed::new(kind)
                .group(text(&c, 2))
                .generation(number(&c, 3)),
        );
    }
    let java = regex!(r"(?-u)^Loaded (?:classic|generic|consumer) group (.+?) with \d+ members\.$");
    if let Some(c) = java.captures(msg) {
        return Some(Parsed::new(loaded(None, None)).group(text(&c, 1)));
    }
    let tagged =
        regex!(r"(?-u)^Unload(?:ing|ed) group metadata for (?:group epoch|generation) (-?\d+)\.$");
    let c = tagged.captures(msg)?;
    Some(Parsed::new(unloaded(None)).generation(number(&c, 1)))
}

/// "Removed N expired offsets in T milliseconds." (Scala; every 10 minutes,
/// even for 0 until 2.6) and Java "Generated N tombstone records while
/// cleaning up group metadata in T milliseconds.".
pub(crate) fn offsets_expired(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(
        r"(?-u)^(?:Removed (\d+) expired offsets|Generated (\d+) tombstone records while cleaning up group metadata) in \d+ milliseconds\.$"
    );
    let caps = re.captures(msg)?;
    let count = number(&caps, 1).or_else(|| number(&caps, 2))?;
    // Logged every 10 minutes even when nothing expired (Scala until 2.6,
    // Java 3.7–3.9, once per led partition): zero is housekeeping, not an
    // event (kafka-log-formats.md §6.11).
    (count > 0).then(|| Parsed::new(broker(BrokerLine::OffsetsExpired { count })))
}

/// Coordinator lines that are recognised but state no group event: start-up
/// and shutdown, load/unload bookkeeping, deletions listed in bulk, write
/// errors during leadership moves. Recognising them keeps them out of the
/// unknown-line count.
pub(crate) fn is_known_housekeeping(msg: &[u8]) -> bool {
    const KNOWN: &[&[u8]] = &[
        b"Starting up",
        b"Startup complete",
        b"Shutting down",
        b"Shutdown complete",
        b"Finished loading offsets",
        b"Finished loading of metadata from",
        b"Finished unloading",
        b"Finished unloading metadata for",
        b"Started unloading metadata for",
        b"Offset load from",
        b"Already loading offsets",
        b"Not loading offsets",
        b"Not removing offsets",
        b"Ignored loading metadata",
        b"Ignoring loading metadata",
        b"Ignored unloading metadata",
        b"Ignoring unloading metadata",
        b"The coordinator ",
        b"Failed to load metadata from",
        b"Attempted to load offsets",
        b"No log found for",
        b"Removed ",
        b"The following groups were deleted",
        b"Generated ",
        b"Writing records to",
        b"Execution of ",
        b"Unknown message key",
        b"Scheduling the ",
        b"Loaded offsets and group metadata from",
    ];
    KNOWN.iter().any(|k| starts_with_ci(msg, k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(p: &Parsed) -> &BrokerLine {
        match &p.kind {
            EventKind::Broker(l) => l,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn elections_and_loads_in_every_wording() {
        for (msg, partition, epoch) in [
            (&b"Elected as the group coordinator for partition 12"[..], 12, None),
            (b"Elected as the group coordinator for partition 12 in epoch 5", 12, Some(5)),
            (b"Loading offsets and group metadata from [__consumer_offsets,12]", 12, None),
            (b"Loading offsets and group metadata from __consumer_offsets-12", 12, None),
            (b"Scheduling loading of offsets and group metadata from __consumer_offsets-12", 12, None),
            (b"Scheduling loading of offsets and group metadata from __consumer_offsets-12 for epoch 7", 12, Some(7)),
            (b"Scheduling loading of metadata from __consumer_offsets-12 with epoch 8", 12, Some(8)),
        ] {
            let p = partition_loaded(msg).unwrap();
            assert_eq!(kind(&p), &BrokerLine::CoordinatorLoaded { partition: Some(partition), epoch });
        }
    }

    #[test]
    fn resignations_and_unloads_in_every_wording() {
        for msg in [
            &b"Resigned as the group coordinator for partition 3"[..],
            b"Resigned as the group coordinator for partition 3 in epoch Some(5)",
            b"Resigned as the group coordinator for partition 3 in epoch OptionalInt[5]",
            b"Resigned as the group coordinator for partition 3 in epoch None",
            b"Scheduling unloading of offsets and group metadata from __consumer_offsets-3",
            b"Scheduling unloading of metadata for __consumer_offsets-3 with epoch OptionalInt.empty",
        ] {
            let p = partition_unloaded(msg).unwrap();
            assert_eq!(kind(&p), &BrokerLine::CoordinatorUnloaded { partition: Some(3) });
        }
    }

    #[test]
    fn groups_loaded_and_unloaded() {
        let p = group_loaded(b"Loading group metadata for g with generation 7").unwrap();
        assert_eq!((p.group.as_deref(), p.generation_id), (Some("g"), Some(7)));
        assert!(matches!(kind(&p), BrokerLine::CoordinatorLoaded { .. }));
        let p = group_loaded(b"Unloading group metadata for g with generation 7").unwrap();
        assert!(matches!(kind(&p), BrokerLine::CoordinatorUnloaded { .. }));
        assert_eq!(
            group_loaded(b"Loaded classic group g with 3 members.")
                .unwrap()
                .group
                .as_deref(),
            Some("g")
        );
        assert_eq!(
            group_loaded(b"Loaded generic group g with 3 members.")
                .unwrap()
                .group
                .as_deref(),
            Some("g")
        );
        assert_eq!(
            group_loaded(b"Loaded consumer group g with 3 members.")
                .unwrap()
                .group
                .as_deref(),
            Some("g")
        );
        assert_eq!(
            group_loaded(b"Unloading group metadata for generation 4.")
                .unwrap()
                .generation_id,
            Some(4)
        );
        assert_eq!(
            group_loaded(b"Unloaded group metadata for group epoch 9.")
                .unwrap()
                .generation_id,
            Some(9)
        );
    }

    #[test]
    fn expired_offsets_scala_and_java() {
        assert_eq!(
            kind(&offsets_expired(b"Removed 3 expired offsets in 1 milliseconds.").unwrap()),
            &BrokerLine::OffsetsExpired { count: 3 }
        );
        assert!(offsets_expired(b"Removed 0 expired offsets in 1 milliseconds.").is_none());
        assert!(is_known_housekeeping(
            b"Removed 0 expired offsets in 1 milliseconds."
        ));
        assert_eq!(
            kind(&offsets_expired(b"Generated 4 tombstone records while cleaning up group metadata in 2 milliseconds.").unwrap()),
            &BrokerLine::OffsetsExpired { count: 4 }
        );
    }

    #[test]
    fn housekeeping_is_known() {
        assert!(is_known_housekeeping(b"Startup complete."));
        assert!(is_known_housekeeping(b"Finished loading offsets and group metadata from __consumer_offsets-1 in 5 milliseconds."));
        assert!(is_known_housekeeping(
            b"The coordinator __consumer_offsets-1 is already active."
        ));
        assert!(!is_known_housekeeping(b"Something brand new happened"));
    }
}
