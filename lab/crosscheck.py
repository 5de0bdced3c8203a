"""Cross-checks each lab fixture's truth (from client logs) against tshark's decode of its
capture (the wire), so a truth that disagrees with what was captured is caught.

Takes fixtures/lab/*.truth.json and *.tshark.tsv; gives, per fixture, one line of counts and a
line per disagreement, and exits non-zero if any in-capture generation a member logged has no
JoinGroup answer on the wire with that generation and member id (where tshark decoded one), if
the wire answers a known member a generation it did not log, or if a driver leave of a dynamic
member has no LeaveGroup request with its member id.

    python3 lab/crosscheck.py
"""

import csv
import glob
import json
import os
import sys

from truth_time import secs

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(os.path.dirname(HERE), "fixtures", "lab")


def wire(tsv_path):
    """(JoinGroup answers as {(generation, member_id): epoch seconds}, LeaveGroup request
    member ids)."""
    joins, leaves = {}, set()
    with open(tsv_path, newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            mids = [m for m in (row.get("kafka.member_id") or "").split(",") if m]
            gen = (row.get("kafka.generation_id") or "").split(",")[0]
            if row.get("kafka.response_key") == "11" and gen not in ("", "-1") and mids:
                # a JoinGroup answer's first member id is the receiver's own
                joins[(int(gen), mids[0])] = float(row["frame.time_epoch"])
            if row.get("kafka.request_key") == "13":
                leaves.update(mids)
    return joins, leaves


def check(truth_path):
    t = json.load(open(truth_path))
    name = t["scenario"]
    joins, leaves = wire(os.path.join(FIX, name + ".tshark.tsv"))
    problems = []
    gens = [g for g in t["generations"] if g["in_capture"]]
    found = sum((g["generation"], g["member_id"]) in joins for g in gens)
    for g in gens:
        if (g["generation"], g["member_id"]) not in joins:
            problems.append(f"  generation {g['generation']} of {g['client_id']} "
                            f"({g['member_id']}) at {g['ts']}: no decoded JoinGroup answer")
    logged = {(g["generation"], g["member_id"]) for g in t["generations"]}
    client_of = {g["member_id"]: g["client_id"] for g in t["generations"]}
    left = {a["client_id"]: secs(a["ts"]) for a in t["actions"] if a["action"] == "leave"}
    for (gen, mid), at in sorted(joins.items()):
        if (gen, mid) in logged or mid not in client_of:
            continue
        if at >= left.get(client_of[mid], float("inf")):
            # an answer that reached a closing member: the client drops it unlogged
            print(f"  (info) wire answers generation {gen} to closing {client_of[mid]}")
            continue
        problems.append(f"  wire answers generation {gen} to {mid}: no member logged it")
    static = {a["client_id"] for a in t["actions"] if "instance_id" in (a.get("detail") or "")}
    for a in t["actions"]:
        if a["action"] != "leave" or a["client_id"] in static:
            continue
        mids = {g["member_id"] for g in t["generations"] if g["client_id"] == a["client_id"]}
        if not mids & leaves:
            problems.append(f"  leave of {a['client_id']} at {a['ts']}: no LeaveGroup on the wire")
    print(f"{name}: {found}/{len(gens)} logged generations answered on the wire "
          f"(tshark-decoded), {len(leaves)} LeaveGroup member ids")
    for p in problems:
        print(p)
    return not problems


def main():
    ok = True
    for p in sorted(glob.glob(os.path.join(FIX, "*.truth.json"))):
        ok = check(p) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
