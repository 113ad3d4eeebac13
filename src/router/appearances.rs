//! The sessions of a router in order of first appearance, compactly: the
//! one thing a router keeps for every session it has seen, so a session
//! costs its name's bytes and two small entries here, not an allocation.
//!
//! Finding a session (to close it) goes through an index by the hash of
//! its name, so closing N sessions is linear, not quadratic. The index is
//! built on the first close: a router whose sessions only end at the end
//! of input (a replay) never pays for it. The entries and names of
//! sessions gone are compacted away once they outnumber the live ones, so
//! a long-running router holds only the sessions it still has.

use crate::hash::HashMap;

/// One session's place in the order; its name is `names[start..start +
/// len]`.
#[derive(Debug, Clone, Copy)]
struct Entry {
    start: usize,
    len: u32,
}

/// `Entry::len` of the session without a name.
const UNNAMED: u32 = u32::MAX;
/// `Entry::len` of a session finished or closed.
const GONE: u32 = u32::MAX - 1;
/// Compacting waits until this many entries are gone.
const COMPACT_AT_LEAST: usize = 1 << 10;

/// Sessions in order of first appearance.
#[derive(Debug, Default)]
pub(super) struct Appearances {
    names: String,
    entries: Vec<Entry>,
    /// Entries before this one are gone.
    first: usize,
    live: usize,
    /// The entry of each live named session, by its name's hash, once a
    /// session was closed by name (`None` until then).
    index: Option<Index>,
    /// Names too long for an entry's length (4 GiB and more): kept whole.
    long: HashMap<usize, Box<str>>,
    /// The entry of the session without a name, while it is live.
    unnamed: Option<usize>,
}

/// Where the live named sessions' entries are.
#[derive(Debug, Default)]
struct Index {
    by_hash: HashMap<u64, usize>,
    /// Live sessions whose hash another live session had first: rare, and
    /// always looked at after `by_hash`.
    collided: HashMap<Box<str>, usize>,
}

impl Index {
    fn insert(&mut self, name: &str, at: usize) {
        match self.by_hash.entry(hash(name)) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(at);
            }
            std::collections::hash_map::Entry::Occupied(_) => {
                self.collided.insert(name.into(), at);
            }
        }
    }
}

/// FNV-1a: cheap on the short names sessions have.
fn hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

impl Appearances {
    /// A session seen for the first time (one that is here already must not
    /// be pushed again).
    pub(super) fn push(&mut self, session: Option<&str>) {
        let at = self.entries.len();
        let entry = match session {
            None => {
                self.unnamed = Some(at);
                Entry { start: 0, len: UNNAMED }
            }
            Some(name) => {
                let start = self.names.len();
                let len = match u32::try_from(name.len()) {
                    Ok(len) if len < GONE => {
                        self.names.push_str(name);
                        len
                    }
                    _ => {
                        self.long.insert(at, name.into());
                        0
                    }
                };
                if let Some(index) = self.index.as_mut() {
                    index.insert(name, at);
                }
                Entry { start, len }
            }
        };
        self.entries.push(entry);
        self.live += 1;
    }

    /// Sessions not gone.
    pub(super) fn len(&self) -> usize {
        self.live
    }

