"""Ground truth of one lab run, from what the driver DID and what the clients LOGGED.

Takes a run directory written by labkit.Lab (actions.jsonl, meta.json, <client_id>.out with
JSON-line events, <client_id>.err with the client's log); gives the truth dict written as
fixtures/lab/<name>.truth.json.

Generations come only from the clients' own words: librdkafka's "JoinGroup response:
GenerationId N ... my MemberId M" debug line (its own timestamp), kafka-python's "Successfully
joined group" record and KafkaJS's logged JoinGroup response (both via the member's events).
Rebalances are the clusters of those joins; their trigger is the driver action that explains
the change of membership between one cluster and the one before it.

Assignment callbacks come from the members' own rebalance listeners (assigned / revoked / lost
events with their partitions: ConsumerRebalanceListener in the Java consumer and kafka-python,
confluent-kafka's on_assign / on_revoke / on_lost, KafkaJS's GROUP_JOIN and REBALANCING
events). From them and the driver's owner-stopping actions, `partition_stops` gives every
time a partition had no working owner: see partition_stops().
"""

import json
import os
import re

from labkit import read_events
from signals import signals
from truth_time import iso_from_epoch, secs

CK_JOIN = re.compile(r"^%\d\|(\d+\.\d+)\|JOINGROUP\|[^|]*\|.*JoinGroup response: GenerationId "
                     r"(-?\d+), Protocol ([^,]*), LeaderId ([^,]*), my MemberId ([^,]+),")
DEPARTURE = {"leave": "member_left", "freeze": "session_timeout", "kill": "session_timeout",
             "exit_without_close": "session_timeout", "stop_polling": "poll_timeout"}
ARRIVAL = {"start": "member_joined", "resume": "member_joined",
           "resume_polling": "member_joined", "restart_static": "static_member_replaced"}
# joins of one generation that tansu answers this far apart still belong together
SAME_REBALANCE_S = 8.0


CK_848 = re.compile(r'^%\d\|(\d+\.\d+)\|HEARTBEAT\|[^|]*\|.*ConsumerGroupHeartbeat response '
                    r'received for member id "([^"]+)" with epoch (-?\d+)')
CK_MEMBER = re.compile(r'^%\d\|[^|]*\|ASSIGN\|[^|]*\|.*\]:  Member "([^"]+)"(?: \(me\))? with \d+ owned')


def ck_joins(err_path, client_id, group):
    """Joins from librdkafka's debug log; a leader's join also gets the members it assigned."""
    out = []
    try:
        lines = open(err_path, encoding="utf-8", errors="replace").read().splitlines()
    except FileNotFoundError:
        return out
    last = None
    epoch, fresh = None, True
    for line in lines:
        h = CK_848.match(line)
        if h:
            # KIP-848 (group.protocol=consumer): every heartbeat answer logs the member epoch
            e = int(h.group(3))
            if e <= 0:
                fresh = True  # fenced or left: the next epoch is a new membership
            elif e != epoch:
                out.append({"ts": iso_from_epoch(h.group(1)), "group": group,
                            "client_id": client_id, "generation": e,
                            "member_id": h.group(2), "leader_id": None,
                            "protocol": "consumer", "first": fresh})
                fresh = False
            epoch = e
            continue
        m = CK_JOIN.match(line)
        if m:
            last = None
            if int(m.group(2)) < 0:
                continue
            leader = m.group(4).replace(" (me)", "").strip()
            last = {"ts": iso_from_epoch(m.group(1)), "group": group, "client_id": client_id,
                    "generation": int(m.group(2)), "member_id": m.group(5).strip(),
                    "leader_id": leader, "protocol": m.group(3)}
            out.append(last)
            continue
        a = CK_MEMBER.match(line)
        if a and last is not None and last["leader_id"] == last["member_id"]:
            last.setdefault("members", [])
            if a.group(1) not in last["members"]:
                last["members"].append(a.group(1))
    return out


