//! A generator of synthetic multi-version Kafka logs, for the end-to-end
//! tests and the throughput benchmark (`benches/throughput/inputs.rs`).
//!
//! Takes: a byte budget and a seed. Gives: deterministic log text mixing
//! every version family (0.10, 2.x, 3.2+ with client reasons, 3.8 new
//! coordinator, 4.x KIP-848), layouts (Apache, Strimzi, kubectl, docker-compose,
//! vendor ` | `, client `LEVEL - date - logger:line`), unrelated broker lines,
//! stack traces and `kafka-request.log` JSON, plus [`SynthStats`] saying how
//! many lines must become events. The wording is written here from
//! kafka-log-formats.md, not copied from any real log.

use std::io::{self, Write};

/// What a generated log contains.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SynthStats {
    /// Lines written.
    pub lines: u64,
    /// Lines that are group events.
    pub events: u64,
    /// Group lines that are known housekeeping (no event).
    pub known: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// What one template line is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Yields {
    Event,
    Known,
    Nothing,
}

/// xorshift64*: deterministic and dependency-free. Also the crate's unit
/// tests' generator where they want repeatable random input (a seed other
/// than 0: xorshift stays at 0).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Writes about `target_bytes` of log (whole lines) to `w`.
pub fn write_synthetic_log<W: Write>(
    w: &mut W,
    target_bytes: u64,
    seed: u64,
) -> io::Result<SynthStats> {
    let mut rng = Rng(seed | 1);
    let mut stats = SynthStats::default();
    let mut ms: u64 = 0;
    let mut buf = Vec::with_capacity(1 << 16);
    while stats.bytes < target_bytes {
        ms += rng.below(20);
        let start = buf.len();
        let yields = line(&mut buf, &mut rng, ms);
        stats.lines += buf[start..].iter().filter(|&&b| b == b'\n').count() as u64;
        stats.bytes += (buf.len() - start) as u64;
        match yields {
            Yields::Event => stats.events += 1,
            Yields::Known => stats.known += 1,
            Yields::Nothing => {}
        }
        if buf.len() > 60_000 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)?;
    Ok(stats)
}

/// `yyyy-MM-dd HH:mm:ss,SSS` for `ms` after 2024-03-01 00:00:00.
fn time(ms: u64, sep: char, frac: char) -> String {
    let (day, rest) = (ms / 86_400_000, ms % 86_400_000);
    let (h, m, s, f) = (
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000,
    );
    format!(
        "2024-03-{:02}{sep}{h:02}:{m:02}:{s:02}{frac}{f:03}",
        1 + day % 28
    )
}

/// One entry (possibly several lines); returns what it should yield.
fn line(buf: &mut Vec<u8>, rng: &mut Rng, ms: u64) -> Yields {
    let t = time(ms, ' ', ',');
    let g = format!("group-{}", rng.below(50));
    let m = format!(
        "consumer-{g}-1-{:08x}-1b2c-4d5e-8f90-{:012x}",
        rng.next() as u32,
        rng.next() >> 16
    );
    let n = rng.below(30_000);
    let b = rng.below(6);
    let choice = rng.below(40);
    let (text, yields) = match choice {
        0..=14 => noise(&t, rng),
        15..=27 => broker_line(&t, &g, &m, n, b, choice),
        28..=33 => new_coordinator_line(&t, &g, &m, n, b, choice),
        34..=37 => client_line(&t, &g, &m, n, choice),
        _ => wrapped_line(&t, &g, &m, n, b, choice, ms),
    };
    buf.extend_from_slice(text.as_bytes());
    yields
}

