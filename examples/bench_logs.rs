//! Measures single-core log reading throughput.
//!
//! `cargo run --release --example bench_logs -- PATH` (run gen_log first).
//! Prints MB/s over the whole read (file → events), best of three runs.

use std::path::Path;
use std::time::Instant;

use kgtrace::logs::{read_log_path, LogOptions};
use kgtrace::Diagnostics;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: bench_logs PATH")?;
    let zone = std::env::args().nth(2);
    let mut opts = LogOptions::default();
    if let Some(z) = zone {
        opts.zone = kgtrace::time::LogZone::parse(&z)?;
    }
    let mut best = f64::MAX;
    for _ in 0..3 {
        let (mut diags, mut events) = (Diagnostics::default(), Vec::new());
        let start = Instant::now();
        let summary = read_log_path(Path::new(&path), &opts, &mut diags, &mut events)?;
        let secs = start.elapsed().as_secs_f64();
        best = best.min(secs);
        let mb = summary.bytes as f64 / 1e6;
        println!(
            "{:.0} MB in {secs:.2} s = {:.0} MB/s; {} lines, {} group lines, {} events, {} unknown",
            mb,
            mb / secs,
            summary.lines,
            summary.group_lines,
            events.len(),
            summary.unknown_group_lines
        );
    }
    println!("best {best:.2} s");
    Ok(())
}