def member_joins(run_dir, action):
    cid, group = action["client_id"], action["group"]
    base = os.path.join(run_dir, cid)
    if action.get("client") == "ck":
        return ck_joins(base + ".err", cid, group)
    out = []
    consumer_protocol, fresh = False, True
    for e in read_events(base + ".out"):
        if e["event"] == "started":
            consumer_protocol, fresh = e.get("group_protocol") == "consumer", True
        if consumer_protocol:
            # KIP-848: the member epoch is the epoch of the target assignment the member has
            # reconciled to. See kip848_first_joins for a member's first epoch.
            if e["event"] == "lost":
                fresh = True  # fenced: it rejoins with member epoch 0
            if e["event"] == "joined" and e.get("generation", -1) >= 0:
                out.append({"ts": e["ts"], "group": group, "client_id": cid,
                            "generation": e["generation"], "member_id": e.get("member_id"),
                            "leader_id": None, "protocol": "consumer", "first": fresh})
                fresh = False
            continue
        if e["event"] == "joined" and e.get("generation", -1) >= 0:
            out.append({"ts": e["ts"], "group": group, "client_id": cid,
                        "generation": e["generation"], "member_id": e["member_id"],
                        "leader_id": e.get("leader_id"), "protocol": e.get("protocol")})
            if e.get("members"):
                out[-1]["members"] = e["members"]
        elif e["event"] == "leader_assign" and out and out[-1]["generation"] == e["generation"]:
            out[-1]["members"] = e["members"]
            out[-1]["leader_id"] = e["leader_id"]
    return out


CALLBACKS = ("assigned", "revoked", "lost")
# driver actions after which the client no longer consumes what it holds (a frozen member's
# "lost" comes only after its SIGCONT, a killed one's never)
OWNER_STOPS = ("kill", "freeze", "exit_without_close", "stop_polling", "leave")


def member_callbacks(run_dir, action):
    """Every assigned / revoked / lost callback the member logged, in its own order."""
    cid, group = action["client_id"], action["group"]
    out = []
    for e in read_events(os.path.join(run_dir, cid + ".out")):
        if e["event"] in CALLBACKS:
            rec = {"ts": e["ts"], "group": group, "client_id": cid, "event": e["event"],
                   "partitions": sorted(e.get("partitions") or [])}
            for k in ("generation", "member_id"):
                if e.get(k) is not None:
                    rec[k] = e[k]
            out.append(rec)
    return out


def partition_stops(callbacks, actions):
    """Every stretch during which a partition had no working owner, per group.

    The owners of a partition are the members whose last callback for it was `assigned`.
    A `revoked` or `lost` callback, or an owner-stopping driver action (OWNER_STOPS: the
    member keeps its partitions on paper but consumes nothing), takes the member out; when that
    leaves the partition without an owner, a stop starts there, and it ends at the next
    `assigned` of that partition to any member of the group (resumed_at null when none came).
    Removals of a member that is no owner (a frozen member's `lost` after its SIGCONT) change
    nothing. Assumes, as every lab scenario does, that a frozen member stays frozen past its
    session timeout."""
    evs = [(c["ts"], 1, c["group"], c["client_id"], c["event"], c["partitions"])
           for c in callbacks]
    evs += [(a["ts"], 0, a.get("group"), a["client_id"], a["action"], None)
            for a in actions if a["action"] in OWNER_STOPS and a.get("group")]
    owners, open_, out = {}, {}, []
    for ts, _, group, cid, what, parts in sorted(evs, key=lambda e: (e[0], e[1])):
        if what == "assigned":
            for p in parts:
                key = (group, p)
                stop = open_.pop(key, None)
                if stop is not None:
                    stop.update(to_client_id=cid, resumed_at=ts,
                                stopped_ms=round((secs(ts) - secs(stop["stopped_at"])) * 1000))
                owners.setdefault(key, set()).add(cid)
            continue
        keys = ([(group, p) for p in parts] if parts is not None else
                [k for k, who in owners.items() if k[0] == group and cid in who])
        for key in keys:
            who = owners.get(key, set())
            if cid not in who:
                continue
            who.discard(cid)
            if not who and key not in open_:
                stop = {"group": group, "partition": key[1], "from_client_id": cid,
                        "stopped_at": ts, "why": what, "to_client_id": None,
                        "resumed_at": None, "stopped_ms": None}
                open_[key] = stop
                out.append(stop)
    return sorted(out, key=lambda s: (s["stopped_at"], s["group"], s["partition"]))


def life_start(actions, group, ts):
    """When the life of `group` that `ts` falls in began: the last `delete_group` action of
    it before `ts` (a deleted group made again starts its generations again), else ""."""
    starts = [a["ts"] for a in actions
              if a["action"] == "delete_group" and a.get("group") == group and a["ts"] < ts]
    return max(starts, default="")


