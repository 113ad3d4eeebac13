//! Arguments read while they stream: for every prefix of a JSON document,
//! the partial value is consistent with the final one, and on the whole
//! document it is what serde_json reads.

use proptest::prelude::*;
use roundup::partial_json;
use serde_json::{json, Value};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        "[a-z\"\\\\é😀\n\t ]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("[a-z\"]{0,4}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// `partial` could become `whole`: strings are prefixes, arrays have a
/// prefix of the elements (the last one possibly partial), objects a
/// subset of the members, each possibly partial; numbers may be cut.
fn consistent(partial: &Value, whole: &Value) -> bool {
    match (partial, whole) {
        (Value::String(p), Value::String(w)) => w.starts_with(p.as_str()),
        (Value::Number(_), Value::Number(_)) => true,
        (Value::Array(p), Value::Array(w)) => {
            let last = p.len().saturating_sub(1);
            p.len() <= w.len()
                && p.iter().zip(w).enumerate().all(|(i, (p, w))| if i < last { p == w } else { consistent(p, w) })
        }
        (Value::Object(p), Value::Object(w)) => p.iter().all(|(k, p)| w.get(k).is_some_and(|w| consistent(p, w))),
        (p, w) => p == w,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_prefix_is_consistent_with_the_whole(value in json_value()) {
        let text = value.to_string();
        // What serde_json reads back (its float parsing is not exact).
        let value: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(partial_json(&text), Some(value.clone()), "the whole document");
        for cut in (0..text.len()).filter(|&n| text.is_char_boundary(n)) {
            if let Some(partial) = partial_json(&text[..cut]) {
                prop_assert!(consistent(&partial, &value), "{:?} read as {} is not on its way to {}", &text[..cut], partial, value);
            } else {
                // Nothing of a value yet: no text, or a lone minus sign.
                prop_assert!(matches!(text[..cut].trim(), "" | "-"), "nothing read from {:?}", &text[..cut]);
            }
        }
    }

    #[test]
    fn any_text_is_read_or_refused_without_panic(text in "[\\[\\]{}\",:a-z0-9.\\\\ -]{0,24}") {
        let _ = partial_json(&text);
    }
}

#[test]
fn the_consistency_check_can_fail() {
    assert!(!consistent(&json!({"a": "x"}), &json!({"a": "y"})));
    assert!(!consistent(&json!([1, 2, 3]), &json!([1, 2])));
    assert!(!consistent(&json!({"b": 1}), &json!({"a": 1})));
    assert!(consistent(&json!({"a": "x"}), &json!({"a": "xy", "b": 2})));
}

#[test]
fn cuts_inside_escapes_and_literals() {
    assert_eq!(partial_json(r#"{"a":"x\"#), Some(json!({"a": "x"})));
    assert_eq!(partial_json(r#"{"a":"x\u00"#), Some(json!({"a": "x"})));
    assert_eq!(partial_json(r#"{"a":"\ud83d"#), Some(json!({"a": ""})), "half a surrogate pair");
    assert_eq!(partial_json(r#"[nu"#), Some(json!([null])));
    assert_eq!(partial_json(r#"{"n":-"#), Some(json!({})));
    assert_eq!(partial_json(r#"{"n":1.5e"#), Some(json!({"n": 1.5})));
    assert_eq!(partial_json("not json"), None);
    assert_eq!(partial_json("{]"), None);
}
