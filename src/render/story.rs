//! The story: one short paragraph per group, in plain words, that opens
//! every report.
//!
//! Takes: a [`Report`]. Gives: a [`Line`] per group saying how often it
//! rebalanced over how long, then the worst rebalance (when, who, why,
//! whom the coordinator removed, how long the round took, who held it up)
//! and what the other rounds were. Every clause is read from one field of
//! the records and says nothing they do not: the count from the group's
//! [`Rebalance`]s, the span from `GroupSummary::first_seen`/`last_seen`, the
//! cause from `Trigger::kind`, `member_id`, `client_id` and `detail`, the
//! removals from `Rebalance::removed`, the length from `duration_ms`, the
//! hold-up from `straggler`; how long partitions still stopped at the end
//! had been stopped, from `Report::input_end` (the time line's last event,
//! the end the headline's worst stop is measured to). Nothing here is free
//! text.

use crate::report::{GroupSummary, Rebalance, RemovedMember};
use crate::time::Timestamp;

use super::doc::{Line, Span, TriggerClass};
use super::grids;
use super::human::{self, TimeStyle};

/// The story of group `name`; `end` is the inputs' last event (partitions
/// still stopped are measured to it, as the headline's worst stop is).
pub(crate) fn group_of(
    summary: Option<&GroupSummary>,
    rounds: &[&Rebalance],
    name: &str,
    end: Option<Timestamp>,
    style: TimeStyle,
) -> Line {
    let mut line = vec![Span::code(human::one_line(name))];
    line.push(Span::plain(count_clause(summary, rounds)));
    let unexpected: Vec<&Rebalance> = rounds.iter().copied().filter(|r| !r.expected).collect();
    let Some(worst) = worst(&unexpected) else {
        line.extend(without_rebalance(summary, style));
        return line;
    };
    line.push(Span::plain(" The worst: "));
    line.extend(worst_clauses(worst, settled(rounds, worst), end, style));
    line.extend(longest(&unexpected, worst, style));
    line.extend(others(&unexpected, worst));
    line.extend(without_rebalance(summary, style));
    line
}

/// ` Without a rebalance: at 02:40:03.2 static member g1-static-2 (g1-c2)
/// restarted; partitions lab-0..2 stopped for up to 5.1 s.` From
/// `GroupSummary::stops_without_rebalance`.
fn without_rebalance(summary: Option<&GroupSummary>, style: TimeStyle) -> Line {
    let mut line = Vec::new();
    for s in summary.map_or(&[][..], |g| g.stops_without_rebalance.as_slice()) {
        let Some(first) = s.partitions.iter().min_by_key(|p| p.stopped_at) else {
            continue;
        };
        line.push(Span::plain(format!(
            " Without a rebalance: at {} static member ",
            style.show(first.stopped_at)
        )));
        let who = first
            .from
            .as_ref()
            .map(|o| human::member_label(Some(o.member_id.as_str()), o.client_id.as_deref()));
        line.push(Span::code(human::one_line(
            s.group_instance_id.as_deref().unwrap_or("?"),
        )));
        if let Some(who) = who {
            line.push(Span::plain(" ("));
            line.push(Span::code(who));
            line.push(Span::plain(")"));
        }
        let names: Vec<&str> = s.partitions.iter().map(|p| p.partition.as_str()).collect();
        let longest = s
            .partitions
            .iter()
            .map(|p| p.stopped_ms)
            .try_fold(0.0_f64, |m, x| x.map(|x| m.max(x)));
        let how_long = longest.map_or("until the end of the input".into(), |ms| {
            format!("for up to {}", human::duration(ms))
        });
        line.push(Span::plain(
            " went quiet and came back with the same group.instance.id (no LeaveGroup, no new generation); partitions ",
        ));
        line.push(Span::code(partition_ranges(&names)));
        line.push(Span::plain(format!(" stopped {how_long}.")));
    }
    line
}