def kip848_first_joins(joins, actions=()):
    """Drops a KIP-848 member's first epoch when another member of its group had already
    logged that epoch: Apache Kafka 4.4 computes target assignments asynchronously
    (group.consumer.assignment.interval.ms; GroupMetadataManager.java consumerGroupHeartbeat
    answers with the epoch of the latest COMPUTED target assignment), so a member that just
    joined is first told the previous assignment's epoch, of which it is not part; its next
    epoch is the first one that includes it."""
    out = []
    for j in sorted(joins, key=lambda j: j["ts"]):
        born = life_start(actions, j["group"], j["ts"])
        if j.pop("first", False) and any(
                o["group"] == j["group"] and o["client_id"] != j["client_id"]
                and o["generation"] == j["generation"] and o["ts"] > born for o in out):
            continue
        out.append(j)
    return out


def load_actions(run_dir):
    acts = read_events(os.path.join(run_dir, "actions.jsonl"))
    seen = set()
    for a in list(acts):
        cid = a.get("client_id")
        if a["action"] in ("start", "restart_static") and cid not in seen and a.get("group"):
            seen.add(cid)
            # the member ends its own stall; its log says when (the lab scheduled it)
            for e in read_events(os.path.join(run_dir, cid + ".out")):
                if e["event"] == "stall_end":
                    acts.append({"ts": e["ts"], "action": "resume_polling", "group": a["group"],
                                 "client_id": cid, "detail": "member polls again"})
    return sorted(acts, key=lambda a: a["ts"])


def cluster_joins(joins):
    """Groups one group's joins into rebalances (see module doc) and gives each its view:
    client_id -> member_id, from the leader's member list when the leader logged one (the
    only complete one: tansu answers some members a generation late), else from the joins."""
    id_map = {j["member_id"]: j["client_id"] for j in joins}
    clusters = []
    for j in sorted(joins, key=lambda j: j["ts"]):
        c = clusters[-1] if clusters else None
        if (c is None or j["generation"] != c["generation"] or j["client_id"] in c["members"]
                or secs(j["ts"]) - secs(c["first_ts"]) > SAME_REBALANCE_S):
            c = {"generation": j["generation"], "first_ts": j["ts"], "members": {}}
            clusters.append(c)
        c["members"][j["client_id"]] = j
        c["last_ts"] = j["ts"]
    for c in clusters:
        listed = [m for j in c["members"].values() for m in j.get("members", [])]
        if listed:
            c["view"] = {id_map.get(m, m): m for m in listed}
            c["from_leader"] = True
        else:
            c["view"] = None  # explain() fills it in from the previous view and the joins
            c["from_leader"] = False
    return clusters


def pending_for(actions, used, cid, kinds, before_ts):
    """The latest unused action of kinds by cid before before_ts, or None."""
    best = None
    for i, a in enumerate(actions):
        if i in used or a.get("client_id") != cid or a["action"] not in kinds:
            continue
        if a["ts"] <= before_ts:
            best = i
    return best


def explain(c, prev, actions, used):
    """Causes of cluster c (list of (action index, kind, client_id, member_id)); changes of
    membership no driver action explains go to c["unexplained"]."""
    causes, odd = [], []
    before = prev["view"] if prev else {}
    if c["view"] is None:
        # no leader list: members that did not answer are still members unless the driver
        # made them go before this round
        view = dict(before)
        for cid in list(view):
            if cid not in c["members"] and pending_for(actions, used, cid, DEPARTURE,
                                                       c["first_ts"]) is not None:
                del view[cid]
        view.update({cid: j["member_id"] for cid, j in c["members"].items()})
        c["view"] = view
    for cid, mid in sorted(c["view"].items()):
        if before.get(cid) == mid:
            continue
        i = pending_for(actions, used, cid, ARRIVAL, c["last_ts"])
        if i is not None:
            kind = ARRIVAL[actions[i]["action"]]
            if kind == "static_member_replaced" and cid not in before:
                # its old member was already gone (evicted): the broker sees a new member
                kind = "member_joined"
            causes.append((i, kind, cid, mid))
        else:
            odd.append({"client_id": cid, "change": "new member id" if cid in before
                        else "appeared", "old_member_id": before.get(cid), "member_id": mid})
    for cid, mid in sorted(before.items()):
        if cid in c["view"]:
            continue
        i = pending_for(actions, used, cid, DEPARTURE, c["first_ts"])
        if i is not None:
            causes.append((i, DEPARTURE[actions[i]["action"]], cid, mid))
        else:
            odd.append({"client_id": cid, "change": "disappeared", "old_member_id": mid})
    c["unexplained"] = odd
    return sorted(causes)


