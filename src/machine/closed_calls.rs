//! What a run remembers of its closed tool calls until it ends: where each
//! id's latest call sits (for late metadata and stitches) and whether any
//! call of that id got a real result (for `duplicate_terminal`). A long run
//! keeps one entry per distinct id, so an entry is kept small: the id
//! inline when it is up to 30 bytes (Claude's and OpenAI's are 29–30),
//! round and position packed, one map for both facts (measured by
//! `cargo bench --bench memory`).

use std::borrow::Borrow;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use smallvec::SmallVec;

use crate::hash::HashMap;

/// A tool call id as a map key, looked up by `&str`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Id(SmallVec<[u8; 30]>);

impl Id {
    pub(crate) fn new(id: &str) -> Id {
        Id(SmallVec::from_slice(id.as_bytes()))
    }

    pub(crate) fn as_str(&self) -> &str {
        // Made from a `str` (new, deserialize) and never changed.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Hashed as the `str` it is, so that `Borrow<str>` lookups agree.
impl Hash for Id {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl Borrow<str> for Id {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialOrd for Id {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Id {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_str().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Id::new(&String::deserialize(deserializer)?))
    }
}

/// Where a closed call sits, and whether its id has a real result in the
/// run: the flag is the position's top bit, so that an entry is the id and
/// eight bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Closed {
    round: u32,
    position_and_flag: u32,
}

const RESULTED: u32 = 1 << 31;

impl Closed {
    /// `None` for a slot beyond what an entry holds (four billion rounds
    /// in one run, two billion calls in one round).
    fn new(round: u64, position: usize, resulted: bool) -> Option<Closed> {
        let (round, position) = (u32::try_from(round).ok()?, u32::try_from(position).ok()?);
        (position < RESULTED)
            .then_some(Closed { round, position_and_flag: position | if resulted { RESULTED } else { 0 } })
    }

    pub(crate) fn round(self) -> u64 {
        self.round.into()
    }

    pub(crate) fn position(self) -> usize {
        (self.position_and_flag & !RESULTED) as usize
    }

    fn resulted(self) -> bool {
        self.position_and_flag & RESULTED != 0
    }
}

/// The checkpoint form: the three fields by name.
#[derive(Serialize, Deserialize)]
struct ClosedFields {
    round: u64,
    position: u64,
    resulted: bool,
}

impl Serialize for Closed {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = ClosedFields { round: self.round(), position: self.position() as u64, resulted: self.resulted() };
        fields.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Closed {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = ClosedFields::deserialize(deserializer)?;
        let position = usize::try_from(fields.position).unwrap_or(usize::MAX);
        Closed::new(fields.round, position, fields.resulted)
            .ok_or_else(|| serde::de::Error::custom("a closed call's round or position out of range"))
    }
}

/// One closed id: where its bytes are in the arena, and its call.
#[derive(Debug, Clone, Copy)]
struct Entry {
    start: u32,
    len: u32,
    closed: Closed,
}

/// The run's closed calls by id, compactly: the ids' bytes in one arena,
/// each entry found by the hash of its id (24 bytes a bucket where a map
/// of ids would take 48, and one allocation for all the ids). An id whose
/// hash another id has already, or that lies past 4 GiB of arena, is kept
/// in a plain map beside it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClosedCalls {
    ids: String,
    by_hash: HashMap<u64, Entry>,
    others: HashMap<Id, Closed>,
}

/// FNV-1a over the id's bytes: stable, and cheap on ids of 30 bytes.
fn hash(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

impl ClosedCalls {
    /// The latest closed call of `id`.
    pub(crate) fn get(&self, id: &str) -> Option<Closed> {
        match self.by_hash.get(&hash(id)) {
            Some(entry) if self.id_of(entry) == id => Some(entry.closed),
            _ => self.others.get(id).copied(),
        }
    }

    fn id_of(&self, entry: &Entry) -> &str {
        let start = entry.start as usize;
        self.ids.get(start..start + entry.len as usize).unwrap_or_default()
    }

    fn get_mut(&mut self, id: &str) -> Option<&mut Closed> {
        let key = hash(id);
        let hit = self.by_hash.get(&key).is_some_and(|entry| self.id_of(entry) == id);
        if hit {
            self.by_hash.get_mut(&key).map(|entry| &mut entry.closed)
        } else {
            self.others.get_mut(id)
        }
    }

    /// Whether any call of `id` got a real result (closed ones).
    pub(crate) fn resulted(&self, id: &str) -> bool {
        self.get(id).is_some_and(|c| c.resulted())
    }

    /// A call of `id` closed at `round`, `position`, with a real result or
    /// not; an id that had one keeps the fact. A slot beyond `u32` (four
    /// billion rounds in one run) is not recorded: late metadata for it is
    /// then reported rather than applied.
    pub(crate) fn close(&mut self, id: &str, round: u64, position: usize, resulted: bool) {
        let Some(closed) = Closed::new(round, position, resulted || self.resulted(id)) else { return };
        if let Some(held) = self.get_mut(id) {
            *held = closed;
            return;
        }
        self.insert(id, closed);
    }

    /// An id not held yet.
    fn insert(&mut self, id: &str, closed: Closed) {
        let slot = (u32::try_from(self.ids.len()).ok(), u32::try_from(id.len()).ok());
        match (self.by_hash.entry(hash(id)), slot) {
            (std::collections::hash_map::Entry::Vacant(vacant), (Some(start), Some(len)))
                if u32::try_from(self.ids.len() + id.len()).is_ok() =>
            {
                self.ids.push_str(id);
                vacant.insert(Entry { start, len, closed });
            }
            _ => {
                self.others.insert(Id::new(id), closed);
            }
        }
    }

    /// A late result stitched a call of `id`.
    pub(crate) fn mark_resulted(&mut self, id: &str) {
        if let Some(closed) = self.get_mut(id) {
            closed.position_and_flag |= RESULTED;
        }
    }

    /// Every id and its call, sorted by id.
    fn sorted(&self) -> std::collections::BTreeMap<&str, Closed> {
        let held = self.by_hash.values().map(|entry| (self.id_of(entry), entry.closed));
        held.chain(self.others.iter().map(|(id, closed)| (id.as_str(), *closed))).collect()
    }
}

impl PartialEq for ClosedCalls {
    fn eq(&self, other: &Self) -> bool {
        self.sorted() == other.sorted()
    }
}

/// Written sorted by id, so that a checkpoint of a state is always the
/// same bytes.
impl Serialize for ClosedCalls {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.sorted().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ClosedCalls {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut calls = ClosedCalls::default();
        for (id, closed) in std::collections::BTreeMap::<String, Closed>::deserialize(deserializer)? {
            calls.insert(&id, closed);
        }
        Ok(calls)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_look_up_by_str_inline_or_not() {
        let mut calls = ClosedCalls::default();
        let long = "x".repeat(100);
        calls.close("toolu_01234567890123456789abcd", 3, 1, false);
        calls.close(&long, 0, 0, true);
        let closed = calls.get("toolu_01234567890123456789abcd").unwrap();
        assert_eq!((closed.round(), closed.position(), closed.resulted()), (3, 1, false));
        assert!(calls.resulted(&long) && !calls.resulted("toolu_01234567890123456789abcd"));
        calls.mark_resulted("toolu_01234567890123456789abcd");
        calls.close("toolu_01234567890123456789abcd", 4, 0, false);
        assert!(calls.resulted("toolu_01234567890123456789abcd"), "the fact stays with the id");
        assert_eq!(std::mem::size_of::<(u64, Entry)>(), 24, "a bucket");
        let json = serde_json::to_string(&calls).unwrap();
        assert_eq!(serde_json::from_str::<ClosedCalls>(&json).unwrap(), calls);
    }

    #[test]
    fn ids_whose_hashes_collide_are_told_apart() {
        let mut calls = ClosedCalls::default();
        calls.close("a", 1, 0, false);
        // Forge a collision: "b"'s bucket taken by "a"'s entry.
        let entry = calls.by_hash[&hash("a")];
        calls.by_hash.insert(hash("b"), entry);
        calls.close("b", 2, 5, true);
        assert_eq!(calls.get("b").map(|c| (c.round(), c.position())), Some((2, 5)));
        assert!(calls.resulted("b") && !calls.resulted("a"));
        calls.mark_resulted("a");
        assert!(calls.resulted("a"));
        assert_eq!(calls.get("c"), None);
    }
}
