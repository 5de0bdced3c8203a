//! A realistic broker `server.log` for the benchmark: mostly replication,
//! log-segment, cleaner, controller and producer-state lines, with about
//! 2 % group-coordinator lines telling classic groups' rebalances.
//!
//! Takes: a byte budget. Gives: deterministic log text in Apache Kafka's
//! default layout (`[%d] %p %m (%c)`), 3.x wordings written from
//! kafka-log-formats.md and Kafka's sources (ReplicaFetcherThread,
//! LocalLog, UnifiedLog, ProducerStateManager, LogCleaner, KafkaController,
//! Partition, GroupCoordinator), and [`RealisticFacts`] saying how many
//! group lines it wrote.

use std::io::{self, Write};

use crate::scenario::Rng;

/// Out of 1000 lines, this many are group-coordinator lines (2 %).
const GROUP_PER_MILLE: u64 = 20;
/// Groups whose stories the coordinator lines tell.
const GROUPS: u64 = 200;

/// What the generated log holds.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealisticFacts {
    /// Lines written.
    pub lines: u64,
    /// Lines that contain `GroupCoordinator`.
    pub group_lines: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// One group's classic-protocol state, to tell a consistent story.
#[derive(Clone, Copy, Default)]
struct Story {
    generation: u64,
    step: u8,
    member: u64,
}

/// Writes about `target` bytes of log to `w`.
pub fn write_realistic_log<W: Write>(w: &mut W, target: u64) -> io::Result<RealisticFacts> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut stories = vec![Story::default(); GROUPS as usize];
    let mut facts = RealisticFacts::default();
    let mut buf = String::with_capacity(1 << 17);
    let mut ms: u64 = 0;
    while facts.bytes < target {
        ms += rng.next() % 4;
        let start = buf.len();
        let t = time(ms);
        if rng.next() % 1000 < GROUP_PER_MILLE {
            let g = rng.next() % GROUPS;
            group_line(&mut buf, &t, g, &mut stories[g as usize], &mut rng);
            facts.group_lines += 1;
        } else {
            noise(&mut buf, &t, &mut rng);
        }
        facts.lines += 1;
        facts.bytes += (buf.len() - start) as u64;
        if buf.len() > 1 << 16 {
            w.write_all(buf.as_bytes())?;
            buf.clear();
        }
    }
    w.write_all(buf.as_bytes())?;
    Ok(facts)
}

/// `yyyy-MM-dd HH:mm:ss,SSS` for `ms` after 2024-05-01 00:00:00.
fn time(ms: u64) -> String {
    let (day, rest) = (ms / 86_400_000, ms % 86_400_000);
    format!(
        "2024-05-{:02} {:02}:{:02}:{:02},{:03}",
        1 + day % 28,
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000
    )
}