def window_signals(sigs, lo, c):
    return [x for x in sigs if lo <= x["ts"] <= c["last_ts"]]


def rebalance_record(group, c, prev, causes, actions, sigs, follow_up_of, lo):
    """One rebalance of the truth: the action that caused it, else the clients' own signals."""
    rec = {"group": group, "from_generation": prev["generation"] if prev else None,
           "to_generation": c["generation"], "first_join_ts": c["first_ts"],
           "members_after": sorted(c["view"]),
           "member_ids_after": dict(sorted(c["view"].items())),
           "membership_from": "leader's member list" if c["from_leader"] else "members' joins",
           "joins_logged": [{"client_id": j["client_id"], "ts": j["ts"]}
                            for j in sorted(c["members"].values(), key=lambda j: j["ts"])],
           "expected": False}
    if c.get("unexplained"):
        rec["membership_changes_without_action"] = c["unexplained"]
    seen = window_signals(sigs, prev["first_ts"] if prev else "", c)
    # a failed SyncGroup explains the next round and the one after (tansu first re-forms the
    # group without the failed member, then takes its rejoin in a later generation)
    failed = [x for x in window_signals(sigs, lo, c) if x["kind"] == "sync_failed"
              and x["ts"] <= c["first_ts"]]
    if causes:
        i, kind, cid, mid = causes[0]
        rec.update(trigger=kind, client_id=cid, member_id=mid, action=actions[i]["action"],
                   action_ts=actions[i]["ts"])
        if len(causes) > 1:
            rec["also"] = [{"trigger": k, "client_id": ci, "member_id": m,
                            "action": actions[ii]["action"]} for ii, k, ci, m in causes[1:]]
    elif follow_up_of is not None:
        rec.update(trigger=follow_up_of["trigger"], client_id=follow_up_of.get("client_id"),
                   member_id=follow_up_of.get("member_id"), expected=True,
                   note="cooperative-sticky follow-up round: same members rejoin after "
                        "revoking partitions (KIP-429)")
    elif failed:
        f = failed[-1]
        rec.update(trigger="previous_rebalance_failed", client_id=f["client_id"],
                   member_id=(prev["view"].get(f["client_id"]) if prev else None),
                   note=f"{f['client_id']}'s SyncGroup failed ({f['text']}) and it rejoined: "
                        "no driver action, the previous round did not complete")
    else:
        rec.update(trigger="unknown", client_id=None, member_id=None,
                   note="no driver action and no failed SyncGroup explains this generation")
    if seen:
        rec["client_signals"] = seen
    return rec


def same_generation_rejoin(c, prev, actions, used):
    """A round that changed nothing (same generation, same members, same member ids), e.g. a
    static member that tansu let back in with its old member id: not a rebalance. Gives the
    record for the truth's same_generation_rejoins, consuming a restart_static action."""
    if prev is None or c["generation"] != prev["generation"]:
        return None
    if c["view"] != prev["view"]:
        # Apache Kafka gives a restarted static member a NEW member id in the same
        # generation without a rebalance (GroupCoordinator.scala updateStaticMemberAndRebalance
        # / GroupMetadataManager.java classicGroupJoinExistingStaticMember: "static member
        # with unknown member id joins ... replacing previously mapped member"): the same
        # clients, only a restarted static member's member id differs
        changed = {cid for cid in set(c["view"]) | set(prev["view"])
                   if c["view"].get(cid) != prev["view"].get(cid)}
        if set(c["view"]) != set(prev["view"]) or any(
                pending_for(actions, used, cid, ("restart_static",), c["last_ts"]) is None
                for cid in changed):
            return None
    rec = {"group": c["members"][next(iter(c["members"]))]["group"],
           "generation": c["generation"],
           "joins_logged": [{"client_id": j["client_id"], "member_id": j["member_id"],
                             "ts": j["ts"]} for j in c["members"].values()]}
    for cid in c["members"]:
        i = pending_for(actions, used, cid, ("restart_static",), c["last_ts"])
        if i is not None:
            used.add(i)
            same_id = prev["view"].get(cid) == c["view"].get(cid)
            rec.update(action="restart_static", client_id=cid, action_ts=actions[i]["ts"],
                       note=("restarted static member got its old member id and generation "
                             "back" if same_id else
                             "restarted static member got a new member id in the same "
                             "generation (the broker replaced the old one)") +
                            "; the other members did not rejoin (no rebalance)")
    return rec