fn noise(t: &str, rng: &mut Rng) -> (String, Yields) {
    let p = rng.below(64);
    let text = match rng.below(5) {
        0 => format!("[{t}] INFO [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition orders-{p} with TruncationState(offset=1{p}4, completed=true) due to local high watermark 1{p}4 (kafka.server.ReplicaFetcherThread)\n"),
        1 => format!("[{t}] INFO [LocalLog partition=orders-{p}, dir=/var/lib/kafka/data] Rolled new log segment at offset 88{p}1 in 3 ms. (kafka.log.LocalLog)\n"),
        2 => format!("[{t}] INFO [ProducerStateManager partition=payments-{p}] Wrote producer snapshot at offset 77{p} with 0 producer ids in 1 ms. (kafka.log.ProducerStateManager)\n"),
        3 => format!("[{t}] INFO [Controller id=1] Processing automatic preferred replica leader election (kafka.controller.KafkaController)\n"),
        _ => format!("[{t}] ERROR [ReplicaManager broker=1] Error processing append operation on partition orders-{p} (kafka.server.ReplicaManager)\norg.apache.kafka.common.errors.NotLeaderOrFollowerException: not leader\n\tat kafka.coordinator.group.GroupMetadataManager.storeGroup(GroupMetadataManager.scala:1)\n\tat kafka.coordinator.group.GroupCoordinator.handleSyncGroup(GroupCoordinator.scala:2)\n"),
    };
    (text, Yields::Nothing)
}

/// Scala coordinator wording, 0.10 to 4.0, Apache layout.
fn broker_line(t: &str, g: &str, m: &str, n: u64, b: u64, choice: u64) -> (String, Yields) {
    let p = n % 50;
    let gc = format!("[{t}] INFO [GroupCoordinator {b}]: ");
    let tail = " (kafka.coordinator.group.GroupCoordinator)\n";
    let msg = match choice {
        15 => format!("Preparing to restabilize group {g} with old generation {n}"),
        16 => format!("Preparing to rebalance group {g} with old generation {n} (__consumer_offsets-{p})"),
        17 => format!("Preparing to rebalance group {g} in state PreparingRebalance with old generation {n} (__consumer_offsets-{p}) (reason: Adding new member {m} with group instanceid None)"),
        18 => format!("Preparing to rebalance group {g} in state PreparingRebalance with old generation {n} (__consumer_offsets-{p}) (reason: Removing member {m} on LeaveGroup; client reason: consumer poll timeout has expired.)"),
        19 => format!("Stabilized group {g} generation {n} (__consumer_offsets-{p})"),
        20 => format!("Stabilized group {g} generation {n} (__consumer_offsets-{p}) with 3 members"),
        21 => format!("Assignment received from leader for group {g} for generation {n}"),
        22 => format!("Assignment received from leader {m} for group {g} for generation {n}. The group has 3 members, 0 of which are static."),
        23 => format!("Member {m} in group {g} has failed, removing it from the group"),
        24 => format!("Dynamic member with unknown member id joins group {g} in Stable state. Created a new member id {m} and request the member to rejoin with this id."),
        25 => format!("Member MemberMetadata(memberId={m}, groupInstanceId=None, clientId=consumer-{g}-1, clientHost=/10.1.2.3, sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range, cooperative-sticky)) has left group {g} through explicit `LeaveGroup`; client reason: the consumer is being closed"),
        26 => format!("Group {g} with generation {n} is now empty (__consumer_offsets-{p})"),
        _ => {
            return (
                format!("[{t}] INFO [GroupMetadataManager brokerId={b}] Finished loading offsets and group metadata from __consumer_offsets-{p} in 12 milliseconds for epoch 3, of which 1 milliseconds was spent in the scheduler. (kafka.coordinator.group.GroupMetadataManager)\n"),
                Yields::Known,
            )
        }
    };
    (format!("{gc}{msg}{tail}"), Yields::Event)
}

/// Java coordinator (3.8, 4.x): classic groups and KIP-848 consumer groups.
fn new_coordinator_line(
    t: &str,
    g: &str,
    m: &str,
    n: u64,
    b: u64,
    choice: u64,
) -> (String, Yields) {
    let prefix = format!(
        "[{t}] INFO [GroupCoordinator id={b} topic=__consumer_offsets partition={}] ",
        n % 50
    );
    let tail = " (org.apache.kafka.coordinator.group.GroupMetadataManager)\n";
    let msg = match choice {
        28 => format!("Preparing to rebalance group {g} in state PreparingRebalance with old generation {n} (reason: Adding new member {m} with group instance id null; client reason: need to re-join with the given member-id: {m})."),
        29 => format!("Stabilized group {g} generation {n} with 2 members."),
        30 => format!("[GroupId {g}] Bumped group epoch to {n}."),
        31 => format!("[GroupId {g}] Member {m} new assignment state: epoch={n}, previousEpoch={}, state=STABLE, assignedPartitions=[x-0, x-1] and revokedPartitions=[].", n.saturating_sub(1)),
        32 => format!("[GroupId {g}] Member {m} fenced from the group because the member session expired."),
        _ => format!("[GroupId {g}] Computed a new target assignment for epoch {n} with 'uniform' assignor in 2ms."),
    };
    (format!("{prefix}{msg}{tail}"), Yields::Event)
}

