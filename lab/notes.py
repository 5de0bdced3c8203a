"""What a careful person noticed in each committed lab run, copied into its truth's `notes`.

Takes nothing; gives NOTES: fixture name -> list of sentences. Every sentence was checked
against that run's member logs, action log, truth and capture (times are UTC, HH:MM:SS.mmm of
2026-12-03; the runs recorded then replaced those of 2026-12-02, whose members did not yet log
their assignment callbacks). A rerun of the lab makes a new run with new times and ids:
re-check these notes before committing new captures (tansu's timing varies from run to run).
"""

COMMON = (
    "tansu answers a round's JoinGroups about 3 s after the first of them arrives, answers "
    "the members of one generation at different times (see joins_logged), and may skip or "
    "repeat generation numbers (lab/crosscheck.py)."
)

NOTES = {
    "kjs_join_one_by_one": [
        COMMON,
        "Each new g1 member joined after the group had settled; each join was one rebalance: "
        "the members already in the group were told REBALANCE_IN_PROGRESS on their next "
        "heartbeat and rejoined, and the generation rose by one (0 to 3).",
    ],
    "kp_clean_leave": [
        COMMON,
        "kafka-python sent LeaveGroup for g1-c2 on close() (18:59:18.477); the survivors "
        "learned of the rebalance from REBALANCE_IN_PROGRESS heartbeat answers about 0.5 s "
        "later and got generation 1 at 18:59:22.",
    ],
    "ck_session_timeout": [
        COMMON,
        "g1-c2 was SIGSTOPped at 18:59:37.847. g1-c1 and g1-c3 were told "
        "REBALANCE_IN_PROGRESS at 18:59:43.639 and 18:59:44.527 (about the 6 s session "
        "timeout later) and got generation 1 without g1-c2.",
        "After SIGCONT (18:59:49.847) g1-c2's heartbeat was answered UNKNOWN_MEMBER_ID; it "
        "rejoined with a new member id, which made generation 2.",
    ],
    "kp_max_poll": [
        COMMON,
        "g1-c2 stopped polling at 19:00:08.695; kafka-python's heartbeat thread sent "
        "LeaveGroup at 19:00:19.631 (max.poll.interval.ms 10 s later); the process and its "
        "connections stayed up. When it polled again (19:00:24.929) it rejoined with a new "
        "member id (generation 2).",
    ],
    "ck_max_poll": [
        COMMON,
        "g1-c2 stopped polling at 19:00:43.673; librdkafka sent LeaveGroup at 19:00:54.024 "
        "(max.poll.interval.ms 10 s later); when the application polled again (19:00:59.719) "
        "it rejoined with a new member id (generation 2).",
    ],
    "ck_static_restart": [
        COMMON,
        "close() of static member g1-c2 (group.instance.id g1-static-2) sent no LeaveGroup. "
        "The new process, joining with the same instance id and an empty member id, got its "
        "old member id and generation 0 back (19:01:36.698), and no other member rejoined: "
        "no rebalance, so it is listed under same_generation_rejoins, not rebalances.",
        "librdkafka refuses max.poll.interval.ms < session.timeout.ms, so the static members "
        "run with both at 15000 ms.",
    ],
    "kp_static_restart": [
        COMMON,
        "close() of static member g1-c2 (group_instance_id g1-static-2) sent no LeaveGroup. "
        "The restarted process got its old member id and generation 0 back (19:02:13.592); the "
        "other members did not rejoin: no rebalance (same_generation_rejoins).",
    ],
    "ck_cooperative_sticky": [
        COMMON,
        "g1-c3's join (19:03:37.622) made generation 1. The leader g1-c2 revoked lab-1 and "
        "lab-3 in it and rejoined at 19:03:41.187 (KIP-429), which made generation 2 (the "
        "expected follow-up); g1-c1's JoinGroup of 19:03:38.385 was answered only with "
        "generation 2. In generation 2 g1-c1 revoked lab-0 and lab-2 (19:03:44.394) and "
        "rejoined (19:03:44.396), while g1-c3's generation-1 SyncGroup was answered "
        "REBALANCE_IN_PROGRESS only at 19:03:45.835: generation 3. g1-c1's close() "
        "(19:03:54.899) made generation 4.",
        "Only the first follow-up round after a driver-caused rebalance is marked expected "
        "(KIP-429); later rounds are previous_rebalance_failed where a member's SyncGroup had "
        "just failed, else unknown.",
    ],
    "ck_static_expired": [
        COMMON,
        "Static member g1-c2 (g1-static-2), the leader, was SIGKILLed at 19:02:35.412. Only "
        "g1-c1 was told REBALANCE_IN_PROGRESS, at 19:02:43.264 (about the 8 s session "
        "timeout later), and got generation 0 again at 19:02:47.267, still naming the dead "
        "member as leader; g1-c3 was not made to rejoin.",
        "The new process with the same instance id, started after the eviction "
        "(19:02:50.461), got a NEW member id and generation 1: the broker had forgotten the "
        "instance, so the truth names it member_joined rather than static_member_replaced. "
        "tansu kept naming the dead member id as leader, so nobody assigned partitions: every "
        "generation-1 SyncGroup was answered REBALANCE_IN_PROGRESS after about 7 s and the "
        "members got generation 1 again, twice, until the end (same_generation_rejoins).",
    ],
    "kjs_killed": [
        COMMON,
        "g1-c2 was SIGKILLed at 19:04:12.849 (no LeaveGroup). g1-c3 and g1-c1 were told "
        "REBALANCE_IN_PROGRESS at 19:04:18.530 and 19:04:18.757 (about the 6 s session "
        "timeout later) and got generation 1 without it.",
    ],
    "ck_killed": [
        COMMON,
        "g1-c2 was SIGKILLed at 18:58:00.593 (no LeaveGroup). g1-c1 and g1-c3 were told "
        "REBALANCE_IN_PROGRESS at 18:58:06.591 and 18:58:06.665 (about the 6 s session "
        "timeout later) and got generation 1 without it.",
    ],
    "ck_midstream": [
        COMMON,
        "The capture starts at 19:04:44.893, after g1 and g2 were stable at generation 0: "
        "their earlier joins are in the truth with in_capture false and are not on the wire; "
        "the capture opens in the middle of established TCP connections.",
        "g1-c3 joined (generation 1), then g1-c1 closed with LeaveGroup (generation 2).",
    ],
    "kp_ten_members": [
        COMMON,
        "12 g1 members started within 0.12 s; tansu answered generation 0 to all 12 between "
        "19:05:15.717 and 19:05:15.996, and g1-c9 got generation 0 again at 19:05:20.969 "
        "(same_generation_rejoins).",
        "The three LeaveGroups (g1-c8, g1-c12, g1-c4, within 0.12 s from 19:05:31.042) made "
        "one rebalance, to generation 3 with nine members; 1 and 2 were never answered.",
    ],
    "kjs_clean_leave": [
        COMMON,
        "KafkaJS sent LeaveGroup for g1-c2 on disconnect() (19:06:03.058); generation 1 holds "
        "g1-c1 and g1-c3.",
    ],
}
