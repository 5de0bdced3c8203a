//! Kafka frames over reassembled TCP streams → paired [`Exchange`]s.
//!
//! The only module that imports kafka-protocol.

mod errors;

pub use errors::error_name;
