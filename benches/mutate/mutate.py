#!/usr/bin/env python3
"""Mutated captures and logs read by a kgtrace binary: does anything panic?

Takes: a kgtrace binary (build it in debug, `cargo build`, so integer
overflow panics instead of wrapping), a seed, a number of rounds and the
captures and logs to start from (files or directories, walked in name
order: `.pcap`, `.pcapng`, `.log` and `.txt` files of more than 200 bytes
and at most `--max-bytes`; others are left out). Each round copies one
input and damages it:
- a capture is overwritten in 1 to 200 places past its first 100 bytes,
  with a random byte or with the largest, smallest or -1 integer (4 or 8
  bytes, big-endian, as Kafka writes them);
- a log has 1 to 60 lines picked to change: a number in it replaced by an
  extreme one, a byte replaced, the line cut short, or another line copied
  over it (a picked line with no number, or empty, may stay as it was).
Each view must first read an undamaged input with exit code 0 or 1 (so a
wrong invocation, which also exits 2, cannot pass as a clean run).
Gives: one line per failing run (a panic, a run past `--timeout`, or an
exit code other than 0, 1 or 2) with the damaged input kept for replay,
and a count of runs and failures. Exit code 1 when any run failed or there
was nothing to start from (the scratch directory is removed when no run
failed).

Usage:
  cargo build
  python3 benches/mutate/mutate.py --kgtrace target/debug/kgtrace --rounds 200 fixtures/
"""

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

CAPTURES = (".pcap", ".pcapng")
LOGS = (".log", ".txt")
VIEWS = (
    ["rebalances", "--format", "json"],
    ["decode", "--format", "ndjson"],
    ["timeline", "--format", "ndjson"],
    ["report"],
)
WORDS = [
    b"\x7f\xff\xff\xff\xff\xff\xff\xff",
    b"\x80\x00\x00\x00\x00\x00\x00\x00",
    b"\xff\xff\xff\xff\xff\xff\xff\xff",
    b"\x7f\xff\xff\xff",
    b"\x80\x00\x00\x00",
    b"\xff\xff\xff\xff",
]
NUMBERS = [b"2147483647", b"-2147483648", b"9223372036854775807",
           b"-9223372036854775808", b"99999999999999999999", b"0", b"-1"]


def inputs(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs.sort()
                for n in sorted(names):
                    yield os.path.join(root, n)
        else:
            yield p


def damage_capture(rng, data):
    b = bytearray(data)
    for _ in range(rng.choice([1, 3, 10, 30, 200])):
        i = rng.randrange(100, len(b))
        if rng.random() < 0.5:
            b[i] = rng.randrange(256)
        else:
            w = rng.choice(WORDS)
            b[i:i + len(w)] = w[:max(0, len(b) - i)]
    return bytes(b)


def damage_log(rng, data):
    lines = data.split(b"\n")
    for _ in range(rng.choice([1, 5, 20, 60])):
        i = rng.randrange(len(lines))
        line = lines[i]
        r = rng.random()
        if r < 0.6:
            nums = list(re.finditer(rb"-?\d+", line))
            if nums:
                m = rng.choice(nums)
                line = line[:m.start()] + rng.choice(NUMBERS) + line[m.end():]
        elif r < 0.8 and line:
            j = rng.randrange(len(line))
            line = line[:j] + bytes([rng.randrange(256)]) + line[j + 1:]
        elif r < 0.9:
            line = lines[rng.randrange(len(lines))]
        else:
            line = line[:rng.randrange(len(line) + 1)]
        lines[i] = line
    return b"\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kgtrace", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--max-bytes", type=int, default=3_000_000,
                    help="skip inputs larger than this (a debug build is slow)")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds a run may take before it counts as a hang")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    files = [f for f in inputs(args.paths)
             if f.endswith(CAPTURES + LOGS) and 200 < os.path.getsize(f) <= args.max_bytes]
    if not files:
        sys.exit("mutate: no capture or log to start from")
    for view in VIEWS:
        try:
            p = subprocess.run([args.kgtrace, *view, "-q", files[0]], capture_output=True,
                               timeout=args.timeout)
        except subprocess.TimeoutExpired:
            sys.exit(f"mutate: {view[0]} on the undamaged {files[0]} ran past {args.timeout} s")
        if p.returncode not in (0, 1):
            sys.exit(f"mutate: {view[0]} on the undamaged {files[0]} exits {p.returncode}: "
                     f"{p.stderr.decode(errors='replace').strip()[:300]}")
    scratch = tempfile.mkdtemp(prefix="kgtrace-mutate-")
    runs = failures = 0
    for round_no in range(args.rounds):
        f = rng.choice(files)
        with open(f, "rb") as fh:
            data = fh.read()
        ext = os.path.splitext(f)[1]
        damaged = damage_capture(rng, data) if f.endswith(CAPTURES) else damage_log(rng, data)
        path = os.path.join(scratch, "input" + ext)
        with open(path, "wb") as fh:
            fh.write(damaged)
        for view in VIEWS:
            try:
                p = subprocess.run([args.kgtrace, *view, "-q", path], capture_output=True,
                                   timeout=args.timeout)
                failed, code, stderr = (b"panicked" in p.stderr or p.returncode not in (0, 1, 2),
                                        p.returncode, p.stderr)
            except subprocess.TimeoutExpired:
                failed, code, stderr = True, f"none (still running after {args.timeout} s)", b""
            runs += 1
            if failed:
                failures += 1
                kept = os.path.join(scratch, f"failure{failures}{ext}")
                with open(kept, "wb") as fh:
                    fh.write(damaged)
                said = [l for l in stderr.decode(errors="replace").splitlines()
                        if "panicked" in l or "overflow" in l][:2]
                print(f"round {round_no}: {view[0]} on a damaged {f}: exit {code} {said}; "
                      f"kept as {kept}", flush=True)
    if failures:
        print(f"{runs} runs, {failures} failed (seed {args.seed}; inputs kept in {scratch})")
        sys.exit(1)
    shutil.rmtree(scratch)
    print(f"{runs} runs, none failed (seed {args.seed})")


if __name__ == "__main__":
    main()
