"""The lab's Apache Kafka scenarios: the same kind of story as scenarios.py, against real
Apache Kafka brokers (lab/akbroker.py: 3.9.2 with the Scala GroupCoordinator, 4.4.0 with the
Java group coordinator) and mostly Apache Kafka's own Java consumer (lab/java/LabMember.java).

Takes a `Lab` (labkit.py) whose scenario entry names the Kafka line; gives a run directory
with everything truth.py needs plus the brokers' server.log. Every wait is bounded.
Names say the broker first: ak39_* (3.9.2), ak4_* (4.4.0); then the client (java, ck) and,
for consumer groups (KIP-848), k848.
"""

from scenarios import MAX_POLL_MS, SESSION_MS


def prologue(lab, g2=True, g2_opts=None, capture=True):
    """Broker(s), capture, producer p1 (librdkafka) and the steady background group g2 (two
    librdkafka members) unless g2 is False."""
    lab.start_broker()
    if capture:
        lab.start_capture()
    lab.start(None, "p1", client="ck", role="producer", produce_interval=0.5)
    if g2:
        for cid in ("g2-c1", "g2-c2"):
            lab.start("g2", cid, client="ck", session_ms=SESSION_MS, max_poll_ms=MAX_POLL_MS,
                      **(g2_opts or {}))
    return ["g2-c1", "g2-c2"] if g2 else []


def start_g1(lab, n, **opts):
    opts.setdefault("session_ms", SESSION_MS)
    opts.setdefault("max_poll_ms", MAX_POLL_MS)
    ids = [f"g1-c{i}" for i in range(1, n + 1)]
    for cid in ids:
        lab.start("g1", cid, **opts)
    return ids


def settle(lab, ids, extra=(), timeout=60):
    lab.wait_assigned(list(ids) + list(extra), timeout)
    lab.sleep(4)


def session_timeout(lab, **opts):
    """Three g1 members settle; g1-c2 is frozen (SIGSTOP) past its 6 s session timeout, then
    resumed (SIGCONT) and rejoins."""
    bg = prologue(lab)
    # max.poll.interval well above the freeze, so the resumed member is told its session
    # is gone (not that its poll interval expired)
    opts.setdefault("max_poll_ms", 30000)
    ids = start_g1(lab, 3, **opts)
    settle(lab, ids, bg)
    lab.signal("g1-c2", "freeze", f"SIGSTOP; session timeout {SESSION_MS} ms")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c1", "g1-c3"], 30, after_ts=mark, any_of=True)
    lab.sleep(max(0.0, SESSION_MS / 1000 + 5 - lab.seconds_since(mark)))
    lab.signal("g1-c2", "resume", "SIGCONT")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c2"], 30, after_ts=mark)
    lab.sleep(5)


def clean_leave(lab, **opts):
    """Three g1 members settle; g1-c2 closes cleanly (commit, LeaveGroup); the others
    rebalance."""
    bg = prologue(lab)
    ids = start_g1(lab, 3, **opts)
    settle(lab, ids, bg)
    lab.signal("g1-c2", "leave", "SIGTERM: consumer.close()")
    mark = lab.actions_last_ts()
    lab.wait_exit("g1-c2", 20)
    lab.wait_assigned(["g1-c1", "g1-c3"], 25, after_ts=mark, any_of=True)
    lab.sleep(5)


def max_poll(lab, **opts):
    """g1-c2 stops calling poll() for 16 s (max.poll.interval.ms 10 s), then polls again."""
    bg = prologue(lab)
    stall = MAX_POLL_MS / 1000 + 6
    ids = start_g1(lab, 3, stall_seconds=stall, **opts)
    settle(lab, ids, bg)
    lab.signal("g1-c2", "stop_polling",
               f"no poll() for {stall:.0f} s; max.poll.interval.ms={MAX_POLL_MS}")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c1", "g1-c3"], 30, after_ts=mark)
    lab.wait_assigned(["g1-c2"], 30, after_ts=mark)
    lab.sleep(5)


def static_restart(lab):
    """Static members (group.instance.id); g1-c2 closes (no LeaveGroup for a static member)
    and a new process with the same instance id starts 2 s later, within its 15 s session."""
    bg = prologue(lab)
    sess = 15000
    for i in (1, 2, 3):
        lab.start("g1", f"g1-c{i}", session_ms=sess, max_poll_ms=sess,
                  instance_id=f"g1-static-{i}")
    settle(lab, ["g1-c1", "g1-c2", "g1-c3"], bg)
    lab.signal("g1-c2", "leave", "SIGTERM: close() of a static member (no LeaveGroup expected)")
    lab.wait_exit("g1-c2", 20)
    lab.sleep(2)
    lab.start("g1", "g1-c2", session_ms=sess, max_poll_ms=sess, instance_id="g1-static-2",
              action="restart_static", note="same group.instance.id g1-static-2, new process")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c2"], 30, after_ts=mark)
    lab.sleep(6)


