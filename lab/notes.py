"""What a careful person noticed in each committed lab run, copied into its truth's `notes`.

Takes nothing; gives NOTES: fixture name -> list of sentences. Every sentence was checked
against that run's member logs, action log and truth (times are UTC, HH:MM:SS.mmm of
2026-12-02). A rerun of the lab makes a new run with new times and ids: re-check these notes
before committing new captures (tansu's timing varies from run to run).
"""

COMMON = (
    "tansu often answers a JoinGroup only about 3 s after it arrives (not always: bursts of "
    "joins at start-up are answered within milliseconds), answers the members of one "
    "generation at different times (see joins_logged), and skips generation numbers: no "
    "member logged the skipped ones and the wire shows no JoinGroup answer carrying them "
    "(lab/crosscheck.py)."
)

NOTES = {
    "kjs_join_one_by_one": [
        COMMON,
        "Each new g1 member joined after the group had settled; each join was one rebalance.",
        "In the fourth round (to generation 4, leader g1-c1's member list) g1-c2 appears with a "
        "new member id: tansu had dropped its old one without any driver action (listed under "
        "membership_changes_without_action).",
        "Background group g2 (KafkaJS) rebalanced three more times with no driver action: "
        "g2-c2's SyncGroup was answered REBALANCE_IN_PROGRESS, it rejoined, and generations 1 "
        "and 2 were answered twice to single members (same_generation_rejoins).",
    ],
    "kp_clean_leave": [
        COMMON,
        "kafka-python sent LeaveGroup v5 for g1-c2 on close(); the survivors learned of the "
        "rebalance from REBALANCE_IN_PROGRESS heartbeat answers about 0.8 s later.",
        "At start-up tansu bumped g1's generation for each JoinGroup arriving within 10 ms and "
        "answered g1-c3's SyncGroups with REBALANCE_IN_PROGRESS until generation 2 held all "
        "three members.",
    ],
    "ck_session_timeout": [
        COMMON,
        "g1-c2 was SIGSTOPped at 16:33:45.360. Only g1-c3 was told REBALANCE_IN_PROGRESS, at "
        "16:33:51.129 (about the 6 s session timeout later); it rejoined and got generation 2 "
        "again (the generation number repeated) at 16:33:54.131. The leader g1-c1 was not made "
        "to rejoin, so no new assignment was computed: g1-c2's partitions stayed unassigned "
        "until generation 3.",
        "After SIGCONT (16:33:57.360) librdkafka reported its own session lost, got "
        "UNKNOWN_MEMBER_ID on its heartbeat and rejoined with a new member id (generation 3).",
    ],
    "kp_max_poll": [
        COMMON,
        "g1-c2 stopped polling at 16:34:14.874; kafka-python's heartbeat thread logged "
        "'Consumer poll timeout has expired' at 16:34:25.461 and sent LeaveGroup; the process "
        "and its connections stayed up. When it polled again (16:34:31.085) it rejoined with a "
        "new member id (generation 4).",
    ],
    "ck_max_poll": [
        COMMON,
        "g1-c2 stopped polling at 16:34:48.403; librdkafka logged 'Application maximum poll "
        "interval (10000ms) exceeded by 487ms ... leaving group' at 16:34:58.907 and sent "
        "LeaveGroup v1; when the application polled again it rejoined with a new member id "
        "(generation 4).",
    ],
    "ck_static_restart": [
        COMMON,
        "close() of static member g1-c2 (group.instance.id g1-static-2) sent no LeaveGroup. "
        "The new process, joining with the same instance id and an empty member id, got its "
        "old member id and generation 2 back within about 3 s, and no other member rejoined: "
        "no rebalance, so it is listed under same_generation_rejoins, not rebalances. (This "
        "run does not show the 'new member id' behaviour the wire-clue notes describe.)",
        "librdkafka refuses max.poll.interval.ms < session.timeout.ms, so the static members "
        "run with both at 15000 ms.",
    ],
    "kp_static_restart": [
        COMMON,
        "close() of static member g1-c2 (group_instance_id g1-static-2) sent no LeaveGroup. "
        "The restarted process got its old member id and generation 2 back; the other members "
        "did not rejoin: no rebalance (same_generation_rejoins).",
    ],
    "ck_cooperative_sticky": [
        COMMON,
        "A rebalance storm with three driver actions: after each membership change tansu "
        "started a new generation as soon as a single member rejoined (librdkafka's "
        "cooperative follow-up rejoin included), while the others still held the previous "
        "one; their SyncGroups and heartbeats were answered REBALANCE_IN_PROGRESS and g1 went "
        "through generations 0 to 16 in about 20 s.",
        "Only the first follow-up round after a driver-caused rebalance is marked expected "
        "(KIP-429); later rounds are previous_rebalance_failed where a member's SyncGroup had "
        "just failed, else unknown.",
        "The wire also answers generation 13 to g1-c1 (16:36:22.597) after its close() began "
        "(16:36:22.148): librdkafka dropped that answer without logging it and left the group, "
        "so the truth's generations do not list it (lab/crosscheck.py reports it as info).",
    ],
    "ck_static_expired": [
        COMMON,
        "Static member g1-c2 (g1-static-2) was SIGKILLed at 16:42:08.328. Only g1-c1 was told "
        "REBALANCE_IN_PROGRESS, at 16:42:16.168 (about the 8 s session timeout later), and got "
        "generation 2 again at 16:42:19.170; g1-c3 was not made to rejoin.",
        "The new process with the same instance id, started after the eviction "
        "(16:42:22.356), got a NEW member id and generation 3: the broker had forgotten the "
        "instance, so the truth names it member_joined rather than static_member_replaced.",
    ],
    "kjs_killed": [
        COMMON,
        "g1-c2 was SIGKILLed at 16:36:39.752 (no LeaveGroup). Only g1-c3 was told "
        "REBALANCE_IN_PROGRESS, at 16:36:45.549 (about the 6 s session timeout later), and got "
        "generation 2 again at 16:36:48.554; g1-c1 was not made to rejoin.",
    ],
    "ck_killed": [
        COMMON,
        "g1-c2 was SIGKILLed at 16:37:06.784 (no LeaveGroup). Only g1-c1 was told "
        "REBALANCE_IN_PROGRESS, at 16:37:12.700 (about the 6 s session timeout later), and got "
        "generation 2 again at 16:37:15.701; g1-c3 was not made to rejoin.",
    ],
    "ck_midstream": [
        COMMON,
        "The capture starts at 16:37:33.385, after g1 and g2 were stable at generation 1: "
        "their earlier joins are in the truth with in_capture false and are not on the wire; "
        "the capture opens in the middle of established TCP connections.",
        "g1-c3 joined (generation 2), then g1-c1 closed with LeaveGroup v1 (generation 3).",
    ],
    "kp_ten_members": [
        COMMON,
        "12 g1 members started within 0.12 s. tansu answered generation 0 to g1-c1 alone, then "
        "bumped the generation for arriving JoinGroups (SyncGroups answered "
        "REBALANCE_IN_PROGRESS) until generation 11 held all 12 members, answered over about "
        "3 s; generation 11 was answered again to g1-c11 (same_generation_rejoins).",
        "The three simultaneous LeaveGroups (g1-c4, g1-c8, g1-c12) made one rebalance, to "
        "generation 14 with nine members; 12 and 13 were never answered.",
    ],
    "kjs_clean_leave": [
        COMMON,
        "KafkaJS sent LeaveGroup v3 for g1-c2 on disconnect(); generation 3 holds g1-c1 and "
        "g1-c3.",
        "Then, with no driver action, leader g1-c3 got generation 3 again alone (16:38:44.488) "
        "with g1-c1 missing from its member list; the capture ended (16:38:45.593) before "
        "g1-c1 came back: that round is unknown.",
    ],
}
