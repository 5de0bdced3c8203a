"""Unit tests of the lab's truth builder on small hand-written run directories (no broker).

Takes nothing; run with `python3 -m unittest discover -s lab -p 'test_*.py'`.
"""

import json
import os
import tempfile
import unittest

import signals
import truth

MID = {c: f"{c}-0000-{n}" for n, c in enumerate(["g1-c1", "g1-c2", "g1-c3"])}


def ts(sec):
    return f"2026-12-02T10:00:{sec:06.3f}Z"


class Run:
    """A fake run directory in the layout labkit.Lab writes."""

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.actions = []

    def act(self, sec, action, cid, client="kp"):
        self.actions.append({"ts": ts(sec), "action": action, "group": "g1", "client_id": cid,
                             "detail": "", "client": client})

    def event(self, cid, sec, event, **fields):
        with open(os.path.join(self.dir, cid + ".out"), "a") as f:
            f.write(json.dumps(dict(ts=ts(sec), client_id=cid, group="g1", event=event,
                                    **fields)) + "\n")

    def joined(self, cid, sec, gen, members=None, member_id=None):
        self.event(cid, sec, "joined", generation=gen, member_id=member_id or MID[cid])
        if members:
            self.event(cid, sec, "leader_assign", generation=gen, leader_id=MID[cid],
                       members=[MID[m] for m in members])

    def err(self, cid, line):
        with open(os.path.join(self.dir, cid + ".err"), "a") as f:
            f.write(line + "\n")

    def close(self):
        self.tmp.cleanup()

    def build(self):
        with open(os.path.join(self.dir, "actions.jsonl"), "w") as f:
            for a in [{"ts": ts(0), "action": "capture_start", "group": None,
                       "client_id": None, "detail": ""}] + self.actions:
                f.write(json.dumps(a) + "\n")
        try:
            return truth.build(self.dir, "test", {}, "test")
        finally:
            self.close()


def triggers(t):
    return [(r["to_generation"], r["trigger"], r["client_id"]) for r in t["rebalances"]]


class TruthTests(unittest.TestCase):
    def test_joins_and_a_clean_leave_are_named_from_the_driver_actions(self):
        r = Run()
        r.act(1, "start", "g1-c1")
        r.act(1.1, "start", "g1-c2")
        r.joined("g1-c1", 2, 0, members=["g1-c1"])
        r.joined("g1-c1", 5, 1, members=["g1-c1", "g1-c2"])
        r.joined("g1-c2", 7, 1)
        r.act(10, "leave", "g1-c2")
        r.joined("g1-c1", 12, 2, members=["g1-c1"])
        t = r.build()
        self.assertEqual(triggers(t), [(0, "member_joined", "g1-c1"),
                                       (1, "member_joined", "g1-c2"),
                                       (2, "member_left", "g1-c2")])
        self.assertEqual(t["unexplained_actions"], [])

    def test_a_frozen_member_evicted_into_a_repeated_generation_is_a_session_timeout(self):
        r = Run()
        for c in ("g1-c1", "g1-c2", "g1-c3"):
            r.act(1, "start", c)
        r.joined("g1-c1", 4, 2, members=["g1-c1", "g1-c2", "g1-c3"])
        r.joined("g1-c2", 4.1, 2)
        r.joined("g1-c3", 4.2, 2)
        r.act(10, "freeze", "g1-c2")
        # only g1-c3 is told to rejoin and gets generation 2 again (no leader list)
        r.joined("g1-c3", 19, 2)
        t = r.build()
        self.assertEqual(triggers(t)[-1], (2, "session_timeout", "g1-c2"))
        self.assertEqual(t["rebalances"][-1]["members_after"], ["g1-c1", "g1-c3"])

    def test_a_static_member_given_back_its_generation_is_not_a_rebalance(self):
        r = Run()
        for c in ("g1-c1", "g1-c2"):
            r.act(1, "start", c)
        r.joined("g1-c1", 4, 2, members=["g1-c1", "g1-c2"])
        r.joined("g1-c2", 4.1, 2)
        r.act(8, "leave", "g1-c2")
        r.act(10, "restart_static", "g1-c2")
        r.joined("g1-c2", 13, 2)
        t = r.build()
        self.assertEqual(len(t["rebalances"]), 1)
        self.assertEqual(t["same_generation_rejoins"][0]["action"], "restart_static")
        self.assertEqual([a["action"] for a in t["unexplained_actions"]], ["leave"])

    def test_a_failed_sync_names_the_next_round_when_no_action_explains_it(self):
        r = Run()
        for c in ("g1-c1", "g1-c2"):
            r.act(1, "start", c)
        r.joined("g1-c1", 4, 1, members=["g1-c1", "g1-c2"])
        r.joined("g1-c2", 4.1, 1)
        r.err("g1-c2", f"{ts(4.2)} INFO kafka-io-g1-c2 kafka.coordinator: SyncGroup for group "
                       "g1 failed due to coordinator rebalance")
        r.joined("g1-c1", 7, 2, members=["g1-c1", "g1-c2"])
        t = r.build()
        self.assertEqual(triggers(t)[-1], (2, "previous_rebalance_failed", "g1-c2"))

    def test_an_unexplained_round_stays_unknown(self):
        r = Run()
        for c in ("g1-c1", "g1-c2"):
            r.act(1, "start", c)
        r.joined("g1-c1", 4, 1, members=["g1-c1", "g1-c2"])
        r.joined("g1-c1", 9, 2, members=["g1-c1", "g1-c2"])
        t = r.build()
        self.assertEqual(triggers(t)[-1], (2, "unknown", None))


