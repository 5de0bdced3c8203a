//! Line layouts: where a Kafka message sits inside whatever wraps it.
//!
//! Takes: one raw line (bytes, no newline). Gives: an [`Entry`] — the line's
//! wall-clock time, the component that logged it (broker coordinator with its
//! id, Java client with its `clientId`/`groupId`, the request logger) and the
//! message text with the layout's trailer (`(logger)`, `[thread]`,
//! ` | logger (File.scala:68)`) cut off.
//!
//! Rather than one parser per layout (Apache `[%d] %p %m (%c)`, Strimzi
//! `%d{ISO8601} %p %m (%c) [%t]`, `kubectl logs --timestamps`, docker-compose
//! `svc  | `, vendor ` | ` layouts, `(%c:%L)`, `LEVEL - date - logger:line - `)
//! the message is found by its stable inner prefix (`[GroupCoordinator …`,
//! `[Consumer …`), as kafka-log-formats.md §1.2 advises, and the time is the
//! last log timestamp before it. Deliberately does not interpret messages.

use std::sync::LazyLock;

use memchr::memmem::{Finder, FinderRev};

use crate::time::{parse_log_datetime, parse_zoned_datetime, with_zone, LocalDateTime, Timestamp};

/// The time a line carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LineTime {
    /// A zone-less log4j time (the usual case).
    Local(LocalDateTime),
    /// A wrapper's zoned time (`kubectl --timestamps`) when the line has no
    /// log4j time of its own.
    Zoned(Timestamp),
    /// No time at all (slf4j-simple client logs).
    Missing,
}

/// Who logged a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Component<'a> {
    /// A broker's group coordinator (any prefix spelling), with its id.
    Broker {
        /// Broker id digits, if the prefix has them.
        id: Option<&'a [u8]>,
    },
    /// `kafka.coordinator.group.GroupMetadata` lines, which have no prefix.
    BrokerBare,
    /// A Java client line `[Consumer clientId=…, groupId=…]`.
    Client {
        /// `clientId=`.
        client_id: Option<&'a [u8]>,
        /// `groupId=` (`null` dropped).
        group_id: Option<&'a [u8]>,
        /// `instanceId=` (static members, 2.3+).
        instance_id: Option<&'a [u8]>,
    },
    /// A 0.9–0.11 client coordinator line (no prefix; names its group).
    ClientBare,
    /// A `kafka-request.log` "Completed request:" line.
    Request,
}

/// One log entry's first line, split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry<'a> {
    /// Its time.
    pub time: LineTime,
    /// Who logged it.
    pub component: Component<'a>,
    /// The message, without prefix and trailer.
    pub message: &'a [u8],
}

static COMPLETED_REQUEST: LazyLock<Finder<'static>> =
    LazyLock::new(|| Finder::new(b"Completed request:"));
static GROUP_METADATA_LOGGER: LazyLock<Finder<'static>> =
    LazyLock::new(|| Finder::new(b"kafka.coordinator.group.GroupMetadata"));
static OLD_CLIENT_LOGGER: LazyLock<Finder<'static>> =
    LazyLock::new(|| Finder::new(b"clients.consumer.internals."));

/// Splits a line into an [`Entry`] if it is a line from a component we read.
pub(crate) fn split_entry(line: &[u8]) -> Option<Entry<'_>> {
    if let Some((start, component, msg_start)) = find_prefix(line) {
        let (time, _) = find_time(&line[..start]);
        let message = strip_trailer(line.get(msg_start..).unwrap_or_default());
        return Some(Entry {
            time,
            component,
            message,
        });
    }
    if let Some(p) = COMPLETED_REQUEST.find(line) {
        let (time, _) = find_time(&line[..p]);
        let message = strip_trailer(&line[p + b"Completed request:".len()..]);
        return Some(Entry {
            time,
            component: Component::Request,
            message,
        });
    }
    split_bare(line)
}

