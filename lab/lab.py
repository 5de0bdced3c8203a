"""The lab's runner: runs scenarios against a real tansu broker and writes the fixtures.

Takes scenario names (or `all`, or `list`); gives, per scenario, fixtures/lab/<name>.pcap or
.pcapng (the capture), <name>.truth.json (truth.py) and <name>.tshark.tsv (tshark's decode of
the group APIs). Opt-in: refuses to run unless KGTRACE_LAB=1. Loopback only; bounded.

    KGTRACE_LAB=1 python3 lab/lab.py ck_session_timeout kp_clean_leave
    KGTRACE_LAB=1 python3 lab/lab.py all
"""

import datetime
import json
import os
import shutil
import subprocess
import sys
import time

import labkit
import truth
from notes import NOTES
from scenarios import SCENARIOS

REPO = os.path.dirname(labkit.HERE)
# KGTRACE_LAB_FIXTURES lets a trial rerun write elsewhere than the committed fixtures
FIXTURES = os.environ.get("KGTRACE_LAB_FIXTURES", os.path.join(REPO, "fixtures", "lab"))
# Apache Kafka fixtures (scenarios with a broker spec) go to fixtures/kafka
AK_FIXTURES = os.environ.get("KGTRACE_LAB_FIXTURES", os.path.join(REPO, "fixtures", "kafka"))
RUNS = os.environ.get("KGTRACE_LAB_RUNS", "/tmp/kgtrace-lab")
# OffsetCommit 8, OffsetFetch 9, FindCoordinator 10, JoinGroup 11, Heartbeat 12,
# LeaveGroup 13, SyncGroup 14 (tshark 4.0 wants a range or commas in a set)
GROUP_API_KEYS = "8..14"
TSV_FIELDS = ["frame.number", "frame.time_epoch", "tcp.srcport", "tcp.dstport",
              "kafka.request_key", "kafka.response_key", "kafka.api_version",
              "kafka.correlation_id", "kafka.request_frame", "kafka.client_id",
              "kafka.consumer_group", "kafka.consumer_group_instance", "kafka.member_id",
              "kafka.generation_id", "kafka.group_leader_id", "kafka.protocol_name",
              "kafka.session_timeout", "kafka.rebalance_timeout", "kafka.error",
              "_ws.malformed"]


