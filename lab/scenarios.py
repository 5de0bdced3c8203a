"""The lab's scenarios: each drives two consumer groups (g1 acted on, g2 as steady background)
plus a producer through one known event, against a fresh in-memory tansu broker.

Takes a `Lab` (labkit.py); gives a run directory with everything truth.py needs. Each scenario
is bounded (< 2 minutes): every wait has a timeout and the members exit by --run-seconds.
"""

# Short timeouts keep the captures small and the runs short.
SESSION_MS = 6000
MAX_POLL_MS = 10000


def prologue(lab, g2_opts=None, capture=True):
    """Broker, capture, producer and the steady background group g2 (two members)."""
    lab.start_broker()
    if capture:
        lab.start_capture()
    lab.start(None, "p1", role="producer", produce_interval=0.5)
    for cid in ("g2-c1", "g2-c2"):
        lab.start("g2", cid, session_ms=SESSION_MS, max_poll_ms=MAX_POLL_MS, **(g2_opts or {}))


def start_g1(lab, n, **opts):
    """Starts g1-c1 .. g1-cN together with the scenario's options."""
    opts.setdefault("session_ms", SESSION_MS)
    opts.setdefault("max_poll_ms", MAX_POLL_MS)
    ids = [f"g1-c{i}" for i in range(1, n + 1)]
    for cid in ids:
        lab.start("g1", cid, **opts)
    return ids


def join_one_by_one(lab):
    """Four g1 members join one at a time, each after the group settled."""
    prologue(lab)
    lab.wait_assigned(["g2-c1", "g2-c2"], 30)
    for i in range(1, 5):
        cid = f"g1-c{i}"
        lab.start("g1", cid, session_ms=SESSION_MS, max_poll_ms=MAX_POLL_MS)
        mark = lab.actions_last_ts()
        lab.wait_assigned([f"g1-c{j}" for j in range(1, i + 1)], 30, after_ts=mark)
        lab.sleep(3)


def clean_leave(lab):
    """Three g1 members settle; g1-c2 closes cleanly (LeaveGroup); the other two rebalance."""
    prologue(lab)
    ids = start_g1(lab, 3)
    lab.wait_assigned(ids + ["g2-c1", "g2-c2"], 40)
    lab.sleep(4)
    lab.signal("g1-c2", "leave", "SIGTERM: consumer.close()")
    mark = lab.actions_last_ts()
    lab.wait_exit("g1-c2", 15)
    lab.wait_assigned(["g1-c1", "g1-c3"], 25, after_ts=mark, any_of=True)
    lab.sleep(6)


def session_timeout(lab):
    """g1-c2 is frozen (SIGSTOP) past its session timeout, then resumed and rejoins."""
    prologue(lab)
    ids = start_g1(lab, 3)
    lab.wait_assigned(ids + ["g2-c1", "g2-c2"], 40)
    lab.sleep(4)
    lab.signal("g1-c2", "freeze", f"SIGSTOP; session.timeout.ms={SESSION_MS}")
    mark = lab.actions_last_ts()
    # tansu may re-form the group without the leader rejoining: wait for either survivor
    lab.wait_assigned(["g1-c1", "g1-c3"], 25, after_ts=mark, any_of=True)
    lab.sleep(max(0.0, SESSION_MS / 1000 + 6 - lab.seconds_since(mark)))
    lab.signal("g1-c2", "resume", "SIGCONT")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c2"], 30, after_ts=mark)
    lab.sleep(5)


def max_poll(lab):
    """g1-c2 stops calling poll() for longer than max.poll.interval.ms, then polls again."""
    prologue(lab)
    ids = start_g1(lab, 3, stall_seconds=(MAX_POLL_MS / 1000) + 6)
    lab.wait_assigned(ids + ["g2-c1", "g2-c2"], 40)
    lab.sleep(4)
    lab.signal("g1-c2", "stop_polling",
               f"SIGUSR1: no poll() for {MAX_POLL_MS / 1000 + 6:.0f} s; "
               f"max.poll.interval.ms={MAX_POLL_MS}")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c1", "g1-c3"], 30, after_ts=mark)
    lab.wait_assigned(["g1-c2"], 30, after_ts=mark)
    lab.sleep(5)


def static_restart(lab):
    """Static members (group.instance.id); g1-c2 closes and restarts with the same instance id
    well within its session timeout (librdkafka needs max.poll.interval >= session timeout)."""
    prologue(lab)
    static_session = 15000
    for i in (1, 2, 3):
        lab.start("g1", f"g1-c{i}", session_ms=static_session, max_poll_ms=static_session,
                  instance_id=f"g1-static-{i}")
    lab.wait_assigned(["g1-c1", "g1-c2", "g1-c3", "g2-c1", "g2-c2"], 40)
    lab.sleep(4)
    lab.signal("g1-c2", "leave", "SIGTERM: close() of a static member (no LeaveGroup expected)")
    lab.wait_exit("g1-c2", 15)
    lab.sleep(2)
    lab.start("g1", "g1-c2", session_ms=static_session, max_poll_ms=static_session,
              instance_id="g1-static-2", action="restart_static",
              note="same group.instance.id g1-static-2, new process")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c2"], 30, after_ts=mark)
    lab.sleep(5)


