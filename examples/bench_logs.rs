//! Measures single-core log reading throughput.
//!
//! `cargo run --release --example bench_logs -- PATH [ZONE]` (run gen_log
//! first). Prints MB/s over the whole read (file → events), three runs.
//!
//! Measured 2026-12-02 on the shared 2-vCPU VM (load average ~2 from other
//! builds), 1 GiB from `gen_log /tmp/kgtrace-synth-1g.log 1024` (seed 42:
//! 5.2 M lines, 51 % group lines, 2.44 M events, 0 unknown): 130–217 MB/s
//! wall per run, best 235 MB/s; CPU time (user+sys) 4.9 s per pass ≈ 218 MB/s.
//! Peak RSS 1.2 GB, nearly all of it the 2.44 M events kept in memory.

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