def cooperative(lab, **opts):
    """cooperative-sticky: g1-c3 joins a settled pair, later g1-c1 leaves cleanly."""
    bg = prologue(lab)
    opts["assignor"] = "cooperative-sticky"
    ids = start_g1(lab, 2, **opts)
    settle(lab, ids, bg)
    lab.start("g1", "g1-c3", session_ms=SESSION_MS, max_poll_ms=MAX_POLL_MS, **opts)
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c3"], 30, after_ts=mark)
    lab.sleep(6)
    lab.signal("g1-c1", "leave", "SIGTERM: consumer.close()")
    lab.wait_exit("g1-c1", 20)
    lab.sleep(6)


def killed(lab, **opts):
    """g1-c2 is SIGKILLed (no LeaveGroup; the kernel closes its sockets); the survivors
    rebalance after its session timeout."""
    bg = prologue(lab)
    ids = start_g1(lab, 3, **opts)
    settle(lab, ids, bg)
    lab.signal("g1-c2", "kill", f"SIGKILL; session timeout {SESSION_MS} ms")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c1", "g1-c3"], 30, after_ts=mark, any_of=True)
    lab.sleep(6)


def processed_twice(lab, **opts):
    """Records processed twice: g1 members commit only every 30 s (auto commit off); g1-c2
    consumes for about 8 s, then exits without closing (no commit, no LeaveGroup). After its
    session timeout the next owner of its partitions starts from the last committed offsets
    and reads again what g1-c2 had consumed (the truth's records.consumed_more_than_once)."""
    bg = prologue(lab, g2=False)
    ids = start_g1(lab, 3, commit_interval_ms=30000, **opts)
    lab.wait_assigned(ids + bg, 60)
    lab.sleep(8)
    lab.signal("g1-c2", "exit_without_close",
               "SIGUSR2: halt after consuming, before any commit")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c1", "g1-c3"], 30, after_ts=mark, any_of=True)
    lab.sleep(6)


def k848_join_leave(lab, **opts):
    """KIP-848 consumer group (group.protocol=consumer): g1-c1 and g1-c2 start, g1-c3 joins
    a settled pair, later g1-c1 leaves cleanly."""
    bg = prologue(lab)
    opts["group_protocol"] = "consumer"
    ids = start_g1(lab, 2, **opts)
    settle(lab, ids, bg)
    lab.start("g1", "g1-c3", **opts, session_ms=SESSION_MS, max_poll_ms=MAX_POLL_MS)
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c3"], 30, after_ts=mark)
    lab.sleep(6)
    lab.signal("g1-c1", "leave", "SIGTERM: consumer.close()")
    lab.wait_exit("g1-c1", 20)
    lab.sleep(6)


def classic_recreated(lab, **opts):
    """The classic protocol's k848_recreated: g1-c1 and g1-c2 settle and close, the empty
    group is deleted, and g1-c3 and g1-c4 make it again from generation 0. Its partitions
    stop from the leaves to the new group's assignment and are read again from the start
    (the deletion removed the committed offsets)."""
    opts["group_protocol"] = "classic"
    k848_recreated(lab, **opts)


def k848_recreated(lab, **opts):
    """KIP-848: g1-c1 and g1-c2 settle, both close (the group is left empty), the group is
    deleted (DeleteGroups, as `kafka-consumer-groups --delete` sends), and two new members
    g1-c3 and g1-c4 make a group of the same name again, whose epochs start again.
    truth.py starts the group's generations again at the deletion (`life_start`)."""
    bg = prologue(lab)
    opts.setdefault("group_protocol", "consumer")
    ids = start_g1(lab, 2, **opts)
    settle(lab, ids, bg)
    for cid in ids:
        lab.signal(cid, "leave", "SIGTERM: consumer.close()")
    for cid in ids:
        lab.wait_exit(cid, 20)
    lab.sleep(3)
    lab.delete_group("g1")
    lab.sleep(3)
    again = ["g1-c3", "g1-c4"]
    for cid in again:
        lab.start("g1", cid, **opts, session_ms=SESSION_MS, max_poll_ms=MAX_POLL_MS)
    mark = lab.actions_last_ts()
    lab.wait_assigned(again, 30, after_ts=mark)
    lab.sleep(6)


