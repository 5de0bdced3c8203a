"""A lab group member (or producer) using librdkafka through confluent-kafka.

Takes the common member arguments (see common.py); gives JSON-line events on stdout and
librdkafka's own log on stderr (debug=cgrp: it carries librdkafka's timestamps, so the driver
can read the generations and member ids even while the process was frozen or not polling).
"""

import sys
import time

from confluent_kafka import Consumer, Producer, KafkaException

from common import Member, parse_args


def consumer_conf(a):
    conf = {
        "bootstrap.servers": a.bootstrap,
        "group.id": a.group,
        "client.id": a.client_id,
        "session.timeout.ms": a.session_ms,
        "max.poll.interval.ms": a.max_poll_ms,
        "heartbeat.interval.ms": a.heartbeat_ms,
        "partition.assignment.strategy": a.assignor,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": True,
        "auto.commit.interval.ms": 2000,
        "debug": "cgrp",
        # librdkafka's own stderr logger prints its timestamp on every line
        "log.thread.name": True,
    }
    if a.instance_id:
        conf["group.instance.id"] = a.instance_id
    if a.group_protocol == "consumer":
        # KIP-848: the broker owns session, heartbeat interval and assignor
        for k in ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"):
            del conf[k]
        conf["group.protocol"] = "consumer"
    return conf


def run_consumer(m):
    a = m.args
    c = Consumer(consumer_conf(a))

    def on_assign(consumer, parts):
        m.emit("assigned", member_id=consumer.memberid(),
               partitions=[f"{p.topic}-{p.partition}" for p in parts])

    def on_revoke(consumer, parts):
        m.emit("revoked", member_id=consumer.memberid(),
               partitions=[f"{p.topic}-{p.partition}" for p in parts])

    def on_lost(consumer, parts):
        m.emit("lost", member_id=consumer.memberid(),
               partitions=[f"{p.topic}-{p.partition}" for p in parts])

    c.subscribe([a.topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
    m.emit("started", role="consumer", client="confluent-kafka", group_protocol=a.group_protocol)
    end = m.deadline()
    consumed = 0
    while not m.stop and time.monotonic() < end:
        m.maybe_stall()
        msg = c.poll(0.2)
        if msg is not None and not msg.error():
            consumed += 1
    m.emit("closing", member_id=c.memberid(), consumed=consumed)
    c.close()
    m.emit("closed")


def run_producer(m):
    a = m.args
    p = Producer({"bootstrap.servers": a.bootstrap, "client.id": a.client_id, "linger.ms": 5})
    m.emit("started", role="producer", client="confluent-kafka")
    end = m.deadline()
    n = 0
    while not m.stop and time.monotonic() < end:
        try:
            p.produce(a.topic, key=str(n % 12).encode(), value=f"msg-{n}".encode())
            n += 1
        except KafkaException as e:
            m.emit("produce_error", error=str(e))
        p.poll(0)
        time.sleep(a.produce_interval)
    p.flush(5)
    m.emit("closed", produced=n)


def main():
    m = Member(parse_args())
    if m.args.role == "producer":
        run_producer(m)
    else:
        run_consumer(m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
