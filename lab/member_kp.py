"""A lab group member (or producer) using kafka-python.

Takes the common member arguments (see common.py); gives JSON-line events on stdout (including
"joined" with the generation and member id, read from kafka-python's own "Successfully joined
group" log record, which its coordinator emits from whichever thread completed the join) and
kafka-python's log with UTC timestamps on stderr.
"""

import logging
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, ConsumerRebalanceListener
from kafka.coordinator.consumer import ConsumerCoordinator
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

from common import Member, parse_args

ASSIGNORS = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor,
             "sticky": StickyPartitionAssignor}


class JoinWatcher(logging.Handler):
    """Turns kafka-python's coordinator log records into lab events."""

    def __init__(self, member):
        super().__init__(logging.INFO)
        self.member = member

    def emit(self, record):
        try:
            if record.msg == "Successfully joined group %s %s":
                gen = record.args[1]
                self.member.emit("joined", generation=gen.generation_id,
                                 member_id=gen.member_id, protocol=gen.protocol)
            elif record.msg.startswith("Leaving consumer group"):
                self.member.emit("leaving", member_id=record.args[1])
        except Exception:  # never let the watcher break the client
            pass


def watch_leader(m):
    """Records the member list the leader assigns partitions to (the group's real membership
    for that generation, which the other members' logs cannot show)."""
    orig = ConsumerCoordinator._perform_assignment

    def perform(self, leader_id, protocol_name, members):
        try:
            m.emit("leader_assign", generation=self._generation.generation_id,
                   leader_id=leader_id, members=sorted(x.member_id for x in members))
        except Exception:  # never let the watcher break the client
            pass
        return orig(self, leader_id, protocol_name, members)

    ConsumerCoordinator._perform_assignment = perform


def setup_logging(m):
    fmt = logging.Formatter("%(asctime)s.%(msecs)03dZ %(levelname)s %(threadName)s %(name)s: "
                            "%(message)s", "%Y-%m-%dT%H:%M:%S")
    fmt.converter = time.gmtime
    err = logging.StreamHandler(sys.stderr)
    err.setFormatter(fmt)
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    root.addHandler(err)
    logging.getLogger("kafka").addHandler(JoinWatcher(m))


def run_consumer(m):
    a = m.args

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            m.emit("revoked", partitions=sorted(f"{p.topic}-{p.partition}" for p in revoked))

        def on_partitions_assigned(self, assigned):
            m.emit("assigned", partitions=sorted(f"{p.topic}-{p.partition}" for p in assigned))

        def on_partitions_lost(self, lost):
            # kafka-python 3.0 calls this instead of on_partitions_revoked when the member was
            # evicted (its default would log it as revoked)
            m.emit("lost", partitions=sorted(f"{p.topic}-{p.partition}" for p in lost))

    kw = dict(bootstrap_servers=a.bootstrap, group_id=a.group, client_id=a.client_id,
              session_timeout_ms=a.session_ms, max_poll_interval_ms=a.max_poll_ms,
              heartbeat_interval_ms=a.heartbeat_ms, auto_offset_reset="earliest",
              enable_auto_commit=True, auto_commit_interval_ms=2000,
              partition_assignment_strategy=[ASSIGNORS[a.assignor]])
    if a.instance_id:
        kw["group_instance_id"] = a.instance_id
    c = KafkaConsumer(**kw)
    c.subscribe([a.topic], listener=Listener())
    m.emit("started", role="consumer", client="kafka-python")
    end = m.deadline()
    consumed = 0
    while not m.stop and time.monotonic() < end:
        m.maybe_stall()
        batch = c.poll(timeout_ms=200)
        consumed += sum(len(v) for v in batch.values())
    m.emit("closing", consumed=consumed)
    c.close()
    m.emit("closed")


def run_producer(m):
    a = m.args
    p = KafkaProducer(bootstrap_servers=a.bootstrap, client_id=a.client_id, linger_ms=5)
    m.emit("started", role="producer", client="kafka-python")
    end = m.deadline()
    n = 0
    while not m.stop and time.monotonic() < end:
        p.send(a.topic, key=str(n % 12).encode(), value=f"msg-{n}".encode())
        n += 1
        time.sleep(a.produce_interval)
    p.flush(5)
    p.close(5)
    m.emit("closed", produced=n)


def main():
    m = Member(parse_args())
    setup_logging(m)
    watch_leader(m)
    if m.args.role == "producer":
        run_producer(m)
    else:
        run_consumer(m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