/// Lines whose logger identifies them but which carry no inner prefix.
fn split_bare(line: &[u8]) -> Option<Entry<'_>> {
    let component = if GROUP_METADATA_LOGGER.find(line).is_some() {
        Component::BrokerBare
    } else if OLD_CLIENT_LOGGER.find(line).is_some() && is_old_client_logger(line) {
        Component::ClientBare
    } else {
        return None;
    };
    let (time, end) = find_time(line);
    if time == LineTime::Missing {
        return None;
    }
    let message = strip_trailer(bare_message(line, end));
    Some(Entry {
        time,
        component,
        message,
    })
}

/// AbstractCoordinator / ConsumerCoordinator, the only pre-1.0 client
/// loggers with membership lines.
fn is_old_client_logger(line: &[u8]) -> bool {
    static ABSTRACT: LazyLock<Finder<'static>> =
        LazyLock::new(|| Finder::new(b"internals.AbstractCoordinator"));
    static CONSUMER: LazyLock<Finder<'static>> =
        LazyLock::new(|| Finder::new(b"internals.ConsumerCoordinator"));
    ABSTRACT.find(line).is_some() || CONSUMER.find(line).is_some()
}

/// Finds the first component prefix: `(prefix start, component, message start)`.
fn find_prefix(line: &[u8]) -> Option<(usize, Component<'_>, usize)> {
    for p in memchr::memchr_iter(b'[', line) {
        let rest = &line[p..];
        let found = if rest.starts_with(b"[GroupCoordinator ") {
            broker_prefix(rest, b"[GroupCoordinator ")
        } else if rest.starts_with(b"[GroupMetadataManager brokerId=") {
            broker_prefix(rest, b"[GroupMetadataManager brokerId=")
        } else if rest.starts_with(b"[Group Metadata Manager on Broker ") {
            broker_prefix(rest, b"[Group Metadata Manager on Broker ")
        } else if rest.starts_with(b"[Consumer ") {
            client_prefix(rest, b"[Consumer ")
        } else if rest.starts_with(b"[Worker ") {
            client_prefix(rest, b"[Worker ")
        } else {
            None
        };
        if let Some((component, msg_offset)) = found {
            return Some((p, component, p + msg_offset));
        }
    }
    None
}

/// `[GroupCoordinator 1]: `, `[GroupCoordinator id=1 topic=… partition=3] `,
/// `[GroupMetadataManager brokerId=1] `, `[Group Metadata Manager on Broker 1]: `.
fn broker_prefix<'a>(rest: &'a [u8], prefix: &[u8]) -> Option<(Component<'a>, usize)> {
    let close = memchr::memchr(b']', rest)?;
    let inner = &rest[prefix.len()..close];
    let inner = inner.strip_prefix(b"id=").unwrap_or(inner);
    let digits = inner.iter().take_while(|b| b.is_ascii_digit()).count();
    let id = (digits > 0).then(|| &inner[..digits]);
    let mut msg = close + 1;
    if rest.get(msg) == Some(&b':') {
        msg += 1;
    }
    if rest.get(msg) == Some(&b' ') {
        msg += 1;
    }
    Some((Component::Broker { id }, msg))
}

/// `[Consumer instanceId=i, clientId=c, groupId=g] `.
fn client_prefix<'a>(rest: &'a [u8], prefix: &[u8]) -> Option<(Component<'a>, usize)> {
    let close = memchr::memchr(b']', rest)?;
    let inner = &rest[prefix.len()..close];
    let mut component = Component::Client {
        client_id: None,
        group_id: None,
        instance_id: None,
    };
    let Component::Client {
        client_id,
        group_id,
        instance_id,
    } = &mut component
    else {
        return None;
    };
    for field in inner.split(|&b| b == b',') {
        let field = field.strip_prefix(b" ").unwrap_or(field);
        if let Some(v) = field.strip_prefix(b"clientId=") {
            *client_id = Some(v);
        } else if let Some(v) = field.strip_prefix(b"groupId=") {
            *group_id = (v != b"null").then_some(v);
        } else if let Some(v) = field.strip_prefix(b"instanceId=") {
            *instance_id = Some(v);
        }
    }
    let msg = close + 1 + usize::from(rest.get(close + 1) == Some(&b' '));
    Some((component, msg))
}

