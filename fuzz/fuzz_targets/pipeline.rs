//! The whole pipeline on arbitrary bytes: detection, decompression, then a
//! capture (pcap/pcapng → TCP → Kafka → events) or a log.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "whole.rs"]
mod whole;

fuzz_target!(|data: &[u8]| {
    let opts = kgtrace::options::ReadOptions::default();
    if let Ok(collected) = kgtrace::input::read_stream(data, "fuzz", &opts) {
        whole::analyse_and_render(collected);
    }
});
