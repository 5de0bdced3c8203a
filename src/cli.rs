//! The command line, as clap reads it, and its translation into
//! [`crate::options::Options`].
//!
//! clap is confined to this module. Flags follow grep where they can
//! (`-g` patterns, `-v`, `-c`, exit codes 0/1/2).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::filter::{compile, Filter, TimeBound};
use crate::options::{Command, Options, ReadOptions};
use crate::render::{Format, View};
use crate::time::LogZone;
use crate::Error;

/// Why did my Kafka consumer group rebalance, who caused it, and how long
/// were we stopped? Reads tcpdump captures (pcap, pcapng) and Kafka broker
/// and client logs (plain, rotated, .gz, directories, `-` for stdin).
#[derive(Debug, Parser)]
#[command(
    name = "kgtrace",
    version,
    about,
    max_term_width = 100,
    after_long_help = after_help()
)]
pub struct Cli {
    /// What to show.
    #[command(subcommand)]
    pub command: CliCommand,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum CliCommand {
    /// One row per rebalance: time, group, generation a→b, duration, trigger, member, straggler.
    Rebalances(Common),
    /// Every group event in time order, one line each.
    Timeline(Common),
    /// Per group: protocol, assignors, members now, generations, rebalance count and rate.
    Groups(Common),
    /// A whole incident report (Markdown by default; `--html FILE` adds a self-contained HTML page).
    Report {
        /// Inputs and filters.
        #[command(flatten)]
        common: Common,
        /// Also write a self-contained HTML report with an SVG timeline to FILE (`-`: write only the HTML, to stdout).
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Only the story, the summary and the rebalance tables, under 30,000 characters (a ticket comment); says what it left out.
        #[arg(long)]
        brief: bool,
    },
    /// Raw Kafka request/response exchanges, one row each.
    Decode(Common),
    /// Live: a line when a rebalance starts, its record when it completes (`tcpdump -U -w - | kgtrace watch -`; `--follow` for logs); `--format ndjson` for machines; Ctrl-C prints the summary so far.
    ///
    /// Several files read to their end (brokers' logs, captures from several hosts, a directory's logs) are read at once and merged in time order; a pipe, a FIFO and followed files are told as they come. A log's clock is lined up with a capture's as their rebalances pair up (a broker's "Stabilized group G generation N" with the first JoinGroup answer of that generation), as `rebalances` does; the summary gives the offsets.
    Watch {
        /// Inputs and filters (`--format table` or `ndjson`).
        #[command(flatten)]
        common: Common,
        /// Follow each file as `tail -F` does: wait for more at its end, reopen it when it is rotated or truncated; end with Ctrl-C.
        #[arg(long)]
        follow: bool,
    },
    /// The `__consumer_offsets` partition (and broker, if the inputs show it) that coordinates GROUP.
    // Inputs are optional here only: the partition needs no traffic.
    #[command(mut_arg("inputs", |a| a.required(false)))]
    Coordinator {
        /// The group id.
        group: String,
        /// Partitions of `__consumer_offsets` (`offsets.topic.num.partitions`).
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
        partitions: u32,
        /// Inputs and filters.
        #[command(flatten)]
        common: Common,
    },
    /// Prints a shell completion script.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Prints the man page (roff).
    Man,
}

/// Inputs, filters and output flags shared by every analysing subcommand.
#[derive(Debug, Args)]
pub struct Common {
    /// Captures (pcap, pcapng, gzip or zstd compressed), logs (server.log, rotated, .gz), directories of both, or `-` for stdin; each recognised by its content.
    // Required: without it a run would read nothing and exit 1 as if
    // nothing had matched.
    #[arg(value_name = "INPUT", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Only groups matching REGEX (repeatable: any may match).
    #[arg(short = 'g', long = "group", value_name = "REGEX")]
    pub groups: Vec<String>,
    /// Only events or rebalances involving a member_id or group.instance.id matching REGEX.
    #[arg(long, value_name = "REGEX")]
    pub member: Option<String>,
    /// Only events or rebalances involving a client_id matching REGEX.
    #[arg(long, value_name = "REGEX")]
    pub client: Option<String>,
    /// Only events or rebalances involving a client address matching REGEX.
    #[arg(long, value_name = "REGEX")]
    pub host: Option<String>,
    /// From this time on: RFC 3339 (2024-05-01T12:00:00Z), a time of day (15:05:00: on the inputs' first day, in --log-tz's zone, UTC by default) or relative to the first event (+90s, +5m, +1h).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Up to this time: RFC 3339, a time of day (on the inputs' first day, in --log-tz) or relative to the first event.
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Only this kind (repeatable; snake_case or kebab-case). For rebalances and report a trigger kind: member_joined, member_left, poll_timeout, session_timeout, metadata_changed, subscription_changed, leader_rejoined, static_member_replaced, static_member_fenced, coordinator_changed, previous_rebalance_failed, pending_sync_expired, group_over_capacity, protocol_migration, unknown. For timeline a mark: join, sync, heartbeat, heartbeat_failed, leave, commit, coordinator, state, close, other (or event text such as JoinGroup). For decode an API name; for groups a protocol or state.
    #[arg(long = "kind", value_name = "KIND")]
    pub kinds: Vec<String>,
    /// Invert the selection: show what does not match.
    #[arg(short = 'v', long = "invert-match")]
    pub invert: bool,
    /// Print only the number of matching rows.
    #[arg(short = 'c', long)]
    pub count: bool,
    /// rebalances of log files in ndjson or csv: write each record once it is final (ten minutes of log time after its round), in memory that follows the last half hour of the logs instead of their length. A group silent in the logs for longer than 15 minutes keeps only what its next rounds are judged from, not its whole history (a member id used again after the silence can be told otherwise): without --stream every line is held and the records are exact.
    #[arg(long)]
    pub stream: bool,
    /// Output format [default: table; for report: markdown].
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// When to use colour (NO_COLOR is respected).
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
    /// Time zone of log timestamps: an IANA name (Europe/Berlin) or an offset (+02:00). Default UTC.
    #[arg(long = "log-tz", value_name = "ZONE", default_value = "UTC")]
    pub log_tz: String,
    /// A Kafka port (repeatable; default 9092). Kafka on other ports is also detected from the traffic.
    #[arg(long = "port", value_name = "PORT")]
    pub ports: Vec<u16>,
    /// Table width in columns: 0 for unlimited (one line per row). Default: the terminal's width, else COLUMNS, else 100.
    #[arg(long, value_name = "COLUMNS")]
    pub width: Option<u16>,
    /// Tables keep every column and cell whole, one line per row, whatever the width.
    #[arg(long, conflicts_with = "width")]
    pub wide: bool,
    /// Read every input as this instead of recognising it by its first bytes.
    #[arg(long = "input-type", value_enum, value_name = "TYPE")]
    pub input_type: Option<InputTypeArg>,
    /// No progress bar and no diagnostics summary on stderr (when nothing
    /// matched, the warnings saying why still print).
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--input-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InputTypeArg {
    /// pcap or pcapng, possibly gzip or zstd compressed.
    Capture,
    /// Kafka broker or client log text, possibly compressed.
    Log,
}

/// `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// A table for terminals.
    Table,
    /// One JSON document.
    Json,
    /// One JSON object per line.
    Ndjson,
    /// Comma-separated values with a header.
    Csv,
    /// Markdown for tickets.
    Markdown,
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// Colour when stdout is a terminal and NO_COLOR is unset.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl Cli {
    /// Resolves the parsed command line into options (compiling patterns,
    /// parsing times and zones), naming the flag on any error.
    pub fn into_options(self, stdout_is_terminal: bool, no_color: bool) -> crate::Result<Options> {
        let (command, common, view) = match self.command {
            CliCommand::Rebalances(c) => (Command::Analyse, c, View::Rebalances),
            CliCommand::Timeline(c) => (Command::Analyse, c, View::Timeline),
            CliCommand::Groups(c) => (Command::Analyse, c, View::Groups),
            CliCommand::Decode(c) => (Command::Analyse, c, View::Decode),
            CliCommand::Watch { common, follow } => {
                (Command::Watch { follow }, common, View::Rebalances)
            }
            CliCommand::Report {
                common,
                html,
                brief,
            } => (Command::Report { html, brief }, common, View::Report),
            CliCommand::Coordinator {
                group,
                partitions,
                common,
            } => (
                Command::Coordinator { group, partitions },
                common,
                View::Groups,
            ),
            CliCommand::Completions { shell } => {
                return Ok(Options::only(Command::Completions(shell)))
            }
            CliCommand::Man => return Ok(Options::only(Command::Man)),
        };
        let format = match (common.format, view) {
            // A report is Markdown unless asked otherwise; `--format table`
            // gets the report as terminal text (story first, then tables).
            (None, View::Report) => Format::Markdown,
            (f, _) => format_of(f.unwrap_or(FormatArg::Table)),
        };
        let color = match common.color {
            ColorArg::Always => true,
            ColorArg::Never => false,
            ColorArg::Auto => stdout_is_terminal && !no_color,
        };
        Ok(Options {
            command,
            view,
            format,
            color,
            count: common.count,
            stream: common.stream,
            width: if common.wide { Some(0) } else { common.width },
            quiet: common.quiet,
            inputs: common.inputs.clone(),
            filter: filter_of(&common, view)?,
            read: ReadOptions {
                ports: if common.ports.is_empty() {
                    vec![9092]
                } else {
                    common.ports.clone()
                },
                log_zone: crate::time::LogZone::parse(&common.log_tz)?,
                log_zone_name: common.log_tz.clone(),
                input_type: common.input_type.map(|t| match t {
                    InputTypeArg::Capture => crate::options::InputType::Capture,
                    InputTypeArg::Log => crate::options::InputType::Log,
                }),
            },
        })
    }

