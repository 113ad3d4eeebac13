//! The AG-UI encoder's choices, on roundup's side (the real client checks
//! every vector and fixture in `tests/agui`, run by `.ci/run`).

use roundup_testkit::capture::clean_replay;
use serde_json::{json, Value};

fn agui(ops: &str) -> Vec<Value> {
    clean_replay(ops.as_bytes(), "ops", "agui")
}

fn of<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// A snapshot replaces the arguments: AG-UI arguments only append, so they
/// go out once, final, when the round closes, after the call started live.
#[test]
fn arguments_go_out_final_when_the_round_closes() {
    let events = agui(concat!(
        r#"{"op":"tool_call","id":"t1","title":"bash"}"#,
        "\n",
        r#"{"op":"tool_update","id":"t1","content":"{\"cmd\":\"l","status":"in_progress"}"#,
        "\n",
        r#"{"op":"args_snapshot","id":"t1","args":"{\"cmd\":\"ls -la\"}"}"#,
        "\n",
        r#"{"op":"tool_update","id":"t1","content":"a.txt","status":"completed"}"#,
        "\n",
    ));
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT", "RUN_FINISHED"]
    );
    assert_eq!(of(&events, "TOOL_CALL_ARGS")[0]["delta"], r#"{"cmd":"ls -la"}"#);
    let result = of(&events, "TOOL_CALL_RESULT")[0];
    assert_eq!((&result["toolCallId"], &result["content"]), (&json!("roundup/run-0/round-0/t1"), &json!("a.txt")));
    assert_eq!(of(&events, "TOOL_CALL_START")[0]["parentMessageId"], "roundup/run-0/round-0");
}

/// A canceled run: its open call gets a result that says why, the run its
/// outcome, and the token gauge is the run's usage.
#[test]
fn a_canceled_run_pairs_every_call_and_says_so() {
    let events = agui(concat!(
        r#"{"op":"message","text":"Running it.","session":"s"}"#,
        "\n",
        r#"{"op":"tool_call","id":"t1","title":"bash","session":"s"}"#,
        "\n",
        r#"{"op":"token_usage","total":1234,"session":"s"}"#,
        "\n",
        r#"{"op":"finish","reason":"canceled","session":"s"}"#,
        "\n",
    ));
    let result = of(&events, "TOOL_CALL_RESULT")[0];
    assert_eq!(result["content"], "no result: canceled");
    assert_eq!(result["metadata"], json!({"roundup": {"placeholder": "canceled"}}));
    let finished = of(&events, "RUN_FINISHED")[0];
    assert_eq!(finished["outcome"], json!({"type": "cancelled"}));
    assert_eq!(finished["usage"], json!([{"totalTokens": 1234}]));
    assert_eq!(finished["threadId"], "s");
    assert_eq!(events.last().unwrap()["type"], "RUN_FINISHED", "nothing after the run's end");
}

/// A call the next text cut off waits for its late result: the client gets
/// one result for it, the late one (marked stitched, and failed when it
/// failed), in the run that received it; a call whose late result never
/// comes gets its placeholder when the run ends.
#[test]
fn a_late_result_is_the_call_s_one_result_marked_stitched() {
    let events = agui(concat!(
        r#"{"op":"tool_call","id":"a","title":"x"}"#,
        "\n",
        r#"{"op":"tool_call","id":"b","title":"y"}"#,
        "\n",
        r#"{"op":"message","text":"moving on"}"#,
        "\n",
        r#"{"op":"tool_update","id":"a","content":"late","status":"failed"}"#,
        "\n",
    ));
    let results: Vec<(&Value, &Value)> =
        of(&events, "TOOL_CALL_RESULT").iter().map(|e| (&e["toolCallId"], &e["content"])).collect();
    assert_eq!(
        results,
        [
            (&json!("roundup/run-0/round-0/a"), &json!("late")),
            (&json!("roundup/run-0/round-0/b"), &json!("no result: superseded")),
        ]
    );
    let late = of(&events, "TOOL_CALL_RESULT")[0];
    assert_eq!(late["metadata"], json!({"roundup": {"stitched": true, "success": false}}));
    assert_eq!(late["messageId"], "roundup/run-0/round-0/a/result", "where the placeholder would have been");
    let finished = events.iter().position(|e| e["type"] == "RUN_FINISHED").unwrap();
    let stitched = events.iter().position(|e| e["content"] == "late").unwrap();
    assert!(stitched < finished);
}