/// `rebalanced 3 times in the 31.4 s it was seen (1 expected).`
fn count_clause(summary: Option<&GroupSummary>, rounds: &[&Rebalance]) -> String {
    let seen = summary
        .and_then(|g| Some(human::millis_between(g.first_seen?, g.last_seen?)))
        .map(|ms| format!(" in the {} it was seen", human::duration(ms)))
        .unwrap_or_default();
    if rounds.is_empty() {
        return format!(" did not rebalance{seen}.");
    }
    let times = match rounds.len() {
        1 => "once".to_string(),
        n => format!("{n} times"),
    };
    let expected = rounds.iter().filter(|r| r.expected).count();
    if expected == rounds.len() {
        return format!(
            " rebalanced {times}{seen}, all expected ({}).",
            expected_reasons(rounds)
        );
    }
    let superseded = rounds.iter().filter(|r| is_superseded(r)).count();
    let open = rounds
        .iter()
        .filter(|r| r.completed_at.is_none() && !is_superseded(r))
        .count();
    let mut notes = Vec::new();
    if expected > 0 {
        notes.push(format!("{expected} expected: {}", expected_reasons(rounds)));
    }
    if superseded > 0 {
        notes.push(format!("{superseded} cut short by the next round"));
    }
    if open > 0 {
        notes.push(format!("{open} never completed in the inputs"));
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join("; "))
    };
    format!(" rebalanced {times}{seen}{notes}.")
}

/// The round that finally completed after `r` was cut short: the first
/// completed round after it with only cut-short rounds between them (a
/// storm). `None` when `r` completed, or the chain never settled.
fn settled<'a>(rounds: &[&'a Rebalance], r: &Rebalance) -> Option<&'a Rebalance> {
    if !is_superseded(r) {
        return None;
    }
    let at = rounds.iter().position(|x| std::ptr::eq(*x, r))?;
    for next in &rounds[at + 1..] {
        if next.completed_at.is_some() {
            return Some(next);
        }
        if !is_superseded(next) {
            return None;
        }
    }
    None
}

/// A round a new one began inside before it completed (`status`
/// `superseded`): it did not run on to the end of the inputs.
fn is_superseded(r: &Rebalance) -> bool {
    r.completed_at.is_none() && r.status == "superseded"
}

/// The distinct reasons of the expected rounds, each up to its first
/// colon: `group formation, cooperative follow-up round (KIP-429)`.
fn expected_reasons(rounds: &[&Rebalance]) -> String {
    let mut reasons: Vec<String> = Vec::new();
    for r in rounds.iter().filter(|r| r.expected) {
        let reason = r.expected_reason.as_deref().unwrap_or("expected");
        let head = human::one_line(reason.split(':').next().unwrap_or(reason).trim());
        if !reasons.contains(&head) {
            reasons.push(head);
        }
    }
    reasons.join(", ")
}

