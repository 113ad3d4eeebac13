//! A round's metadata gathers what its fragments say: an array joins the
//! array already under its key, without repeating an item it holds, and
//! any other value replaces. Telling a new item from one held by
//! comparing it with every item held costs a scan per item, quadratic in a
//! round that gathers thousands (one per model message of a long answer);
//! an index of each array's items by fingerprint makes it a lookup, and an
//! item is still compared whole before it counts as held.

use std::hash::{BuildHasher, Hash, Hasher};

use serde_json::Value;
use smallvec::SmallVec;

use crate::hash::HashMap;
use crate::model::Meta;
use crate::spare_meta::SpareMeta;

/// Where an array's items are, by fingerprint.
type Positions = HashMap<u64, SmallVec<[usize; 1]>>;

/// The fingerprints' hasher: fixed, as they never leave the process and
/// only group items to compare (a fast hash, where the std one is SipHash).
const FINGERPRINT: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(0x726f_756e_6475_7021);

/// The items of the arrays of one metadata map, by fingerprint; derived
/// from the map (never saved: a restored round indexes again on its next
/// patch).
#[derive(Debug, Clone, Default)]
pub(crate) struct MetaItems {
    /// Per key: how many items of its array are indexed, and where each
    /// fingerprint's items are.
    by_key: HashMap<String, (usize, Positions)>,
}

/// Merges `patch` into `meta`: arrays add the items they do not hold yet,
/// other values replace. A round's first metadata is a copy, into a map
/// kept from a round delivered when there is one.
pub(crate) fn accumulate(meta: &mut Meta, items: &mut MetaItems, patch: &Meta, spare: &mut SpareMeta) {
    if meta.is_empty() {
        items.by_key.clear();
        return spare.copy_round_meta(meta, patch);
    }
    for (key, value) in patch {
        match (meta.get_mut(key), value) {
            (Some(Value::Array(held)), Value::Array(new)) => {
                if !items.by_key.contains_key(key) {
                    items.by_key.insert(key.clone(), (0, Positions::default()));
                }
                let Some((indexed, at)) = items.by_key.get_mut(key) else { continue };
                if *indexed > held.len() {
                    *indexed = 0;
                    at.clear();
                }
                for (position, item) in held.iter().enumerate().skip(*indexed) {
                    at.entry(fingerprint(item)).or_default().push(position);
                }
                for item in new {
                    let print = fingerprint(item);
                    let seen =
                        at.get(&print).is_some_and(|positions| positions.iter().any(|&p| held.get(p) == Some(item)));
                    if !seen {
                        at.entry(print).or_default().push(held.len());
                        held.push(item.clone());
                    }
                }
                *indexed = held.len();
            }
            _ => {
                items.by_key.remove(key);
                meta.insert(key.clone(), value.clone());
            }
        }
    }
}

/// A hash of a value that equal values share, as `Value`'s equality
/// judges them: an object's keys in any order, a number by its kind.
fn fingerprint(value: &Value) -> u64 {
    let mut hasher = FINGERPRINT.build_hasher();
    feed(value, &mut hasher);
    hasher.finish()
}

fn feed(value: &Value, hasher: &mut impl Hasher) {
    match value {
        Value::Null => 0u8.hash(hasher),
        Value::Bool(b) => (1u8, b).hash(hasher),
        Value::Number(n) => {
            if let Some(n) = n.as_u64() {
                (2u8, n).hash(hasher);
            } else if let Some(n) = n.as_i64() {
                (3u8, n).hash(hasher);
            } else if let Some(n) = n.as_f64() {
                // 0.0 and -0.0 are equal.
                (4u8, if n == 0.0 { 0 } else { n.to_bits() }).hash(hasher);
            }
        }
        Value::String(s) => (5u8, s).hash(hasher),
        Value::Array(items) => {
            (6u8, items.len()).hash(hasher);
            for item in items {
                feed(item, hasher);
            }
        }
        Value::Object(map) => {
            // Entries in any order: their hashes added up.
            let sum = map.iter().fold(0u64, |sum, (key, value)| {
                let mut entry = FINGERPRINT.build_hasher();
                key.hash(&mut entry);
                feed(value, &mut entry);
                sum.wrapping_add(entry.finish())
            });
            (7u8, map.len(), sum).hash(hasher);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(value: Value) -> Meta {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn arrays_add_what_they_lack_and_other_values_replace() {
        let mut held = Meta::new();
        let mut items = MetaItems::default();
        let mut spare = SpareMeta::default();
        accumulate(&mut held, &mut items, &meta(json!({"ids": ["a", {"x": 1, "y": [2]}], "model": "m1"})), &mut spare);
        accumulate(
            &mut held,
            &mut items,
            &meta(json!({"ids": [{"y": [2], "x": 1}, "b", "a", "b"], "model": "m2"})),
            &mut spare,
        );
        assert_eq!(Value::Object(held.clone()), json!({"ids": ["a", {"x": 1, "y": [2]}, "b"], "model": "m2"}));
        // Replaced by a value of another kind, then an array again: the
        // index of the old array is gone with it.
        accumulate(&mut held, &mut items, &meta(json!({"ids": "none"})), &mut spare);
        accumulate(&mut held, &mut items, &meta(json!({"ids": ["b"]})), &mut spare);
        accumulate(&mut held, &mut items, &meta(json!({"ids": ["a", "b"]})), &mut spare);
        assert_eq!(held["ids"], json!(["b", "a"]));
        // Numbers are equal as Value says: 1 and 1.0 are two items, 0.0
        // and -0.0 one.
        accumulate(&mut held, &mut items, &meta(json!({"n": [1, 1.0, 0.0]})), &mut spare);
        accumulate(&mut held, &mut items, &meta(json!({"n": [-0.0, 1]})), &mut spare);
        assert_eq!(held["n"], json!([1, 1.0, 0.0]));
    }

    #[test]
    fn a_map_emptied_and_filled_again_is_indexed_again() {
        let mut held = Meta::new();
        let mut items = MetaItems::default();
        let mut spare = SpareMeta::default();
        accumulate(&mut held, &mut items, &meta(json!({"ids": ["a", "b", "c"]})), &mut spare);
        held.clear();
        accumulate(&mut held, &mut items, &meta(json!({"ids": ["c"]})), &mut spare);
        accumulate(&mut held, &mut items, &meta(json!({"ids": ["a", "c"]})), &mut spare);
        assert_eq!(held["ids"], json!(["c", "a"]));
    }
}