/// A call with a machine name is that tool to an AG-UI client: its
/// `toolCallName` is the name, from its declaration, and a title that
/// changes as the call goes (ACP's `Terminal` → `ls -la`) renames nothing;
/// a call without one is started once, when its round closes, named by its
/// final title (AG-UI has no rename: a second start is a client warning).
#[test]
fn a_call_is_named_by_its_name_and_else_by_its_title() {
    let events = agui(concat!(
        r#"{"op":"tool_call","id":"t1","title":"Terminal","name":"Bash"}"#,
        "\n",
        r#"{"op":"tool_call","id":"t1","title":"ls -la"}"#,
        "\n",
        r#"{"op":"tool_call","id":"t2","title":"Terminal"}"#,
        "\n",
        r#"{"op":"tool_call","id":"t2","title":"pwd"}"#,
        "\n",
        r#"{"op":"tool_update","id":"t1","content":"a.txt","status":"completed"}"#,
        "\n",
        r#"{"op":"tool_update","id":"t2","content":"/","status":"completed"}"#,
        "\n",
    ));
    let starts: Vec<(&Value, &Value)> =
        of(&events, "TOOL_CALL_START").iter().map(|e| (&e["toolCallId"], &e["toolCallName"])).collect();
    assert_eq!(
        starts,
        [(&json!("roundup/run-0/round-0/t1"), &json!("Bash")), (&json!("roundup/run-0/round-0/t2"), &json!("pwd")),]
    );
    let t1 = events.iter().position(|e| e["toolCallId"] == "roundup/run-0/round-0/t1").unwrap();
    assert!(t1 < 3, "the named call starts at its declaration: {events:?}");
    let t2_title = events.iter().position(|e| e["value"]["toolCallId"] == "roundup/run-0/round-0/t2").unwrap();
    let t2_start = events.iter().position(|e| e["toolCallId"] == "roundup/run-0/round-0/t2").unwrap();
    assert!(t2_title < t2_start, "the other's title change is live, its start at the round's close: {events:?}");

    // A machine name changed after the start stays the started one in the
    // client; the final name goes out with the call's end.
    let renamed = agui(concat!(
        r#"{"op":"tool_call","id":"g","title":"grep","name":"Grep"}"#,
        "\n",
        r#"{"op":"tool_call","id":"g","title":"","name":"Search"}"#,
        "\n",
        r#"{"op":"tool_update","id":"g","content":"G","status":"completed"}"#,
        "\n",
    ));
    assert_eq!(of(&renamed, "TOOL_CALL_START").len(), 1);
    let custom: Vec<&Value> = renamed.iter().filter(|e| e["name"] == "roundup.tool_call_renamed").collect();
    assert_eq!(custom.len(), 1, "{renamed:?}");
    assert_eq!(custom[0]["value"], json!({"toolCallId": "roundup/run-0/round-0/g", "from": "Grep", "name": "Search"}));
}

