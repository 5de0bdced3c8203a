//! The whole pipeline on arbitrary bytes: detection, decompression, then a
//! capture (pcap/pcapng → TCP → Kafka → events) or a log.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let opts = kgtrace::options::ReadOptions::default();
    let _ = kgtrace::input::read_stream(data, "fuzz", &opts);
});
