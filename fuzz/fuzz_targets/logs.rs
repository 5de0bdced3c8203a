//! The log-line parsers (every layout, broker and client) on arbitrary text.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut diags = kgtrace::Diagnostics::default();
    let mut out = Vec::new();
    let _ = kgtrace::logs::read_log(
        data,
        kgtrace::event::Source::from("fuzz"),
        &kgtrace::logs::LogOptions::default(),
        &mut diags,
        &mut out,
    );
});
