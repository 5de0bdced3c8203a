"""Writes fixtures/README.md: one entry per lab fixture, from its truth file and tshark.

Takes fixtures/lab/*.truth.json and the captures beside them; gives the markdown describing how
each capture was made (tools, versions, commands, scenario, client, link type, size), what
Debian's tshark sees in it (request counts per group API with versions, group ids, error codes
in answers, malformed frames) and the rebalances of its truth.

    python3 lab/summarize.py        # (needs tshark; does not need the broker or KGTRACE_LAB)
"""

import collections
import glob
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
FIX = os.path.join(REPO, "fixtures")
API = {8: "OffsetCommit", 9: "OffsetFetch", 10: "FindCoordinator", 11: "JoinGroup",
       12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup"}


def tshark_rows(cap):
    cmd = ["tshark", "-n", "-r", cap, "-Y", "kafka", "-T", "fields", "-E", "occurrence=f",
           "-e", "kafka.request_key", "-e", "kafka.response_key", "-e", "kafka.api_version",
           "-e", "kafka.consumer_group", "-e", "kafka.error", "-e", "_ws.malformed"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return [line.split("\t") for line in r.stdout.splitlines()]


def tshark_summary(cap):
    req = collections.Counter()
    versions = collections.defaultdict(set)
    errors = collections.Counter()
    groups = set()
    malformed = 0
    rows = tshark_rows(cap)
    for row in rows:
        row += [""] * (6 - len(row))
        rk, sk, ver, grp, err, bad = row[:6]
        if rk:
            req[int(rk)] += 1
            if ver:
                versions[int(rk)].add(int(ver))
        if sk and err and err != "0" and int(sk) in API:
            errors[(API[int(sk)], int(err))] += 1
        for g in grp.split(","):
            if g.strip():
                # tshark 4.0 misdecodes some versions into unprintable "group ids"
                groups.add(g.strip() if g.isprintable() else repr(g) + " (misdecoded)")
        if bad:
            malformed += 1
    return rows, req, versions, errors, groups, malformed


def fmt_requests(req, versions):
    parts = []
    for k in (11, 14, 12, 13, 8, 9, 10):
        if req.get(k):
            vs = "/".join(f"v{v}" for v in sorted(versions[k]))
            parts.append(f"{API[k]} {req[k]} ({vs})")
    return ", ".join(parts) or "none"


def entry(truth_path):
    t = json.load(open(truth_path))
    name = t["scenario"]
    cap = t["capture"]
    cap_path = os.path.join(FIX, "lab", cap["file"])
    rows, req, versions, errors, groups, malformed = tshark_summary(cap_path)
    win = t["capture_window"]
    lines = [f"### {name}", "",
             f"- files: `lab/{cap['file']}` ({os.path.getsize(cap_path)} bytes, {cap['format']}, "
             f"link type {cap['link_type']}), `lab/{name}.truth.json`, `lab/{name}.tshark.tsv`",
             f"- scenario: {t['scenario_doc']}",
             f"- client: {t['client']}; broker: {t['broker']}",
             f"- capture: {cap['tool']}: `{cap['command']}` from {win['start']} to {win['stop']}",
             f"- made by: `KGTRACE_LAB=1 python3 lab/lab.py {name}`",
             f"- tshark 4.0.17 (`-Y kafka`, {len(rows)} Kafka PDUs): requests {fmt_requests(req, versions)}; "
             f"groups {', '.join(sorted(groups)) or 'none'}; "
             f"error codes in answers: "
             + (", ".join(f"{a} {e}×{n}" for (a, e), n in sorted(errors.items())) or "none")
             + f"; {malformed} PDUs marked malformed",
             "- rebalances in the truth:"]
    for r in t["rebalances"]:
        where = "" if r["in_capture"] else " (before/after the capture)"
        also = ", ".join(f"`{a['trigger']}` {a['client_id']}" for a in r.get("also", []))
        lines.append(f"  - {r['group']} generation {r['from_generation']} → {r['to_generation']}: "
                     f"`{r['trigger']}` {r.get('client_id') or ''}"
                     f"{' (expected)' if r.get('expected') else ''}"
                     f"{'; also ' + also if also else ''}{where}")
    for s in t.get("same_generation_rejoins", []):
        lines.append(f"  - not a rebalance: {s['group']} generation {s['generation']} answered "
                     f"again to {', '.join(j['client_id'] for j in s['joins_logged'])}"
                     f"{' after ' + s['action'] if s.get('action') else ''}")
    for n in t.get("notes", []):
        lines.append(f"- note: {n}")
    lines.append("")
    return "\n".join(lines)


KAFKA_HEADER = """# Test fixtures

## kafka/ — Apache Kafka itself, from kgtrace's lab

Real Apache Kafka brokers (3.9.2: the Scala GroupCoordinator; 4.4.0: the Java group
coordinator; KRaft, started from Maven Central jars by `lab/lab.py`, see `lab/README.md`) on
127.0.0.1, with Apache Kafka's Java consumer (`java39`/`java4`) or librdkafka (`ck`) as members.
Names read `ak39_*` / `ak4_*` (broker), then the client, then the story. Each has the capture
`<name>.pcap` (`tcpdump -i lo -s 0`, under 1 MB; three nodes: ports 9092-9094), the brokers'
`<name>.server.log` (three nodes: `<name>.brokerN.server.log`) cut to the run, in Kafka's
default layout, `<name>.truth.json` (as below, plus `broker_config`, `broker_logs` and
`records`: what each member consumed and committed, and every record consumed twice) and
`<name>.tshark.tsv`. `offsets.topic.num.partitions=3` (`kgtrace coordinator --partitions 3`).
tests/lab_truth.rs checks every one from its capture alone, its server.log alone and both
together (one record per rebalance, evidence from both); differences are listed, with Kafka
source, in `AK_KNOWN_DIFFERENCES` there.

"""

KAFKA_LINES = {
    "ak39_ck_fifty": "3.9, librdkafka: 50 members started at once; one rebalance to generation 1 "
                     "with all 50 (initial delay). Capture, log, both: match.",
    "ak39_ck_join_delay": "3.9, librdkafka: four members join 1 s apart into a new group; "
                          "group.initial.rebalance.delay.ms (3 s, extended per join) makes it "
                          "one generation 1 with all four. Capture, log, both: match.",
    "ak39_java_clean_leave": "3.9, Java: g1-c2 closes (LeaveGroup with reason); "
                             "coordinator and request loggers at DEBUG: also "
                             "`kafka-request.log`. Capture, log, both: match.",
    "ak39_java_session_timeout": "3.9, Java: g1-c2 SIGSTOPped past its 6 s session, then "
                                 "resumed (new member id). Capture, log, both: match.",
    "ak39_java_static_restart": "3.9, Java, static members: g1-c2 closed and restarted with "
                                "its group.instance.id within the session; the broker swaps "
                                "the member id, no rebalance. Log alone: one known extra "
                                "round.",
    "ak39_java4_k848_refused": "3.9 broker, Java 4.4 client with group.protocol=consumer: the "
                               "broker lists ConsumerGroupHeartbeat in ApiVersions but answers "
                               "it UNSUPPORTED_VERSION (no consumer protocol on 3.9 by default); "
                               "g1-c1 is restarted classic and joins. Capture, log, both: match; "
                               "the refusal is said in words.",
    "ak4_kp_clean_leave": "4.4, kafka-python: g1-c2 closes (LeaveGroup v5). Capture, log, both: "
                          "match.",
    "ak39_kjs_killed": "3.9, KafkaJS: g1-c2 SIGKILLed; evicted after its session. Capture, "
                       "log, both: match.",
    "ak4_java_static_expired": "4.4, Java, static members: g1-c2 SIGKILLed, restarted with its "
                               "group.instance.id only after its 8 s session expired: evicted "
                               "(1->2), then joins as a new member (2->3). Capture, log, both: "
                               "match.",
    "ak39_ck_midstream": "3.9, librdkafka: the capture starts after both groups are stable "
                         "(log excerpt too); g1-c3 joins, g1-c1 leaves. Capture, log, both: "
                         "match.",
    "ak4_ck_killed": "4.4, librdkafka: g1-c2 SIGKILLed; evicted after its session. Capture, "
                     "log, both: match.",
    "ak4_java_cooperative_sticky": "4.4, Java, cooperative-sticky: g1-c3 joins (two rounds, "
                                   "KIP-429), later g1-c1 leaves (one round). Log and both: "
                                   "the second round named subscription_changed (known).",
    "ak4_java_failover": "4.4, three brokers, Java: the broker coordinating g1 is SIGKILLed; "
                         "NOT_COORDINATOR, FindCoordinator, 'Loaded classic group g1' on the "
                         "new one; no rebalance. Capture and both: one known extra "
                         "coordinator_changed round.",
    "ak4_java_max_poll": "4.4, Java: g1-c2 stops polling 16 s (max.poll.interval.ms 10 s): "
                         "LeaveGroup 'consumer poll timeout has expired', rejoin (its JoinGroup "
                         "reason repeats its leave's text). Capture, log, both: match.",
    "ak4_java_processed_twice": "4.4, Java, commits every 30 s: g1-c2 halts without close "
                                "after consuming 22 records; the next owners read all 22 again "
                                "(truth records.consumed_more_than_once). Capture, log, both: "
                                "match.",
    "ak4_java_session_timeout": "4.4, Java: as ak39_java_session_timeout, on the Java "
                                "coordinator (README's first example). Capture, log, both: "
                                "match.",
    "ak4_java_session_timeout_s128": "4.4, Java: the same story captured with `-s 128` (snap "
                                     "length): for partial-evidence work; only its server.log "
                                     "is checked against the truth.",
    "ak4_java_session_timeout_s200": "4.4, Java: the same story captured with `-s 200`; only "
                                     "its server.log is checked against the truth.",
    "ak4_java_upgrade": "4.4, Java: classic -> consumer online upgrade by a rolling restart "
                        "(each member closed and restarted with group.protocol=consumer); "
                        "'Converted the classic group to a consumer group'. kgtrace keeps one "
                        "protocol per group: many known differences.",
    "ak4_k848_join_leave": "4.4, Java, KIP-848 (group.protocol=consumer): two join, a third "
                           "joins, one leaves; epochs 2-5. Capture, log, both: match.",
    "ak4_ck_k848_join_leave": "4.4, librdkafka 2.16 with group.protocol=consumer (KIP-848): "
                              "two join, a third joins, one leaves (truth from librdkafka's "
                              "'ConsumerGroupHeartbeat response ... with epoch N' lines). Log, both: "
                              "match; capture: 2->3 unknown (known: epoch 3 assigned late).",
    "ak4_k848_slow_revoke": "4.4, Java, KIP-848: g1-c1 takes 5 s in onPartitionsRevoked when "
                            "g1-c3 joins; it reaches epoch 4 only after revoking. Capture, log: "
                            "match; both: the merged 3->4 names g1-c1 (known merge fault).",
    "ak4_java_killed": "4.4, Java: g1-c2 SIGKILLed (no LeaveGroup; the kernel closes its "
                       "connections); evicted after its 6 s session. Capture, log, both: match.",
    "ak4_k848_killed": "4.4, Java, KIP-848: g1-c2 SIGKILLed and fenced after its session. "
                       "Capture: the fence named unknown (known).",
    "ak4_k848_session_timeout": "4.4, Java, KIP-848: g1-c2 SIGSTOPped, fenced, resumed. "
                                "Capture: the fence named unknown; log: epoch 3 (never "
                                "assigned) split from 2->4 (known).",
}


def kafka_section():
    names = sorted(os.path.basename(p)[:-len(".truth.json")]
                   for p in glob.glob(os.path.join(FIX, "kafka", "*.truth.json")))
    lines = [f"- `{n}`: {KAFKA_LINES.get(n, '(undocumented)')}" for n in names]
    return KAFKA_HEADER + "\n".join(lines) + "\n\n"


HEADER = """## lab/ — tansu 0.6.0, a second broker implementation

Each fixture is a capture of real clients against a real tansu 0.6.0 broker on 127.0.0.1:9092,
made by `lab/lab.py` (see `lab/README.md`). tansu speaks the Kafka protocol but its group
coordinator is not Apache Kafka's (known deviations: it parks joins about 3 s, answers one
generation's members seconds apart, skips and repeats generation numbers, tells single
members REBALANCE_IN_PROGRESS, keeps old member ids on static restarts, starts at generation 0,
has no KIP-848); these fixtures test that kgtrace survives such a broker. Each has:

- `<name>.pcap` / `<name>.pcapng`: the capture (`tcp port 9092` only, each under 1 MB),
- `<name>.truth.json`: the ground truth written from what the lab did (driver actions, UTC) and
  what the clients logged (generations, member ids, their own assignment callbacks: the
  `assignment_callbacks` and `partition_stops` the stop tests check), never from the capture,
- `<name>.tshark.tsv`: Debian tshark 4.0.17's field decode of the group APIs (API keys 8–14:
  `tshark -n -r FILE -Y 'kafka.request_key in {8..14} || kafka.response_key in {8..14}' -T fields
  -E header=y -E occurrence=a -E aggregator=, -e frame.number -e frame.time_epoch -e tcp.srcport
  -e tcp.dstport -e kafka.request_key -e kafka.response_key -e kafka.api_version
  -e kafka.correlation_id -e kafka.request_frame -e kafka.client_id -e kafka.consumer_group
  -e kafka.consumer_group_instance -e kafka.member_id -e kafka.generation_id
  -e kafka.group_leader_id -e kafka.protocol_name -e kafka.session_timeout
  -e kafka.rebalance_timeout -e kafka.error -e _ws.malformed`). tshark 4.0 misdecodes several
  versions these clients send (it flags them `_ws.malformed`, and then often cannot pair the
  answer): agreeing with it is necessary where it decodes, never sufficient.

Every run has two groups side by side (`g1`, acted on; `g2`, two steady background members)
and a producer `p1` writing one message every 0.5 s to topic `lab` (12 partitions). Member
client ids read `g1-c2` etc.; static members' instance ids `g1-static-N`. Regenerate this file
with `python3 lab/summarize.py`.

"""


def main():
    truths = sorted(glob.glob(os.path.join(FIX, "lab", "*.truth.json")))
    with open(os.path.join(FIX, "README.md"), "w") as f:
        f.write(kafka_section())
        f.write(HEADER)
        for p in truths:
            f.write(entry(p) + "\n")
    print(f"wrote fixtures/README.md with {len(truths)} tansu fixtures and the Apache Kafka ones")


if __name__ == "__main__":
    main()
