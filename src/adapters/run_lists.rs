//! Lists a run gathers into its metadata one item at a time (context
//! messages, compactions, repeated session records), given to the machine
//! in time linear in their items.
//!
//! Run metadata replaces a key: the machine keeps a key's last value. So a
//! list reaches the machine whole, and a list given whole after each new
//! item costs a run of n items n²/2 item copies (a Codex session file whose
//! forks repeat their parents' `session_meta`, each some kilobytes of
//! instructions, took 18x its parse floor that way). Nothing reads a run's
//! metadata before the run ends (it is the summary's), so a list is given
//! when its first item comes, which fixes the key's place among the run's
//! metadata (keys keep the order they first came in), and whole once more
//! when the run ends ([`RunLists::end_run`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::support::one;
use crate::model::Meta;

/// A run's lists, by metadata key. Saved as the map it is (an adapter's
/// checkpoint holds it as `{key: [items]}`).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct RunLists(BTreeMap<String, Vec<Value>>);

impl RunLists {
    /// Adds `item` to `key`'s list. The metadata to give now: the list, when
    /// `item` is its first (later items wait for [`end_run`](Self::end_run)).
    pub(crate) fn push(&mut self, key: &str, item: Value) -> Option<Meta> {
        extend(self.0.entry(key.to_owned()).or_default(), key, [item])
    }

    /// The run ends: every list that grew after its first item, whole, to
    /// give the machine before it (`None` when each was given whole
    /// already). The lists start empty for the next run.
    pub(crate) fn end_run(&mut self) -> Option<Meta> {
        let meta: Meta = std::mem::take(&mut self.0)
            .into_iter()
            .filter_map(|(key, list)| grown(list).map(|list| (key, list)))
            .collect();
        (!meta.is_empty()).then_some(meta)
    }
}

/// A run's list kept in a field of its own (the same rule as
/// [`RunLists`]): `items` join `list` under `key`; the metadata to give
/// now is the list when they are its first items.
pub(crate) fn extend(list: &mut Vec<Value>, key: &str, items: impl IntoIterator<Item = Value>) -> Option<Meta> {
    let first = list.is_empty();
    list.extend(items);
    (first && !list.is_empty()).then(|| one(key, Value::Array(list.clone())))
}

/// A list kept in a field of its own, as its run ends ([`RunLists::end_run`]
/// for one list): taken whole, the field left empty; `None` when it held at
/// most one item (given whole when it came).
pub(crate) fn end_run(list: &mut Vec<Value>, key: &str) -> Option<Meta> {
    grown(std::mem::take(list)).map(|list| one(key, list))
}

/// A list as the value to give as its run ends: only when it grew after its
/// first items were given.
fn grown(list: Vec<Value>) -> Option<Value> {
    (list.len() > 1).then(|| Value::Array(list))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_list_is_given_at_its_first_item_and_whole_at_the_end() {
        let mut lists = RunLists::default();
        assert_eq!(Value::Object(lists.push("a", json!(1)).unwrap()), json!({"a": [1]}));
        assert_eq!(lists.push("a", json!(2)), None);
        assert_eq!(Value::Object(lists.push("b", json!("x")).unwrap()), json!({"b": ["x"]}));
        assert_eq!(lists.push("a", json!(3)), None);
        // `b` was given whole at its first item; `a` grew since.
        assert_eq!(Value::Object(lists.end_run().unwrap()), json!({"a": [1, 2, 3]}));
        assert_eq!(lists.end_run(), None);
        assert_eq!(Value::Object(lists.push("a", json!(4)).unwrap()), json!({"a": [4]}));
    }

    #[test]
    fn a_list_in_a_field_of_its_own_follows_the_same_rule() {
        let mut list = Vec::new();
        assert_eq!(extend(&mut list, "k", []), None);
        assert_eq!(Value::Object(extend(&mut list, "k", [json!(1), json!(2)]).unwrap()), json!({"k": [1, 2]}));
        assert_eq!(extend(&mut list, "k", [json!(3)]), None);
        assert_eq!(Value::Object(end_run(&mut list, "k").unwrap()), json!({"k": [1, 2, 3]}));
        assert!(list.is_empty(), "the next run's list starts empty");
        assert_eq!(end_run(&mut vec![json!(1)], "k"), None);
    }

    #[test]
    fn lists_are_saved_as_the_map_they_are() {
        let mut lists = RunLists::default();
        lists.push("codex_context", json!({"k": 1}));
        lists.push("codex_context", json!({"k": 2}));
        let saved = serde_json::to_value(&lists).unwrap();
        assert_eq!(saved, json!({"codex_context": [{"k": 1}, {"k": 2}]}));
        assert_eq!(serde_json::from_value::<RunLists>(saved).unwrap(), lists);
    }
}
