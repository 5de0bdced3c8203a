//! Hand splits of the most frequent coordinator lines, taken before their
//! regexes.
//!
//! Takes: a coordinator message with its prefix removed. Gives: the
//! [`Parsed`] event its regex would give, or `None` when the line is not in
//! the plain shape these splits know (quoted ids, odd case, a group name
//! holding the words that follow it): the regex then decides, so a split
//! never rejects a line and never reads one differently (the differential
//! test below runs both on every shape it can make).
//!
//! Why: on a coordinator-heavy log the regexes' captures (a lazy group name
//! followed by a tail that must match to the end, a backtracking search per
//! line) were the largest part of reading a line: "Stabilized group",
//! "Assignment received" and "Dynamic member … joins group" are about
//! half of a busy coordinator's lines (the other frequent one, "Preparing to
//! rebalance", was already split by hand). Then "is now empty", the 0.11–2.3
//! "has left", a KIP-848 member's new assignment state and a target
//! assignment (whose regex read the whole assignment map to its final dot).
//!
//! The readers that are tried first on every line of their kind also look
//! for words their regex cannot match without before running it: a
//! regex's captures cost thousands of instructions even to fail.

use crate::event::{BrokerLine, EventKind};
use crate::logs::parsed::{finder, owned_text, starts_with_ci, Parsed};

/// "Stabilized group G generation N[ (__consumer_offsets-P)][ with K
/// members][.]", as `lifecycle::stabilized`'s regex reads it.
pub(super) fn stabilized(msg: &[u8]) -> Option<Parsed> {
    let rest = msg.strip_prefix(b"Stabilized group ")?;
    // The regex's group is lazy: the first " generation " after at least
    // one byte whose tail matches to the end.
    let (group, tail) = first_split(rest, finder!(b" generation "), |tail| {
        let (digits, t) = signed_digits(tail)?;
        let t = skip_offsets_partition(t);
        let (members, t) = match t.strip_prefix(b" with ") {
            Some(w) => {
                let (m, after) = digits_run(w)?;
                (Some(m), after.strip_prefix(b" members")?)
            }
            None => (None, t),
        };
        matches!(t, b"" | b".").then_some((digits, members))
    })?;
    let (digits, members) = tail;
    let generation: i32 = parse(digits)?;
    let line = BrokerLine::Stabilized {
        generation,
        members: members.and_then(parse),
        protocol: None,
        leader: None,
    };
    Some(
        Parsed::new(EventKind::Broker(line))
            .group(Some(owned_text(group)))
            .generation(Some(generation)),
    )
}

/// "Assignment received from leader [M ]for group G for generation N[. The
/// group has K members, S of which are static.]", with a plain member id or
/// none (before 3.0), as `lifecycle::assignment_received`'s regex reads it.
pub(super) fn assignment_received(msg: &[u8]) -> Option<Parsed> {
    let after = msg.strip_prefix(b"Assignment received from leader ")?;
    let (member, rest) = plain_token(after)?;
    // The regex tries a leader first; a line without one reads as one
    // whose leader is "for" until that fails.
    let with_leader = rest
        .strip_prefix(b" for group ")
        .and_then(|r| first_split(r, finder!(b" for generation "), generation_and_count));
    let (member, (group, (digits, members))) = match with_leader {
        Some(found) => (Some(member), found),
        None => {
            let r = after.strip_prefix(b"for group ")?;
            let found = first_split(r, finder!(b" for generation "), generation_and_count)?;
            (None, found)
        }
    };
    let generation: i32 = parse(digits)?;
    let line = BrokerLine::AssignmentReceived {
        generation,
        members: members.and_then(parse),
    };
    Some(
        Parsed::new(EventKind::Broker(line))
            .group(Some(owned_text(group)))
            .member(member.map(owned_text))
            .generation(Some(generation)),
    )
}

/// What follows "for generation " in an "Assignment received" line, to its
/// end: the generation's digits and the member count's, if stated.
fn generation_and_count(tail: &[u8]) -> Option<(&[u8], Option<&[u8]>)> {
    let (digits, t) = signed_digits(tail)?;
    if t.is_empty() {
        return Some((digits, None));
    }
    let t = t.strip_prefix(b". The group has ")?;
    let (members, t) = digits_run(t)?;
    let t = t.strip_prefix(b" members, ")?;
    let (_, t) = digits_run(t)?;
    (t == b" of which are static.").then_some((digits, Some(members)))
}

