//! The fast path of the ops reader (flat objects scanned directly) must
//! decode every line exactly as serde does: same session, clock, call, and
//! same error when a line is bad.

use proptest::prelude::*;
use proptest::strategy::ValueTree;

use super::OpsLine;

/// What a decoding tells, as text: compares both paths in one value.
fn decode(line: &[u8], through_serde: bool) -> String {
    let parsed = if through_serde { OpsLine::parse_through_serde(line) } else { OpsLine::parse(line) };
    match parsed {
        Ok(l) => format!("{:?} {:?} {:?}", l.session(), l.at_ms(), l.call()),
        Err(e) => format!("error {e:?}"),
    }
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::sample::select(vec![
            "op", "session", "at_ms", "text", "id", "title", "content", "status", "args", "total", "reason", "kind", "detail", "replace",
        ]).prop_map(|k| format!("\"{k}\"")),
        1 => Just("\"extra\"".to_owned()),
        1 => Just(r#""o\u0070""#.to_owned()),
        1 => Just(r#""te\"xt""#.to_owned()),
    ]
}

fn string_value() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        12 => "[a-z é☃😀]{0,4}".prop_map(|s| s),
        1 => prop::sample::select(vec![
            r#"\n"#, r#"\""#, r#"\\"#, r#"\/"#, r#"\t"#, r#"\u00e9"#, r#"\ud83d\ude00"#, r#"\ud800"#, r#"\udc00"#,
            r#"\u12"#, r#"\x"#, "\u{1}", "\t", r#"\u0000"#, r#"\ud83d\u0041"#,
        ]).prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 0..5).prop_map(|pieces| format!("\"{}\"", pieces.concat()))
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => string_value(),
        1 => prop::sample::select(vec![
            "0", "7", "18234", "01", "-1", "1.5", "1e3", "18446744073709551615", "18446744073709551616", "null", "true",
            "false", "{}", "[1,[2]]", "{\"a\":\"b\"}", "\"message\"", "\"tool_update\"", "\"tool_output\"", "\"completed\"", "\"canceled\"",
        ]).prop_map(str::to_owned),
    ]
}

fn space() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", "", "", " ", "\t", " \r "])
}

fn line() -> impl Strategy<Value = String> {
    let member = (key(), value(), space(), space()).prop_map(|(k, v, a, b)| format!("{a}{k}{b}:{a}{v}{b}"));
    let ending =
        prop_oneof![12 => Just("}"), 2 => Just("} "), 1 => Just("}x"), 1 => Just(",}"), 1 => Just(""), 1 => Just("}}")];
    let separator = prop_oneof![20 => Just(","), 1 => Just(" "), 1 => Just(";")];
    (prop::collection::vec(member, 0..7), ending, space(), separator)
        .prop_map(|(members, ending, lead, sep)| format!("{lead}{{{}{ending}", members.join(sep)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn the_fast_path_decodes_as_serde_does(line in line()) {
        prop_assert_eq!(decode(line.as_bytes(), false), decode(line.as_bytes(), true), "{}", line);
    }

    #[test]
    fn the_fast_path_agrees_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        prop_assert_eq!(decode(&bytes, false), decode(&bytes, true));
    }
}

/// Typical lines do take the fast path, else the tests above compare serde
/// with itself.
#[test]
fn typical_lines_take_the_fast_path_and_decode_right() {
    let line = br#"{"op":"tool_update","id":"toolu_1","content":"a.txt\nb \"c\" \u00e9","status":"completed","session":"s1","at_ms":12}"#;
    assert_eq!(
        decode(line, false),
        r#"Some("s1") Some(12) Ok(Some(ToolUpdate { id: "toolu_1", content: "a.txt\nb \"c\" é", status: Completed }))"#
    );
    assert_eq!(decode(line, false), decode(line, true));
    assert!(OpsLine::takes_fast_path(line));
    assert!(!OpsLine::takes_fast_path(br#"{"op":"message","text":null}"#));
}

/// The generated lines exercise both paths: a good share takes the fast
/// one (so the comparison is not serde against itself).
#[test]
fn generated_lines_exercise_the_fast_path() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut fast, total) = (0, 2000);
    for _ in 0..total {
        let line = line().new_tree(&mut runner).unwrap().current();
        fast += usize::from(OpsLine::takes_fast_path(line.as_bytes()));
    }
    assert!(fast * 5 > total, "only {fast} of {total} generated lines take the fast path");
    assert!(fast * 5 < total * 4, "{fast} of {total}: the slow path is barely exercised");
}
