//! The hasher of the hot maps: keyed per connection, client, partition or
//! member, looked up once or more per packet or event.
//!
//! Takes: nothing. Gives: [`FastMap`] and [`FastSet`], std's `HashMap` and
//! `HashSet` with foldhash's fast hasher (the one hashbrown uses by
//! default) instead of SipHash-1-3, which cost a tenth of the instructions of
//! a capture run. Each map is seeded at random as std's are, so iteration
//! order still means nothing and a hostile capture cannot aim collisions at
//! a known seed. foldhash is confined to this module.

/// The seed source of the hot maps.
pub type FastState = foldhash::fast::RandomState;

/// A `HashMap` with the fast hasher.
pub type FastMap<K, V> = std::collections::HashMap<K, V, FastState>;

/// A `HashSet` with the fast hasher.
pub type FastSet<T> = std::collections::HashSet<T, FastState>;
