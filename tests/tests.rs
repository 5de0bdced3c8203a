//! kgtrace's integration tests: one binary, one module per area.
//! Fixture paths resolve from `CARGO_MANIFEST_DIR`, never from ../shared.

// The HTML report in headless Chromium: the screenshot shows the swimlanes.
mod html_screenshot;

// What the lab-fixture tests share: fixture paths, kgtrace runs, file readers.
mod util;

// kgtrace against each lab fixture's ground truth (issue 5's done criteria).
mod lab_truth;

// kgtrace's decode against tshark's stored decode of the lab captures.
mod tshark_agreement;
