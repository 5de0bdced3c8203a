//! kgtrace's integration tests: one binary, one module per area.
//! Fixture paths resolve from `CARGO_MANIFEST_DIR`, never from ../shared.

// The HTML report in headless Chromium: the screenshot shows the swimlanes.
mod html_screenshot;
mod log_and_capture;

// Shared helpers: run the binary, parse what it prints.
mod util;

// The binary as a user drives it: subcommands, formats, filters, exit codes.
mod cli;

// Snapshots of every format on every lab capture.
mod snapshots;