/// "Dynamic member with unknown member id joins group G in S state. Created
/// a new member id M and request the member to rejoin with this id." (and
/// "in state S."), with a plain member id and a state of letters, as
/// `members::unknown_id_round_trip`'s regex reads it.
pub(super) fn unknown_id_round_trip(msg: &[u8]) -> Option<Parsed> {
    const HEAD: &[u8] = b"dynamic member with unknown member id joins group ";
    const ENDING: &[u8] = b" and request the member to rejoin with this id.";
    let rest = strip_prefix_ci(msg, HEAD)?;
    let (group, (state, member)) = first_split(rest, finder!(b" in "), |tail| {
        let t = tail.strip_prefix(b"state ").unwrap_or(tail);
        let n = t.iter().take_while(|b| b.is_ascii_alphabetic()).count();
        let (state, t) = t.split_at(n);
        let t = t.strip_prefix(b" state").unwrap_or(t);
        let t = t.strip_prefix(b". Created a new member id ")?;
        let (member, t) = plain_token(t)?;
        (n > 0 && t == ENDING).then_some((state, member))
    })?;
    // That regex ignores case, so an " IN " starting in the group could
    // end it first: such a group is left to the regex.
    if contains_ci(&rest[..group.len() + 3], b" in ") {
        return None;
    }
    let line = BrokerLine::MemberJoined {
        pending: true,
        from_empty: state == b"Empty",
    };
    Some(
        Parsed::new(EventKind::Broker(line))
            .group(Some(owned_text(group)))
            .member(Some(owned_text(member))),
    )
}

/// "Member M in group G has failed[, removing it from the group][.]",
/// with a plain member id, as `members::failed`'s regex reads it.
pub(super) fn member_failed(msg: &[u8]) -> Option<Parsed> {
    let rest = msg.strip_prefix(b"Member ")?;
    let (member, rest) = plain_token(rest)?;
    let rest = rest.strip_prefix(b" in group ")?;
    let (group, ()) = first_split(rest, finder!(b" has failed"), |tail| {
        matches!(
            tail,
            b"" | b"." | b", removing it from the group" | b", removing it from the group."
        )
        .then_some(())
    })?;
    Some(
        Parsed::new(EventKind::Broker(BrokerLine::MemberFailed))
            .member(Some(owned_text(member)))
            .group(Some(owned_text(group))),
    )
}

/// "Group G with generation N is now empty[ (__consumer_offsets-P)][.]",
/// as `lifecycle::now_empty`'s regex reads it (a generation too large for
/// an `i32` is left out, the line kept).
pub(super) fn now_empty(msg: &[u8]) -> Option<Parsed> {
    let rest = msg.strip_prefix(b"Group ")?;
    let (group, digits) = first_split(rest, finder!(b" with generation "), |tail| {
        let (digits, t) = signed_digits(tail)?;
        let t = skip_offsets_partition(t.strip_prefix(b" is now empty")?);
        matches!(t, b"" | b".").then_some(digits)
    })?;
    Some(
        Parsed::new(EventKind::Broker(BrokerLine::GroupEmpty))
            .group(Some(owned_text(group)))
            .generation(parse(digits)),
    )
}

/// The fixed words after the member in a KIP-848 member's reconciliation
/// line (3.8+).
pub(super) const NEW_ASSIGNMENT_STATE: &[u8] = b" new assignment state: epoch=";