/// The unexpected round that hurt most: a member timing out before one
/// leaving, before a failed round, a moved coordinator, a changed
/// subscription, an unknown cause, and a member joining last; among rounds
/// of one family the longest; when none completed, the first.
fn worst<'a>(unexpected: &[&'a Rebalance]) -> Option<&'a Rebalance> {
    unexpected.iter().copied().min_by(|a, b| {
        let length = |r: &Rebalance| r.duration_ms.filter(|d| d.is_finite());
        severity(&a.trigger.kind)
            .cmp(&severity(&b.trigger.kind))
            .then_with(|| {
                length(b)
                    .partial_cmp(&length(a))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .then_with(|| a.started_at.cmp(&b.started_at))
    })
}

/// How much a trigger family says about an incident, most first.
fn severity(kind: &str) -> u8 {
    match TriggerClass::of(kind) {
        TriggerClass::Timeout => 0,
        TriggerClass::Leave => 1,
        TriggerClass::Failure => 2,
        TriggerClass::Coordinator => 3,
        TriggerClass::Change => 4,
        TriggerClass::Unknown => 5,
        TriggerClass::Join => 6,
    }
}

/// The longest completed unexpected round, when it is not the worst one:
/// `The longest round: generation 3 → 4 at 16:35:04 (member_joined by
/// g1-c2) took 3.72 s.`
fn longest(unexpected: &[&Rebalance], worst: &Rebalance, style: TimeStyle) -> Line {
    let longest = unexpected
        .iter()
        .copied()
        .filter(|r| r.duration_ms.is_some_and(f64::is_finite))
        .fold(None::<&Rebalance>, |best, r| match best {
            Some(b) if b.duration_ms >= r.duration_ms => Some(b),
            _ => Some(r),
        });
    let Some(r) = longest.filter(|r| !std::ptr::eq(*r, worst)) else {
        return Vec::new();
    };
    if r.duration_ms <= worst.duration_ms {
        return Vec::new();
    }
    let mut line = vec![
        Span::plain(format!(
            " The longest round: {} {} at {} (",
            human::generation_word(&r.protocol),
            human::generation_step(r.previous_generation, r.generation),
            style.show(r.started_at)
        )),
        grids::trigger_span(&r.trigger.kind),
    ];
    if r.trigger.member_id.is_some() || r.trigger.client_id.is_some() {
        line.push(Span::plain(" by "));
        line.push(Span::code(human::member_label(
            r.trigger.member_id.as_deref(),
            r.trigger.client_id.as_deref(),
        )));
    }
    line.push(Span::plain(format!(
        ") took {}.",
        human::maybe_duration(r.duration_ms)
    )));
    line
}

/// `at 16:34:58.910554 g1-c2 / 13457946… stopped polling (LeaveGroup …);
/// it left; generation 2 → 3 took 3.26 s.`
fn worst_clauses(
    r: &Rebalance,
    settled: Option<&Rebalance>,
    end: Option<Timestamp>,
    style: TimeStyle,
) -> Line {
    let mut line = match went_quiet(r) {
        Some(quiet) => quiet_then_removed(r, quiet, style),
        None => {
            let mut line = vec![Span::plain(format!("at {} ", style.show(r.started_at)))];
            line.extend(cause(r));
            line
        }
    };
    if !matches!(r.trigger.confidence.as_str(), "" | "high") {
        line.push(Span::plain(format!(
            ", {} confidence",
            human::one_line(&r.trigger.confidence)
        )));
    }
    // Another trigger of the same kind by the same member says nothing new;
    // nor does the LeaveGroup a poll timeout is seen by.
    let others = r.other_triggers.iter().filter(|t| {
        let same_member = t.member_id.is_some() && t.member_id == r.trigger.member_id;
        !(same_member
            && (t.kind == r.trigger.kind
                || (r.trigger.kind == "poll_timeout" && t.kind == "member_left")))
    });
    for (i, t) in others.enumerate() {
        line.push(Span::plain(if i == 0 {
            "; also in this round: "
        } else {
            ", "
        }));
        line.push(grids::trigger_span(&t.kind));
        if t.member_id.is_some() || t.client_id.is_some() {
            line.push(Span::plain(" by "));
            line.push(Span::code(human::member_label(
                t.member_id.as_deref(),
                t.client_id.as_deref(),
            )));
        }
    }
    let said = went_quiet(r).is_some();
    for m in r.removed.iter().filter(|m| !said_by_the_trigger(r, m)) {
        let itself = r.trigger.member_id.as_deref() == Some(m.member_id.as_str());
        if itself && said {
            // `quiet_then_removed` said how it was removed.
            continue;
        }
        line.push(Span::plain("; "));
        line.extend(removal(m, itself));
    }
    let step = format!(
        "{} {}",
        human::generation_word(&r.protocol),
        human::generation_step(r.previous_generation, r.generation)
    );
    let took = match r.duration_ms {
        Some(ms) => format!("; {step} took {}", human::duration(ms)),
        None if is_superseded(r) => match settled.and_then(|n| Some((n, n.completed_at?))) {
            // The stop runs on through the rounds that cut it short: say
            // when the group finally settled (that round's `completed_at`).
            Some((n, done)) => format!(
                "; {step} was cut short by the next round; the group settled at {} with {} {}, {} after {step} began",
                style.show(done),
                human::generation_word(&n.protocol),
                n.generation.map_or("?".into(), |g| g.to_string()),
                human::duration(human::millis_between(r.started_at, done)),
            ),
            None => format!("; {step} was cut short by the next round before it completed"),
        },
        None => format!("; {step} never completed in the inputs"),
    };
    line.push(Span::plain(took));
    if let Some(s) = grids::shown_straggler(r) {
        line.push(Span::plain("; "));
        line.push(Span::code(human::member_label(
            Some(&s.member_id),
            s.client_id.as_deref(),
        )));
        // KIP-848 records a member's "join" when its heartbeat is answered
        // at the round's epoch (group::kip848): it caught up, not joined.
        let did = match r.protocol.as_str() {
            "consumer" | "consumer_member" => "reached the new epoch last",
            _ => "joined last",
        };
        line.push(Span::plain(format!(
            " {did}, {} after the start",
            human::duration(s.after_start_ms)
        )));
    }
    line.extend(cost(r, end));
    line.push(Span::plain("."));
    line
}

/// When the trigger's member went quiet, for a member removed for its
/// silence (`session_timeout`, `poll_timeout`): the earliest `stopped_at`
/// of the partitions it owned in this round (its last request for a
/// `owner_silent` stop, its LeaveGroup minus max.poll.interval.ms for
/// `owner_not_polling`: see
/// `stops::partition`), when earlier than the round's start. `None` when
/// the inputs do not show it (a broker log alone has no partitions).
fn went_quiet(r: &Rebalance) -> Option<crate::time::Timestamp> {
    if !silent_before_the_round(&r.trigger.kind) {
        return None;
    }
    let member = r.trigger.member_id.as_deref()?;
    r.partitions
        .iter()
        .filter(|p| p.from.as_ref().is_some_and(|o| o.member_id == member))
        .map(|p| p.stopped_at)
        .min()
        .filter(|at| *at < r.started_at)
}

/// The silent member's story in its order: `g1-c2 / 6c9d2245… went silent
/// at 08:18:06.45 (its last request); at 08:18:12.34 the coordinator
/// removed it after its session timeout (session_timeout: …)`. For a poll
/// timeout: `stopped polling by … (max.poll.interval.ms before its
/// LeaveGroup, …); at … it left the group (poll_timeout: …)`.
fn quiet_then_removed(r: &Rebalance, quiet: crate::time::Timestamp, style: TimeStyle) -> Line {
    let t = &r.trigger;
    // `stops::partition`: a silent owner's stop begins at its last
    // request; a non-polling owner's at its LeaveGroup minus
    // max.poll.interval.ms (or its last commit, if later).
    let (went, then) = if t.kind == "poll_timeout" {
        (
            "stopped polling by",
            "max.poll.interval.ms before its LeaveGroup, when its partitions stopped",
        )
    } else {
        ("went silent at", "its last request")
    };
    let how = r
        .removed
        .iter()
        .find(|m| t.member_id.as_deref() == Some(m.member_id.as_str()))
        .map(|m| m.how.as_str());
    let removed = match (how, t.kind.as_str()) {
        (Some("left"), _) => "it left the group",
        (Some("session_timeout"), _) => "the coordinator removed it after its session timeout",
        (_, "poll_timeout") => "its max.poll.interval.ms had run out",
        _ => "its session timeout had run out",
    };
    let mut line = vec![
        Span::code(human::member_label(
            t.member_id.as_deref(),
            t.client_id.as_deref(),
        )),
        Span::plain(format!(
            " {went} {} ({then}); at {} {removed} (",
            style.show(quiet),
            style.show(r.started_at)
        )),
        grids::trigger_span(&t.kind),
    ];
    if !t.detail.is_empty() {
        line.push(Span::plain(format!(": {}", human::one_line(&t.detail))));
    }
    line.push(Span::plain(")"));
    line
}

/// Triggers whose member went quiet before the round started: its
/// partitions stopped then, not at the round's start
/// (`session_timeout`: no heartbeat for session.timeout.ms;
/// `poll_timeout`: no poll for max.poll.interval.ms).
fn silent_before_the_round(kind: &str) -> bool {
    matches!(kind, "session_timeout" | "poll_timeout")
}

/// What the round cost, from its `partitions` (else its group-level
/// `stop`): `; partitions orders-3..5 stopped for up to 11.4 s and 212
/// records will be read twice` (the `reprocessed` counts summed; `skipped`
/// likewise). Partitions still stopped at the inputs' last event (`end`)
/// are measured to it, as the headline's worst stop is.
fn cost(r: &Rebalance, end: Option<Timestamp>) -> Line {
    let Some(stop) = &r.stop else {
        return Vec::new();
    };
    if r.partitions.is_empty() {
        if silent_before_the_round(&r.trigger.kind) {
            // The group-level `stop` is the round's own length: the silent
            // member's partitions stopped earlier, when it went quiet, and
            // without assignments in the input neither which nor since
            // when is known (the record's note says so too).
            return vec![Span::plain(
                "; its partitions had stopped before the round, when it went quiet (which ones, and since when, is not in the input)",
            )];
        }
        return match stop.stopped_ms {
            Some(ms) => vec![Span::plain(format!(
                "; consumption stopped for {} (which partitions is not known)",
                human::duration(ms)
            ))],
            None if is_superseded(r) => vec![Span::plain(
                "; consumption stayed stopped into the next round",
            )],
            None => vec![Span::plain(
                "; consumption was still stopped at the end of the input",
            )],
        };
    }
    let names: Vec<&str> = r.partitions.iter().map(|p| p.partition.as_str()).collect();
    let word = if names.len() == 1 {
        "partition"
    } else {
        "partitions"
    };
    let mut line = vec![
        Span::plain(format!("; {word} ")),
        Span::code(human::one_line(&partition_ranges(&names))),
    ];
    let longest = r
        .partitions
        .iter()
        .filter_map(|p| p.stopped_ms)
        .filter(|ms| ms.is_finite())
        .fold(None::<f64>, |a, ms| Some(a.map_or(ms, |a| a.max(ms))));
    let still = r
        .partitions
        .iter()
        .filter(|p| p.resumed_at.is_none())
        .count();
    let up_to = if r.partitions.len() > 1 { "up to " } else { "" };
    // How long the ones still stopped had been, at the inputs' last event.
    let open_for = end.and_then(|end| {
        r.partitions
            .iter()
            .filter(|p| p.resumed_at.is_none())
            .map(|p| human::millis_between(p.stopped_at, end).max(0.0))
            .fold(None::<f64>, |a, ms| Some(a.map_or(ms, |a| a.max(ms))))
    });
    let since = |n: usize| match open_for {
        Some(ms) => format!(
            ", {}{} after {} stopped",
            if n > 1 { "up to " } else { "" },
            human::duration(ms),
            if n > 1 { "they" } else { "it" }
        ),
        None => String::new(),
    };
    let how_long = match (longest, still) {
        (Some(ms), 0) => format!(" stopped for {up_to}{}", human::duration(ms)),
        (Some(ms), n) => format!(
            " stopped for {up_to}{} ({n} still stopped at the end of the input{})",
            human::duration(ms),
            since(n)
        ),
        (None, n) => format!(
            " {} still stopped at the end of the input{}",
            if names.len() == 1 { "was" } else { "were" },
            since(n)
        ),
    };
    line.push(Span::plain(how_long));
    let sum = |f: fn(&crate::report::PartitionStop) -> Option<i64>| -> i64 {
        r.partitions
            .iter()
            .filter_map(f)
            .filter(|n| *n > 0)
            .fold(0i64, |a, n| a.saturating_add(n))
    };
    let twice = sum(|p| p.reprocessed);
    let skipped = sum(|p| p.skipped);
    let records = |n: i64, one: &str, many: &str| match n {
        1 => format!("1 record {one}"),
        n => format!("{} records {many}", human::count(n as u64)),
    };
    let mut counts = Vec::new();
    if twice > 0 {
        counts.push(records(twice, "will be read twice", "will be read twice"));
    }
    if skipped > 0 {
        counts.push(records(skipped, "was skipped", "were skipped"));
    }
    if !counts.is_empty() {
        line.push(Span::plain(format!(" and {}", counts.join(" and "))));
    }
    line
}

/// `orders-3..5, payments-0`: partition names (`topic-N`) with consecutive
/// numbers of one topic joined; past four runs, `12 partitions of orders`
/// or `12 partitions`.
fn partition_ranges(names: &[&str]) -> String {
    let mut topics: Vec<(&str, Vec<i64>)> = Vec::new();
    let mut odd: Vec<&str> = Vec::new();
    for name in names {
        let parsed = name
            .rsplit_once('-')
            .and_then(|(t, n)| Some((t, n.parse::<i64>().ok()?)));
        match parsed {
            Some((topic, n)) => match topics.iter_mut().find(|(t, _)| *t == topic) {
                Some((_, ns)) => ns.push(n),
                None => topics.push((topic, vec![n])),
            },
            None => odd.push(name),
        }
    }
    let mut runs: Vec<String> = Vec::new();
    for (topic, ns) in &mut topics {
        ns.sort_unstable();
        ns.dedup();
        let mut i = 0;
        while i < ns.len() {
            let mut j = i;
            while j + 1 < ns.len() && ns[j + 1] == ns[j] + 1 {
                j += 1;
            }
            runs.push(match j - i {
                0 => format!("{topic}-{}", ns[i]),
                1 => format!("{topic}-{}, {topic}-{}", ns[i], ns[j]),
                _ => format!("{topic}-{}..{}", ns[i], ns[j]),
            });
            i = j + 1;
        }
    }
    runs.extend(odd.iter().map(|s| s.to_string()));
    if runs.len() <= 4 {
        return runs.join(", ");
    }
    match (topics.as_slice(), odd.is_empty()) {
        ([(topic, _)], true) => format!("{} partitions of {topic}", names.len()),
        _ => format!("{} partitions", names.len()),
    }
}

/// A member that left and is the trigger of a `member_left` round: the
/// cause already said so.
fn said_by_the_trigger(r: &Rebalance, m: &RemovedMember) -> bool {
    m.how == "left"
        && std::iter::once(&r.trigger)
            .chain(&r.other_triggers)
            .any(|t| t.kind == "member_left" && t.member_id.as_deref() == Some(&m.member_id))
}

/// Who did what, from the trigger's kind and member.
fn cause(r: &Rebalance) -> Line {
    let t = &r.trigger;
    let who = (t.member_id.is_some() || t.client_id.is_some()).then(|| {
        Span::code(human::member_label(
            t.member_id.as_deref(),
            t.client_id.as_deref(),
        ))
    });
    let (subject, verb) = match t.kind.as_str() {
        "member_joined" => ("a member", "joined"),
        "member_left" => ("a member", "left the group"),
        // Said at the round's start, when the silence had already lasted:
        // "had stopped" (`quiet_then_removed` says when it began, if known).
        "poll_timeout" => (
            "a member",
            "had stopped polling for longer than max.poll.interval.ms",
        ),
        "session_timeout" => (
            "a member",
            "had stopped heartbeating for its session timeout",
        ),
        "metadata_changed" => ("the topic metadata", "changed"),
        "subscription_changed" => ("a member", "changed its subscription"),
        "leader_rejoined" => ("a known member", "rejoined while the group was stable"),
        "static_member_replaced" => (
            "a static member",
            "restarted and replaced its old member id",
        ),
        "static_member_fenced" => ("a static member", "was fenced"),
        "coordinator_changed" => ("the coordinator", "moved"),
        "previous_rebalance_failed" => ("a member", "retried after the previous round failed"),
        "pending_sync_expired" => ("a member", "never sent SyncGroup and was removed"),
        "group_over_capacity" => ("the group", "went over group.max.size"),
        "protocol_migration" => (
            "the group",
            "moved between the classic and consumer protocols",
        ),
        _ => ("", "the cause is not in the inputs"),
    };
    let mut line = match (who, subject) {
        (_, "") => vec![Span::plain(verb)],
        (Some(who), _) => vec![who, Span::plain(format!(" {verb}"))],
        (None, subject) => vec![Span::plain(format!("{subject} {verb}"))],
    };
    line.push(Span::plain(" ("));
    line.push(grids::trigger_span(&t.kind));
    if !t.detail.is_empty() {
        line.push(Span::plain(format!(": {}", human::one_line(&t.detail))));
    }
    line.push(Span::plain(")"));
    line
}

/// `the coordinator removed X after its session timeout`, from
/// `RemovedMember::how`.
/// `itself`: the member is the trigger's, already named: "it".
fn removal(m: &RemovedMember, itself: bool) -> Line {
    let who = if itself {
        Span::plain("it")
    } else {
        Span::code(human::member_label(
            Some(&m.member_id),
            m.client_id.as_deref(),
        ))
    };
    let how = |text: &str| Span::plain(text.to_string());
    match m.how.as_str() {
        "left" => vec![who, how(" left the group")],
        "session_timeout" => vec![
            how("the coordinator removed "),
            who,
            how(" after its session timeout"),
        ],
        "rebalance_timeout" => vec![
            how("the coordinator removed "),
            who,
            how(" when the join phase timed out (rebalance timeout)"),
        ],
        "replaced" => vec![who, how(" was replaced by a new member id")],
        other => vec![
            who,
            how(format!(" was removed ({})", human::one_line(other)).as_str()),
        ],
    }
}

/// `The other 2: 1 member_joined, 1 previous_rebalance_failed.`
fn others(unexpected: &[&Rebalance], worst: &Rebalance) -> Line {
    let rest: Vec<&Rebalance> = unexpected
        .iter()
        .copied()
        .filter(|r| !std::ptr::eq(*r, worst))
        .collect();
    if rest.is_empty() {
        return Vec::new();
    }
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for r in &rest {
        match kinds.iter_mut().find(|(k, _)| *k == r.trigger.kind) {
            Some((_, n)) => *n += 1,
            None => kinds.push((&r.trigger.kind, 1)),
        }
    }
    let word = if rest.len() == 1 {
        "The other unexpected round"
    } else {
        "The other unexpected rounds"
    };
    let mut line = vec![Span::plain(format!(" {word}: "))];
    for (i, (kind, n)) in kinds.iter().enumerate() {
        if i > 0 {
            line.push(Span::plain(", "));
        }
        line.push(Span::plain(format!("{n} ")));
        line.push(grids::trigger_span(kind));
    }
    line.push(Span::plain("."));
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::doc::plain_text;
    use crate::render::sample;
    use crate::report::Report;

    fn story(report: &Report, name: &str) -> String {
        let by_group = crate::render::incident::ByGroup::new(report);
        let (summary, rounds) = (by_group.summary(name), by_group.rounds(name));
        plain_text(&group_of(
            summary,
            rounds,
            name,
            report.input_end,
            TimeStyle::for_report(report),
        ))
    }

    #[test]
    fn the_story_names_the_worst_round_its_cause_and_its_length() {
        let report = sample::incident();
        let text = story(&report, "orders-service");
        assert!(text.starts_with("orders-service rebalanced"), "{text}");
        assert!(text.contains("The worst: "), "{text}");
        assert!(text.contains(" took "), "{text}");
    }

    #[test]
    fn a_worst_round_cut_short_says_when_the_group_settled() {
        let mut report = sample::incident();
        let ours: Vec<usize> = (0..report.rebalances.len())
            .filter(|&i| report.rebalances[i].group == "orders-service")
            .collect();
        assert!(ours.len() >= 2, "the sample has a storm to cut");
        for &i in &ours {
            let r = &mut report.rebalances[i];
            r.expected = false;
            r.trigger.kind = "member_joined".into();
        }
        let (first, next) = (ours[0], ours[1]);
        let r = &mut report.rebalances[first];
        r.trigger.kind = "member_left".into();
        r.completed_at = None;
        r.duration_ms = None;
        r.status = "superseded".into();
        let began = r.started_at;
        let done = report.rebalances[next].completed_at.expect("completed");
        let text = story(&report, "orders-service");
        let style = TimeStyle::for_report(&report);
        let said = format!(
            "was cut short by the next round; the group settled at {} with",
            style.show(done)
        );
        assert!(text.contains(&said), "{text}");
        let took = human::duration(human::millis_between(began, done));
        assert!(text.contains(&format!("{took} after")), "{text}");
    }

    #[test]
    fn a_group_without_rebalances_says_so() {
        let mut report = sample::incident();
        report.rebalances.clear();
        let text = story(&report, "orders-service");
        assert!(text.contains("did not rebalance"), "{text}");
        assert!(!text.contains("worst"), "{text}");
    }

    #[test]
    fn partitions_read_as_runs() {
        assert_eq!(
            partition_ranges(&["orders-3", "orders-5", "orders-4", "pay-0"]),
            "orders-3..5, pay-0"
        );
        assert_eq!(partition_ranges(&["a-1", "a-2"]), "a-1, a-2");
        assert_eq!(
            partition_ranges(&["a-1", "a-3", "a-5", "a-7", "a-9"]),
            "5 partitions of a"
        );
        assert_eq!(partition_ranges(&["odd"]), "odd");
    }

    #[test]
    fn the_worst_round_says_what_it_cost() {
        use crate::report::{PartitionStop, RebalanceStop};
        let mut report = sample::incident();
        let stop = |name: &str, ms: f64, twice: i64| PartitionStop {
            partition: name.into(),
            stopped_ms: Some(ms),
            resumed_at: Some(crate::time::Timestamp(1)),
            reprocessed: Some(twice),
            ..PartitionStop::default()
        };
        for r in &mut report.rebalances {
            r.stop = Some(RebalanceStop::default());
            r.partitions = vec![
                stop("orders-3", 11_400.0, 200),
                stop("orders-4", 9_000.0, 12),
                stop("orders-5", 8_000.0, 0),
            ];
        }
        let text = story(&report, "orders-service");
        assert!(
            text.contains("partitions orders-3..5 stopped for up to 11.40 s and 212 records will be read twice."),
            "{text}"
        );
    }

    #[test]
    fn partitions_still_stopped_at_the_end_say_how_long_they_had_been_stopped() {
        use crate::report::{PartitionStop, RebalanceStop};
        use crate::time::Timestamp;
        let mut report = sample::incident();
        let end = Timestamp(1_700_000_000_000_000_000);
        report.input_end = Some(end);
        let resumed = PartitionStop {
            partition: "orders-3".into(),
            stopped_ms: Some(7_000.0),
            resumed_at: Some(Timestamp(1)),
            ..PartitionStop::default()
        };
        let still = PartitionStop {
            partition: "orders-4".into(),
            stopped_at: end.offset_by(-50_100_000_000),
            ..PartitionStop::default()
        };
        for r in &mut report.rebalances {
            r.stop = Some(RebalanceStop::default());
            r.partitions = vec![resumed.clone(), still.clone()];
        }
        let text = story(&report, "orders-service");
        assert!(
            text.contains("stopped for up to 7.00 s (1 still stopped at the end of the input, 50.10 s after it stopped)"),
            "{text}"
        );
    }

    #[test]
    fn a_partition_never_resumed_says_it_was_still_stopped_and_since_when() {
        use crate::report::{PartitionStop, RebalanceStop};
        use crate::time::Timestamp;
        let mut report = sample::incident();
        let end = Timestamp(1_700_000_000_000_000_000);
        report.input_end = Some(end);
        for r in &mut report.rebalances {
            r.stop = Some(RebalanceStop::default());
            r.partitions = vec![PartitionStop {
                partition: "orders-4".into(),
                stopped_at: end.offset_by(-12_000_000_000),
                ..PartitionStop::default()
            }];
        }
        let text = story(&report, "orders-service");
        assert!(
            text.contains("partition orders-4 was still stopped at the end of the input, 12.00 s after it stopped"),
            "{text}"
        );
    }

    #[test]
    fn a_silent_member_without_known_partitions_is_not_given_the_rounds_length() {
        use crate::report::RebalanceStop;
        let mut report = sample::incident();
        for r in &mut report.rebalances {
            r.stop = Some(RebalanceStop {
                stopped_ms: Some(189.0),
                ..RebalanceStop::default()
            });
            r.partitions.clear();
        }
        let text = story(&report, "orders-service");
        assert!(!text.contains("consumption stopped for 189 ms"), "{text}");
        assert!(
            text.contains("its partitions had stopped before the round, when it went quiet"),
            "{text}"
        );
    }

    #[test]
    fn a_silent_member_is_told_silent_at_its_last_request_not_at_the_rounds_start() {
        let report = sample::incident();
        let text = story(&report, "orders-service");
        // sample: consumer-orders-2's partitions stopped at its last
        // request, 12:02:24.6; the coordinator started the round at
        // 12:03:10.02, when its 45 s session timeout ran out.
        assert!(text.contains("went silent at 12:02:24.6"), "{text}");
        assert!(
            text.contains("(its last request); at 12:03:10.02"),
            "{text}"
        );
        assert!(
            text.contains("the coordinator removed it after its session timeout (session_timeout"),
            "{text}"
        );
        assert_eq!(text.matches("removed it").count(), 1, "{text}");
    }

    #[test]
    fn without_its_partitions_a_silent_member_had_stopped_by_the_rounds_start() {
        let mut report = sample::incident();
        for r in &mut report.rebalances {
            r.partitions.clear();
        }
        let text = story(&report, "orders-service");
        assert!(
            text.contains("had stopped heartbeating for its session timeout"),
            "{text}"
        );
        assert!(!text.contains("went silent at"), "{text}");
    }

    #[test]
    fn every_removal_is_said_in_words() {
        let m = |how: &str| RemovedMember {
            member_id: "c-1".into(),
            client_id: Some("c".into()),
            how: how.into(),
        };
        assert_eq!(
            plain_text(&removal(&m("session_timeout"), false)),
            "the coordinator removed c / 1 after its session timeout"
        );
        assert_eq!(
            plain_text(&removal(&m("left"), false)),
            "c / 1 left the group"
        );
        assert_eq!(plain_text(&removal(&m("left"), true)), "it left the group");
    }
}