/// The last log4j time in `head` (the inner one when `kubectl` prefixed its
/// own), else a zoned wrapper time; and where it ended.
pub(crate) fn find_time(head: &[u8]) -> (LineTime, usize) {
    let mut local = None;
    let mut zoned = None;
    let mut i = 0;
    while let Some(dash) = memchr::memchr(b'-', &head[i..]) {
        let at = i + dash;
        i = at + 1;
        let Some(start) = at.checked_sub(4) else {
            continue;
        };
        if !head[start].is_ascii_digit() {
            continue;
        }
        // The date read once, then its zone if one follows (read as zoned
        // first and, failing that, again as local, a line's date was read
        // twice).
        let Some((dt, used)) = parse_log_datetime(&head[start..]) else {
            continue;
        };
        if let Some((ts, used)) = with_zone(&dt, used, &head[start..]) {
            zoned = Some((ts, start + used));
            i = start + used;
        } else {
            local = Some((dt, start + used));
            i = start + used;
        }
    }
    match (local, zoned) {
        (Some((dt, end)), _) => (LineTime::Local(dt), end),
        (None, Some((ts, end))) => (LineTime::Zoned(ts), end),
        (None, None) => (LineTime::Missing, 0),
    }
}

/// Whether a line begins a new log entry (as opposed to continuing the
/// previous one: a stack trace, a tab-indented block, a blank line). A line
/// pasted with decoration (indented, quoted `> `, a list bullet, a line
/// number) begins one when a log time starts right after the decoration.
pub(crate) fn starts_entry(line: &[u8]) -> bool {
    let core = strip_decoration(line);
    if core.len() < line.len() {
        return starts_with_time(core);
    }
    match line.first() {
        None | Some(b' ') | Some(b'\t') => false,
        Some(_) => {
            let head = &line[..line.len().min(96)];
            find_time(head).0 != LineTime::Missing || find_prefix(line).is_some()
        }
    }
}

/// True when `s` opens with a log time (`2024-…` or `[2024-…`).
fn starts_with_time(s: &[u8]) -> bool {
    let s = s.strip_prefix(b"[").unwrap_or(s);
    s.first().is_some_and(u8::is_ascii_digit) && {
        let head = &s[..s.len().min(40)];
        parse_log_datetime(head).is_some() || parse_zoned_datetime(head).is_some()
    }
}

/// True when `s`, once its decoration is stripped, opens with a log time.
pub(crate) fn starts_with_time_after_decoration(s: &[u8]) -> bool {
    starts_with_time(strip_decoration(s))
}

/// `line` without what a copy into a ticket, a wiki or a code comment puts
/// before it: indentation, quote marks (`> `, repeated), list bullets
/// (`* `, `- `, `# `) and line numbers (`123:`, `123|`, `123 `), in any
/// mix. Unchanged when there is none.
pub(crate) fn strip_decoration(line: &[u8]) -> &[u8] {
    let mut s = line;
    loop {
        let before = s.len();
        s = trim_start(s, b" \t");
        for mark in [&b">"[..], b"* ", b"- ", b"# "] {
            if let Some(rest) = s.strip_prefix(mark) {
                s = rest;
            }
        }
        let digits = s.iter().take_while(|b| b.is_ascii_digit()).count();
        if (1..=9).contains(&digits) {
            match s.get(digits) {
                Some(b':' | b'|') => s = &s[digits + 1..],
                // A bare number then a space is a line number unless it is
                // the year of the log time itself.
                Some(b' ' | b'\t') if !starts_with_time(s) => s = &s[digits + 1..],
                _ => {}
            }
        }
        if s.len() == before {
            return s;
        }
    }
}