def group_rebalances(group, joins, actions, used, cooperative, sigs, rejoins):
    out = []
    prev = None
    kept = []  # the clusters that became rebalances
    for c in cluster_joins(joins):
        if prev is not None and life_start(actions, group, c["first_ts"]) > prev["last_ts"]:
            prev = None  # the group was deleted since: a new group of the same name
        causes = explain(c, prev, actions, used)
        if all(k == "static_member_replaced" for _, k, _, _ in causes):
            same = same_generation_rejoin(c, prev, actions, used)
            if same is not None:
                rejoins.append(same)
                prev["view"] = dict(c["view"])  # a replaced static member's new member id
                continue
        for i, *_ in causes:
            used.add(i)
        # one follow-up round per rebalance a driver action caused (KIP-429)
        follow = out[-1] if (not causes and cooperative and out and "action" in out[-1]
                             and c["view"] == prev["view"]) else None
        lo = kept[-2]["first_ts"] if len(kept) >= 2 else ""
        out.append(rebalance_record(group, c, prev, causes, actions, sigs, follow, lo))
        kept.append(c)
        prev = c
    return out


def in_window(ts, window):
    start, stop = window
    return (start is None or ts >= start) and (stop is None or ts <= stop)


def capture_window(actions):
    start = next((a["ts"] for a in actions if a["action"] == "capture_start"), None)
    stop = next((a["ts"] for a in actions if a["action"] == "capture_stop"), None)
    return start, stop


def build(run_dir, client_desc, capture_desc, broker_desc, notes=()):
    """The truth dict of one run (see module doc)."""
    actions = load_actions(run_dir)
    window = capture_window(actions)
    members = {}
    for a in actions:
        if a["action"] in ("start", "restart_static") and a.get("group"):
            members.setdefault(a["client_id"], a)
    joins, sigs, callbacks = [], [], []
    for a in members.values():
        joins.extend(member_joins(run_dir, a))
        callbacks.extend(member_callbacks(run_dir, a))
        sigs.extend(signals(a.get("client"), os.path.join(run_dir, a["client_id"] + ".err"),
                            a["client_id"]))
    sigs.sort(key=lambda x: x["ts"])
    joins = kip848_first_joins(joins, actions)
    group_of = {cid: a["group"] for cid, a in members.items()}
    cooperative = any("cooperative" in (a.get("detail") or "") for a in members.values())
    used = set()
    rebalances, rejoins = [], []
    for group in sorted({a["group"] for a in members.values()}):
        rebalances.extend(group_rebalances(
            group, [j for j in joins if j["group"] == group], actions, used, cooperative,
            [x for x in sigs if group_of.get(x["client_id"]) == group], rejoins))
    for r in rebalances:
        r["in_capture"] = in_window(r["first_join_ts"], window)
    gens = sorted(joins, key=lambda j: j["ts"])
    for g in gens:
        g["in_capture"] = in_window(g["ts"], window)
    callbacks.sort(key=lambda c: c["ts"])
    stops = partition_stops(callbacks, actions)
    for st in stops:
        st["in_capture"] = in_window(st["stopped_at"], window) and (
            st["resumed_at"] is None or in_window(st["resumed_at"], window))
    return {
        "scenario": os.path.basename(run_dir.rstrip("/")),
        "client": client_desc, "broker": broker_desc, "capture": capture_desc,
        "capture_window": {"start": window[0], "stop": window[1]},
        "groups": sorted({a["group"] for a in members.values()}),
        "actions": [{k: a.get(k) for k in ("ts", "action", "group", "client_id", "detail")}
                    for a in actions],
        "generations": gens,
        "rebalances": rebalances,
        "same_generation_rejoins": rejoins,
        "assignment_callbacks": callbacks,
        "partition_stops": stops,
        "unexplained_actions": [
            {k: a.get(k) for k in ("ts", "action", "group", "client_id")}
            for i, a in enumerate(actions)
            if i not in used and a["action"] in set(DEPARTURE) | set(ARRIVAL)],
        "notes": list(notes),
    }
