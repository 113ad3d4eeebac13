//! The metadata maps of records already delivered, kept for the machine to
//! copy the next records' metadata into.
//!
//! A protocol's metadata comes borrowed with each call, and the machine
//! keeps a copy in the round (or the tool call) it belongs to; the round is
//! delivered, written and dropped. Rounds of one stream carry metadata of
//! one shape (the same keys, values of the same kinds), so a map kept from
//! a delivered round takes the next round's metadata in place: its keys,
//! strings and nested maps are written over, where a fresh copy allocates
//! each of them again. Only a caller that clears its [`Outputs`] after
//! delivering (a replay, a router) gives maps back; one that takes the
//! records away keeps them, and the machine copies as before.
//!
//! [`Outputs`]: crate::Outputs

use serde_json::Value;

use crate::model::{Meta, Round};

/// Maps kept of each kind; a stream's rounds and calls use one or two at a
/// time, and more than this would only hold memory.
const KEPT: usize = 8;

/// The maps kept: rounds' and tool calls' apart, as their shapes differ.
#[derive(Debug, Default)]
pub(crate) struct SpareMeta {
    rounds: Vec<Meta>,
    calls: Vec<Meta>,
}

impl SpareMeta {
    /// Keeps the metadata maps of a delivered round and of its calls.
    pub(crate) fn keep(&mut self, round: &mut Round) {
        keep_in(&mut self.rounds, &mut round.meta);
        for call in &mut round.tool_calls {
            keep_in(&mut self.calls, &mut call.meta);
        }
    }

    /// `meta` made a copy of `patch`, in a round's map kept when there is
    /// one.
    pub(crate) fn copy_round_meta(&mut self, meta: &mut Meta, patch: &Meta) {
        copy_in(self.rounds.pop(), meta, patch);
    }

    /// `meta` made a copy of `patch`, in a tool call's map kept when there
    /// is one.
    pub(crate) fn copy_call_meta(&mut self, meta: &mut Meta, patch: &Meta) {
        copy_in(self.calls.pop(), meta, patch);
    }
}

fn keep_in(kept: &mut Vec<Meta>, meta: &mut Meta) {
    if kept.len() < KEPT && !meta.is_empty() {
        kept.push(std::mem::take(meta));
    }
}

fn copy_in(spare: Option<Meta>, meta: &mut Meta, patch: &Meta) {
    if let Some(spare) = spare {
        *meta = spare;
    }
    copy_meta(meta, patch);
}

/// Makes `meta` equal to `patch`, in place: when it has the same keys in
/// the same order, each value is written over ([`copy_value`]); otherwise
/// it is emptied (keeping its room) and filled with copies.
pub(crate) fn copy_meta(meta: &mut Meta, patch: &Meta) {
    let same = meta.len() == patch.len() && meta.keys().zip(patch.keys()).all(|(held, key)| held == key);
    if !same {
        meta.clear();
        meta.extend(patch.iter().map(|(key, value)| (key.clone(), value.clone())));
        return;
    }
    for ((_, held), (_, value)) in meta.iter_mut().zip(patch) {
        copy_value(held, value);
    }
}

/// Makes `held` equal to `value`, in place where the kinds match: a
/// string's text into the string's room (unless that room is far larger
/// than the text: a long text once does not hold its memory for good), a
/// map's members and a list's items one by one.
fn copy_value(held: &mut Value, value: &Value) {
    match (held, value) {
        (Value::String(held), Value::String(text)) if held.capacity() <= 4 * text.len() + 4096 => held.clone_from(text),
        (Value::Object(held), Value::Object(members)) => copy_meta(held, members),
        (Value::Array(held), Value::Array(items)) => {
            held.truncate(items.len());
            for (held, item) in held.iter_mut().zip(items) {
                copy_value(held, item);
            }
            let copied = held.len();
            held.extend(items.iter().skip(copied).cloned());
        }
        (held, value) => *held = value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn object(value: Value) -> Meta {
        match value {
            Value::Object(members) => members,
            _ => Meta::new(),
        }
    }

    #[test]
    fn a_map_of_the_same_shape_is_written_over_in_place() {
        let mut meta = object(json!({"id": "g1", "tokens": {"input": 3, "total": 4}, "list": ["a", {"b": 1}]}));
        let patch = object(json!({"id": "g22", "tokens": {"input": 5, "total": 9}, "list": ["c", {"b": 2}, 3]}));
        copy_meta(&mut meta, &patch);
        assert_eq!(meta, patch);
        // Other keys, or the same keys in another order: made again.
        for other in [json!({"tokens": 1, "id": "x"}), json!({}), json!({"id": null, "tokens": [], "list": "s"})] {
            let other = object(other);
            copy_meta(&mut meta, &other);
            assert_eq!(meta, other);
            assert_eq!(serde_json::to_string(&meta).unwrap(), serde_json::to_string(&other).unwrap());
        }
    }

    #[test]
    fn maps_kept_from_a_round_take_the_next_rounds_metadata() {
        let mut spare = SpareMeta::default();
        let mut round = round_with(object(json!({"m": [{"id": "g1"}]})));
        spare.keep(&mut round);
        assert!(round.meta.is_empty());
        let mut meta = Meta::new();
        let patch = object(json!({"m": [{"id": "g2"}]}));
        spare.copy_round_meta(&mut meta, &patch);
        assert_eq!(meta, patch);
        // None kept: a copy all the same.
        let mut meta = Meta::new();
        spare.copy_call_meta(&mut meta, &patch);
        assert_eq!(meta, patch);
        // No more than `KEPT` of a kind.
        for _ in 0..2 * KEPT {
            spare.keep(&mut round_with(patch.clone()));
        }
        assert_eq!(spare.rounds.len(), KEPT);
    }

    #[test]
    fn a_long_text_once_does_not_keep_its_room() {
        let mut meta = object(json!({"display": "x".repeat(1 << 20)}));
        copy_meta(&mut meta, &object(json!({"display": "short"})));
        let Some(Value::String(display)) = meta.get("display") else { panic!("{meta:?}") };
        assert_eq!(display, "short");
        assert!(display.capacity() < 1 << 16, "{}", display.capacity());
    }

    fn round_with(meta: Meta) -> Round {
        let line = json!({"type": "round", "run": 0, "index": 0, "closed_by": "finish", "message": "", "thought": "",
            "tool_calls": [], "started_at_ms": 0, "finished_at_ms": 0});
        let crate::OutputLine::Round(mut round) = serde_json::from_value(line).unwrap() else { panic!("not a round") };
        round.meta = meta;
        round
    }

    /// Metadata of a few keys, values of every kind, nested: two of them
    /// often share a shape, or part of one.
    fn meta() -> impl Strategy<Value = Meta> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (0u64..3).prop_map(Value::from),
            prop::sample::select(vec!["", "x", "long text \n"]).prop_map(Value::from),
        ];
        let value = leaf.prop_recursive(3, 24, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec((prop::sample::select(vec!["a", "b", "c"]), inner), 0..3)
                    .prop_map(|members| Value::Object(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
            ]
        });
        prop::collection::vec((prop::sample::select(vec!["a", "b", "c"]), value), 0..3)
            .prop_map(|members| members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// Whatever the map held, it ends equal to the patch, keys in the
        /// patch's order (its written bytes too).
        #[test]
        fn a_copy_is_the_patch(mut held in meta(), patch in meta()) {
            copy_meta(&mut held, &patch);
            prop_assert_eq!(serde_json::to_string(&held).unwrap(), serde_json::to_string(&patch).unwrap());
            prop_assert_eq!(held, patch);
        }
    }
}