/// "Member M new assignment state: epoch=E, previousEpoch=P, state=S…",
/// its fixed words found at `at`, with a plain member id, as
/// `consumer_group::assignment_state`'s regex reads it (what follows the
/// state is not read).
pub(super) fn assignment_state(msg: &[u8], at: usize) -> Option<Parsed> {
    if !msg.starts_with(b"Member ") {
        return None;
    }
    let member = msg.get(b"Member ".len()..at)?;
    let (member, after) = plain_token(member)?;
    if !after.is_empty() {
        return None;
    }
    let rest = &msg[at + NEW_ASSIGNMENT_STATE.len()..];
    let (epoch, rest) = signed_digits(rest)?;
    let rest = rest.strip_prefix(b", previousEpoch=")?;
    let (previous, rest) = signed_digits(rest)?;
    let rest = rest.strip_prefix(b", state=")?;
    let n = rest
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    let epoch: i32 = parse(epoch)?;
    let line = BrokerLine::MemberAssignmentState {
        epoch,
        previous_epoch: parse(previous)?,
        state: (n > 0).then(|| owned_text(&rest[..n]))?,
    };
    Some(
        Parsed::new(EventKind::Broker(line))
            .member(Some(owned_text(member)))
            .generation(Some(epoch)),
    )
}

/// "Computed a new target assignment for epoch E[ with 'A' assignor][ in
/// Tms][: map].", as `consumer_group::target_assignment`'s regex reads it
/// (the map, any bytes, is not read).
pub(super) fn target_assignment(msg: &[u8]) -> Option<Parsed> {
    let rest = msg.strip_prefix(b"Computed a new target assignment for epoch ")?;
    let (epoch, mut rest) = signed_digits(rest)?;
    let mut assignor = None;
    if let Some(after) = rest.strip_prefix(b" with '") {
        let close = memchr::memchr(b'\'', after)?;
        assignor = Some(owned_text(&after[..close]));
        rest = after[close..].strip_prefix(b"' assignor")?;
    }
    if let Some(after) = rest.strip_prefix(b" in ") {
        let (_, t) = digits_run(after)?;
        rest = t.strip_prefix(b"ms")?;
    }
    let ends = rest == b"." || (rest.starts_with(b":") && rest.ends_with(b"."));
    if !ends {
        return None;
    }
    let epoch: i32 = parse(epoch)?;
    let line = BrokerLine::TargetAssignmentComputed { epoch, assignor };
    Some(Parsed::new(EventKind::Broker(line)).generation(Some(epoch)))
}

/// "Member M in group G has left, removing it from the group[.]" (0.11–2.3),
/// with a plain member id, as `members::left_classic`'s regex reads it.
pub(super) fn member_left(msg: &[u8]) -> Option<Parsed> {
    let rest = msg.strip_prefix(b"Member ")?;
    let (member, rest) = plain_token(rest)?;
    let rest = rest.strip_prefix(b" in group ")?;
    let (group, ()) = first_split(
        rest,
        finder!(b" has left, removing it from the group"),
        |tail| matches!(tail, b"" | b".").then_some(()),
    )?;
    Some(
        Parsed::new(EventKind::Broker(BrokerLine::MemberLeft {
            client_reason: None,
        }))
        .member(Some(owned_text(member)))
        .group(Some(owned_text(group))),
    )
}

/// The member (and static id) of the two most frequent rebalance reasons,
/// "Adding new member M[ with group instance id I][; …]" and "removing
/// member M on heartbeat expiration" / "… on LeaveGroup", with a plain
/// member id, as `reason::reason_subject`'s regexes read them: (member,
/// instance as written).
pub(super) fn reason_subject(reason: &[u8]) -> Option<(&[u8], Option<&[u8]>)> {
    if let Some(rest) = strip_prefix_ci(reason, b"adding new member ") {
        let (member, rest) = plain_token(rest)?;
        if rest.is_empty() || rest.starts_with(b";") {
            return Some((member, None));
        }
        let rest = strip_prefix_ci(rest, b" with group instance id ")
            .or_else(|| strip_prefix_ci(rest, b" with group instanceid "))?;
        // The instance is lazy: the shortest run of non-space bytes that a
        // `;` or the end follows.
        let run = rest.iter().take_while(|b| !is_space(**b)).count();
        let end = match rest[..run].iter().skip(1).position(|b| *b == b';') {
            Some(i) => i + 1,
            None if run == rest.len() && run > 0 => run,
            None => return None,
        };
        return Some((member, Some(&rest[..end])));
    }
    let rest = strip_prefix_ci(reason, b"removing member ")?;
    let (member, rest) = plain_token(rest)?;
    let rest = strip_prefix_ci(rest, b" on ")?;
    let known =
        starts_with_ci(rest, b"heartbeat expiration") || starts_with_ci(rest, b"leavegroup");
    known.then_some((member, None))
}

