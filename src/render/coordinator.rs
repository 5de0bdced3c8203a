//! The `coordinator` subcommand's answer.
//!
//! Takes: a group, the `__consumer_offsets` partition computed for it, the
//! partition count and the coordinator the inputs showed (if any). Gives:
//! one small table, JSON object, CSV row or Markdown table.

use std::io::{self, Write};

use serde::Serialize;

use super::Format;

#[derive(Serialize)]
struct Answer<'a> {
    group: &'a str,
    partition: u32,
    offsets_topic_partition: String,
    partitions: u32,
    coordinator_seen: Option<&'a str>,
}

/// Writes which partition (and broker, if seen) coordinates `group`.
pub fn write(
    group: &str,
    partition: u32,
    partitions: u32,
    seen: Option<&str>,
    format: Format,
    out: &mut dyn Write,
) -> io::Result<()> {
    let a = Answer {
        group,
        partition,
        offsets_topic_partition: format!("__consumer_offsets-{partition}"),
        partitions,
        coordinator_seen: seen,
    };
    let seen = seen.unwrap_or("-");
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &a)?;
            writeln!(out)
        }
        Format::Ndjson => {
            serde_json::to_writer(&mut *out, &a)?;
            writeln!(out)
        }
        Format::Csv => {
            writeln!(
                out,
                "group,partition,offsets_topic_partition,partitions,coordinator_seen"
            )?;
            writeln!(
                out,
                "{},{},{},{},{}",
                csv_cell(group),
                partition,
                a.offsets_topic_partition,
                partitions,
                csv_cell(seen)
            )
        }
        Format::Markdown => {
            writeln!(out, "| group | partition | coordinator seen |")?;
            writeln!(out, "|---|---|---|")?;
            writeln!(
                out,
                "| {} | {} (of {partitions}) | {} |",
                group.replace('|', "\\|"),
                a.offsets_topic_partition,
                seen.replace('|', "\\|")
            )
        }
        Format::Table => {
            writeln!(out, "group:             {group}")?;
            writeln!(
                out,
                "partition:         {} (of {partitions}: abs(hashCode(group)) % {partitions})",
                a.offsets_topic_partition
            )?;
            writeln!(out, "coordinator seen:  {seen}")
        }
    }
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_answer_names_the_offsets_partition() {
        let mut out = Vec::new();
        write(
            "demo-group",
            15,
            50,
            Some("broker 1"),
            Format::Json,
            &mut out,
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["offsets_topic_partition"], "__consumer_offsets-15");
        assert_eq!(v["coordinator_seen"], "broker 1");
    }
}