class PartitionStopTests(unittest.TestCase):
    def stops(self, t):
        return [(s["partition"], s["from_client_id"], s["why"], s["to_client_id"],
                 s["stopped_ms"]) for s in t["partition_stops"]]

    def test_a_revoked_partition_is_stopped_until_the_next_member_is_assigned_it(self):
        r = Run()
        for c in ("g1-c1", "g1-c2"):
            r.act(1, "start", c)
        r.event("g1-c1", 2, "assigned", partitions=["lab-0", "lab-1"])
        r.event("g1-c1", 10, "revoked", partitions=["lab-0", "lab-1"])
        r.event("g1-c1", 13.5, "assigned", partitions=["lab-0"])
        r.event("g1-c2", 14, "assigned", partitions=["lab-1"])
        t = r.build()
        self.assertEqual(len(t["assignment_callbacks"]), 4)
        self.assertEqual(self.stops(t), [("lab-0", "g1-c1", "revoked", "g1-c1", 3500),
                                         ("lab-1", "g1-c1", "revoked", "g1-c2", 4000)])

    def test_a_frozen_owner_stops_its_partitions_at_the_freeze_and_its_late_lost_changes_nothing(
            self):
        r = Run()
        for c in ("g1-c1", "g1-c2"):
            r.act(1, "start", c)
        r.event("g1-c1", 2, "assigned", partitions=["lab-0"])
        r.event("g1-c2", 2, "assigned", partitions=["lab-1"])
        r.act(5, "freeze", "g1-c2")
        r.event("g1-c1", 12, "revoked", partitions=["lab-0"])
        r.event("g1-c1", 12.1, "assigned", partitions=["lab-0", "lab-1"])
        r.act(20, "resume", "g1-c2")
        r.event("g1-c2", 20.5, "lost", partitions=["lab-1"])
        t = r.build()
        self.assertEqual(self.stops(t), [("lab-1", "g1-c2", "freeze", "g1-c1", 7100),
                                         ("lab-0", "g1-c1", "revoked", "g1-c1", 100)])

    def test_a_partition_another_member_still_holds_is_not_stopped(self):
        r = Run()
        for c in ("g1-c1", "g1-c2"):
            r.act(1, "start", c)
        r.event("g1-c1", 2, "assigned", partitions=["lab-0"])
        # cooperative hand-over seen out of order: the new owner first
        r.event("g1-c2", 6, "assigned", partitions=["lab-0"])
        r.event("g1-c1", 7, "revoked", partitions=["lab-0"])
        r.act(9, "kill", "g1-c2")
        t = r.build()
        self.assertEqual(self.stops(t), [("lab-0", "g1-c2", "kill", None, None)])


class ParserTests(unittest.TestCase):
    def test_librdkafka_join_lines_give_generation_member_and_the_leaders_member_list(self):
        with tempfile.NamedTemporaryFile("w", suffix=".err", delete=False) as f:
            f.write("%7|1796228348.653|JOINGROUP|g1-c1#consumer-1| [thrd:main]: JoinGroup "
                    "response: GenerationId 3, Protocol range, LeaderId m1 (me), my MemberId "
                    "m1, member metadata count 2: (no error)\n")
            f.write('%7|1796228348.653|ASSIGN|g1-c1#consumer-1| [thrd:main]:  Member "m1" (me) '
                    "with 0 owned partition(s) and 1 subscribed topic(s):\n")
            f.write('%7|1796228348.653|ASSIGN|g1-c1#consumer-1| [thrd:main]:  Member "m2" with '
                    "0 owned partition(s) and 1 subscribed topic(s):\n")
            f.write("%7|1796228349.000|JOINGROUP|g1-c1#consumer-1| [thrd:main]: JoinGroup "
                    "response: GenerationId -1, Protocol , LeaderId , my MemberId m1, member "
                    "metadata count 0: Broker: Group member needs a valid member ID\n")
        joins = truth.ck_joins(f.name, "g1-c1", "g1")
        os.unlink(f.name)
        self.assertEqual(len(joins), 1)
        self.assertEqual((joins[0]["generation"], joins[0]["member_id"]), (3, "m1"))
        self.assertEqual(joins[0]["members"], ["m1", "m2"])
        self.assertEqual(joins[0]["ts"], "2026-12-02T16:19:08.653Z")

    def test_kafkajs_error_lines_become_signals_with_their_error_text(self):
        with tempfile.NamedTemporaryFile("w", suffix=".err", delete=False) as f:
            f.write('2026-12-02T16:26:22.843Z ERROR [Connection] Response SyncGroup(key: 14, '
                    'version: 3) {"error":"The group is rebalancing, so a rejoin is needed"}\n')
            f.write('2026-12-02T16:26:22.843Z DEBUG [Connection] Response SyncGroup(key: 14, '
                    'version: 3) {"error":"The group is rebalancing, so a rejoin is needed"}\n')
        got = signals.signals("kjs", f.name, "g2-c1")
        os.unlink(f.name)
        self.assertEqual([s["kind"] for s in got], ["sync_failed"])
        self.assertTrue(got[0]["text"].endswith("The group is rebalancing, so a rejoin is needed"))


if __name__ == "__main__":
    unittest.main()
