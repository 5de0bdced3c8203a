"""The lab's runner: runs scenarios against a real tansu broker and writes the fixtures.

Takes scenario names (or `all`, or `list`); gives, per scenario, fixtures/lab/<name>.pcap or
.pcapng (the capture), <name>.truth.json (truth.py) and <name>.tshark.tsv (tshark's decode of
the group APIs). Opt-in: refuses to run unless KGTRACE_LAB=1. Loopback only; bounded.

    KGTRACE_LAB=1 python3 lab/lab.py ck_session_timeout kp_clean_leave
    KGTRACE_LAB=1 python3 lab/lab.py all
"""

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


def client_desc(kind):
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


def write_tsv(cap, out):
    flt = f"kafka.request_key in {{{GROUP_API_KEYS}}} || kafka.response_key in {{{GROUP_API_KEYS}}}"
    cmd = ["tshark", "-n", "-r", cap, "-Y", flt, "-T", "fields", "-E", "header=y",
           "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in TSV_FIELDS:
        cmd += ["-e", f]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    with open(out, "w") as f:
        f.write(r.stdout)


def run_one(name):
    fn, kind, cap_kind = SCENARIOS[name]
    run_dir = os.path.join(RUNS, name)
    print(f"== {name} ({kind}, capture {cap_kind})", flush=True)
    lab = labkit.Lab(name, run_dir, kind, cap_kind)
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
    os.makedirs(FIXTURES, exist_ok=True)
    shutil.copyfile(lab.cap_file, os.path.join(FIXTURES, os.path.basename(lab.cap_file)))
    finish(name)


def finish(name):
    """Writes the truth and the tshark decode of one kept run (no broker needed)."""
    fn, kind, cap_kind = SCENARIOS[name]
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
    t["scenario_doc"] = " ".join((fn.__doc__ or "").split())
    with open(os.path.join(FIXTURES, name + ".truth.json"), "w") as f:
        json.dump(t, f, indent=1)
        f.write("\n")
    write_tsv(dest, os.path.join(FIXTURES, name + ".tshark.tsv"))
    for r in t["rebalances"]:
        print(f"   {r['group']} gen {r['from_generation']}->{r['to_generation']} "
              f"{r['trigger']} {r.get('client_id')} {r['members_after']}"
              f"{'' if r['in_capture'] else ' (outside capture)'}", flush=True)
    print(f"   capture {cap['bytes']} bytes {cap['link_type']}", flush=True)


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
