//! The history exports on roundup's side (the providers' own request types
//! check every vector and fixture in `tests/history`, run by `.ci/run`).

use roundup_testkit::capture::clean_replay;
use serde_json::{json, Value};

const CANCELED_MID_TOOL: &str = concat!(
    r#"{"op":"message","text":"Two commands."}"#,
    "\n",
    r#"{"op":"tool_call","id":"t1","title":"bash"}"#,
    "\n",
    r#"{"op":"args_snapshot","id":"t1","args":"{\"cmd\":\"ls\"}"}"#,
    "\n",
    r#"{"op":"tool_call","id":"t2","title":"bash"}"#,
    "\n",
    r#"{"op":"tool_update","id":"t1","content":"a.txt","status":"completed"}"#,
    "\n",
    r#"{"op":"finish","reason":"canceled"}"#,
    "\n",
);

fn export(to: &str) -> Value {
    let lines = clean_replay(CANCELED_MID_TOOL.as_bytes(), "ops", to);
    assert_eq!(lines.len(), 1, "one run, one history");
    lines[0].clone()
}

/// A run canceled mid-tool exports with every call paired: the finished one
/// with its result, the running one with an error result that says why.
#[test]
fn a_run_canceled_mid_tool_exports_with_every_call_paired() {
    let chat = export("openai-chat");
    assert_eq!(
        chat["messages"],
        json!([
            {"role": "assistant", "content": "Two commands.", "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\":\"ls\"}"}},
                {"id": "t2", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "t1", "content": "a.txt"},
            {"role": "tool", "tool_call_id": "t2", "content": "no result: canceled"}
        ])
    );
    let anthropic = export("anthropic");
    assert_eq!(
        anthropic["messages"][1],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt", "is_error": false},
            {"type": "tool_result", "tool_use_id": "t2", "content": "no result: canceled", "is_error": true}
        ]})
    );
    assert_eq!(anthropic["messages"][0]["content"][1]["input"], json!({"cmd": "ls"}));
    let responses = export("openai-responses");
    let outputs: Vec<&Value> =
        responses["input"].as_array().unwrap().iter().filter(|i| i["type"] == "function_call_output").collect();
    assert_eq!(outputs.len(), 2);
    assert_eq!(outputs[1]["output"], "no result: canceled");
}

/// A late result replaces its placeholder in the history: what the model is
/// told is what the tool said.
#[test]
fn a_late_result_is_the_call_s_result_in_the_history() {
    let ops = concat!(
        r#"{"op":"tool_call","id":"a","title":"x"}"#,
        "\n",
        r#"{"op":"message","text":"moving on"}"#,
        "\n",
        r#"{"op":"tool_update","id":"a","content":"late","status":"completed"}"#,
        "\n",
    );
    let chat = &clean_replay(ops.as_bytes(), "ops", "openai-chat")[0];
    assert_eq!(chat["messages"][1], json!({"role": "tool", "tool_call_id": "a", "content": "late"}));
}

/// `roundup export --to X` is `replay --emit X`; without `--to` it says
/// what it needs.
#[test]
fn export_is_replay_with_a_history_format() {
    use std::process::Command;
    let file = roundup_testkit::repo_root().join("tests/fixtures/openai-chat/openai-python-single-tool.sse");
    let roundup = || Command::new(env!("CARGO_BIN_EXE_roundup"));
    let export = roundup().args(["export", "--to", "anthropic"]).arg(&file).output().unwrap();
    let replay = roundup().args(["replay", "--emit", "anthropic"]).arg(&file).output().unwrap();
    assert!(export.status.success());
    assert_eq!(export.stdout, replay.stdout);
    assert!(String::from_utf8_lossy(&export.stdout).contains("tool_result"));
    let missing = roundup().args(["export"]).arg(&file).output().unwrap();
    assert_eq!(missing.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("the following required arguments were not provided") && stderr.contains("--to <FORMAT>"));
}

/// A call id the run uses again (a new call of an id from a closed round)
/// is renamed in the exports, so that no provider sees two calls of one
/// id: the first call keeps it, a later one goes by `{id}-2` (or the next
/// free number), each with its own result, a late one included; the line
/// says what was renamed.
#[test]
fn a_reused_call_id_is_renamed_with_its_result() {
    let input = [
        r#"{"op":"tool_call","id":"t1","title":"ls"}"#,
        r#"{"op":"message","text":"Meanwhile."}"#,
        r#"{"op":"tool_call","id":"t1","title":"cat"}"#,
        r#"{"op":"tool_update","id":"t1","content":"second","status":"completed"}"#,
        r#"{"op":"tool_update","id":"t1","content":"first, late","status":"completed"}"#,
        r#"{"op":"tool_call","id":"t1-2","title":"wc"}"#,
        r#"{"op":"tool_update","id":"t1-2","content":"third","status":"completed"}"#,
        r#"{"op":"finish","reason":"completed"}"#,
    ]
    .join("\n");
    let renamed = json!([{"round": 1, "id": "t1", "as": "t1-3"}]);
    let chat = &clean_replay(input.as_bytes(), "ops", "openai-chat")[0];
    assert_eq!(chat["renamed_ids"], renamed);
    let tool_results: Vec<(&Value, &Value)> = chat["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| (&m["tool_call_id"], &m["content"]))
        .collect();
    assert_eq!(
        tool_results,
        [(&json!("t1"), &json!("first, late")), (&json!("t1-3"), &json!("second")), (&json!("t1-2"), &json!("third"))]
    );
    let anthropic = &clean_replay(input.as_bytes(), "ops", "anthropic")[0];
    let uses: Vec<&Value> = anthropic["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| &b["id"])
        .collect();
    assert_eq!(uses, [&json!("t1"), &json!("t1-3"), &json!("t1-2")]);
    assert_eq!(anthropic["renamed_ids"], renamed);
    let responses = &clean_replay(input.as_bytes(), "ops", "openai-responses")[0];
    assert_eq!(responses["renamed_ids"], renamed);
    // A run whose ids are all its own says nothing of renaming.
    assert!(export("openai-chat").get("renamed_ids").is_none());
}
