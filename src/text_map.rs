//! A map keyed by text whose keys live in one buffer: an adapter that
//! remembers thousands of ids (every message of a long prompt, every
//! message translated) pays one growing buffer for them, not one
//! allocation per id, and gives the buffer back whole when it forgets them.
//!
//! Keys are hashed with the crate's seeded hasher ([`crate::hash`]), so an
//! input cannot choose colliding ids ahead of time; a key is compared whole
//! before it counts as found.

use std::hash::BuildHasher;
use std::ops::Range;

use hashbrown::HashTable;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::hash::Hasher;

/// Texts mapped to values, the texts kept one after another in a buffer.
#[derive(Debug, Clone, Default)]
pub(crate) struct TextMap<V> {
    /// Every key inserted since the map was last cleared, including keys
    /// taken out since (their bytes stay until [`clear`](Self::clear)).
    keys: String,
    entries: HashTable<Entry<V>>,
    hasher: Hasher,
}

/// One key (where it is in the buffer) and its value.
#[derive(Debug, Clone)]
struct Entry<V> {
    key: Range<usize>,
    value: V,
}

impl<V> TextMap<V> {
    /// The value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&V> {
        let hash = self.hasher.hash_one(key);
        let keys = &self.keys;
        self.entries.find(hash, |entry| keys.get(entry.key.clone()) == Some(key)).map(|entry| &entry.value)
    }

    /// Whether `key` is in the map.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Maps `key` to `value` unless it has a value already; `true` if it
    /// was added.
    pub(crate) fn insert_new(&mut self, key: &str, value: V) -> bool {
        let hash = self.hasher.hash_one(key);
        let (keys, hasher) = (&mut self.keys, &self.hasher);
        let found = |entry: &Entry<V>| keys.get(entry.key.clone()) == Some(key);
        if self.entries.find(hash, found).is_some() {
            return false;
        }
        let start = keys.len();
        keys.push_str(key);
        let entry = Entry { key: start..keys.len(), value };
        let keys: &str = keys;
        self.entries.insert_unique(hash, entry, |entry| hasher.hash_one(keys.get(entry.key.clone()).unwrap_or("")));
        true
    }

    /// How many entries there are.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no entry.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.entries.iter().map(|entry| (self.keys.get(entry.key.clone()).unwrap_or(""), &entry.value))
    }
}

/// A set of texts: a [`TextMap`] with nothing mapped.
pub(crate) type TextSet = TextMap<()>;

impl TextSet {
    /// Adds `key`; `true` if it was not in the set.
    pub(crate) fn insert(&mut self, key: &str) -> bool {
        self.insert_new(key, ())
    }
}

/// A set is saved as its texts in order, so that the same set is always
/// the same bytes.
impl Serialize for TextSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut keys: Vec<&str> = self.iter().map(|(key, ())| key).collect();
        keys.sort_unstable();
        serializer.collect_seq(keys)
    }
}

impl<'de> Deserialize<'de> for TextSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TextSet, D::Error> {
        let mut set = TextSet::default();
        for key in Vec::<std::borrow::Cow<'de, str>>::deserialize(deserializer)? {
            set.insert(&key);
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_whole_and_added_once() {
        let mut map = TextMap::default();
        assert!(map.insert_new("g1", 0));
        assert!(map.insert_new("g10", 1));
        assert!(!map.insert_new("g1", 2), "a key already there keeps its value");
        assert_eq!(map.get("g1"), Some(&0));
        assert_eq!(map.get("g10"), Some(&1));
        assert_eq!(map.get("g"), None, "a prefix of a key is not the key");
        assert_eq!(map.get(""), None);
        assert_eq!(map.len(), 2);
        // Enough keys to grow the table a few times: every one still found.
        for n in 0..1000 {
            map.insert_new(&format!("m{n}"), n + 10);
        }
        assert!((0..1000).all(|n| map.get(&format!("m{n}")) == Some(&(n + 10))));
        assert!(map.contains("m5") && !map.contains("m1000"));
    }

    #[test]
    fn a_set_is_saved_in_order_and_read_back() {
        let mut set = TextSet::default();
        for key in ["b", "a\"q", "c", "a\"q"] {
            set.insert(key);
        }
        let saved = serde_json::to_string(&set).unwrap();
        assert_eq!(saved, r#"["a\"q","b","c"]"#);
        let read: TextSet = serde_json::from_str(&saved).unwrap();
        assert_eq!(read.len(), 3);
        assert!(read.contains("a\"q") && read.contains("b") && !read.contains("a"));
    }
}
