//! Logs kgtrace does not read, recognised by their lines, so that an input
//! that yields no event is named for what it is ("a tansu broker log")
//! rather than called plain text.
//!
//! Takes: the first bytes of an input (the head peeked to detect it).
//! Gives: what it looks like, when most of its first lines are in a known
//! layout kgtrace does not read: tansu's (Rust `tracing_subscriber::fmt`,
//! as tansu-broker's `otel/tracing.rs` sets it up: an RFC 3339 time, the
//! level, then spans and a `tansu_*::…` target) or kafka-python's (Python
//! `logging` with its `kafka.conn`, `kafka.coordinator`, … logger names).

/// Lines looked at.
const SAMPLE_LINES: usize = 200;

/// A layout kgtrace does not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Foreign {
    /// A tansu broker's log.
    Tansu,
    /// A kafka-python client's log.
    KafkaPython,
}

impl Foreign {
    /// What the input looked like, for its warning.
    pub fn looked_like(self) -> &'static str {
        match self {
            Foreign::Tansu => "a tansu broker log: not a Kafka server.log format",
            Foreign::KafkaPython => {
                "a kafka-python client log: not a Kafka server.log or Java client log format"
            }
        }
    }
}

/// The foreign layout most of `head`'s first lines are in, if any (at
/// least a quarter of its non-empty lines, so that stack traces and
/// wrapped lines between them do not hide it).
pub fn foreign_log(head: &[u8]) -> Option<Foreign> {
    let text = String::from_utf8_lossy(head);
    let (mut lines, mut tansu, mut python) = (0usize, 0usize, 0usize);
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(SAMPLE_LINES)
    {
        lines += 1;
        let line = without_ansi(line);
        tansu += usize::from(is_tansu_line(&line));
        python += usize::from(is_kafka_python_line(&line));
    }
    let (kind, n) = if tansu >= python {
        (Foreign::Tansu, tansu)
    } else {
        (Foreign::KafkaPython, python)
    };
    (n > 0 && n * 4 >= lines).then_some(kind)
}

/// `line` without ANSI colour sequences (`ESC [ … m`), which
/// `tracing_subscriber` writes by default even into files.
fn without_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

const LEVELS: [&str; 5] = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"];

/// `2026-12-03T02:35:41.496123Z  INFO tansu_broker::…: 87: …` (spans such as
/// `join{group_id="g1"}:` may sit between the level and the target).
fn is_tansu_line(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let (Some(time), Some(level)) = (words.next(), words.next()) else {
        return false;
    };
    is_rfc3339_time(time)
        && LEVELS.contains(&level)
        && words.any(|w| w.starts_with("tansu") && w.contains("::"))
}

/// `YYYY-MM-DDTHH:MM:SS…` with a zone (`Z` or an offset).
fn is_rfc3339_time(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() >= 20
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && (word.ends_with('Z') || word[19..].contains(['+', '-']))
}

/// kafka-python's own modules, whose names are its loggers' names.
const KAFKA_PYTHON_MODULES: [&str; 12] = [
    "admin",
    "client_async",
    "cluster",
    "conn",
    "consumer",
    "coordinator",
    "metrics",
    "producer",
    "protocol",
    "record",
    "sasl",
    "util",
];

/// A Python `logging` line whose logger is one of kafka-python's modules
/// (`INFO:kafka.coordinator:…`, `… INFO MainThread kafka.conn: …`). Kafka's
/// own Scala loggers (`(kafka.coordinator.group.GroupCoordinator)`) are in
/// parentheses and name classes (capitals), so they never match.
fn is_kafka_python_line(line: &str) -> bool {
    line.split_whitespace()
        .flat_map(|w| w.split(':'))
        .any(is_kafka_python_logger)
}

fn is_kafka_python_logger(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("kafka.") else {
        return false;
    };
    let module = rest.split('.').next().unwrap_or("");
    let scala =
        rest.starts_with("coordinator.group") || rest.starts_with("coordinator.transaction");
    KAFKA_PYTHON_MODULES.contains(&module)
        && !scala
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tansu_log_with_its_colours_is_a_tansu_log() {
        let log = "\u{1b}[2m2026-12-03T02:35:41.496123Z\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m \u{1b}[1mjoin\u{1b}[0m\u{1b}[1m{\u{1b}[0mgroup_id=\"g1\"\u{1b}[1m}\u{1b}[0m\u{1b}[2m:\u{1b}[0m \u{1b}[2mtansu_broker::coordinator::group::administrator\u{1b}[0m\u{1b}[2m:\u{1b}[0m \u{1b}[2m1023:\u{1b}[0m member_id=\"\"\n\
2026-12-03T02:35:41.501877Z DEBUG tansu_broker::broker: 311: api_key=11\n";
        assert_eq!(foreign_log(log.as_bytes()), Some(Foreign::Tansu));
    }

    #[test]
    fn kafka_python_logs_in_two_python_layouts_are_kafka_python_logs() {
        for log in [
            "INFO:kafka.coordinator:Successfully joined group g1 with generation 1\nINFO:kafka.conn:<BrokerConnection node_id=1> connected\n",
            "2026-12-03 02:35:41,496.496Z INFO MainThread kafka.coordinator: (Re-)joining group g1\n",
        ] {
            assert_eq!(foreign_log(log.as_bytes()), Some(Foreign::KafkaPython), "{log}");
        }
    }

    #[test]
    fn kafka_and_plain_text_are_neither() {
        for log in [
            "[2024-05-01 12:00:00,000] INFO [GroupCoordinator 1]: Stabilized group g generation 1 (kafka.coordinator.group.GroupCoordinator)\n",
            "[2024-05-01 12:00:00,000] INFO Kafka version: 3.9.2 (org.apache.kafka.common.utils.AppInfoParser)\n",
            "hello\nthis is not kafka\n",
            "",
        ] {
            assert_eq!(foreign_log(log.as_bytes()), None, "{log}");
        }
    }
}