/// The log line a structured record carries, rebuilt as a plain line: a
/// JSON object per line (docker's json-file `log`, logback/log4j2/ECS
/// layouts' `message`, journald `-o json`'s `MESSAGE`, Loki's `line`, an
/// Elasticsearch hit's `_source`) gives its message's first line, preceded
/// by the record's own time (`@timestamp`, `time`, `timestamp`,
/// `__REALTIME_TIMESTAMP`) when the message has none. `None` for a line
/// that is not such a record.
pub(crate) fn structured_line(line: &[u8]) -> Option<String> {
    let t = trim_end(trim_start(line, b" \t"));
    if !(t.starts_with(b"{") && t.ends_with(b"}")) {
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(t).ok()?;
    let record = v.get("_source").filter(|s| s.is_object()).unwrap_or(&v);
    let message = ["log", "message", "MESSAGE", "line", "msg"]
        .iter()
        .find_map(|k| record.get(*k)?.as_str())?;
    let first = message.lines().next().unwrap_or_default().trim_end();
    if starts_with_time(strip_decoration(first.as_bytes())) {
        return Some(first.to_string());
    }
    let time = record_time(record)?;
    Some(format!("{time} {first}"))
}

/// A structured record's own time, as ISO 8601 text with its zone.
fn record_time(record: &serde_json::Value) -> Option<String> {
    for k in ["@timestamp", "time", "timestamp"] {
        if let Some(t) = record.get(k).and_then(|t| t.as_str()) {
            return Some(t.to_string());
        }
    }
    // journald: microseconds since the epoch, as a string.
    let micros: i64 = record.get("__REALTIME_TIMESTAMP")?.as_str()?.parse().ok()?;
    Some(Timestamp(micros.checked_mul(1000)?).to_string())
}

const LEVELS: [&[u8]; 6] = [b"INFO", b"WARN", b"ERROR", b"DEBUG", b"TRACE", b"FATAL"];

/// The message of a prefix-less line: after the time, the level, a thread
/// in brackets and a `logger:line - ` head, whichever the layout has.
fn bare_message(line: &[u8], time_end: usize) -> &[u8] {
    let seps: &[u8] = b"] |-:";
    let mut rest = trim_start(&line[time_end.min(line.len())..], seps);
    if let Some(level) = LEVELS.iter().find(|l| rest.starts_with(l)) {
        rest = trim_start(&rest[level.len()..], seps);
    }
    if rest.first() == Some(&b'[') {
        if let Some(close) = memchr::memchr(b']', rest) {
            rest = trim_start(&rest[close + 1..], seps);
        }
    }
    if rest.starts_with(b"org.apache.kafka.") || rest.starts_with(b"kafka.") {
        if let Some(p) = memchr::memmem::find(rest, b" - ") {
            rest = &rest[p + 3..];
        }
    }
    rest
}

fn trim_start<'a>(mut s: &'a [u8], chars: &[u8]) -> &'a [u8] {
    while let Some((first, tail)) = s.split_first() {
        if !chars.contains(first) {
            break;
        }
        s = tail;
    }
    s
}

fn trim_end(mut s: &[u8]) -> &[u8] {
    while let Some((last, head)) = s.split_last() {
        if !last.is_ascii_whitespace() {
            break;
        }
        s = head;
    }
    s
}

/// Cuts the layout's tail: ` [thread]` (Strimzi), ` (logger)` or
/// ` (logger:NN)` (Apache, test log4j), ` | logger (File.scala:68)` (vendor).
pub(crate) fn strip_trailer(msg: &[u8]) -> &[u8] {
    // A thread's name may hold spaces (`kafka-coordinator-heartbeat-thread
    // | group`): searched for whole.
    static THREAD: LazyLock<FinderRev<'static>> = LazyLock::new(|| FinderRev::new(b") ["));
    let mut m = trim_end(msg);
    if m.ends_with(b"]") {
        if let Some(p) = THREAD.rfind(m) {
            if !m[p + 3..].contains(&b'(') {
                m = &m[..p + 1];
            }
        }
    }
    // A logger holds no space: the last ` (` or ` | ` followed by a
    // logger is the one at the line's last space. Looked up by that space
    // (a vectorised byte search), not by searching backwards for the
    // pair, which was a tenth of reading a log's group lines.
    if m.ends_with(b")") {
        let space = memchr::memrchr(b' ', m).filter(|&p| m.get(p + 1) == Some(&b'('));
        if let Some(p) = space {
            if looks_like_logger(&m[p + 2..m.len() - 1]) {
                m = trim_end(&m[..p]);
            }
        }
    }
    let pipe = memchr::memrchr(b' ', m)
        .and_then(|p| p.checked_sub(2))
        .filter(|&p| &m[p..p + 2] == b" |");
    if let Some(p) = pipe {
        if looks_like_logger(&m[p + 3..]) {
            m = trim_end(&m[..p]);
        }
    }
    m
}