fn strip_prefix_ci<'a>(s: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    starts_with_ci(s, prefix).then(|| &s[prefix.len()..])
}

/// The first of `finder`'s words in `rest` after at least one byte, with no
/// newline before it (the regexes' `.` stops at one), whose tail `tail_ok`
/// accepts: (what is before it, what `tail_ok` gave). The searcher is
/// built once by the caller ([`finder!`]).
fn first_split<'a, T>(
    rest: &'a [u8],
    finder: &memchr::memmem::Finder<'_>,
    mut tail_ok: impl FnMut(&'a [u8]) -> Option<T>,
) -> Option<(&'a [u8], T)> {
    let sep = finder.needle();
    let mut from = 1;
    while from <= rest.len() {
        let at = from + finder.find(&rest[from..])?;
        if memchr::memchr(b'\n', &rest[..at]).is_some() {
            return None;
        }
        if let Some(t) = tail_ok(&rest[at + sep.len()..]) {
            return Some((&rest[..at], t));
        }
        from = at + 1;
    }
    None
}

/// A run of bytes up to the first whitespace (the regexes' `\s`), not
/// empty and holding no quote (a quoted id is the regex's to read).
fn plain_token(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = s.iter().position(|b| is_space(*b)).unwrap_or(s.len());
    let token = &s[..end];
    if token.is_empty() || token.iter().any(|b| matches!(b, b'\'' | b'"')) {
        return None;
    }
    Some((token, &s[end..]))
}

/// `(?-u)\s`: ASCII whitespace with the vertical tab.
pub(super) fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

/// `-?\d+` at the start of `s`.
fn signed_digits(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let sign = usize::from(s.first() == Some(&b'-'));
    let (_, rest) = digits_run(&s[sign..])?;
    Some((&s[..s.len() - rest.len()], rest))
}

/// `\d+` at the start of `s`.
fn digits_run(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let n = s.iter().take_while(|b| b.is_ascii_digit()).count();
    (n > 0).then(|| s.split_at(n))
}

/// `(?: \(__consumer_offsets-\d+\))?`.
fn skip_offsets_partition(s: &[u8]) -> &[u8] {
    s.strip_prefix(b" (__consumer_offsets-")
        .and_then(digits_run)
        .and_then(|(_, t)| t.strip_prefix(b")"))
        .unwrap_or(s)
}

fn contains_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

