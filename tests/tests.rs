//! kgtrace's integration tests: one binary, one module per area.
//! Fixture paths resolve from `CARGO_MANIFEST_DIR`, never from ../shared.

// `report --brief` under 30,000 characters on the largest inputs.
mod brief_size;

// The HTML report in headless Chromium: the screenshot shows the swimlanes.
mod html_screenshot;

// The Markdown report's Mermaid chart through the real Mermaid parser (node).
mod mermaid;

// Broker logs and captures of the same events merge; several brokers' logs.
mod log_and_capture;

// `rebalances` of logs written as records settle, against the batch run.
mod settled;

// The timeline in JSON, the report in JSON and NDJSON, written as their events are matched, against the batch run.
mod listed_events;

// Shared helpers: run the binary, parse what it prints, read lab fixtures.
mod util;

// The binary as a user drives it: subcommands, formats, filters, exit codes.
mod cli;

// Snapshots of every format on every lab capture.
mod snapshots;

// kgtrace against each lab fixture's ground truth (issue 5's done criteria).
mod lab_truth;

// Partition stops against the lab's driver actions and the clients' callbacks (issue 9).
mod lab_stops;

// kgtrace's decode against tshark's stored decode of the lab captures.
mod tshark_agreement;

// Captures cut by a small snap length: the cut decode against the whole one.
mod snap_length;

// A broker log indented, quoted, numbered, as JSON records or a Kibana CSV export reads as the plain one.
mod log_layouts;

// Only one member's connections captured: the member that vanished from its answers is named.
mod one_host;

mod snap_fields;

// An input whose group events make no rebalance says what it holds and why.
mod no_rebalance;

// `watch` against `rebalances` on every fixture; live pipes, follow, Ctrl-C.
mod watch;
