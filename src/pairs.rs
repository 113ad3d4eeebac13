//! Hash maps and sets in a checkpoint, always in the same order, so that
//! the same state is always the same bytes (a store can skip writing a
//! checkpoint that did not change, and two runs over the same input save
//! the same): a map whose keys are not strings (JSON's keys are) as a list
//! of pairs in key order (`#[serde(with = "crate::pairs")]`), one keyed by
//! strings as an object in key order
//! (`#[serde(serialize_with = "crate::pairs::sorted_map")]`), a set as a
//! list in order (`serialize_with = "crate::pairs::sorted_set"`).

use std::hash::Hash;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::hash::{HashMap, HashSet};

/// Writes a map as an object sorted by key (read back as any map is).
pub(crate) fn sorted_map<K: Ord + Serialize, V: Serialize, S: Serializer>(
    map: &HashMap<K, V>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    map.iter().collect::<std::collections::BTreeMap<_, _>>().serialize(serializer)
}

/// Writes a set as a sorted list (read back as any set is).
pub(crate) fn sorted_set<T: Ord + Serialize, S: Serializer>(
    set: &HashSet<T>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut items: Vec<&T> = set.iter().collect();
    items.sort_unstable();
    serializer.collect_seq(items)
}

pub(crate) fn serialize<K: Serialize + Ord, V: Serialize, S: Serializer>(
    map: &HashMap<K, V>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut pairs: Vec<(&K, &V)> = map.iter().collect();
    pairs.sort_unstable_by(|a, b| a.0.cmp(b.0));
    serializer.collect_seq(pairs)
}

pub(crate) fn deserialize<'de, K, V, D>(deserializer: D) -> Result<HashMap<K, V>, D::Error>
where
    K: Deserialize<'de> + Eq + Hash,
    V: Deserialize<'de>,
    D: Deserializer<'de>,
{
    Ok(Vec::<(K, V)>::deserialize(deserializer)?.into_iter().collect())
}

/// A map as a checkpoint value: `null` when empty, else its pairs in key
/// order; `None` when it does not serialise (a state refused, never lost).
pub(crate) fn to_value<K: Ord + Serialize, V: Serialize>(map: &HashMap<K, V>) -> Option<serde_json::Value> {
    if map.is_empty() {
        return Some(serde_json::Value::Null);
    }
    let mut pairs: Vec<(&K, &V)> = map.iter().collect();
    pairs.sort_unstable_by(|a, b| a.0.cmp(b.0));
    serde_json::to_value(pairs).ok()
}

/// The map [`to_value`] saved.
pub(crate) fn from_value<K, V>(state: serde_json::Value) -> Result<HashMap<K, V>, crate::CheckpointError>
where
    K: serde::de::DeserializeOwned + Eq + Hash,
    V: serde::de::DeserializeOwned,
{
    if state.is_null() {
        return Ok(HashMap::default());
    }
    let pairs: Vec<(K, V)> = serde_json::from_value(state).map_err(crate::CheckpointError::Corrupt)?;
    Ok(pairs.into_iter().collect())
}
