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
use crate::Error;

/// Why did my Kafka consumer group rebalance, who caused it, and how long
/// were we stopped? Reads tcpdump captures (pcap, pcapng) and Kafka broker
/// and client logs (plain, rotated, .gz, directories, `-` for stdin).
#[derive(Debug, Parser)]
#[command(name = "kgtrace", version, about, max_term_width = 100)]
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
        /// Also write a self-contained HTML report with an SVG timeline to FILE.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
    /// Raw Kafka request/response exchanges, one row each.
    Decode(Common),
    /// The `__consumer_offsets` partition (and broker, if the inputs show it) that coordinates GROUP.
    // Inputs are optional here only: the partition needs no traffic.
    #[command(mut_arg("inputs", |a| a.required(false)))]
    Coordinator {
        /// The group id.
        group: String,
        /// Partitions of `__consumer_offsets` (`offsets.topic.num.partitions`).
        #[arg(long, default_value_t = 50)]
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
    /// From this time on: RFC 3339 (2024-05-01T12:00:00Z) or relative to the first event (+90s, +5m, +1h).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Up to this time: RFC 3339 or relative to the first event.
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Only this kind (repeatable): a trigger kind for rebalances (session_timeout...), an event kind or mark for the timeline (join, leave, heartbeat_failed...), an API for decode.
    #[arg(long = "kind", value_name = "KIND")]
    pub kinds: Vec<String>,
    /// Invert the selection: show what does not match.
    #[arg(short = 'v', long = "invert-match")]
    pub invert: bool,
    /// Print only the number of matching rows.
    #[arg(short = 'c', long)]
    pub count: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
    /// When to use colour (NO_COLOR is respected).
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
    /// Time zone of log timestamps: an IANA name (Europe/Berlin) or an offset (+02:00). Default UTC.
    #[arg(long = "log-tz", value_name = "ZONE", default_value = "UTC")]
    pub log_tz: String,
    /// A Kafka port (repeatable; default 9092). Kafka on other ports is also detected from the traffic.
    #[arg(long = "port", value_name = "PORT")]
    pub ports: Vec<u16>,
    /// Read every input as this instead of recognising it by its first bytes.
    #[arg(long = "input-type", value_enum, value_name = "TYPE")]
    pub input_type: Option<InputTypeArg>,
    /// No progress bar and no diagnostics summary on stderr.
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
            CliCommand::Report { common, html } => (Command::Report { html }, common, View::Report),
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
            // A report is Markdown unless asked otherwise.
            (FormatArg::Table, View::Report) => Format::Markdown,
            (f, _) => format_of(f),
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
            quiet: common.quiet,
            inputs: common.inputs.clone(),
            filter: filter_of(&common)?,
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
        use clap::CommandFactory;
        clap_mangen::Man::new(Cli::command()).render(out)
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

fn time_of(flag: &'static str, value: &Option<String>) -> crate::Result<Option<TimeBound>> {
    value
        .as_deref()
        .map(|v| {
            TimeBound::parse(v).ok_or_else(|| Error::InvalidOption {
                flag,
                value: v.to_string(),
                hint: "expected an RFC 3339 time (2024-05-01T12:00:00Z) or a time after the first event (+90s, +5m, +1h)".into(),
            })
        })
        .transpose()
}

fn filter_of(c: &Common) -> crate::Result<Filter> {
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
        since: time_of("--since", &c.since)?,
        until: time_of("--until", &c.until)?,
        kinds: c.kinds.clone(),
        invert: c.invert,
    })
}