/// A Java class or `File.scala:68`: a letter, then name characters, with a dot.
fn looks_like_logger(s: &[u8]) -> bool {
    s.first().is_some_and(u8::is_ascii_alphabetic)
        && s.contains(&b'.')
        && s.iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"._$:-".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(line: &str) -> Entry<'_> {
        split_entry(line.as_bytes()).expect("an entry")
    }

    fn msg<'a>(e: &Entry<'a>) -> &'a str {
        std::str::from_utf8(e.message).unwrap()
    }

    fn time(e: &Entry<'_>) -> (i8, i8, i8, i32) {
        match e.time {
            LineTime::Local(t) => (t.hour, t.minute, t.second, t.nanos / 1_000_000),
            other => panic!("no local time: {other:?}"),
        }
    }

    #[test]
    fn apache_default_layout_gives_time_broker_and_bare_message() {
        let e = entry("[2024-01-02 03:04:05,678] INFO [GroupCoordinator 7]: Stabilized group g generation 3 (__consumer_offsets-1) (kafka.coordinator.group.GroupCoordinator)");
        assert_eq!(time(&e), (3, 4, 5, 678));
        assert_eq!(
            e.component,
            Component::Broker {
                id: Some(b"7".as_slice())
            }
        );
        assert_eq!(
            msg(&e),
            "Stabilized group g generation 3 (__consumer_offsets-1)"
        );
    }

    #[test]
    fn new_coordinator_prefix_gives_the_node_id() {
        let e = entry("[2025-01-01 00:00:00,000] INFO [GroupCoordinator id=3 topic=__consumer_offsets partition=15] Stabilized group g generation 1 with 1 members. (org.apache.kafka.coordinator.group.GroupMetadataManager)");
        assert_eq!(
            e.component,
            Component::Broker {
                id: Some(b"3".as_slice())
            }
        );
        assert_eq!(msg(&e), "Stabilized group g generation 1 with 1 members.");
    }

    #[test]
    fn old_group_metadata_manager_prefixes_are_brokers_too() {
        let e = entry("[2017-01-01 00:00:00,000] INFO [Group Metadata Manager on Broker 2]: Removed 0 expired offsets in 1 milliseconds. (kafka.coordinator.group.GroupMetadataManager)");
        assert_eq!(
            e.component,
            Component::Broker {
                id: Some(b"2".as_slice())
            }
        );
        let e = entry("[2019-01-01 00:00:00,000] INFO [GroupMetadataManager brokerId=4] Removed 0 expired offsets in 1 milliseconds. (kafka.coordinator.group.GroupMetadataManager)");
        assert_eq!(
            e.component,
            Component::Broker {
                id: Some(b"4".as_slice())
            }
        );
        assert_eq!(msg(&e), "Removed 0 expired offsets in 1 milliseconds.");
    }

    /// [`strip_trailer`] as first written: each pair searched for backwards.
    fn strip_trailer_by_pairs(msg: &[u8]) -> &[u8] {
        let rfind = |m: &[u8], pair: &[u8]| memchr::memmem::rfind(m, pair);
        let mut m = trim_end(msg);
        if m.ends_with(b"]") {
            if let Some(p) = rfind(m, b") [") {
                if !m[p + 3..].contains(&b'(') {
                    m = &m[..p + 1];
                }
            }
        }
        if m.ends_with(b")") {
            if let Some(p) = rfind(m, b" (") {
                if looks_like_logger(&m[p + 2..m.len() - 1]) {
                    m = trim_end(&m[..p]);
                }
            }
        }
        if let Some(p) = rfind(m, b" | ") {
            if looks_like_logger(&m[p + 3..]) {
                m = trim_end(&m[..p]);
            }
        }
        m
    }

    #[test]
    fn a_lines_time_is_read_once_zoned_when_a_zone_follows_else_local() {
        let cases: [(&str, usize); 6] = [
            ("2021-05-04T16:41:31.006683114Z rest", 30),
            ("x 2021-05-04 16:41:31,006+02:00 rest", 31),
            ("[2021-05-04 16:41:31,006+0200] rest", 29),
            ("[2021-05-04 16:41:31,006] rest", 24),
            ("2021-05-04 16:41:31,006 -0 rest", 23),
            ("pid 12-34 then 2021-05-04 16:41:31 rest", 34),
        ];
        for (line, end) in cases {
            let b = line.as_bytes();
            let at = line.find("2021").unwrap();
            let want = match parse_zoned_datetime(&b[at..]) {
                Some((ts, used)) => (LineTime::Zoned(ts), at + used),
                None => {
                    let (dt, used) = parse_log_datetime(&b[at..]).unwrap();
                    (LineTime::Local(dt), at + used)
                }
            };
            assert_eq!(find_time(b), want, "{line}");
            assert_eq!(want.1, end, "{line}");
        }
    }

    #[test]
    fn the_trailer_cut_at_the_last_space_is_the_one_a_backward_search_for_the_pair_cuts() {
        let messages = [
            "Stabilized group g generation 5 (kafka.coordinator.group.GroupCoordinator)",
            "Stabilized group g generation 5 (__consumer_offsets-3) (kafka.coordinator.group.GroupCoordinator:12)",
            "Preparing to rebalance group g (reason: Adding new member m (client reason: x))",
            "a (b c.d)",
            "a (b.c) (d e)",
            "ends with a parenthesis (x.y) )",
            "(kafka.Logger)",
            " (kafka.Logger)",
            "Stabilized group g generation 5 | kafka.coordinator.GroupCoordinator (Logging.scala:68)",
            "a | b c.d",
            "a | b.c | d e",
            "a | b.c |",
            " | a.b",
            "| a.b",
            "x |a.b",
            "a | b.c ",
            "m (x.y) [thread 1]",
            "m (x.y) [kafka-coordinator-heartbeat-thread | g]",
            "m [t] (x.y)",
            "",
            " ",
            "no trailer at all",
        ];
        for m in messages {
            assert_eq!(
                String::from_utf8_lossy(strip_trailer(m.as_bytes())),
                String::from_utf8_lossy(strip_trailer_by_pairs(m.as_bytes())),
                "{m:?}"
            );
        }
    }

    #[test]
    fn strimzi_layout_drops_logger_and_thread() {
        let e = entry("2023-10-05 15:07:20,881 INFO [GroupCoordinator 3]: Member m in group g has failed, removing it from the group (kafka.coordinator.group.GroupCoordinator) [executor-Heartbeat]");
        assert_eq!(time(&e), (15, 7, 20, 881));
        assert_eq!(
            msg(&e),
            "Member m in group g has failed, removing it from the group"
        );
    }

    #[test]
    fn kubectl_timestamps_prefix_defers_to_the_log4j_time() {
        let e = entry("2021-05-04T16:41:31.006683114Z 2021-05-04 18:41:31,006 INFO [GroupCoordinator 0]: Stabilized group g generation 2 (__consumer_offsets-3) (kafka.coordinator.group.GroupCoordinator) [data-plane-kafka-request-handler-1]");
        assert_eq!(time(&e), (18, 41, 31, 6));
        assert_eq!(
            msg(&e),
            "Stabilized group g generation 2 (__consumer_offsets-3)"
        );
    }

    #[test]
    fn docker_compose_and_comment_prefixes_are_skipped() {
        let e = entry("# kafka1    | [2022-08-23 11:36:29,677] INFO [GroupCoordinator 1]: Stabilized group g generation 1 (__consumer_offsets-6) with 1 members (kafka.coordinator.group.GroupCoordinator)");
        assert_eq!(time(&e), (11, 36, 29, 677));
        assert_eq!(
            msg(&e),
            "Stabilized group g generation 1 (__consumer_offsets-6) with 1 members"
        );
    }

    #[test]
    fn vendor_pipe_layout_drops_logger_and_file_line() {
        let e = entry("2018-05-12 10:58:42,561 | INFO  | [kafka-request-handler-3] | [GroupCoordinator 1]: Stabilized group g generation 5 | kafka.coordinator.GroupCoordinator (Logging.scala:68)");
        assert_eq!(time(&e), (10, 58, 42, 561));
        assert_eq!(msg(&e), "Stabilized group g generation 5");
    }

    #[test]
    fn test_log4j_logger_with_line_number_is_dropped() {
        let e = entry("[2020-01-01 00:00:00,000] INFO [GroupCoordinator 0]: Stabilized group g generation 5 (__consumer_offsets-2) (kafka.coordinator.group.GroupMetadataManager:66)");
        assert_eq!(
            msg(&e),
            "Stabilized group g generation 5 (__consumer_offsets-2)"
        );
    }

    #[test]
    fn client_layout_level_dash_date_logger_line() {
        let e = entry("INFO - 2024-11-11 09:36:08,710 - org.apache.kafka.clients.consumer.internals.ConsumerCoordinator:604 - [Consumer clientId=c-1, groupId=g] (Re-)joining group  ");
        assert_eq!(time(&e), (9, 36, 8, 710));
        assert_eq!(
            e.component,
            Component::Client {
                client_id: Some(b"c-1".as_slice()),
                group_id: Some(b"g".as_slice()),
                instance_id: None
            }
        );
        assert_eq!(msg(&e), "(Re-)joining group");
    }

    #[test]
    fn static_client_prefix_gives_the_instance_id() {
        let e = entry("2021-04-19 15:00:50.753  INFO 1 --- [main] o.a.k.c.c.internals.AbstractCoordinator  : [Consumer instanceId=i-1, clientId=c, groupId=g] (Re-)joining group");
        assert_eq!(time(&e), (15, 0, 50, 753));
        let Component::Client { instance_id, .. } = e.component else {
            panic!()
        };
        assert_eq!(instance_id, Some(b"i-1".as_slice()));
    }

    #[test]
    fn group_metadata_lines_without_prefix_are_found_by_logger() {
        let e = entry("[2021-01-01 00:00:00,000] INFO Loaded member MemberMetadata(memberId=m, groupInstanceId=None, clientId=c, clientHost=/1.2.3.4, sessionTimeoutMs=10000, rebalanceTimeoutMs=300000, supportedProtocols=List(range)) in group g with generation 4. (kafka.coordinator.group.GroupMetadata$)");
        assert_eq!(e.component, Component::BrokerBare);
        assert!(msg(&e).starts_with("Loaded member MemberMetadata(memberId=m"));
        assert!(msg(&e).ends_with("with generation 4."));
    }

    #[test]
    fn pre_1_0_client_lines_are_found_by_logger() {
        let e = entry("[2017-03-01 10:00:00,000] INFO Discovered coordinator b:9092 (id: 2147483646 rack: null) for group g. (org.apache.kafka.clients.consumer.internals.AbstractCoordinator)");
        assert_eq!(e.component, Component::ClientBare);
        assert_eq!(
            msg(&e),
            "Discovered coordinator b:9092 (id: 2147483646 rack: null) for group g."
        );
    }

    #[test]
    fn request_log_lines_give_the_json() {
        let e = entry(
            "[2024-01-01 00:00:00,000] DEBUG Completed request:{\"a\":1} (kafka.request.logger)",
        );
        assert_eq!(e.component, Component::Request);
        assert_eq!(msg(&e), "{\"a\":1}");
    }

    #[test]
    fn lines_of_other_components_are_not_entries() {
        assert!(split_entry(b"[2024-01-01 00:00:00,000] INFO [ReplicaFetcher replicaId=1] consumer group stuff (kafka.server.X)").is_none());
        assert!(split_entry(b"\tat org.apache.kafka.coordinator.group.GroupMetadataManager.foo(GroupMetadataManager.java:1)").is_none());
    }

    #[test]
    fn continuation_lines_do_not_start_entries() {
        assert!(!starts_entry(b"\tMember:       3"));
        assert!(!starts_entry(b"  "));
        assert!(!starts_entry(b""));
        assert!(!starts_entry(
            b"org.apache.kafka.common.errors.StaleMemberEpochException: stale"
        ));
        assert!(starts_entry(b"INFO - 2024-11-11 09:36:08,710 - x - y"));
    }

    #[test]
    fn decoration_before_the_time_is_stripped_and_the_line_still_starts_an_entry() {
        let plain =
            b"[2024-05-01 10:00:00,123] INFO [GroupCoordinator 1]: Preparing to rebalance group g1";
        for prefix in [
            &b"    "[..],
            b"> ",
            b"> > ",
            b" * ",
            b"# ",
            b"- ",
            b"123:",
            b"  42: ",
            b"7 ",
            b"\t> 12| ",
        ] {
            let line = [prefix, &plain[..]].concat();
            assert_eq!(strip_decoration(&line), &plain[..], "{prefix:?}");
            assert!(starts_entry(&line), "{prefix:?}");
            assert_eq!(split_entry(&line), split_entry(plain), "{prefix:?}");
        }
        let zoned = b"2024-05-01T10:00:00.123Z stdout F [2024-05-01 10:00:00,123] INFO x";
        assert_eq!(
            strip_decoration(zoned),
            &zoned[..],
            "a year is not a line number"
        );
        // Stack traces stay continuations.
        for cont in [
            &b"\tat org.apache.kafka.Foo(Foo.java:1)"[..],
            b"    ... 12 more",
            b"  Caused by: x",
        ] {
            assert!(!starts_entry(cont), "{cont:?}");
        }
    }

    #[test]
    fn structured_records_give_back_the_plain_line_with_their_own_time() {
        let plain =
            "[2024-05-01 10:00:00,123] INFO [GroupCoordinator 1]: Preparing to rebalance group g1";
        let docker = format!(
            r#"{{"log":"{plain}\n","stream":"stdout","time":"2024-05-01T10:00:00.123456789Z"}}"#
        );
        assert_eq!(structured_line(docker.as_bytes()).as_deref(), Some(plain));
        let logback = r#"{"@timestamp":"2024-05-01T10:00:00.123Z","level":"INFO","logger_name":"kafka.coordinator.group.GroupCoordinator","thread_name":"t","message":"[GroupCoordinator 1]: Preparing to rebalance group g1\nsecond line"}"#;
        assert_eq!(
            structured_line(logback.as_bytes()).as_deref(),
            Some("2024-05-01T10:00:00.123Z [GroupCoordinator 1]: Preparing to rebalance group g1")
        );
        let journald =
            r#"{"__REALTIME_TIMESTAMP":"1714557600123000","MESSAGE":"[GroupCoordinator 1]: x"}"#;
        assert_eq!(
            structured_line(journald.as_bytes()).as_deref(),
            Some("2024-05-01T10:00:00.123000Z [GroupCoordinator 1]: x")
        );
        let hit = format!(r#"{{"_index":"k","_source":{{"message":"{plain}"}}}}"#);
        assert_eq!(structured_line(hit.as_bytes()).as_deref(), Some(plain));
        for not in [
            &b"{not json}"[..],
            b"[2024-05-01 10:00:00,123] INFO {x}",
            b"{}",
        ] {
            assert_eq!(structured_line(not), None);
        }
    }
}
