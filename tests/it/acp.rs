//! The ACP adapter on every recorded fixture (tests/fixtures/acp, real
//! traffic of the Claude Code ACP adapter) and on the decisions the
//! fixtures do not show.

use std::path::Path;
use std::process::Command;

use roundup_testkit::capture::{clean_replay, of_type};
use roundup_testkit::invariants::{check_rounds, check_ui};
use serde_json::{json, Value};

fn replay(input: &[u8], emit: &str) -> Vec<Value> {
    clean_replay(input, "acp", emit)
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/acp").join(name)).unwrap()
}

/// The records of a fixture, checked for the invariants and for having no
/// anomaly, with its UI events well formed too.
fn clean(name: &str) -> Vec<Value> {
    let input = fixture(name);
    let lines = replay(&input, "records");
    check_rounds(&lines).unwrap();
    assert!(of_type(&lines, "anomaly").is_empty(), "{name}: {:?}", of_type(&lines, "anomaly"));
    check_ui(&replay(&input, "ui")).unwrap();
    lines
}

#[test]
fn bash_error() {
    let lines = clean("bash-error.jsonl");
    let rounds = of_type(&lines, "round");
    assert_eq!(rounds.len(), 1);
    let call = &rounds[0]["tool_calls"][0];
    assert_eq!(call["title"], "false", "the title of the update replaces the declaration's");
    assert_eq!(call["arguments"], r#"{"command": "false", "description": "Fail"}"#, "the agent's own JSON text");
    assert_eq!(call["result"], json!({"status": "failed", "content": "Exit code 1\nboom"}));
    assert_eq!(call["meta"]["kind"], "execute");
    // `_meta`'s keys merge into the call's meta, so that what successive
    // updates say accumulates (terminal_info, then terminal_exit).
    assert_eq!(call["meta"]["terminal_exit"]["exit_code"], 1);
    assert_eq!(call["meta"]["terminal_info"]["terminal_id"], "toolu_bash");
    let summary = of_type(&lines, "summary")[0];
    assert_eq!(summary["acp_stop_reason"], "end_turn");
    assert_eq!(summary["last_token_usage"], 2, "a gauge: the last `used`, which went down");
    assert_eq!(summary["acp_context_size"], 200000);
    assert_eq!(summary["acp_cost"], json!({"amount": 0, "currency": "USD"}));
    assert_eq!(summary["acp_available_commands"][0]["name"], "mcp", "the latest list, whole");
}

#[test]
fn bash_foreground() {
    let lines = clean("bash-foreground.jsonl");
    let rounds = of_type(&lines, "round");
    assert_eq!(rounds.len(), 2);
    assert_eq!(rounds[0]["closed_by"], "tools_done");
    assert_eq!(rounds[0]["tool_calls"][0]["result"], json!({"status": "completed", "content": "a.ts\nb.ts"}));
    assert_eq!((&rounds[1]["message"], &rounds[1]["closed_by"]), (&json!("Done."), &json!("finish")));
}

#[test]
fn edit_with_permission() {
    let lines = clean("edit-with-permission.jsonl");
    let call = &of_type(&lines, "round")[0]["tool_calls"][0];
    assert_eq!(call["title"], "Edit src/app.ts");
    assert_eq!(
        call["result"]["content"], "--- <cwd>/src/app.ts\n+++ <cwd>/src/app.ts\n-const value = 1;\n+const value = 2;\n",
        "the diff sent before the terminal is the result; the permission preview is not"
    );
    assert_eq!(call["meta"]["rawOutput"], "The file <cwd>/src/app.ts has been updated successfully.");
    // The update after the result refines metadata: a patch, no duplicate.
    let patch = of_type(&lines, "meta")[0];
    assert_eq!((&patch["round"], &patch["id"]), (&json!(0), &json!("toolu_edit")));
    assert_eq!(patch["meta"]["locations"], json!([{"line": 1, "path": "<cwd>/src/app.ts"}]));
    assert_eq!(patch["meta"]["content"][0]["type"], "diff");
}

#[test]
fn grep_and_glob() {
    let lines = clean("grep-and-glob.jsonl");
    let rounds = of_type(&lines, "round");
    assert_eq!(rounds.len(), 2);
    let grep = &rounds[0]["tool_calls"][0];
    assert_eq!(grep["title"], "grep -n \"value\" src");
    assert_eq!(grep["arguments"], r#"{"-n": true, "output_mode": "content", "path": "src", "pattern": "value"}"#);
    assert_eq!(grep["result"], json!({"status": "completed", "content": ""}), "no output was sent");
    assert_eq!(rounds[1]["tool_calls"][0]["result"]["content"], "src/app.ts\nsrc/b.ts");
}

#[test]
fn read() {
    let lines = clean("read.jsonl");
    let call = &of_type(&lines, "round")[0]["tool_calls"][0];
    assert_eq!(call["result"]["content"], "```\n1\tconst a = 1;\n```");
    assert_eq!(call["meta"]["locations"], json!([{"line": 1, "path": "<cwd>/a.ts"}]));
}

#[test]
fn session_load_replay() {
    let lines = clean("session-load-replay.jsonl");
    let rounds = of_type(&lines, "round");
    assert_eq!(rounds.len(), 2);
    assert_eq!((&rounds[0]["thought"], &rounds[0]["message"]), (&json!("Check the file."), &json!("I will edit it.")));
    let results: Vec<&Value> =
        rounds[0]["tool_calls"].as_array().unwrap().iter().map(|c| &c["result"]["content"]).collect();
    assert_eq!(
        results,
        [&json!("app.ts"), &json!("--- <cwd>/src/app.ts\n+++ <cwd>/src/app.ts\n-a\n+b\n"), &json!("Report.")]
    );
    assert_eq!(rounds[1]["message"], "Fixed.");
    let summary = of_type(&lines, "summary");
    assert_eq!(summary.len(), 1);
    assert_eq!(summary[0]["acp_user_message"], "Fix the bug");
}

#[test]
fn text_and_thinking() {
    let lines = clean("text-and-thinking.jsonl");
    let round = of_type(&lines, "round")[0];
    assert_eq!(
        (&round["thought"], &round["message"]),
        (&json!("Let me think about it."), &json!("Here is the answer."))
    );
}

#[test]
fn todo_write() {
    let lines = clean("todo-write.jsonl");
    assert!(of_type(&lines, "round").is_empty());
    let plan = &of_type(&lines, "summary")[0]["acp_plan"];
    assert_eq!(plan[0]["content"], "Writing tests");
}

#[test]
fn write_new() {
    let lines = clean("write-new.jsonl");
    let call = &of_type(&lines, "round")[0]["tool_calls"][0];
    assert_eq!(call["title"], "Write new.ts");
    assert!(
        call["result"]["content"].as_str().unwrap().contains("+export const x = 1;"),
        "the patch of the diff's _meta"
    );
}

fn notification(session: &str, update: Value) -> String {
    json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}})
        .to_string()
}

