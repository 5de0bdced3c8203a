//! kgtrace: why did my Kafka consumer group rebalance, who caused it, and
//! how long were we stopped?
//!
//! The pipeline, one module per stage, one named type between stages:
//!
//! ```text
//! pcap/pcapng ─ capture ─▶ Segment ─ tcp ─▶ StreamChunk ─ kafka ─▶ Exchange ─ normalize ─┐
//!                                                                                        ├▶ GroupEvent ─ timeline ─▶ Timeline ─ group ─▶ GroupHistory ─ report ─▶ Report ─ render ─▶ io::Write
//! server.log / client log / kafka-request.log ─────────────── logs ──────────────────────┘
//! ```
//!
//! - [`capture`] reads pcap and pcapng (pcap-parser) and slices packets
//!   (etherparse) into TCP [`capture::Segment`]s.
//! - [`tcp`] reassembles each connection and direction into contiguous
//!   [`tcp::StreamChunk`]s, with gaps and mid-stream starts as diagnostics.
//! - [`kafka`] splits chunks into Kafka frames, decodes the group APIs
//!   (kafka-protocol) and pairs requests with responses into
//!   [`kafka::Exchange`]s.
//! - [`normalize`] turns exchanges into [`event::GroupEvent`]s.
//! - [`logs`] turns broker and client log lines into the same events.
//! - [`timeline`] merges every input in time order.
//! - [`group`] rebuilds each group's coordinator state and names the trigger
//!   of every rebalance.
//! - [`report`] is the one model every renderer reads; [`render`] writes it.

pub mod capture;
pub mod coordinator;
pub mod describe;
pub mod diagnostic;
pub mod error;
pub mod event;
pub mod filter;
pub mod group;
pub mod kafka;
pub mod logs;
pub mod normalize;
pub mod render;
pub mod report;
pub mod tcp;
pub mod time;
pub mod timeline;

pub use diagnostic::{Diagnostic, DiagnosticKind, Diagnostics};
pub use error::{Error, Result};
pub use event::GroupEvent;
pub use time::Timestamp;