def static_expired(lab):
    """Static members; g1-c2 is SIGKILLed and restarted with the same instance id only after
    its session timeout expired (the broker has to evict it first)."""
    prologue(lab)
    static_session = 8000
    for i in (1, 2, 3):
        lab.start("g1", f"g1-c{i}", session_ms=static_session, max_poll_ms=static_session,
                  instance_id=f"g1-static-{i}")
    lab.wait_assigned(["g1-c1", "g1-c2", "g1-c3", "g2-c1", "g2-c2"], 40)
    lab.sleep(4)
    lab.signal("g1-c2", "kill", f"SIGKILL of static member; session.timeout.ms={static_session}")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c1", "g1-c3"], 25, after_ts=mark, any_of=True)
    lab.sleep(max(0.0, static_session / 1000 + 6 - lab.seconds_since(mark)))
    lab.start("g1", "g1-c2", session_ms=static_session, max_poll_ms=static_session,
              instance_id="g1-static-2", action="restart_static",
              note="same group.instance.id g1-static-2, after the session expired")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c2"], 30, after_ts=mark)
    lab.sleep(6)


def cooperative(lab):
    """cooperative-sticky in both groups: g1-c3 joins a settled pair, later g1-c1 leaves."""
    opts = {"assignor": "cooperative-sticky"}
    prologue(lab, g2_opts=opts)
    ids = start_g1(lab, 2, **opts)
    lab.wait_assigned(ids + ["g2-c1", "g2-c2"], 40)
    lab.sleep(4)
    lab.start("g1", "g1-c3", session_ms=SESSION_MS, max_poll_ms=MAX_POLL_MS, **opts)
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c3"], 30, after_ts=mark)
    lab.sleep(6)
    lab.signal("g1-c1", "leave", "SIGTERM: consumer.close()")
    lab.wait_exit("g1-c1", 15)
    lab.sleep(8)


def killed(lab):
    """g1-c2 is killed with SIGKILL: no LeaveGroup; the kernel closes its sockets."""
    prologue(lab)
    ids = start_g1(lab, 3)
    lab.wait_assigned(ids + ["g2-c1", "g2-c2"], 40)
    lab.sleep(4)
    lab.signal("g1-c2", "kill", f"SIGKILL; session.timeout.ms={SESSION_MS}")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c1", "g1-c3"], 25, after_ts=mark, any_of=True)
    lab.sleep(8)


def midstream(lab):
    """The capture starts after both groups are stable; then g1-c3 joins and g1-c1 leaves."""
    prologue(lab, capture=False)
    ids = start_g1(lab, 2)
    lab.wait_assigned(ids + ["g2-c1", "g2-c2"], 40)
    lab.sleep(5)
    lab.start_capture()
    lab.sleep(6)
    lab.start("g1", "g1-c3", session_ms=SESSION_MS, max_poll_ms=MAX_POLL_MS)
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c3"], 30, after_ts=mark)
    lab.sleep(5)
    lab.signal("g1-c1", "leave", "SIGTERM: consumer.close()")
    lab.wait_exit("g1-c1", 15)
    lab.sleep(6)


def ten_members(lab):
    """Twelve g1 members started together (plus g2's two); later three leave at once."""
    prologue(lab)
    ids = [f"g1-c{i}" for i in range(1, 13)]
    for cid in ids:
        lab.start("g1", cid, session_ms=10000, max_poll_ms=MAX_POLL_MS)
    lab.wait_assigned(ids + ["g2-c1", "g2-c2"], 60)
    lab.sleep(10)
    for cid in ("g1-c4", "g1-c8", "g1-c12"):
        lab.signal(cid, "leave", "SIGTERM: consumer.close()")
    mark = lab.actions_last_ts()
    rest = [c for c in ids if c not in ("g1-c4", "g1-c8", "g1-c12")]
    lab.wait_assigned(rest, 40, after_ts=mark)
    lab.sleep(10)


# name -> (scenario function, client kind, capture kind)
SCENARIOS = {
    "kjs_join_one_by_one": (join_one_by_one, "kjs", "lo"),
    "kp_clean_leave": (clean_leave, "kp", "any"),
    "ck_session_timeout": (session_timeout, "ck", "lo"),
    "kp_max_poll": (max_poll, "kp", "lo"),
    "ck_max_poll": (max_poll, "ck", "pcapng"),
    "ck_static_restart": (static_restart, "ck", "pcapng"),
    "kp_static_restart": (static_restart, "kp", "lo"),
    "ck_static_expired": (static_expired, "ck", "lo"),
    "ck_cooperative_sticky": (cooperative, "ck", "lo"),
    "kjs_killed": (killed, "kjs", "lo"),
    "ck_killed": (killed, "ck", "any"),
    "ck_midstream": (midstream, "ck", "lo"),
    "kp_ten_members": (ten_members, "kp", "lo"),
    "kjs_clean_leave": (clean_leave, "kjs", "pcapng"),
}

# Apache Kafka scenarios (ak_scenarios.py) as 4-tuples: + the broker spec
from ak_scenarios import AK_SCENARIOS  # noqa: E402 (after the shared constants it imports)

SCENARIOS.update(AK_SCENARIOS)