def k848_session_timeout(lab, **opts):
    """KIP-848: g1-c2 is frozen (SIGSTOP) past the broker's 6 s
    group.consumer.session.timeout.ms, is fenced, then resumed and rejoins."""
    session_timeout(lab, group_protocol="consumer", **opts)


def static_expired(lab):
    """Static members; g1-c2 is SIGKILLed and restarted with the same instance id only after
    its 8 s session expired (the broker removed it first)."""
    bg = prologue(lab)
    sess = 8000
    for i in (1, 2, 3):
        lab.start("g1", f"g1-c{i}", session_ms=sess, max_poll_ms=sess,
                  instance_id=f"g1-static-{i}")
    settle(lab, ["g1-c1", "g1-c2", "g1-c3"], bg)
    lab.signal("g1-c2", "kill", f"SIGKILL of static member; session.timeout.ms={sess}")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c1", "g1-c3"], 30, after_ts=mark, any_of=True)
    lab.sleep(max(0.0, sess / 1000 + 5 - lab.seconds_since(mark)))
    lab.start("g1", "g1-c2", session_ms=sess, max_poll_ms=sess, instance_id="g1-static-2",
              action="restart_static", note="same group.instance.id, after the session expired")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c2"], 30, after_ts=mark)
    lab.sleep(5)


def midstream(lab):
    """The capture starts after both groups are stable; then g1-c3 joins and g1-c1 leaves."""
    bg = prologue(lab, capture=False)
    ids = start_g1(lab, 2)
    settle(lab, ids, bg)
    lab.start_capture()
    lab.sleep(4)
    lab.start("g1", "g1-c3", session_ms=SESSION_MS, max_poll_ms=MAX_POLL_MS)
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c3"], 30, after_ts=mark)
    lab.sleep(4)
    lab.signal("g1-c1", "leave", "SIGTERM: consumer.close()")
    lab.wait_exit("g1-c1", 20)
    lab.sleep(5)


def k848_killed(lab):
    """KIP-848: g1-c2 is SIGKILLed; the broker fences it after its session timeout."""
    killed(lab, group_protocol="consumer")


def k848_slow_revoke(lab):
    """KIP-848: g1-c1 takes 5 s in onPartitionsRevoked; when g1-c3 joins a settled pair,
    the partitions g1-c1 must give up reach g1-c3 only after g1-c1 revoked them."""
    bg = prologue(lab)
    opts = {"group_protocol": "consumer", "session_ms": SESSION_MS, "max_poll_ms": MAX_POLL_MS}
    lab.start("g1", "g1-c1", revoke_ms=5000, **opts)
    lab.start("g1", "g1-c2", **opts)
    settle(lab, ["g1-c1", "g1-c2"], bg)
    lab.start("g1", "g1-c3", **opts)
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c3"], 30, after_ts=mark)
    lab.sleep(10)


def failover(lab, **opts):
    """Three brokers; once g1 is stable the broker coordinating g1 is SIGKILLed: members see
    NOT_COORDINATOR / disconnects, find the new coordinator, and the group is loaded there."""
    bg = prologue(lab, g2=False)
    ids = start_g1(lab, 3, **opts)
    settle(lab, ids, bg)
    node = lab.coordinator_of("g1")
    if node is None:
        raise RuntimeError("could not find g1's coordinator")
    lab.broker_action("broker_kill", node, f"SIGKILL of node {node}, g1's coordinator")
    lab.sleep(20)


def upgrade(lab):
    """Classic -> consumer online upgrade: three classic members (range) settle, then each is
    closed and restarted in turn with group.protocol=consumer (a rolling restart)."""
    bg = prologue(lab, g2=False)
    ids = start_g1(lab, 3)
    settle(lab, ids, bg)
    for cid in ids:
        lab.signal(cid, "leave", "SIGTERM: close() before restarting with group.protocol=consumer")
        lab.wait_exit(cid, 20)
        lab.start("g1", cid, group_protocol="consumer", session_ms=SESSION_MS,
                  max_poll_ms=MAX_POLL_MS, note="restarted with group.protocol=consumer")
        mark = lab.actions_last_ts()
        lab.wait_assigned([cid], 30, after_ts=mark)
        lab.sleep(4)
    lab.sleep(3)


