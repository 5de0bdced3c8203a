#!/usr/bin/env python3
"""`kgtrace watch` fed through a pipe: RSS over time and how late each
completed rebalance is printed.

Takes: a kgtrace binary and either `--log HOURS` (a generated broker
server.log of group-coordinator lines, 200 classic groups rebalancing in
turn, in GroupCoordinator.scala's 3.x wordings as benches/throughput/
serverlog.rs writes them) replayed at `--speed` times real time, or
`--file PATH` (any capture or log) written as fast as the pipe takes it.
Gives: one line per sample (wall seconds, RSS MiB, records so far) and a
summary: RSS after the first minute (min, max, spread), records, and for
paced logs the worst delay between the line that completes a rebalance
being written and its record arriving.

Usage:
  python3 benches/watch/replay.py --kgtrace target/release/kgtrace --log 1 --speed 10
  python3 benches/watch/replay.py --kgtrace target/release/kgtrace --file dense-256mb.pcap
"""

import argparse
import datetime as dt
import json
import random
import subprocess
import sys
import threading
import time

GROUPS = 200


def member(g, n):
    return f"consumer-billing-{g}-{n % 20}-{n & 0xffffffff:08x}-5c1e-4d0b-9a7e-0b8c2d4e6f10"


def log_lines(hours):
    """(ms, line) of a broker log: every group's classic story in turn."""
    rng = random.Random(12)
    stories = [[0, 0, 0] for _ in range(GROUPS)]  # generation, step, member
    ms = 0
    end = int(hours * 3600 * 1000)
    t0 = dt.datetime(2024, 5, 1)
    post = "(kafka.coordinator.group.GroupCoordinator)"
    while ms < end:
        ms += rng.randrange(1, 150)
        g = rng.randrange(GROUPS)
        s = stories[g]
        t = (t0 + dt.timedelta(milliseconds=ms)).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]
        pre = f"[{t}] INFO [GroupCoordinator 1]:"
        part = g % 50
        gen, step, m = s
        if step == 0:
            m = s[2] = rng.getrandbits(32)
            line = f"{pre} Dynamic member with unknown member id joins group billing-{g} in Stable state. Created a new member id {member(g, m)} and request the member to rejoin with this id. {post}"
        elif step == 1:
            line = f"{pre} Preparing to rebalance group billing-{g} in state PreparingRebalance with old generation {gen} (__consumer_offsets-{part}) (reason: Adding new member {member(g, m)} with group instance id None; client reason: need to re-join with the given member-id: {member(g, m)}) {post}"
        elif step == 2:
            gen = s[0] = gen + 1
            line = f"{pre} Stabilized group billing-{g} generation {gen} (__consumer_offsets-{part}) with {3 + g % 12} members {post}"
        elif step == 3:
            line = f"{pre} Assignment received from leader {member(g, m)} for group billing-{g} for generation {gen}. The group has {3 + g % 12} members, 0 of which are static. {post}"
        elif step == 4:
            line = f"{pre} Member {member(g, m)} in group billing-{g} has failed, removing it from the group {post}"
        else:
            line = f"{pre} Preparing to rebalance group billing-{g} in state PreparingRebalance with old generation {gen} (__consumer_offsets-{part}) (reason: removing member {member(g, m)} on heartbeat expiration) {post}"
        s[1] = 0 if (step == 3 and gen % 2 == 0) else (2 if step == 5 else step + 1)
        yield ms, line + "\n"


def rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kgtrace", required=True)
    ap.add_argument("--log", type=float, help="hours of generated log")
    ap.add_argument("--speed", type=float, default=10.0)
    ap.add_argument("--file")
    ap.add_argument("--every", type=float, default=5.0, help="seconds between samples")
    a = ap.parse_args()
    proc = subprocess.Popen(
        [a.kgtrace, "watch", "--format", "ndjson", "-q", "-"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
    )
    start = time.monotonic()
    epoch = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
    records = [0]
    delays = []
    summary = [None]

    def reader():
        for raw in proc.stdout:
            now = time.monotonic()
            v = json.loads(raw)
            if v.get("type") == "completed":
                records[0] += 1
                if a.log and v.get("completed_at"):
                    done = dt.datetime.fromisoformat(v["completed_at"].replace("Z", "+00:00"))
                    due = start + (done - epoch).total_seconds() / a.speed
                    delays.append((now - due, v["group"], v["started_at"], v["completed_at"], v["status"]))
            elif v.get("type") == "summary":
                summary[0] = v

    def writer():
        try:
            if a.file:
                with open(a.file, "rb") as f:
                    while chunk := f.read(1 << 16):
                        proc.stdin.write(chunk)
            else:
                for ms, line in log_lines(a.log):
                    due = start + ms / 1000 / a.speed
                    wait = due - time.monotonic()
                    if wait > 0:
                        time.sleep(wait)
                    proc.stdin.write(line.encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass

    threads = [threading.Thread(target=reader), threading.Thread(target=writer)]
    for t in threads:
        t.start()
    samples = []
    while proc.poll() is None:
        r = rss_mib(proc.pid)
        if r is not None:
            t = time.monotonic() - start
            samples.append((t, r))
            print(f"{t:7.1f} s  RSS {r:7.1f} MiB  records {records[0]}", flush=True)
        time.sleep(a.every)
    for t in threads:
        t.join()
    later = [r for t, r in samples if t >= 60]
    print("summary line:", json.dumps(summary[0]))
    if later:
        lo, hi = min(later), max(later)
        mid = (lo + hi) / 2
        print(f"RSS after the first minute: {lo:.1f} to {hi:.1f} MiB (±{(hi - lo) / 2 / mid * 100:.1f} % around {mid:.1f})")
    print(f"peak RSS sampled: {max((r for _, r in samples), default=0):.1f} MiB over {len(samples)} samples")
    if delays:
        delays.sort()
        late = [d for d in delays if d[0] > 1.0]
        print(f"completed records: {len(delays)}; print delay after the completing line was written: median {delays[len(delays) // 2][0] * 1000:.0f} ms, worst {delays[-1][0] * 1000:.0f} ms, {len(late)} later than 1 s (log times have 1 ms resolution)")
        for d in late[-5:]:
            print(f"  late: {d[0]:.1f} s group {d[1]} started {d[2]} completed {d[3]} {d[4]}")
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
