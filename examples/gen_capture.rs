//! Writes a large synthetic capture of Kafka-shaped traffic, for throughput
//! runs: `cargo run --release --example gen_capture -- OUT.pcap [MB]`
//! (default 500 MB).

use std::fs::File;

use kgtrace::capture::synth::{kafka_like_exchange, write_traffic, TrafficSpec};

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(out) = args.next() else {
        eprintln!("usage: gen_capture OUT.pcap [MB]");
        std::process::exit(2);
    };
    let mb: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(500);
    let spec = TrafficSpec {
        target_bytes: mb * 1_000_000,
        connections: 64,
        ..TrafficSpec::default()
    };
    let stats = write_traffic(File::create(&out)?, &spec, kafka_like_exchange)?;
    println!("{out}: {stats:?}");
    Ok(())
}
