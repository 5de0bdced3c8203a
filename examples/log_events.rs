//! Prints the group events kgtrace reads from logs, one JSON object per
//! line, then the summary and diagnostics on stderr.
//!
//! `cargo run --example log_events -- [--log-tz ZONE] PATH...` (a file, a
//! `.gz`, a directory, or `-` for stdin).

use std::path::Path;

use kgtrace::logs::{read_log_path, LogOptions, LogSummary};
use kgtrace::time::LogZone;
use kgtrace::Diagnostics;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut opts = LogOptions::default();
    if args.first().map(String::as_str) == Some("--log-tz") && args.len() > 1 {
        opts.zone = LogZone::parse(&args[1])?;
        args.drain(..2);
    }
    let (mut diags, mut summary) = (Diagnostics::default(), LogSummary::default());
    for path in &args {
        let mut events = Vec::new();
        summary.add(read_log_path(
            Path::new(path),
            &opts,
            &mut diags,
            &mut events,
        )?);
        for e in &events {
            println!("{}", serde_json::to_string(e)?);
        }
    }
    eprintln!(
        "zone {} summary {}",
        opts.zone.name(),
        serde_json::to_string(&summary)?
    );
    for d in &diags.examples {
        eprintln!("{:?} {} {}: {}", d.kind, d.source, d.at, d.detail);
    }
    Ok(())
}