    /// The sessions not gone, in order of first appearance.
    pub(super) fn iter(&self) -> impl Iterator<Item = Option<&str>> + '_ {
        (self.first..self.entries.len()).filter_map(|at| self.name(at))
    }

    /// The session of entry `at`; `None` when it is gone.
    fn name(&self, at: usize) -> Option<Option<&str>> {
        let entry = self.entries.get(at)?;
        match entry.len {
            UNNAMED => Some(None),
            GONE => None,
            0 if self.long.contains_key(&at) => self.long.get(&at).map(|name| Some(&**name)),
            len => Some(self.names.get(entry.start..entry.start + len as usize)),
        }
    }

    /// The entry of a live session, the index built if it is not yet.
    fn find(&mut self, session: Option<&str>) -> Option<usize> {
        let Some(name) = session else {
            return self.unnamed;
        };
        if self.index.is_none() {
            let mut index = Index::default();
            for at in self.first..self.entries.len() {
                if let Some(Some(live)) = self.name(at) {
                    index.insert(live, at);
                }
            }
            self.index = Some(index);
        }
        let index = self.index.as_ref()?;
        let hit = index.by_hash.get(&hash(name)).copied().filter(|&at| self.name(at) == Some(Some(name)));
        hit.or_else(|| index.collided.get(name).copied())
    }

    /// Marks `session` gone; `false` if it is not here.
    pub(super) fn remove(&mut self, session: Option<&str>) -> bool {
        let Some(at) = self.find(session) else { return false };
        self.forget(at, session);
        self.compact_if_sparse();
        true
    }

    /// Marks entry `at`, of `session`, gone.
    fn forget(&mut self, at: usize, session: Option<&str>) {
        if let Some(name) = session {
            if let Some(index) = self.index.as_mut() {
                let key = hash(name);
                if index.by_hash.get(&key) == Some(&at) {
                    index.by_hash.remove(&key);
                } else {
                    index.collided.remove(name);
                }
            }
            self.long.remove(&at);
        } else {
            self.unnamed = None;
        }
        self.entries[at].len = GONE;
        self.live -= 1;
    }

    /// The session seen first and not gone, now marked gone.
    pub(super) fn pop_first(&mut self) -> Option<Option<String>> {
        while self.first < self.entries.len() {
            let at = self.first;
            self.first += 1;
            if let Some(session) = self.name(at).map(|name| name.map(str::to_owned)) {
                self.forget(at, session.as_deref());
                if self.live == 0 {
                    *self = Appearances::default();
                }
                return Some(session);
            }
        }
        None
    }

    /// Rebuilds the entries without the gone ones once those are most of
    /// them: what the order holds follows the sessions that are left.
    fn compact_if_sparse(&mut self) {
        let gone = self.entries.len() - self.live;
        if gone < COMPACT_AT_LEAST || gone < self.live {
            return;
        }
        let live: Vec<Option<String>> = self.iter().map(|name| name.map(str::to_owned)).collect();
        let indexed = self.index.is_some();
        *self = Appearances { index: indexed.then(Index::default), ..Appearances::default() };
        for session in &live {
            self.push(session.as_deref());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_come_back_in_order_of_first_appearance() {
        let mut order = Appearances::default();
        order.push(Some("b"));
        order.push(None);
        order.push(Some("a"));
        order.push(Some(""));
        assert!(order.remove(Some("a")));
        assert!(!order.remove(Some("a")), "gone already");
        assert_eq!(order.len(), 3);
        assert_eq!(order.pop_first(), Some(Some("b".to_owned())));
        assert_eq!(order.pop_first(), Some(None));
        assert_eq!(order.pop_first(), Some(Some(String::new())), "an empty name is a name");
        assert_eq!(order.pop_first(), None);
        assert_eq!(order.len(), 0);
    }

    #[test]
    fn removing_sessions_compacts_the_order_and_keeps_it() {
        let mut order = Appearances::default();
        for n in 0..10_000 {
            order.push(Some(&format!("s{n}")));
        }
        for n in (0..10_000).filter(|n| n % 10 != 0) {
            assert!(order.remove(Some(&format!("s{n}"))), "s{n}");
        }
        assert_eq!(order.len(), 1_000);
        assert!(order.entries.len() < 3_000, "compacted: {} entries", order.entries.len());
        assert!(order.names.len() < 10_000, "names of gone sessions freed: {} bytes", order.names.len());
        let left: Vec<String> = order.iter().map(|name| name.unwrap().to_owned()).collect();
        let expected: Vec<String> = (0..10_000).filter(|n| n % 10 == 0).map(|n| format!("s{n}")).collect();
        assert_eq!(left, expected);
        assert!(order.remove(Some("s9990")) && !order.remove(Some("s9991")));
    }

    #[test]
    fn names_whose_hashes_collide_are_told_apart() {
        let mut order = Appearances::default();
        order.push(Some("a"));
        assert_eq!(order.find(Some("a")), Some(0), "the index is built on the first look-up");
        // Forge a collision: the index slot of "b" taken by another entry.
        order.index.as_mut().unwrap().by_hash.insert(hash("b"), 0);
        order.push(Some("b"));
        assert_eq!(order.find(Some("b")), Some(1));
        assert_eq!(order.find(Some("a")), Some(0));
        assert!(order.remove(Some("b")));
        assert_eq!(order.find(Some("b")), None);
        assert_eq!(order.iter().collect::<Vec<_>>(), [Some("a")]);
    }
}