fn parse<T: std::str::FromStr>(digits: &[u8]) -> Option<T> {
    std::str::from_utf8(digits).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::broker::{consumer_group, lifecycle, members, reason};
    use crate::logs::synth::Rng;

    type Pair = (fn(&[u8]) -> Option<Parsed>, fn(&[u8]) -> Option<Parsed>);

    const STABILIZED: Pair = (stabilized, lifecycle::stabilized_by_regex);
    const ASSIGNMENT: Pair = (assignment_received, lifecycle::assignment_received_by_regex);
    const ROUND_TRIP: Pair = (
        unknown_id_round_trip,
        members::unknown_id_round_trip_by_regex,
    );
    const FAILED: Pair = (member_failed, members::failed_by_regex);
    const LEFT: Pair = (member_left, members::left_classic_by_regex);
    const NOW_EMPTY: Pair = (now_empty, lifecycle::now_empty_by_regex);
    const TARGET: Pair = (
        target_assignment,
        consumer_group::target_assignment_by_regex,
    );
    const ASSIGNMENT_STATE: Pair = (
        |m| assignment_state(m, memchr::memmem::find(m, NEW_ASSIGNMENT_STATE)?),
        consumer_group::assignment_state_by_regex,
    );
    /// Each reader whose regex runs only on a line holding its fixed words,
    /// against its regex alone.
    const GATED: &[Pair] = &[
        (lifecycle::now_empty, lifecycle::now_empty_by_regex),
        (
            consumer_group::assignment_state,
            consumer_group::assignment_state_by_regex,
        ),
        (members::failed, members::failed_by_regex),
        (members::left_classic, members::left_classic_by_regex),
        (
            consumer_group::target_assignment,
            consumer_group::target_assignment_by_regex,
        ),
    ];

    /// Every combination of the pieces, joined in order.
    fn combine(parts: &[&[&str]]) -> Vec<String> {
        parts.iter().fold(vec![String::new()], |acc, options| {
            acc.iter()
                .flat_map(|a| options.iter().map(move |o| format!("{a}{o}")))
                .collect()
        })
    }

    /// The split reads `msg` as its regex does, or leaves it to it.
    fn agrees(pair: Pair, msg: &[u8]) -> bool {
        match pair.0(msg) {
            Some(p) => pair.1(msg) == Some(p),
            None => true,
        }
    }

    /// `m` and `rounds` random edits of it: one to three bytes of `bytes`
    /// (those the patterns care about) inserted, removed or put in place.
    fn edited(m: &[u8], rounds: usize, bytes: &[u8], rng: &mut Rng) -> Vec<Vec<u8>> {
        let mut variants = vec![m.to_vec()];
        for _ in 0..rounds {
            let mut v = m.to_vec();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(v.len() as u64 + 1) as usize;
                let b = bytes[rng.below(bytes.len() as u64) as usize];
                match rng.below(3) {
                    0 => v.insert(at, b),
                    1 if at < v.len() => {
                        v.remove(at);
                    }
                    _ if at < v.len() => v[at] = b,
                    _ => v.push(b),
                }
            }
            variants.push(v);
        }
        variants
    }

    /// Each message and random edits of it: the split agrees with the
    /// regex on all; returns how many the regex read and how many of
    /// those the split read itself.
    fn check(pair: Pair, messages: &[String], rounds: usize) -> (usize, usize) {
        const BYTES: &[u8] = b" .-0123456789'\"\n\tinINstateS()_";
        let mut rng = Rng(0x5eed);
        let (mut read, mut split) = (0, 0);
        for m in messages {
            for v in edited(m.as_bytes(), rounds, BYTES, &mut rng) {
                assert!(agrees(pair, &v), "{:?}", String::from_utf8_lossy(&v));
                read += usize::from(pair.1(&v).is_some());
                split += usize::from(pair.0(&v).is_some());
            }
        }
        (read, split)
    }

    #[test]
    fn stabilized_lines_are_split_as_their_regex_reads_them() {
        let lines = combine(&[
            &["Stabilized group ", "stabilized group "],
            &[
                "g",
                "billing-5",
                "a generation 3",
                "g\nh",
                "é",
                "x (__consumer_offsets-1)",
            ],
            &[" generation "],
            &["5", "-1", "99999999999", "", "5x", "-"],
            &["", " (__consumer_offsets-12)", " (__consumer_offsets-)"],
            &[
                "",
                " with 3 members",
                " with members",
                " with 99999999999 members",
            ],
            &["", ".", "..", " "],
        ]);
        let (read, split) = check(STABILIZED, &lines, 4);
        assert!(
            split * 10 > read * 9,
            "the split reads most ({split} of {read})"
        );
        let p =
            stabilized(b"Stabilized group a generation 3 generation 4 with 2 members.").unwrap();
        assert_eq!(
            (p.group.as_deref(), p.generation_id),
            (Some("a generation 3"), Some(4))
        );
    }

    #[test]
    fn assignment_lines_are_split_as_their_regex_reads_them() {
        let lines = combine(&[
            &["Assignment received from leader "],
            &["", "m-1 ", "for ", "'q m' ", "c-1\tx "],
            &["for group "],
            &["g", "g for generation 2", "é", "g\nh"],
            &[" for generation "],
            &["5", "-1", "99999999999", ""],
            &[
                "",
                ". The group has 3 members, 0 of which are static.",
                ". The group has 3 members, 0 of which are static",
                ". The group has  members, 0 of which are static.",
            ],
        ]);
        let (read, split) = check(ASSIGNMENT, &lines, 4);
        // The plain combinations (a plain member or none, a known ending).
        assert!(
            split >= 24,
            "the split reads the plain ones ({split} of {read})"
        );
        for (msg, leader) in [
            (
                "Assignment received from leader for group g for generation 2",
                None,
            ),
            (
                "Assignment received from leader for for group g for generation 2",
                Some("for"),
            ),
        ] {
            let p = assignment_received(msg.as_bytes()).unwrap();
            assert_eq!(p.member_id.as_deref(), leader, "{msg}");
        }
    }

    #[test]
    fn round_trip_join_lines_are_split_as_their_regex_reads_them() {
        let lines = combine(&[
            &[
                "Dynamic member with unknown member id joins group ",
                "Dynamic Member with unknown member id joins group ",
                "Dynamic member with unknown member id rejoins group ",
            ],
            &["g", "a in b", "a IN", "g\nh", "é"],
            &[" in "],
            &[
                "Stable state",
                "state Empty",
                "Empty",
                "state state",
                "PreparingRebalance STATE",
                "Sta.ble state",
            ],
            &[". Created a new member id "],
            &["c-1", "'c 1'", "c\"1"],
            &[
                " and request the member to rejoin with this id.",
                " and requesting the member to rejoin with this id.",
                " and request the member to rejoin with this id",
            ],
        ]);
        let (read, split) = check(ROUND_TRIP, &lines, 4);
        // The plain combinations (a plain member, a known ending): 16.
        assert!(
            split >= 16,
            "the split reads the plain ones ({split} of {read})"
        );
        let p = unknown_id_round_trip(b"Dynamic member with unknown member id joins group g in Empty state. Created a new member id c-1 and request the member to rejoin with this id.").unwrap();
        assert_eq!(
            p.kind,
            EventKind::Broker(BrokerLine::MemberJoined {
                pending: true,
                from_empty: true
            })
        );
    }

    #[test]
    fn member_failed_lines_are_split_as_their_regex_reads_them() {
        let lines = combine(&[
            &["Member ", "member "],
            &["c-1", "'c 1'", "c\t1"],
            &[" in group "],
            &["g", "g has failed", "é", "g\nh"],
            &[" has failed"],
            &[
                "",
                ".",
                ", removing it from the group",
                ", removing it from the group.",
                "!",
            ],
        ]);
        let (read, split) = check(FAILED, &lines, 6);
        assert!(
            split >= 8,
            "the split reads the plain ones ({split} of {read})"
        );
        let p = member_failed(b"Member c-1 in group g has failed has failed.").unwrap();
        assert_eq!(p.group.as_deref(), Some("g has failed"));
    }

    #[test]
    fn now_empty_lines_are_split_as_their_regex_reads_them() {
        let lines = combine(&[
            &["Group ", "group "],
            &["g", "g with generation 3", "é", "g\nh"],
            &[" with generation "],
            &["5", "-1", "99999999999", "", "5x"],
            &[" is now empty", " is now Empty", " is empty"],
            &["", " (__consumer_offsets-12)", " (__consumer_offsets-)"],
            &["", ".", "..", " "],
        ]);
        let (read, split) = check(NOW_EMPTY, &lines, 4);
        assert!(
            split * 10 > read * 9,
            "the split reads most ({split} of {read})"
        );
        let p = now_empty(b"Group g with generation 3 with generation 99999999999 is now empty.")
            .unwrap();
        assert_eq!(
            (p.group.as_deref(), p.generation_id),
            (Some("g with generation 3"), None)
        );
        gates_agree(&lines);
    }

    #[test]
    fn member_left_lines_are_split_as_their_regex_reads_them() {
        let lines = combine(&[
            &[
                "Member ",
                "member ",
                "Member[group.instance.id i, member.id ",
            ],
            &["c-1", "'c 1'", "c\t1", "c-1]"],
            &[" in group "],
            &["g", "g has left, removing it from the group", "é", "g\nh"],
            &[" has left, removing it from the group", " has left"],
            &["", ".", "!"],
        ]);
        let (read, split) = check(LEFT, &lines, 6);
        assert!(
            split >= 8,
            "the split reads the plain ones ({split} of {read})"
        );
        gates_agree(&lines);
        let p = member_left(b"Member c-1 in group g has left, removing it from the group has left, removing it from the group.").unwrap();
        assert_eq!(
            p.group.as_deref(),
            Some("g has left, removing it from the group")
        );
    }

    #[test]
    fn target_assignment_lines_are_split_as_their_regex_reads_them() {
        let lines = combine(&[
            &[
                "Computed a new target assignment for epoch ",
                "computed a new target assignment for epoch ",
            ],
            &["5", "-1", "99999999999", "", "5x"],
            &[
                "",
                " with 'uniform' assignor",
                " with '' assignor",
                " with 'a' b' assignor",
                " with 'range'",
            ],
            &["", " in 3ms", " in ms", " in 3s"],
            &["", ": {m=Assignment(x)}", ":", ": {m=\n x}", ". {m}"],
            &["", ".", ".."],
        ]);
        let (read, split) = check(TARGET, &lines, 3);
        assert!(
            split * 10 > read * 9,
            "the split reads most ({split} of {read})"
        );
        gates_agree(&lines);
    }

    #[test]
    fn assignment_state_lines_are_split_as_their_regex_reads_them() {
        let lines = combine(&[
            &["Member ", "member "],
            &[
                "m-1",
                "'m 1'",
                "m\t1",
                "m\x0b1",
                "m'1' x",
                "m-1 new assignment state: epoch=1",
            ],
            &[" new assignment state: epoch="],
            &["5", "-1", "99999999999", ""],
            &[", previousEpoch="],
            &["4", "-1", "x"],
            &[", state="],
            &["STABLE", "unrevoked_partitions", "UN-REVOKED", "", "é"],
            &[
                "",
                ", assignedPartitions=[t-0] and revokedPartitions=[].",
                "\n.",
            ],
        ]);
        let (read, split) = check(ASSIGNMENT_STATE, &lines, 3);
        // The plain combinations ("Member ", a plain member, both epochs
        // numbers that fit, a state): 2 × 2 × 2 states × 3 endings.
        assert!(
            split >= 24,
            "the split reads the plain ones ({split} of {read})"
        );
        let old = "Member m transitioned from CurrentAssignment(memberEpoch=3, previousMemberEpoch=2, state=stable) to CurrentAssignment(memberEpoch=4, previousMemberEpoch=3, targetMemberEpoch=4, state=revoking, assignedPartitions={}).";
        let mut all = lines.clone();
        all.push(old.to_string());
        gates_agree(&all);
        assert!(consumer_group::assignment_state(old.as_bytes()).is_some());
    }

    /// Each message and random edits of it: every reader of [`GATED`]
    /// gives what its regex alone gives, line for line.
    fn gates_agree(messages: &[String]) {
        const BYTES: &[u8] = b" .-0123456789'\"\n\t\x0binINstateS()_";
        let mut rng = Rng(0x9a7e);
        for m in messages {
            for v in edited(m.as_bytes(), 3, BYTES, &mut rng) {
                for (reader, regex) in GATED {
                    assert_eq!(reader(&v), regex(&v), "{:?}", String::from_utf8_lossy(&v));
                }
            }
        }
    }

    /// `reason::reason_subject` with the split, against its regexes alone.
    fn subject_agrees(reason: &[u8]) -> Option<bool> {
        let text = std::str::from_utf8(reason).ok()?;
        super::reason_subject(reason)?;
        Some(reason::reason_subject(text) == reason::reason_subject_by_regex(text))
    }

    #[test]
    fn the_two_frequent_reasons_are_split_as_their_regexes_read_them() {
        const BYTES: &[u8] = b" ;.-0123456789'\"\tinINdoeSme()_";
        let reasons = combine(&[
            &[
                "Adding new member ",
                "adding new member ",
                "removing member ",
                "Removing member ",
            ],
            &["m-1", "m;1", "'m 1'", "m\t1"],
            &[
                "",
                "; client reason: x",
                " with group instance id None",
                " with group instanceid Some(i-1); client reason: y",
                " with group instance id i;j",
                " with group instance id ;",
                " with group instance id i k",
                " on heartbeat expiration",
                " on LeaveGroup",
                " on something",
                " foo",
            ],
        ]);
        let mut rng = Rng(0x5eed);
        let (mut split, mut compared) = (0, 0);
        for r in &reasons {
            for v in edited(r.as_bytes(), 6, BYTES, &mut rng) {
                if let Some(same) = subject_agrees(&v) {
                    assert!(same, "{:?}", String::from_utf8_lossy(&v));
                    split += 1;
                }
                compared += 1;
            }
        }
        assert!(
            split >= 20,
            "the split reads the plain ones ({split} of {compared})"
        );
    }
}
