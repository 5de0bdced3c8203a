//! Fatal errors: an input that cannot be read at all, or a bad option.
//!
//! Anomalies inside an input are [`crate::diagnostic::Diagnostic`]s, not
//! errors. Messages are lowercase, name the file, offset or flag, and quote
//! the offending value.

use std::io;
use std::path::PathBuf;

/// Everything that stops kgtrace.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An input could not be opened or read.
    #[error("cannot read '{path}': {source}")]
    Read {
        /// The input.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// An input is neither a capture nor a log kgtrace knows.
    #[error("'{path}' is not a pcap, pcapng or Kafka log file (starts with {magic})")]
    UnknownInput {
        /// The input.
        path: PathBuf,
        /// Its first bytes, in hex.
        magic: String,
    },
    /// A capture is corrupt at a given byte offset before any packet could be read.
    #[error("'{path}': corrupt capture at byte offset {offset}: {detail}")]
    CorruptCapture {
        /// The input.
        path: PathBuf,
        /// Byte offset of the bad block.
        offset: u64,
        /// What was wrong.
        detail: String,
    },
    /// A capture uses a link type kgtrace cannot read.
    #[error("'{path}': unsupported link type {linktype} (kgtrace reads Ethernet, Linux SLL/SLL2, raw IP and BSD loopback)")]
    UnsupportedLinkType {
        /// The input.
        path: PathBuf,
        /// Its link type, as libpcap names or numbers it.
        linktype: String,
    },
    /// A command-line value is wrong.
    #[error("{flag} '{value}': {hint}")]
    InvalidOption {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: String,
        /// What would be right.
        hint: String,
    },
    /// An output file could not be created or written.
    #[error("cannot write '{path}': {detail}")]
    WriteFile {
        /// The file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// Writing the output failed.
    #[error("cannot write output: {0}")]
    Write(#[from] io::Error),
}

/// Result with kgtrace's fatal error.
pub type Result<T> = std::result::Result<T, Error>;