fn lines(input: &[String]) -> Vec<Value> {
    replay(input.join("\n").as_bytes(), "records")
}

#[test]
fn cancelled_prompts_give_canceled_placeholders() {
    let input = [
        json!({"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}})
            .to_string(),
        notification(
            "s",
            json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "sleep", "status": "pending"}),
        ),
        json!({"jsonrpc": "2.0", "id": 7, "result": {"stopReason": "cancelled"}}).to_string(),
    ];
    let lines = lines(&input);
    let round = of_type(&lines, "round")[0];
    assert_eq!(round["tool_calls"][0]["result"], json!({"status": "placeholder", "reason": "canceled"}));
    assert_eq!(of_type(&lines, "summary")[0]["acp_stop_reason"], "cancelled");
}

#[test]
fn each_prompt_is_a_run() {
    let prompt = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": {"sessionId": "s"}}).to_string()
    };
    let answer = |id: u64| json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn"}}).to_string();
    let text = |t: &str| {
        notification("s", json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": t}}))
    };
    let lines = lines(&[prompt(1), text("one"), answer(1), prompt(2), text("two"), answer(2)]);
    let runs: Vec<(&Value, &Value)> = of_type(&lines, "round").iter().map(|r| (&r["run"], &r["message"])).collect();
    assert_eq!(runs, [(&json!(0), &json!("one")), (&json!(1), &json!("two"))]);
}

