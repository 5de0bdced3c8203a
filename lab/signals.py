"""Rebalance-related signals from the lab members' own logs (not the capture).

Takes a member's client kind and its stderr log; gives a list of {ts, client_id, kind, text}
with kind one of sync_failed (SyncGroup answered with an error, usually REBALANCE_IN_PROGRESS),
heartbeat_rebalancing (Heartbeat answered REBALANCE_IN_PROGRESS), unknown_member (the
coordinator no longer knows the member), poll_timeout (the client says max.poll.interval.ms
expired), session_lost (the client gave up on its session itself). truth.py uses them to name
rebalances no driver action explains, and keeps them as evidence.
"""

import re

from truth_time import iso_from_epoch

# librdkafka: "%7|<epoch>|FAC|name| [thrd:..]: text"
CK_LINE = re.compile(r"^%\d\|(\d+\.\d+)\|([A-Z_]+)\|[^|]*\|\s*\[thrd:[^\]]*\]: (.*)$")
CK_RULES = [
    ("sync_failed", re.compile(r"SyncGroup response: (?!Success)")),
    ("heartbeat_rebalancing", re.compile(r"heartbeat error response .*rebalance in progress")),
    ("unknown_member", re.compile(r"heartbeat error response .*Unknown member")),
    ("poll_timeout", re.compile(r"[Aa]pplication maximum poll interval .* exceeded")),
    ("session_lost", re.compile(r"^Consumer group session timed out")),
]
# KafkaJS (our logCreator): "<iso> LEVEL [namespace] message {json}"
KJS_LINE = re.compile(r"^(\S+Z) (ERROR|WARN|INFO) \[(\w+)\] (.*)$")
KJS_RULES = [
    ("sync_failed", re.compile(r"^Response SyncGroup.*\"error\"")),
    ("heartbeat_rebalancing", re.compile(r"^Response Heartbeat.*group is rebalancing")),
    ("unknown_member", re.compile(r"^Response Heartbeat.*not aware of this member")),
]
# kafka-python (member_kp.py's format): "<iso> LEVEL thread logger: message"
KP_LINE = re.compile(r"^(\S+Z) (ERROR|WARNING|INFO) \S+ [\w.]+: (.*)$")
KP_RULES = [
    ("sync_failed", re.compile(r"^SyncGroup for group \S+ failed")),
    ("heartbeat_rebalancing", re.compile(r"^Group \S+ is rebalancing; rejoining")),
    ("unknown_member", re.compile(r"local member_id was not recognized")),
    ("poll_timeout", re.compile(r"^Consumer poll timeout has expired")),
    ("session_lost", re.compile(r"^Heartbeat session expired")),
]
# Apache Kafka's Java consumer (lab/kafka-*/client-log4j*: JVM in UTC):
# "[2026-12-03 02:35:00,123] LEVEL message (logger)" (log4j 1) or "[2026-12-03T02:35:00,123] ..."
JAVA_LINE = re.compile(r"^\[(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d),(\d{3})\] (\w+) (.*) \([\w.$]+\)$")
JAVA_RULES = [
    ("sync_failed", re.compile(r"SyncGroup failed|Attempt to join group failed due to")),
    ("heartbeat_rebalancing", re.compile(r"[Rr]equest joining group due to: group is already "
                                         r"rebalancing|Heartbeat failed .*rebalance")),
    ("unknown_member", re.compile(r"UNKNOWN_MEMBER_ID|unknown member id|FENCED_MEMBER_EPOCH|"
                                  r"encountered UNKNOWN_MEMBER_ID")),
    ("poll_timeout", re.compile(r"consumer poll timeout has expired")),
    ("session_lost", re.compile(r"session timed out without receiving a heartbeat")),
]


def parse_line(kind, line):
    """(ts, text) of one log line of a client kind, or None."""
    if kind == "ck":
        m = CK_LINE.match(line)
        return (iso_from_epoch(m.group(1)), m.group(3)) if m else None
    if kind == "kjs":
        m = KJS_LINE.match(line)
        return (m.group(1), m.group(4)) if m and m.group(2) != "INFO" else None
    if kind.startswith("java"):
        m = JAVA_LINE.match(line)
        return (f"{m.group(1)}T{m.group(2)}.{m.group(3)}Z", m.group(5)) if m else None
    m = KP_LINE.match(line)
    return (m.group(1), m.group(3)) if m else None


def signals(kind, err_path, client_id):
    rules = {"ck": CK_RULES, "kjs": KJS_RULES, "kp": KP_RULES}.get(kind, JAVA_RULES)
    out = []
    try:
        lines = open(err_path, encoding="utf-8", errors="replace").read().splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        p = parse_line(kind, line)
        if not p:
            continue
        for name, rx in rules:
            if rx.search(p[1]):
                # KafkaJS lines carry JSON after the message: keep its error text only
                err = re.search(r'"error":"([^"]*)"', p[1])
                text = p[1].split(" {")[0] + (f": {err.group(1)}" if err else "")
                out.append({"ts": p[0], "client_id": client_id, "kind": name,
                            "text": text[:200]})
                break
    return out