    /// Writes a completion script for `shell`.
    pub fn completions(shell: clap_complete::Shell, out: &mut dyn std::io::Write) {
        use clap::CommandFactory;
        clap_complete::generate(shell, &mut Cli::command(), "kgtrace", out);
    }

    /// Writes the man page.
    pub fn man(out: &mut dyn std::io::Write) -> std::io::Result<()> {
        man_page(out)
    }
}

/// Exit codes, as `--help` and `man` document them.
pub const EXIT_CODES: [(u8, &str); 3] = [
    (0, "something matched (for report: the report was written)"),
    (1, "nothing matched"),
    (
        2,
        "an error: an input that cannot be read, a bad option, an output that cannot be written",
    ),
];

/// Every trigger kind `--kind` accepts for rebalances and report, with what
/// it means; the names are `crate::group::trigger::Kind::ALL`'s (a test
/// keeps them equal).
pub const TRIGGER_KINDS: [(&str, &str); 16] = [
    ("member_joined", "a new member joined"),
    ("member_left", "a member left with LeaveGroup"),
    (
        "poll_timeout",
        "a member stopped polling for max.poll.interval.ms",
    ),
    (
        "session_timeout",
        "a member's heartbeats stopped for its session timeout",
    ),
    ("metadata_changed", "topic metadata changed"),
    ("subscription_changed", "a member's subscription changed"),
    (
        "leader_rejoined",
        "a known member rejoined while the group was stable",
    ),
    (
        "static_member_replaced",
        "a static member restarted and replaced its member id",
    ),
    ("static_member_fenced", "a static member was fenced"),
    ("coordinator_changed", "the coordinator moved"),
    (
        "previous_rebalance_failed",
        "the previous round failed and members retried",
    ),
    (
        "pending_sync_expired",
        "members that never sent SyncGroup were removed",
    ),
    (
        "storage_error",
        "the coordinator could not store the group's assignment",
    ),
    ("group_over_capacity", "group.max.size was exceeded"),
    (
        "protocol_migration",
        "the group moved between the classic and consumer protocols",
    ),
    ("unknown", "nothing in the inputs explains it"),
];

/// The text after `--help`: exit codes and trigger kinds.
fn after_help() -> String {
    let mut text = String::from("Exit codes:\n");
    for (code, meaning) in EXIT_CODES {
        text.push_str(&format!("  {code}  {meaning}\n"));
    }
    text.push_str("\nTrigger kinds (--kind, snake_case or kebab-case):\n");
    for (kind, meaning) in TRIGGER_KINDS {
        text.push_str(&format!("  {kind:<26} {meaning}\n"));
    }
    text
}

/// The man page: the main page, then each subcommand with its synopsis and
/// options, then exit codes and trigger kinds, all from the clap command
/// that `--help` prints.
fn man_page(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    use clap::CommandFactory;
    let cmd = Cli::command();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    writeln!(out, ".SH COMMANDS")?;
    for sub in cmd.get_subcommands() {
        let name = sub.get_name();
        writeln!(out, ".SS \"kgtrace {}\"", roff_text(name))?;
        if let Some(about) = sub.get_long_about().or(sub.get_about()) {
            writeln!(out, "{}", roff_text(&about.to_string()))?;
        }
        let sub_man = clap_mangen::Man::new(sub.clone().bin_name(format!("kgtrace {name}")));
        let mut options = Vec::new();
        sub_man.render_synopsis_section(&mut options)?;
        sub_man.render_options_section(&mut options)?;
        // Each subcommand's sections become subsections of COMMANDS.
        let options = String::from_utf8_lossy(&options).replace(".SH ", ".TP\n.B ");
        out.write_all(options.as_bytes())?;
    }
    writeln!(out, ".SH \"EXIT STATUS\"")?;
    for (code, meaning) in EXIT_CODES {
        writeln!(out, ".TP\n.B {code}\n{}", roff_text(meaning))?;
    }
    writeln!(out, ".SH \"TRIGGER KINDS\"")?;
    for (kind, meaning) in TRIGGER_KINDS {
        writeln!(out, ".TP\n.B {kind}\n{}", roff_text(meaning))?;
    }
    man.render_version_section(out)
}

/// Text safe on a roff line: no leading dot or quote, backslashes doubled.
fn roff_text(text: &str) -> String {
    let text = text.replace('\\', "\\e");
    match text.chars().next() {
        Some('.') | Some('\'') => format!("\\&{text}"),
        _ => text,
    }
}

fn format_of(f: FormatArg) -> Format {
    match f {
        FormatArg::Table => Format::Table,
        FormatArg::Json => Format::Json,
        FormatArg::Ndjson => Format::Ndjson,
        FormatArg::Csv => Format::Csv,
        FormatArg::Markdown => Format::Markdown,
    }
}

fn time_of(
    flag: &'static str,
    value: &Option<String>,
    zone: &LogZone,
) -> crate::Result<Option<TimeBound>> {
    value
        .as_deref()
        .map(|v| {
            TimeBound::parse_in(v, zone).ok_or_else(|| Error::InvalidOption {
                flag,
                value: v.to_string(),
                hint: "expected an RFC 3339 time (2024-05-01T12:00:00Z), a time of day (15:05:00, on the inputs' first day, in --log-tz) or a time after the first event (+90s, +5m, +1h)".into(),
            })
        })
        .transpose()
}

fn filter_of(c: &Common, view: View) -> crate::Result<Filter> {
    let zone = LogZone::parse(&c.log_tz)?;
    let opt = |flag, v: &Option<String>| v.as_deref().map(|p| compile(flag, p)).transpose();
    Ok(Filter {
        groups: c
            .groups
            .iter()
            .map(|p| compile("--group", p))
            .collect::<crate::Result<_>>()?,
        member: opt("--member", &c.member)?,
        client: opt("--client", &c.client)?,
        host: opt("--host", &c.host)?,
        since: time_of("--since", &c.since, &zone)?,
        until: time_of("--until", &c.until, &zone)?,
        kinds: crate::filter::kinds(&c.kinds, view)?,
        invert: c.invert,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_documented_trigger_kinds_are_the_kinds_kgtrace_names() {
        let documented: Vec<&str> = TRIGGER_KINDS.iter().map(|(k, _)| *k).collect();
        let named: Vec<&str> = crate::group::trigger::Kind::ALL
            .iter()
            .map(|k| k.name())
            .collect();
        assert_eq!(documented, named);
    }

    #[test]
    fn help_and_man_list_every_kind_exit_code_subcommand_and_option() {
        let help = Cli::command().render_long_help().to_string();
        let mut man = Vec::new();
        Cli::man(&mut man).unwrap();
        let man = String::from_utf8(man).unwrap();
        for (kind, _) in TRIGGER_KINDS {
            assert!(help.contains(kind), "--help lacks {kind}");
            assert!(man.contains(kind), "man lacks {kind}");
        }
        assert!(man.contains("EXIT STATUS") && help.contains("Exit codes"));
        for sub in Cli::command().get_subcommands() {
            assert!(man.contains(&format!("kgtrace {}", sub.get_name())));
            for arg in sub.get_arguments().filter_map(|a| a.get_long()) {
                // roff writes `-` as `\-`.
                let flag = format!("\\-\\-{}", arg.replace('-', "\\-"));
                assert!(man.contains(&flag), "man lacks {} {flag}", sub.get_name());
            }
        }
        assert!(
            !man.contains("kgtrace-report(1)"),
            "no page that does not exist"
        );
    }

    #[test]
    fn partitions_zero_is_refused() {
        let parsed = Cli::try_parse_from(["kgtrace", "coordinator", "g", "--partitions", "0"]);
        assert!(parsed.is_err());
    }
}