/// A source that never says what time it is leaves the replay's clock at
/// 0: its events carry no `timestamp` (not one of 1970); a source that
/// stamps its events gives each its time.
#[test]
fn timestamps_only_where_the_source_has_a_clock() {
    let unstamped = agui("{\"op\":\"message\",\"text\":\"Hi\"}\n{\"op\":\"finish\",\"reason\":\"completed\"}\n");
    assert!(!unstamped.is_empty());
    assert!(unstamped.iter().all(|e| e.get("timestamp").is_none()), "{unstamped:?}");
    let stamped = agui(concat!(
        r#"{"op":"message","text":"Hi","at_ms":1700000000000}"#,
        "\n",
        r#"{"op":"finish","reason":"completed","at_ms":1700000000500}"#,
        "\n",
    ));
    assert!(stamped.iter().all(|e| e["timestamp"].as_u64().is_some_and(|t| t >= 1_700_000_000_000)), "{stamped:?}");
    assert_eq!(stamped.last().map(|e| &e["timestamp"]), Some(&json!(1_700_000_000_500_u64)));
}

/// `--emit agui --compact`: each run is its start, one `MESSAGES_SNAPSHOT`
/// of the thread so far (the messages the live events build, a late result
/// in its call's one tool message) and its end; a failed run ends in
/// `RUN_ERROR`; an input that held nothing writes nothing.
#[test]
fn the_compact_form_is_one_snapshot_of_the_thread_a_run() {
    let ops = [
        r#"{"op":"thought","text":"Look."}"#,
        r#"{"op":"tool_call","id":"a","title":"ls -la","name":"Bash"}"#,
        r#"{"op":"args_snapshot","id":"a","args":"{\"cmd\":\"ls\"}"}"#,
        r#"{"op":"message","text":"Meanwhile."}"#,
        r#"{"op":"tool_update","id":"a","content":"late","status":"completed"}"#,
        r#"{"op":"finish","reason":"completed"}"#,
        r#"{"op":"start"}"#,
        r#"{"op":"message","text":"Second run."}"#,
        r#"{"op":"finish","reason":"failed"}"#,
    ]
    .join("\n");
    let events = clean_replay(ops.as_bytes(), "ops", "agui-compact");
    let kinds: Vec<&Value> = events.iter().map(|e| &e["type"]).collect();
    assert_eq!(
        kinds,
        ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED", "RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_ERROR"]
            .map(|k| json!(k))
            .iter()
            .collect::<Vec<_>>()
    );
    assert_eq!(
        events[1]["messages"],
        json!([
            {"id": "roundup/run-0/round-0/reasoning", "role": "reasoning", "content": "Look."},
            {"id": "roundup/run-0/round-0", "role": "assistant", "toolCalls": [
                {"id": "roundup/run-0/round-0/a", "type": "function", "function": {"name": "Bash", "arguments": "{\"cmd\":\"ls\"}"}}
            ]},
            {"id": "roundup/run-0/round-0/a/result", "role": "tool", "toolCallId": "roundup/run-0/round-0/a", "content": "late"},
            {"id": "roundup/run-0/round-1", "role": "assistant", "content": "Meanwhile."},
        ])
    );
    assert_eq!(events[2]["outcome"], json!({"type": "success"}));
    let second = events[4]["messages"].as_array().unwrap();
    assert_eq!(second.len(), 5, "the thread so far: {second:?}");
    assert_eq!(second[4]["content"], "Second run.");
    assert_eq!(events[5]["metadata"]["roundup"]["runId"], "roundup/run-1");
    assert!(clean_replay(b"", "ops", "agui-compact").is_empty(), "an empty input writes nothing");
}

#[test]
fn compact_goes_with_agui_only() {
    let run = crate::cli::roundup;
    let compact = run(&["replay", "--emit", "agui", "--compact", "examples/session.ops.jsonl"]);
    let named = run(&["replay", "--emit", "agui-compact", "examples/session.ops.jsonl"]);
    assert_eq!(compact.stdout, named.stdout);
    assert!(String::from_utf8_lossy(&compact.stdout).contains("\"MESSAGES_SNAPSHOT\""));
    let wrong = run(&["replay", "--emit", "ui", "--compact", "examples/session.ops.jsonl"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("--compact goes with --emit agui, not --emit ui"));
}
