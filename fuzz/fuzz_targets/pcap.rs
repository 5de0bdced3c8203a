//! The pcap/pcapng reader on arbitrary bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut diags = kgtrace::Diagnostics::default();
    let _ = kgtrace::capture::read_capture(data, "fuzz", &mut diags, |_| {});
});