def first_line(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        return (r.stdout or r.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "unknown"


def tcpdump_version():
    r = subprocess.run(["tcpdump", "--version"], capture_output=True, text=True, timeout=20)
    lines = (r.stdout or r.stderr).strip().splitlines()
    return ", ".join(lines[:2]) if lines else "unknown"


def scenario(name):
    """(function, client kind, capture kind, Apache Kafka spec or None) of a scenario."""
    s = SCENARIOS[name]
    return (*s, None) if len(s) == 3 else s


def fixtures_dir(name):
    return AK_FIXTURES if scenario(name)[3] else FIXTURES


def client_desc(kind):
    if kind in labkit.JAVA_LINES:
        import akbroker  # noqa: PLC0415
        line = labkit.JAVA_LINES[kind]
        return (f"Apache Kafka Java consumer kafka-clients {akbroker.version(line)} "
                f"(java {first_line(['java', '-version'])})")
    if kind == "ck":
        import confluent_kafka
        return (f"confluent-kafka {confluent_kafka.__version__} "
                f"(librdkafka {confluent_kafka.libversion()[0]})")
    if kind == "kp":
        import kafka
        return f"kafka-python {kafka.__version__}"
    with open(os.path.join(labkit.HERE, "node_modules", "kafkajs", "package.json")) as f:
        return f"kafkajs {json.load(f)['version']} (node {first_line(['node', '--version'])})"


def link_type(path):
    enc = first_line(["capinfos", "-E", "-T", "-r", path])
    out = subprocess.run(["capinfos", "-E", path], capture_output=True, text=True, timeout=20)
    for line in out.stdout.splitlines():
        if "encapsulation" in line.lower():
            enc = line.split(":", 1)[1].strip()
    return {"Ethernet": "EN10MB", "Linux cooked-mode capture v2": "LINUX_SLL2",
            "Linux cooked-mode capture v1": "LINUX_SLL"}.get(enc, enc)


def write_tsv(cap, out, nodes=1):
    flt = f"kafka.request_key in {{{GROUP_API_KEYS}}} || kafka.response_key in {{{GROUP_API_KEYS}}}"
    cmd = ["tshark", "-n", "-r", cap, "-Y", flt, "-T", "fields", "-E", "header=y",
           "-E", "occurrence=a", "-E", "aggregator=,"]
    # tshark dissects Kafka on 9092 only: name the other nodes' client ports
    for port in range(labkit.PORT + 1, labkit.PORT + nodes):
        cmd += ["-d", f"tcp.port=={port},kafka"]
    for f in TSV_FIELDS:
        cmd += ["-e", f]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    with open(out, "w") as f:
        f.write(r.stdout)


def run_one(name):
    fn, kind, cap_kind, kafka = scenario(name)
    run_dir = os.path.join(RUNS, name)
    print(f"== {name} ({kind}, capture {cap_kind})", flush=True)
    lab = labkit.Lab(name, run_dir, kind, cap_kind, kafka)
    t0 = time.monotonic()
    try:
        fn(lab)
    finally:
        lab.shutdown()
    print(f"   ran {time.monotonic() - t0:.1f} s", flush=True)
    meta_path = os.path.join(run_dir, "meta.json")
    with open(meta_path) as f:
        meta = json.load(f)
    meta["run_seconds"] = round(time.monotonic() - t0, 1)
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    out = fixtures_dir(name)
    os.makedirs(out, exist_ok=True)
    shutil.copyfile(lab.cap_file, os.path.join(out, os.path.basename(lab.cap_file)))
    finish(name)


def broker_log_excerpts(name, run_dir, meta, out):
    """Each Apache Kafka node's server.log (and kafka-request.log when it has lines), cut to
    the lines written while the capture ran (the run itself,
    not the broker's start-up). Gives the file names written."""
    acts = labkit.read_events(os.path.join(run_dir, "actions.jsonl"))
    start = next((a["ts"] for a in acts if a["action"] == "capture_start"), None)
    stop = next((a["ts"] for a in acts if a["action"] == "capture_stop"), None)
    if not start or not stop:
        return []
    lo = datetime.datetime.strptime(start, "%Y-%m-%dT%H:%M:%S.%fZ").strftime(
        "[%Y-%m-%d %H:%M:%S,%f")[:-3]
    hi = datetime.datetime.strptime(stop, "%Y-%m-%dT%H:%M:%S.%fZ").strftime(
        "[%Y-%m-%d %H:%M:%S,%f")[:-3] + "~"
    nodes = meta.get("broker_config", {}).get("nodes", 1)
    written = []
    for n in range(1, nodes + 1):
        d = os.path.join(run_dir, "broker" if nodes == 1 else f"broker{n}")
        for log in ("server.log", "kafka-request.log"):
            keep, ts = [], None
            try:
                lines = open(os.path.join(d, log), encoding="utf-8", errors="replace")
            except FileNotFoundError:
                continue
            for line in lines:
                if line.startswith("[") and len(line) > 24:
                    ts = line[:24]
                if ts is not None and lo <= ts <= hi:
                    keep.append(line)
            if not keep:
                continue
            fname = f"{name}.{log}" if nodes == 1 else f"{name}.broker{n}.{log}"
            with open(os.path.join(out, fname), "w", encoding="utf-8") as f:
                f.writelines(keep)
            written.append(fname)
    return written


def finish(name):
    """Writes the truth and the tshark decode of one kept run (no broker needed)."""
    fn, kind, cap_kind, kafka = scenario(name)
    FIXTURES = fixtures_dir(name)  # noqa: N806 (the same role as the module constant)
    run_dir = os.path.join(RUNS, name)
    with open(os.path.join(run_dir, "meta.json")) as f:
        meta = json.load(f)
    ext = ".pcapng" if cap_kind == "pcapng" else ".pcap"
    dest = os.path.join(FIXTURES, name + ext)
    tool = first_line(["dumpcap", "--version"]) if cap_kind == "pcapng" else \
        tcpdump_version()
    cap = {"file": name + ext, "format": ext[1:], "link_type": link_type(dest), "tool": tool,
           "command": meta.get("capture_cmd"), "bytes": os.path.getsize(dest)}
    broker = f"{meta.get('broker')} ({meta.get('broker_binary')})"
    t = truth.build(run_dir, client_desc(kind), cap, broker, NOTES.get(name, ()))
    t["scenario"] = name
    if kafka:
        t["broker_config"] = meta.get("broker_config")
        t["broker_logs"] = broker_log_excerpts(name, run_dir, meta, FIXTURES)
        t["records"] = records(run_dir)
    t["scenario_doc"] = " ".join((fn.__doc__ or "").split())
    with open(os.path.join(FIXTURES, name + ".truth.json"), "w") as f:
        json.dump(t, f, indent=1)
        f.write("\n")
    nodes = (meta.get("broker_config") or {}).get("nodes", 1)
    write_tsv(dest, os.path.join(FIXTURES, name + ".tshark.tsv"), nodes)
    for r in t["rebalances"]:
        print(f"   {r['group']} gen {r['from_generation']}->{r['to_generation']} "
              f"{r['trigger']} {r.get('client_id')} {r['members_after']}"
              f"{'' if r['in_capture'] else ' (outside capture)'}", flush=True)
    print(f"   capture {cap['bytes']} bytes {cap['link_type']}", flush=True)


def records(run_dir):
    """Per member: every (partition, offset) it logged as consumed, and its commits; plus the
    records consumed more than once across the group (the 'processed twice' count)."""
    per, seen = {}, {}
    for f in sorted(os.listdir(run_dir)):
        if not f.endswith(".out"):
            continue
        cid = f[:-4]
        evs = labkit.read_events(os.path.join(run_dir, f))
        consumed = [(e["partition"], e["offset"]) for e in evs if e["event"] == "consumed"]
        if not consumed:
            continue
        grp = evs[0].get("group")
        per[cid] = {"group": grp, "consumed": len(consumed),
                    "commits": [{k: e.get(k) for k in ("ts", "why", "offsets", "result",
                                                        "generation", "member_id")}
                                for e in evs if e["event"] == "commit"]}
        for p, o in consumed:
            seen.setdefault((grp, p, o), []).append(cid)
    dups = [{"group": g, "partition": p, "offset": o, "consumed_by": c}
            for (g, p, o), c in sorted(seen.items()) if len(c) > 1]
    return {"members": per, "consumed_more_than_once": dups}


def main(argv):
    if os.environ.get("KGTRACE_LAB") != "1":
        print("the lab is opt-in: set KGTRACE_LAB=1 (it starts a broker on 127.0.0.1:9092)")
        return 2
    if not argv or argv[0] == "list":
        print("\n".join(SCENARIOS))
        return 0
    rebuild = argv[0] == "rebuild"  # truth + tsv again from kept runs, no broker
    if rebuild:
        argv = argv[1:]
    names = list(SCENARIOS) if argv == ["all"] else argv
    for n in names:
        if n not in SCENARIOS:
            print(f"unknown scenario {n}")
            return 2
    for n in names:
        if rebuild:
            finish(n)
        else:
            run_one(n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