def join_delay(lab, **opts):
    """A group forming from Empty with members joining 1 s apart: the broker holds the first
    round for group.initial.rebalance.delay.ms (3 s, extended per join up to the rebalance
    timeout), so the first generation holds several members."""
    bg = prologue(lab, g2=False)
    lab.sleep(2)
    ids = []
    for i in range(1, 5):
        cid = f"g1-c{i}"
        lab.start("g1", cid, session_ms=SESSION_MS, max_poll_ms=MAX_POLL_MS, **opts)
        ids.append(cid)
        lab.sleep(1)
    lab.wait_assigned(ids, 40)
    lab.sleep(5)


def fifty(lab):
    """Fifty g1 members (librdkafka) started at once."""
    bg = prologue(lab, g2=False)
    ids = [f"g1-c{i}" for i in range(1, 51)]
    for cid in ids:
        lab.start("g1", cid, client="ck", session_ms=10000, max_poll_ms=MAX_POLL_MS)
    lab.wait_assigned(ids, 90)
    lab.sleep(5)


def k848_refused(lab):
    """A 4.x Java consumer with group.protocol=consumer against a 3.9 broker that does not
    offer the consumer protocol (ConsumerGroupHeartbeat, API key 68, absent from its
    ApiVersions answer): its polls fail; it is closed and restarted with the classic
    protocol, and joins with a JoinGroup."""
    bg = prologue(lab, g2=False)
    lab.start("g1", "g1-c1", group_protocol="consumer", session_ms=SESSION_MS,
              max_poll_ms=MAX_POLL_MS)
    lab.sleep(8)
    lab.signal("g1-c1", "leave", "SIGTERM: close() before restarting with group.protocol=classic")
    lab.wait_exit("g1-c1", 20)
    lab.start("g1", "g1-c1", session_ms=SESSION_MS, max_poll_ms=MAX_POLL_MS,
              note="restarted with group.protocol=classic")
    mark = lab.actions_last_ts()
    lab.wait_assigned(["g1-c1"], 40, after_ts=mark)
    lab.sleep(4)


def k39(**extra):
    return {"line": "3.9", "nodes": 1, **extra}


def k4(**extra):
    return {"line": "4", "nodes": 1, **extra}


DEBUG_LOGS = {"request_level": "DEBUG", "coordinator_level": "DEBUG"}

# name -> (scenario, client kind, capture kind, Apache Kafka spec)
AK_SCENARIOS = {
    "ak4_java_session_timeout": (session_timeout, "java4", "lo", k4()),
    "ak39_java_session_timeout": (session_timeout, "java39", "lo", k39()),
    "ak39_java_clean_leave": (clean_leave, "java39", "lo", k39(**DEBUG_LOGS)),
    "ak4_java_max_poll": (max_poll, "java4", "lo", k4()),
    "ak39_java_static_restart": (static_restart, "java39", "lo", k39()),
    "ak4_java_cooperative_sticky": (cooperative, "java4", "lo", k4()),
    "ak4_ck_killed": (killed, "ck", "lo", k4()),
    "ak4_java_processed_twice": (processed_twice, "java4", "lo", k4()),
    "ak4_k848_join_leave": (k848_join_leave, "java4", "lo", k4()),
    "ak4_k848_session_timeout": (k848_session_timeout, "java4", "lo", k4()),
    "ak4_k848_recreated": (k848_recreated, "java4", "lo", k4()),
    "ak4_java_recreated": (classic_recreated, "java4", "lo", k4()),
    "ak4_java_failover": (failover, "java4", "lo", k4(nodes=3)),
    "ak4_java_upgrade": (upgrade, "java4", "lo", k4()),
    "ak39_ck_join_delay": (join_delay, "ck", "lo", k39()),
    "ak4_k848_killed": (k848_killed, "java4", "lo", k4()),
    "ak39_ck_fifty": (fifty, "ck", "lo", k39()),
    "ak4_kp_clean_leave": (clean_leave, "kp", "lo", k4()),
    "ak39_kjs_killed": (killed, "kjs", "lo", k39()),
    "ak4_java_static_expired": (static_expired, "java4", "lo", k4()),
    "ak39_ck_midstream": (midstream, "ck", "lo", k39()),
    "ak4_ck_k848_join_leave": (k848_join_leave, "ck", "lo", k4()),
    "ak4_k848_slow_revoke": (k848_slow_revoke, "java4", "lo", k4()),
    "ak4_java_killed": (killed, "java4", "lo", k4()),
    "ak39_java4_k848_refused": (k848_refused, "java4", "lo", k39()),
    "ak4_java_session_timeout_s200": (session_timeout, "java4", "lo", k4(snaplen=200)),
    "ak4_java_session_timeout_s128": (session_timeout, "java4", "lo", k4(snaplen=128)),
}