#[test]
fn subagent_traffic_gets_its_own_session() {
    let sub = json!({"claudeCode": {"parentToolUseId": "task1"}});
    let input = [
        notification(
            "s",
            json!({"sessionUpdate": "tool_call", "toolCallId": "task1", "title": "Task", "status": "pending"}),
        ),
        notification(
            "s",
            json!({"sessionUpdate": "agent_message_chunk", "_meta": sub, "content": {"type": "text", "text": "sub work"}}),
        ),
        notification(
            "s",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "task1", "status": "completed", "rawOutput": "done"}),
        ),
    ];
    let lines = lines(&input);
    let rounds = of_type(&lines, "round");
    let parent = rounds.iter().find(|r| r["session"] == "s").unwrap();
    assert_eq!(parent["closed_by"], "tools_done", "the subagent's text did not supersede the Task call");
    assert_eq!(parent["tool_calls"][0]["result"]["content"], "done");
    assert!(rounds.iter().any(|r| r["session"] == "s/task1" && r["message"] == "sub work"));
}

#[test]
fn a_load_replay_cuts_runs_at_user_messages() {
    let user = |t: &str| {
        notification("s", json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": t}}))
    };
    let agent = |t: &str| {
        notification("s", json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": t}}))
    };
    let input = [
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/load", "params": {"sessionId": "s"}}).to_string(),
        user("first"),
        agent("answer one"),
        user("second"),
        agent("answer two"),
        json!({"jsonrpc": "2.0", "id": 2, "result": {}}).to_string(),
    ];
    let lines = lines(&input);
    let runs: Vec<(&Value, &Value)> = of_type(&lines, "round").iter().map(|r| (&r["run"], &r["message"])).collect();
    assert_eq!(runs, [(&json!(0), &json!("answer one")), (&json!(1), &json!("answer two"))]);
    let users: Vec<&Value> = of_type(&lines, "summary").iter().map(|s| &s["acp_user_message"]).collect();
    assert_eq!(users, [&json!("first"), &json!("second")]);
}

/// Kimi CLI sends the arguments of a pending call as its content; for
/// other agents that content is a preview of the output (Zed shows it so).
/// The `initialize` response's `agentInfo` says which agent it is.
#[test]
fn pending_content_is_the_arguments_only_for_kimi() {
    let text = |t: &str| json!([{"type": "content", "content": {"type": "text", "text": t}}]);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}).to_string();
    let kimi = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "agentInfo": {"name": "Kimi Code CLI", "version": "1.0"}}}).to_string();
    let input = [
        initialize.clone(),
        kimi,
        notification(
            "s",
            json!({"sessionUpdate": "tool_call", "toolCallId": "k", "title": "Shell", "status": "pending", "content": text("{\"cmd\":")}),
        ),
        notification(
            "s",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "k", "content": text("{\"cmd\":\"ls\"}")}),
        ),
        notification("s", json!({"sessionUpdate": "tool_call_update", "toolCallId": "k", "status": "in_progress"})),
        notification(
            "s",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "k", "status": "completed", "content": text("a.txt")}),
        ),
    ];
    let lines = lines(&input);
    let call = &of_type(&lines, "round")[0]["tool_calls"][0];
    assert_eq!(call["arguments"], "{\"cmd\":\"ls\"}");
    assert_eq!(call["result"]["content"], "a.txt");

    // Another agent: the same content is live output, replaced by the result.
    let other = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "agentInfo": {"name": "claude-agent-acp"}}});
    let mut input = input.to_vec();
    input[1] = other.to_string();
    let ui = replay(input.join("\n").as_bytes(), "ui");
    let outputs: Vec<&Value> =
        ui.iter().filter(|e| e["event"] == "tool_call_output").map(|e| &e["content"]).collect();
    assert_eq!(outputs, [&json!("{\"cmd\":"), &json!("{\"cmd\":\"ls\"}")], "{ui:?}");
    let records = self::lines(&input);
    let call = &of_type(&records, "round")[0]["tool_calls"][0];
    assert_eq!((&call["arguments"], &call["result"]["content"]), (&json!(""), &json!("a.txt")));
}

