"""Shared bits of the lab's Python group members: the command line and JSON-line event output.

Every member is its own OS process started by lab.py. It prints one JSON object per line on
stdout (what it did and what its client told it: member ids, generations, assignments) and the
client's own log on stderr. The driver reads both after the run to write the ground truth.

Signals the driver uses (all bounded, nothing here loops forever):
  SIGTERM  close the client cleanly (commit, LeaveGroup unless static) and exit
  SIGUSR1  stop calling poll() for --stall-seconds, then poll again (max.poll.interval scenario)
  SIGSTOP / SIGCONT / SIGKILL come straight from the kernel: the member cannot see them.
"""

import argparse
import datetime
import json
import signal
import sys
import time

LOOPBACK_PREFIX = "127.0.0.1:"


def now_utc():
    """RFC 3339 UTC timestamp with milliseconds."""
    t = datetime.datetime.now(datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="kgtrace lab group member (loopback only)")
    p.add_argument("--bootstrap", default="127.0.0.1:9092")
    p.add_argument("--role", choices=["consumer", "producer"], default="consumer")
    p.add_argument("--group", default="g1")
    p.add_argument("--client-id", required=True)
    p.add_argument("--topic", default="lab")
    p.add_argument("--session-ms", type=int, default=6000)
    p.add_argument("--max-poll-ms", type=int, default=10000)
    p.add_argument("--heartbeat-ms", type=int, default=1000)
    p.add_argument("--instance-id", default=None)
    p.add_argument("--assignor", default="range")
    p.add_argument("--group-protocol", choices=["classic", "consumer"], default="classic")
    p.add_argument("--run-seconds", type=float, default=110.0)
    p.add_argument("--stall-seconds", type=float, default=15.0)
    p.add_argument("--produce-interval", type=float, default=0.5)
    a = p.parse_args(argv)
    if not a.bootstrap.startswith(LOOPBACK_PREFIX):
        p.error("the lab only talks to 127.0.0.1")
    return a


class Member:
    """Event output plus the signal flags every Python member shares."""

    def __init__(self, args):
        self.args = args
        self.stop = False
        self.stall_requested = False
        signal.signal(signal.SIGTERM, self._on_term)
        signal.signal(signal.SIGUSR1, self._on_usr1)

    def _on_term(self, *_):
        self.stop = True

    def _on_usr1(self, *_):
        self.stall_requested = True

    def emit(self, event, **fields):
        rec = {"ts": now_utc(), "client_id": self.args.client_id, "group": self.args.group,
               "event": event}
        rec.update(fields)
        sys.stdout.write(json.dumps(rec) + "\n")
        sys.stdout.flush()

    def deadline(self):
        return time.monotonic() + self.args.run_seconds

    def maybe_stall(self):
        """Stop polling for --stall-seconds if SIGUSR1 asked for it (bounded sleep)."""
        if not self.stall_requested:
            return
        self.stall_requested = False
        self.emit("stall_start", seconds=self.args.stall_seconds)
        end = time.monotonic() + self.args.stall_seconds
        while time.monotonic() < end and not self.stop:
            time.sleep(0.1)
        self.emit("stall_end")