/// Java client lines in the `LEVEL - date - logger:line - ` layout.
fn client_line(t: &str, g: &str, m: &str, n: u64, choice: u64) -> (String, Yields) {
    let head = format!("INFO - {t} - org.apache.kafka.clients.consumer.internals.ConsumerCoordinator:604 - [Consumer clientId=consumer-{g}-1, groupId={g}] ");
    let (msg, yields) = match choice {
        34 => ("(Re-)joining group".to_string(), Yields::Event),
        35 => (format!("Successfully joined group with generation Generation{{generationId={n}, memberId='{m}', protocol='range'}}"), Yields::Event),
        36 => (format!("Member {m} sending LeaveGroup request to coordinator b1:9092 (id: 2147483646 rack: null) due to consumer poll timeout has expired."), Yields::Event),
        _ => ("Found no committed offset for partition orders-3".to_string(), Yields::Known),
    };
    (format!("{head}{msg}  \n"), yields)
}

/// The wrappers real deployments add: Strimzi, kubectl, docker-compose,
/// vendor pipes, and the request log.
fn wrapped_line(
    t: &str,
    g: &str,
    m: &str,
    n: u64,
    b: u64,
    choice: u64,
    ms: u64,
) -> (String, Yields) {
    let p = n % 50;
    let text = match (choice + n) % 5 {
        0 => format!("{} INFO [GroupCoordinator {b}]: Stabilized group {g} generation {n} (__consumer_offsets-{p}) with 1 members (kafka.coordinator.group.GroupCoordinator) [data-plane-kafka-request-handler-3]\n", time(ms, ' ', ',')),
        1 => format!("{}Z {t} INFO [GroupCoordinator {b}]: Member {m} in group {g} has failed, removing it from the group (kafka.coordinator.group.GroupCoordinator) [executor-Heartbeat]\n", time(ms, 'T', '.')),
        2 => format!("kafka-{b}    | [{t}] INFO [GroupCoordinator {b}]: Group {g} with generation {n} is now empty (__consumer_offsets-{p}) (kafka.coordinator.group.GroupCoordinator)\n"),
        3 => format!("{t} | INFO  | [kafka-request-handler-3] | [GroupCoordinator {b}]: Stabilized group {g} generation {n} | kafka.coordinator.GroupCoordinator (Logging.scala:68)\n"),
        _ => format!("[{t}] DEBUG Completed request:{{\"isForwarded\":false,\"requestHeader\":{{\"requestApiKey\":11,\"requestApiVersion\":9,\"correlationId\":{n},\"clientId\":\"consumer-{g}-1\",\"requestApiKeyName\":\"JOIN_GROUP\"}},\"request\":{{\"groupId\":\"{g}\",\"sessionTimeoutMs\":45000,\"rebalanceTimeoutMs\":300000,\"memberId\":\"{m}\",\"groupInstanceId\":null,\"protocolType\":\"consumer\",\"protocols\":[],\"reason\":\"rebalance failed due to MemberIdRequiredException\"}},\"response\":{{\"throttleTimeMs\":0,\"errorCode\":0,\"generationId\":{n},\"protocolType\":\"consumer\",\"protocolName\":\"range\",\"leader\":\"{m}\",\"skipAssignment\":false,\"memberId\":\"{m}\",\"members\":[]}},\"connection\":\"10.0.0.1:9092-10.0.0.9:5{p}-1\",\"totalTimeMs\":3001.2,\"requestQueueTimeMs\":0.1,\"localTimeMs\":0.3,\"remoteTimeMs\":3000.5,\"throttleTimeMs\":0,\"responseQueueTimeMs\":0.1,\"sendTimeMs\":0.2,\"securityProtocol\":\"PLAINTEXT\",\"principal\":\"User:ANONYMOUS\",\"listener\":\"PLAINTEXT\"}} (kafka.request.logger)\n"),
    };
    (text, Yields::Event)
}
