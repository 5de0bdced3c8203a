//! TEMPORARY interface stub written by the kafka helper so that `src/kafka`
//! compiles before the TCP layer is merged. The integrator replaces this file
//! with the real reassembler; only these types are relied upon.
//!
//! Takes: nothing. Gives: the events the reassembler hands to
//! [`crate::kafka::KafkaDecoder`].

use std::net::SocketAddr;

use crate::time::Timestamp;

/// Both ends of a connection, roles as guessed by TCP (SYN, else Kafka port,
/// else lower port = server); may be inverted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConnectionKey {
    /// The end believed to be the client.
    pub client: SocketAddr,
    /// The end believed to be the server.
    pub server: SocketAddr,
}

/// Which way bytes flow, relative to [`ConnectionKey`]'s guessed roles.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Direction {
    /// From `client` to `server`.
    ToServer,
    /// From `server` to `client`.
    ToClient,
}

/// What the reassembler reports, in capture order.
pub enum StreamEvent<'a> {
    /// A connection was seen for the first time.
    Opened {
        /// Connection id, unique in one run.
        conn: u64,
        /// Its ends.
        key: ConnectionKey,
        /// Time of the first packet.
        ts: Timestamp,
        /// Its frame number.
        frame: u64,
        /// Whether the SYN was captured.
        syn_seen: bool,
    },
    /// Contiguous bytes in one direction.
    Data {
        /// Connection id.
        conn: u64,
        /// Direction.
        dir: Direction,
        /// Time of the packet that completed them.
        ts: Timestamp,
        /// Frame number of that packet.
        frame: u64,
        /// The bytes.
        bytes: &'a [u8],
    },
    /// Bytes lost in one direction; the next data follows the hole.
    Gap {
        /// Connection id.
        conn: u64,
        /// Direction.
        dir: Direction,
        /// Time.
        ts: Timestamp,
        /// Frame.
        frame: u64,
        /// How many bytes are missing.
        missing_bytes: u64,
    },
    /// The connection ended.
    Closed {
        /// Connection id.
        conn: u64,
        /// Time.
        ts: Timestamp,
        /// Frame.
        frame: u64,
        /// RST rather than FIN.
        reset: bool,
    },
}
