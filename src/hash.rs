//! The hash maps of roundup's state, keyed by what the input names:
//! sessions, tool call ids, request ids. A fast hasher seeded per map
//! (`foldhash`), where the standard library's SipHash was a tenth of an
//! adapter's time; the seed keeps a crafted input from choosing colliding
//! keys ahead of time. Nothing iterates these maps into output, so their
//! order never reaches the bytes roundup writes.

/// The hasher of every map and set of roundup's state.
pub(crate) type Hasher = foldhash::fast::RandomState;

/// A hash map with [`Hasher`].
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, Hasher>;

/// A hash set with [`Hasher`].
pub(crate) type HashSet<K> = std::collections::HashSet<K, Hasher>;
