//! Writes a synthetic multi-version Kafka log for benchmarks.
//!
//! `cargo run --release --example gen_log -- OUT_PATH MEGABYTES [SEED]`

use std::fs::File;
use std::io::BufWriter;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(path), Some(mb)) = (
        args.first(),
        args.get(1).and_then(|m| m.parse::<u64>().ok()),
    ) else {
        eprintln!("usage: gen_log OUT_PATH MEGABYTES [SEED]");
        std::process::exit(2);
    };
    let seed = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(42);
    let mut out = BufWriter::new(File::create(path)?);
    let stats = kgtrace::logs::synth::write_synthetic_log(&mut out, mb << 20, seed)?;
    eprintln!("{stats:?}");
    Ok(())
}