#[test]
fn what_cannot_be_translated_is_reported() {
    let input = [
        notification(
            "s",
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}}),
        ),
        notification("s", json!({"sessionUpdate": "brand_new_update", "x": 1})),
        notification("s", json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x", "status": "pending"})),
        notification("s", json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "exploded"})),
        notification("s", json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"})),
        notification("s", json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"})),
        json!({"jsonrpc": "2.0"}).to_string(),
    ];
    let lines = lines(&input);
    let kinds: Vec<&Value> = of_type(&lines, "anomaly").iter().map(|a| &a["kind"]).collect();
    assert_eq!(
        kinds,
        [
            &json!("unknown_content"),
            &json!("unknown_event"),
            &json!("unknown_status"),
            &json!("duplicate_terminal"),
            &json!("unknown_event")
        ]
    );
    let anomalies = of_type(&lines, "anomaly");
    assert!(anomalies[0]["detail"].as_str().unwrap().contains("AAAA"), "the content is kept");
    assert!(anomalies[1]["detail"].as_str().unwrap().contains("brand_new_update"));
    // The second `completed` is a duplicate, kept as such; the first won.
    assert_eq!(of_type(&lines, "round")[0]["tool_calls"][0]["result"]["status"], "completed");
}

#[test]
fn sse_framing_and_detection_through_the_cli() {
    let dir = std::env::temp_dir().join(format!("roundup-acp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sse: String = String::from_utf8(fixture("bash-foreground.jsonl"))
        .unwrap()
        .lines()
        .map(|l| format!("event: message\ndata: {l}\n\n"))
        .collect();
    let (raw_file, sse_file) = (dir.join("raw.jsonl"), dir.join("sse.txt"));
    std::fs::write(&raw_file, fixture("bash-foreground.jsonl")).unwrap();
    std::fs::write(&sse_file, sse).unwrap();
    let run = |args: &[&str], file: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_roundup")).args(args).arg(file).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let explicit = run(&["replay", "--from", "acp"], &raw_file);
    assert_eq!(run(&["replay"], &raw_file), explicit, "--from auto detects ACP");
    assert_eq!(run(&["replay"], &sse_file), explicit, "SSE framing gives the same output");
    std::fs::remove_dir_all(&dir).ok();
}

#[cfg(feature = "acp")]
#[test]
fn typed_notifications_of_the_schema_crate() {
    use agent_client_protocol_schema::v1::SessionNotification;
    let typed: SessionNotification = serde_json::from_value(json!({
        "sessionId": "s",
        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "typed"}}
    }))
    .unwrap();
    use roundup::StreamHandler;
    let builder = roundup::RoundBuilder::new();
    let mut acp = roundup::adapters::acp::AcpAdapter::new();
    acp.translate_notification(&typed, &mut |_: Option<&str>, call: roundup::Call<'_>| builder.call(call));
    builder.finish_if_running(roundup::FinishReason::Interrupted);
    assert_eq!(builder.rounds()[0].message, "typed");
}