/// One line of the broker's everyday work.
fn noise(buf: &mut String, t: &str, rng: &mut Rng) {
    use std::fmt::Write as _;
    let r = rng.next();
    let (topic, p, off) = (r % 40, (r >> 8) % 24, (r >> 16) % 90_000_000);
    let leader = 1 + (r >> 40) % 3;
    let dir = "/var/lib/kafka/data";
    let _ = match r % 16 {
        0..=4 => writeln!(
            buf,
            "[{t}] INFO [ReplicaFetcher replicaId=1, leaderId={leader}, fetcherId={}] Truncating partition events-{topic}-{p} with TruncationState(offset={off}, completed=true) due to local high watermark {off} (kafka.server.ReplicaFetcherThread)",
            p % 4
        ),
        5..=7 => writeln!(
            buf,
            "[{t}] INFO [LocalLog partition=events-{topic}-{p}, dir={dir}] Rolled new log segment at offset {off} in {} ms. (kafka.log.LocalLog)",
            r % 7
        ),
        8 => writeln!(
            buf,
            "[{t}] INFO [UnifiedLog partition=events-{topic}-{p}, dir={dir}] Deleting segment LogSegment(baseOffset={}, size=1073741571, lastModifiedTime=1714510000000, largestRecordTimestamp=Some(1714509999000)) due to log retention time 604800000ms breach based on the largest record timestamp in the segment (kafka.log.UnifiedLog)",
            off / 2
        ),
        9..=10 => writeln!(
            buf,
            "[{t}] INFO [ProducerStateManager partition=events-{topic}-{p}] Wrote producer snapshot at offset {off} with {} producer ids in {} ms. (org.apache.kafka.storage.internals.log.ProducerStateManager)",
            r % 9,
            r % 5
        ),
        11 => writeln!(
            buf,
            "[{t}] INFO [kafka-log-cleaner-thread-0]: Log cleaner thread 0 cleaned log __consumer_offsets-{p} (dirty section = [{}, {off}]) (kafka.log.LogCleaner)",
            off / 2
        ),
        12 => writeln!(
            buf,
            "[{t}] INFO [Controller id=1] Processing automatic preferred replica leader election (kafka.controller.KafkaController)"
        ),
        13 => writeln!(
            buf,
            "[{t}] INFO [Partition events-{topic}-{p} broker=1] ISR updated to 1,{leader} and version updated to {} (kafka.cluster.Partition)",
            r % 500
        ),
        14 => writeln!(
            buf,
            "[{t}] INFO [ReplicaFetcherManager on broker 1] Removed fetcher for partitions Set(events-{topic}-{p}) (kafka.server.ReplicaFetcherManager)"
        ),
        _ => writeln!(
            buf,
            "[{t}] INFO [ReplicaAlterLogDirsManager on broker 1] Added fetcher to broker {leader} for partitions Map(events-{topic}-{p} -> InitialFetchState(Some(x8WzY1bTQvC3_0nLhXJ2gA),BrokerEndPoint(id={leader}, host=kafka-{leader}:9092),{},{off})) (kafka.server.ReplicaAlterLogDirsManager)",
            r % 40
        ),
    };
}

/// The next line of group `g`'s story (Kafka 3.7 classic coordinator,
/// GroupCoordinator.scala's wordings).
fn group_line(buf: &mut String, t: &str, g: u64, s: &mut Story, rng: &mut Rng) {
    use std::fmt::Write as _;
    let part = g % 50;
    let pre = format!("[{t}] INFO [GroupCoordinator 1]:");
    let post = "(kafka.coordinator.group.GroupCoordinator)";
    let member = |n: u64| {
        format!(
            "consumer-billing-{g}-{}-{:08x}-5c1e-4d0b-9a7e-0b8c2d4e6f10",
            n % 20,
            n as u32
        )
    };
    let _ = match s.step {
        0 => {
            s.member = rng.next();
            writeln!(buf, "{pre} Dynamic member with unknown member id joins group billing-{g} in Stable state. Created a new member id {} and request the member to rejoin with this id. {post}", member(s.member))
        }
        1 => writeln!(buf, "{pre} Preparing to rebalance group billing-{g} in state PreparingRebalance with old generation {} (__consumer_offsets-{part}) (reason: Adding new member {} with group instance id None; client reason: need to re-join with the given member-id: {}) {post}", s.generation, member(s.member), member(s.member)),
        2 => {
            s.generation += 1;
            writeln!(buf, "{pre} Stabilized group billing-{g} generation {} (__consumer_offsets-{part}) with {} members {post}", s.generation, 3 + g % 12)
        }
        3 => writeln!(buf, "{pre} Assignment received from leader {} for group billing-{g} for generation {}. The group has {} members, 0 of which are static. {post}", member(s.member), s.generation, 3 + g % 12),
        4 => writeln!(buf, "{pre} Member {} in group billing-{g} has failed, removing it from the group {post}", member(s.member)),
        _ => writeln!(buf, "{pre} Preparing to rebalance group billing-{g} in state PreparingRebalance with old generation {} (__consumer_offsets-{part}) (reason: removing member {} on heartbeat expiration) {post}", s.generation, member(s.member)),
    };
    // join, prepare, stabilize, assign; expire, prepare, stabilize, assign.
    s.step = match s.step {
        3 if s.generation.is_multiple_of(2) => 0,
        5 => 2,
        n => n + 1,
    };
}
