//! The ACP adapter on every recorded fixture (tests/fixtures/acp, real
//! traffic of the Claude Code ACP adapter) and on the decisions the
//! fixtures do not show.

use std::path::Path;
use std::process::Command;

use roundup_testkit::capture::{clean_replay, of_type};
use roundup_testkit::invariants::{check_rounds, check_ui_per_session};
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
    check_ui_per_session(&replay(&input, "ui")).unwrap();
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
    let initialize =
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}).to_string();
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
    let other =
        json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "agentInfo": {"name": "claude-agent-acp"}}});
    let mut input = input.to_vec();
    input[1] = other.to_string();
    let ui = replay(input.join("\n").as_bytes(), "ui");
    let outputs: Vec<&Value> = ui.iter().filter(|e| e["event"] == "tool_call_output").map(|e| &e["content"]).collect();
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

fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn response(id: u64, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

fn text_chunk(session: &str, text: &str) -> String {
    notification(session, json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}))
}

fn tool(session: &str, update: Value) -> String {
    notification(session, update)
}

/// ACP on real traffic: client and agent number their requests independently.
/// The client's answer to the agent's permission request 1 (and an error
/// answer to the agent's fs request 2) must not end prompt 1 (or 2).
#[test]
fn a_response_answers_the_other_sides_request_with_that_id() {
    let input = [
        request(1, "session/prompt", json!({"sessionId": "s", "prompt": [{"type": "text", "text": "go"}]})),
        tool("s", json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "rm", "status": "pending"})),
        request(
            1,
            "session/request_permission",
            json!({"sessionId": "s", "toolCall": {"toolCallId": "t"}, "options": []}),
        ),
        response(1, json!({"outcome": {"outcome": "selected", "optionId": "allow"}})),
        request(2, "fs/read_text_file", json!({"sessionId": "s", "path": "/x"})),
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32000, "message": "no such file"}}).to_string(),
        tool(
            "s",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "removed"}}]}),
        ),
        text_chunk("s", "Finished."),
        response(1, json!({"stopReason": "end_turn"})),
    ];
    let lines = lines(&input);
    assert!(of_type(&lines, "anomaly").is_empty(), "{:?}", of_type(&lines, "anomaly"));
    let rounds = of_type(&lines, "round");
    let call = &rounds[0]["tool_calls"][0];
    assert_eq!(call["result"], json!({"status": "completed", "content": "removed"}));
    assert_eq!(call["meta"]["acp_permission_outcome"], json!({"outcome": "selected", "optionId": "allow"}));
    assert_eq!(rounds[1]["message"], "Finished.");
    let summaries = of_type(&lines, "summary");
    assert_eq!(summaries.len(), 1);
    assert_eq!(
        (&summaries[0]["acp_stop_reason"], &summaries[0]["acp_user_message"]),
        (&json!("end_turn"), &json!("go"))
    );
}

/// ACP on real traffic: a call's session is fixed when it is declared; a
/// permission request's `toolCall._meta` routes like an update's.
#[test]
fn a_subagent_call_stays_in_its_session_whatever_its_updates_say() {
    let sub = json!({"claudeCode": {"parentToolUseId": "task"}});
    let input = [
        request(1, "session/prompt", json!({"sessionId": "s", "prompt": []})),
        tool("s", json!({"sessionUpdate": "tool_call", "toolCallId": "task", "title": "Task", "status": "pending"})),
        tool(
            "s",
            json!({"sessionUpdate": "tool_call", "_meta": sub, "toolCallId": "r", "title": "Read", "rawInput": {"p": 1}}),
        ),
        request(
            1001,
            "session/request_permission",
            json!({"sessionId": "s", "toolCall": {"toolCallId": "w", "title": "Write", "_meta": sub}, "options": []}),
        ),
        tool(
            "s",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "r", "status": "completed", "rawOutput": "text"}),
        ),
        tool("s", json!({"sessionUpdate": "tool_call_update", "toolCallId": "w", "status": "completed"})),
        tool(
            "s",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "task", "status": "completed", "rawOutput": "done"}),
        ),
        response(1, json!({"stopReason": "end_turn"})),
    ];
    let lines = lines(&input);
    assert!(of_type(&lines, "anomaly").is_empty(), "{:?}", of_type(&lines, "anomaly"));
    let rounds = of_type(&lines, "round");
    let calls_of = |session: &str| -> Vec<(Value, Value)> {
        rounds
            .iter()
            .filter(|r| r["session"] == session)
            .flat_map(|r| r["tool_calls"].as_array().unwrap().iter())
            .map(|c| (c["id"].clone(), c["result"]["status"].clone()))
            .collect()
    };
    assert_eq!(calls_of("s"), [(json!("task"), json!("completed"))], "no ghost of the subagent's calls");
    assert_eq!(calls_of("s/task"), [(json!("r"), json!("completed")), (json!("w"), json!("completed"))]);
    let parent = rounds.iter().find(|r| r["session"] == "s").unwrap();
    assert_eq!(parent["closed_by"], "tools_done");
    assert_eq!(parent["tool_calls"][0]["meta"]["acp_child_session"], "s/task", "the Task call names its subagent");
}

/// ACP on real traffic: a subagent's run ends with its parent's run, and its
/// next traffic (after the next prompt) is a new run.
#[test]
fn subagent_sessions_finish_with_their_parent() {
    let sub = json!({"claudeCode": {"parentToolUseId": "task"}});
    let chunk = |text: &str| {
        notification(
            "s",
            json!({"sessionUpdate": "agent_message_chunk", "_meta": sub, "content": {"type": "text", "text": text}}),
        )
    };
    let input = [
        request(1, "session/prompt", json!({"sessionId": "s", "prompt": []})),
        chunk("working"),
        response(1, json!({"stopReason": "cancelled"})),
        request(2, "session/prompt", json!({"sessionId": "s", "prompt": []})),
        chunk("again"),
        response(2, json!({"stopReason": "end_turn"})),
    ];
    let ui = replay(input.join("\n").as_bytes(), "ui");
    check_ui_per_session(&ui).unwrap();
    let child_ends: Vec<(&Value, &Value)> = ui
        .iter()
        .filter(|e| e["session"] == "s/task" && e["event"] == "run_end")
        .map(|e| (&e["run"], &e["reason"]))
        .collect();
    assert_eq!(child_ends, [(&json!(0), &json!("canceled")), (&json!(1), &json!("completed"))]);
    let lines = lines(&input);
    let child: Vec<(&Value, &Value)> = of_type(&lines, "round")
        .iter()
        .filter(|r| r["session"] == "s/task")
        .map(|r| (&r["run"], &r["message"]))
        .collect();
    assert_eq!(child, [(&json!(0), &json!("working")), (&json!(1), &json!("again"))]);
    // The child's summary comes before its parent's, which ends its run.
    let order: Vec<&Value> = of_type(&lines, "summary").iter().map(|s| &s["session"]).collect();
    assert_eq!(order, [&json!("s/task"), &json!("s"), &json!("s/task"), &json!("s")]);
}

/// ACP on real traffic: a tool call id reused in a later prompt, or a session
/// loaded twice, is a new call with its own title and arguments.
#[test]
fn a_tool_call_id_reused_in_a_later_run_is_a_new_call() {
    let declare = |title: &str, input: Value| {
        tool("s", json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": title, "rawInput": input}))
    };
    let complete = tool("s", json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"}));
    let input = [
        request(1, "session/prompt", json!({"sessionId": "s", "prompt": []})),
        declare("ls", json!({"path": "."})),
        complete.clone(),
        response(1, json!({"stopReason": "end_turn"})),
        request(2, "session/load", json!({"sessionId": "s"})),
        declare("cat", json!({"path": "a"})),
        complete.clone(),
        response(2, json!({})),
        request(3, "session/load", json!({"sessionId": "s"})),
        declare("cat", json!({"path": "a"})),
        complete,
        response(3, json!({})),
    ];
    let lines = lines(&input);
    assert!(of_type(&lines, "anomaly").is_empty(), "{:?}", of_type(&lines, "anomaly"));
    let calls: Vec<(Value, Value, Value)> = of_type(&lines, "round")
        .iter()
        .map(|r| (r["run"].clone(), r["tool_calls"][0]["title"].clone(), r["tool_calls"][0]["arguments"].clone()))
        .collect();
    assert_eq!(
        calls,
        [
            (json!(0), json!("ls"), json!(r#"{"path":"."}"#)),
            (json!(1), json!("cat"), json!(r#"{"path":"a"}"#)),
            (json!(2), json!("cat"), json!(r#"{"path":"a"}"#))
        ]
    );
    let tool_calls: Vec<&Value> = of_type(&lines, "summary").iter().map(|s| &s["tool_calls"]).collect();
    assert_eq!(tool_calls, [&json!(1), &json!(1), &json!(1)]);
}

/// ACP on real traffic: after a call's result, a `tool_call` with its id
/// declares a new call, a second terminal is `duplicate_terminal`, and a
/// new title, input or content is a meta patch. Nothing is dropped.
#[test]
fn updates_after_the_result_are_kept() {
    let input = [
        tool("s", json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "ls"})),
        tool(
            "s",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed", "rawOutput": "a"}),
        ),
        tool(
            "s",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": "ls -a", "rawInput": {"all": true},
                "content": [{"type": "content", "content": {"type": "text", "text": "a .hidden"}}]}),
        ),
        tool(
            "s",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "failed", "rawOutput": "late"}),
        ),
        tool("s", json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "ls again"})),
        tool(
            "s",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed", "rawOutput": "b"}),
        ),
    ];
    let lines = lines(&input);
    let patch = &of_type(&lines, "meta")[0]["meta"];
    assert_eq!((&patch["title"], &patch["rawInput"]), (&json!("ls -a"), &json!({"all": true})));
    assert_eq!(patch["content"][0]["content"]["text"], "a .hidden");
    let anomalies = of_type(&lines, "anomaly");
    assert_eq!((&anomalies[0]["kind"], &anomalies[0]["status"]), (&json!("duplicate_terminal"), &json!("failed")));
    let calls: Vec<(Value, Value)> = of_type(&lines, "round")
        .iter()
        .flat_map(|r| r["tool_calls"].as_array().unwrap().clone())
        .map(|c| (c["title"].clone(), c["result"]["content"].clone()))
        .collect();
    assert_eq!(calls, [(json!("ls"), json!("a")), (json!("ls again"), json!("b"))]);
}

/// ACP on real traffic: the protocol's data is kept: the prompt, the prompt
/// response's usage and `_meta`, `usage_update._meta`, the latest session
/// info, mode and config options, and the message ids of each round.
#[test]
fn protocol_data_is_kept() {
    let message = |id: &str, text: &str| {
        notification(
            "s",
            json!({"sessionUpdate": "agent_message_chunk", "messageId": id, "content": {"type": "text", "text": text}}),
        )
    };
    let input = [
        request(
            1,
            "session/prompt",
            json!({"sessionId": "s", "prompt": [{"type": "text", "text": "Fix "}, {"type": "text", "text": "it"},
                {"type": "resource_link", "uri": "file:///a.rs", "name": "a.rs"}]}),
        ),
        notification("s", json!({"sessionUpdate": "session_info_update", "title": "Fixing"})),
        notification("s", json!({"sessionUpdate": "current_mode_update", "currentModeId": "plan"})),
        notification("s", json!({"sessionUpdate": "current_mode_update", "currentModeId": "default"})),
        notification("s", json!({"sessionUpdate": "config_option_update", "configOptions": [{"id": "mode"}]})),
        notification("s", json!({"sessionUpdate": "usage_update", "used": 5, "size": 100, "_meta": {"model": "m"}})),
        message("m1", "One. "),
        message("m1", "Still one. "),
        message("m2", "Two."),
        response(1, json!({"stopReason": "end_turn", "usage": {"totalTokens": 9}, "_meta": {"quota": 1}})),
    ];
    let lines = lines(&input);
    let round = of_type(&lines, "round")[0];
    assert_eq!(round["meta"]["acp_message_ids"], json!(["m1", "m2"]));
    let summary = of_type(&lines, "summary")[0];
    assert_eq!(summary["acp_user_message"], "Fix it");
    assert_eq!(summary["acp_prompt_attachments"][0]["uri"], "file:///a.rs");
    assert_eq!(summary["acp_session_info"], json!({"title": "Fixing"}));
    assert_eq!(summary["acp_mode"], "default", "the latest value");
    assert_eq!(summary["acp_config_options"], json!([{"id": "mode"}]));
    assert_eq!(summary["acp_usage_meta"], json!({"model": "m"}));
    assert_eq!(summary["acp_usage"], json!({"totalTokens": 9}));
    assert_eq!(summary["acp_response_meta"], json!({"quota": 1}));
    assert!(of_type(&lines, "anomaly").is_empty());
}

/// ACP on real traffic: the arguments are the agent's own JSON text: key
/// order, number spelling and escapes as sent.
#[test]
fn arguments_keep_the_agents_json_text() {
    let raw = r#"{"z": 1.0e2, "a": "\u00e9\n", "m": [ ]}"#;
    let line = format!(
        r#"{{"sessionId":"s","update":{{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","rawInput":{raw},"status":"completed"}}}}"#
    );
    let lines = replay(line.as_bytes(), "records");
    assert_eq!(of_type(&lines, "round")[0]["tool_calls"][0]["arguments"], raw);
    // A string input is its own text.
    let line = r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","rawInput":"ls \"a\"","status":"completed"}}"#;
    let lines = replay(line.as_bytes(), "records");
    assert_eq!(of_type(&lines, "round")[0]["tool_calls"][0]["arguments"], r#"ls "a""#);
}

/// A prompt sent as many chunks costs one run-metadata call, not one per
/// chunk carrying all the text so far (which was quadratic), even when
/// other events come between the chunks.
#[test]
fn a_prompt_in_many_chunks_is_gathered_once() {
    use roundup::adapters::Adapter;
    let mut acp = roundup::adapters::acp::AcpAdapter::new();
    let run_meta = std::cell::RefCell::new(Vec::new());
    let mut sink = |_: Option<&str>, call: roundup::Call<'_>| {
        if let roundup::Call::RunMeta { meta } = call {
            run_meta.borrow_mut().push(meta.clone());
        }
    };
    for _ in 0..1000 {
        let line = notification(
            "s",
            json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "ab"}}),
        );
        acp.translate(line.as_bytes(), &mut sink).unwrap();
    }
    acp.translate(text_chunk("s", "answer").as_bytes(), &mut sink).unwrap();
    for _ in 0..1000 {
        let line = notification(
            "s",
            json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "ab"}}),
        );
        acp.translate(line.as_bytes(), &mut sink).unwrap();
        acp.translate(text_chunk("s", "interleaved").as_bytes(), &mut sink).unwrap();
    }
    assert!(run_meta.borrow().is_empty(), "held until the run ends");
    acp.end(&mut sink);
    let run_meta = run_meta.into_inner();
    assert_eq!(run_meta.len(), 1);
    assert_eq!(run_meta[0]["acp_user_message"].as_str().unwrap().len(), 4000);
}

/// Background tasks: the spawn and its states are the tool call's
/// metadata; compaction is run metadata with the summary text whole; the
/// plan-mode exit keeps the latest mode and config options.
#[test]
fn air_bash_background() {
    let lines = clean("air-bash-background.jsonl");
    let call = &of_type(&lines, "round")[0]["tool_calls"][0];
    assert_eq!(call["arguments"], r#"{"command": "sleep 100", "description": "Wait", "run_in_background": true}"#);
    assert!(call["result"]["content"].as_str().unwrap().starts_with("Command running in background with ID: bash_1."));
    assert_eq!(call["meta"]["acp_async_task"]["asyncTaskId"], "bash_1");
    assert_eq!(call["meta"]["terminal_exit"]["exit_code"], 0);
    let patches: Vec<&Value> = of_type(&lines, "meta").iter().map(|p| &p["meta"]).collect();
    assert_eq!(patches[0]["acp_async_task_progress"]["summary"], "still running", "after the call's result");
    assert_eq!(patches[1]["acp_async_task_state"], json!({"state": "completed", "summary": "done"}));
}

#[test]
fn air_compaction_update() {
    let lines = clean("air-compaction-update.jsonl");
    assert!(of_type(&lines, "round").is_empty());
    let summary = of_type(&lines, "summary")[0];
    let compaction = &summary["acp_compactions"][0];
    assert_eq!(compaction["summary"], "The summary.");
    assert_eq!(compaction["status"], "completed", "the latest update");
    assert_eq!(compaction["_meta"]["jetbrains"]["air"]["contextCompaction"]["preTokens"], 1000);
    assert_eq!(summary["acp_compactions"].as_array().unwrap().len(), 1);
    assert_eq!(summary["last_token_usage"], 100);
}

#[test]
fn air_exit_plan_approve() {
    let lines = clean("air-exit-plan-approve.jsonl");
    let call = &of_type(&lines, "round")[0]["tool_calls"][0];
    assert_eq!(
        (&call["title"], &call["arguments"]),
        (&json!("Exited Plan Mode"), &json!(r##"{"plan": "# Plan\n1. Do it"}"##))
    );
    assert_eq!(call["meta"]["acp_permission_options"][0]["optionId"], "exit-plan-default");
    let summary = of_type(&lines, "summary")[0];
    assert_eq!(summary["acp_mode"], "default");
    assert_eq!(summary["acp_config_options"][0]["currentValue"], "default");
}

/// JetBrains Air subagents as sessions of their own: the child's rounds in
/// its session, its prompt from the parent kept, its run ended when it
/// goes idle, before the parent's.
#[test]
fn air_subagent_native_sessions() {
    let lines = clean("air-subagent-native-sessions.jsonl");
    let rounds = of_type(&lines, "round");
    assert!(rounds.iter().all(|r| r["session"] == "agent_n"), "the parent itself said nothing");
    assert_eq!(rounds[0]["message"], "Running the build.");
    assert_eq!(rounds[0]["meta"]["acp_message_ids"], json!(["msg_native_sub_1"]));
    assert_eq!(rounds[1]["tool_calls"][0]["result"], json!({"status": "failed", "content": "make: *** Error 2"}));
    let summaries = of_type(&lines, "summary");
    let sessions: Vec<&Value> = summaries.iter().map(|s| &s["session"]).collect();
    assert_eq!(sessions, [&json!("agent_n"), &json!("<session>")]);
    assert_eq!(summaries[0]["acp_parent_session"], "<session>");
    assert_eq!(summaries[0]["acp_user_message"], "Make the build pass");
    assert_eq!(summaries[0]["acp_subagent"]["title"], "Fix the build");
    assert_eq!(summaries[0]["acp_subagent_state"], "idle");
}

/// Legacy Task subagents: the child's calls stay in the child's session
/// even when an update comes under the parent's id; the Task call itself
/// was never declared in this capture, and its update says so.
#[test]
fn air_subagent_task_legacy() {
    let input = fixture("air-subagent-task-legacy.jsonl");
    let lines = replay(&input, "records");
    check_rounds(&lines).unwrap();
    check_ui_per_session(&replay(&input, "ui")).unwrap();
    let anomalies = of_type(&lines, "anomaly");
    assert_eq!(anomalies.len(), 1);
    assert_eq!((&anomalies[0]["kind"], &anomalies[0]["id"]), (&json!("unknown_tool_call"), &json!("toolu_task")));
    assert!(anomalies[0]["detail"].as_str().unwrap().contains("toolResponse"), "kept");
    let rounds = of_type(&lines, "round");
    assert!(rounds.iter().all(|r| r["session"] == "agent_1"));
    let titles: Vec<&Value> =
        rounds.iter().flat_map(|r| r["tool_calls"].as_array().unwrap().iter()).map(|c| &c["title"]).collect();
    assert_eq!(titles, [&json!("Read /x.ts"), &json!("rg parser"), &json!("Edit x.ts")]);
    let patch = of_type(&lines, "meta")[0];
    assert_eq!((&patch["session"], &patch["id"]), (&json!("agent_1"), &json!("toolu_sub_edit")));
    let child = of_type(&lines, "summary").into_iter().find(|s| s["session"] == "agent_1").unwrap();
    assert_eq!((&child["rounds"], &child["acp_subagent_state"]), (&json!(4), &json!("completed")));
    assert_eq!(child["acp_subagent"]["task"], "Find the parser");
}

/// ACP on real traffic: `--from auto` decides from the first event that some
/// format recognises, so a leading banner line does not turn an ACP
/// capture into bad lines; and when nearly every line is bad in the format
/// asked for, the command line says which format the input looks like.
#[test]
fn detection_reads_past_a_leading_line_and_names_the_format_it_looks_like() {
    let dir = std::env::temp_dir().join(format!("roundup-acp-detect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let capture = fixture("bash-foreground.jsonl");
    let mut with_banner = b"Starting claude-agent-acp v0.5...\n".to_vec();
    with_banner.extend_from_slice(&capture);
    let (plain, banner) = (dir.join("plain.jsonl"), dir.join("banner.jsonl"));
    std::fs::write(&plain, &capture).unwrap();
    std::fs::write(&banner, &with_banner).unwrap();
    let run =
        |args: &[&str], file: &Path| Command::new(env!("CARGO_BIN_EXE_roundup")).args(args).arg(file).output().unwrap();
    let records = |out: &std::process::Output| -> Vec<Value> {
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let (expected, got) = (run(&["replay"], &plain), run(&["replay"], &banner));
    assert!(got.status.success(), "{}", String::from_utf8_lossy(&got.stderr));
    let (expected, got) = (records(&expected), records(&got));
    assert_eq!(of_type(&got, "round"), of_type(&expected, "round"));
    let bad = of_type(&got, "anomaly");
    assert_eq!(bad.len(), 1);
    assert!(bad[0]["detail"].as_str().unwrap().starts_with("line 1: "), "{bad:?}");

    let wrong = run(&["replay", "--from", "uagent"], &banner);
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        stderr.contains("no line of the input could be read as uagent; it looks like acp: try --from acp"),
        "{stderr}"
    );
    assert_eq!(wrong.status.code(), Some(1));
    // Nearly every line bad (one uagent line among 17) is worth a hint too.
    let mixed = dir.join("mixed.jsonl");
    with_banner.extend_from_slice(b"{\"type\":\"text_delta\",\"text\":\"hi\",\"v\":1}\n");
    std::fs::write(&mixed, &with_banner).unwrap();
    let wrong = run(&["replay", "--from", "uagent"], &mixed);
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        stderr.contains("roundup: 16 of 17 lines of the input could not be read as uagent; it looks like acp"),
        "{stderr}"
    );
    assert_eq!(wrong.status.code(), Some(0), "some lines were read");
    std::fs::remove_dir_all(&dir).ok();
}

/// An ACP stream of about 500 MB (one prompt, 30,000 shell tools
/// with 16 KiB of terminal output each) replays in bounded memory: the
/// adapter keeps no output (it goes to the core as `tool_output`) and
/// forgets each call with its run. Release mode only (`.ci/run` runs it).
#[test]
#[ignore = "500 MB: run in release mode"]
fn a_500_mb_acp_stream_replays_in_bounded_memory() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    const CALLS: usize = 30_000;
    const LIMIT_KIB: u64 = 64 << 10;
    let (calls, whole) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (counted, complete) = (Arc::clone(&calls), Arc::clone(&whole));
    let started = std::time::Instant::now();
    let mut written = 0usize;
    let piped = roundup_testkit::pipe_through(
        env!("CARGO_BIN_EXE_roundup"),
        &["replay", "-q", "--from", "acp", "-"],
        |stdin| {
            roundup_testkit::load::acp_shell_session(CALLS, 16 << 10, |piece| {
                stdin.write_all(piece).unwrap();
                written += piece.len();
            })
        },
        move |line| {
            if line.starts_with(b"{\"type\":\"round\"") {
                let round: Value = serde_json::from_slice(line).unwrap();
                for call in round["tool_calls"].as_array().unwrap() {
                    counted.fetch_add(1, Ordering::Relaxed);
                    let length = call["result"]["content"].as_str().unwrap().len();
                    complete.fetch_add(u64::from(length == 16 << 10), Ordering::Relaxed);
                }
            }
        },
    );
    assert!(piped.status.success(), "{}", piped.stderr);
    let seconds = started.elapsed().as_secs_f64();
    let (calls, whole) = (calls.load(Ordering::Relaxed), whole.load(Ordering::Relaxed));
    assert_eq!((calls, whole), (CALLS as u64, CALLS as u64), "every call, each with its whole output");
    eprintln!(
        "{} MB of ACP through stdin: {CALLS} tool calls, peak RSS {} KiB, {:.0} MB/s (informational)",
        written / 1_000_000,
        piped.peak_kib,
        written as f64 / 1e6 / seconds
    );
    assert!(written > 500_000_000, "{written} bytes");
    assert!(piped.peak_kib < LIMIT_KIB, "peak RSS {} KiB", piped.peak_kib);
}

/// A `tool_call` for an id whose call got its result in the round still
/// open (another call of the round is pending) is, for the machine, the
/// same call again (SPEC rule 7): the adapter reads it so too. The call
/// keeps its title, arguments and first result; what the declaration says
/// is its metadata, and its second result is `duplicate_terminal` (rule
/// 10). It used to be a new call to the adapter: its `rawInput` replaced
/// the arguments of the call that had its result, and its output was
/// `unknown_tool_call`.
#[test]
fn a_tool_call_for_a_call_with_its_result_in_the_open_round_is_the_same_call() {
    let text = |t: &str| json!([{"type": "content", "content": {"type": "text", "text": t}}]);
    let input = [
        request(1, "session/prompt", json!({"sessionId": "s", "prompt": []})),
        tool("s", json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "ls", "rawInput": {"path": "."}})),
        tool("s", json!({"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "cat", "status": "pending"})),
        tool(
            "s",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "content": text("a.txt")}),
        ),
        tool(
            "s",
            json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "ls -a", "rawInput": {"all": true},
                "status": "in_progress", "content": text("partial")}),
        ),
        tool(
            "s",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "content": text("b.txt")}),
        ),
        tool(
            "s",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t2", "status": "completed", "content": text("x")}),
        ),
        response(1, json!({"stopReason": "end_turn"})),
    ];
    let lines = lines(&input);
    check_rounds(&lines).unwrap();
    let rounds = of_type(&lines, "round");
    assert_eq!((rounds.len(), &rounds[0]["closed_by"]), (1, &json!("tools_done")));
    let t1 = &rounds[0]["tool_calls"][0];
    assert_eq!(
        (&t1["id"], &t1["title"], &t1["arguments"], &t1["result"]),
        (&json!("t1"), &json!("ls"), &json!(r#"{"path":"."}"#), &json!({"status": "completed", "content": "a.txt"}))
    );
    assert_eq!((&t1["meta"]["title"], &t1["meta"]["rawInput"]), (&json!("ls -a"), &json!({"all": true})));
    assert_eq!(t1["meta"]["content"][0]["content"]["text"], "partial", "kept, not output of a call with its result");
    assert_eq!(rounds[0]["tool_calls"][1]["result"]["content"], "x");
    let anomalies: Vec<(&Value, &Value, &Value)> =
        of_type(&lines, "anomaly").iter().map(|a| (&a["kind"], &a["id"], &a["detail"])).collect();
    assert_eq!(anomalies, [(&json!("duplicate_terminal"), &json!("t1"), &json!("b.txt"))]);
    assert_eq!(moved_after_every_line(&input), whole_replay(&input), "a checkpoint keeps the open round's calls");
}

fn acp_options() -> roundup::ReplayOptions {
    roundup::ReplayOptions::new().from(roundup::adapters::InputFormat::named("acp").unwrap())
}

/// The records of a replay in one process.
fn whole_replay(input: &[String]) -> String {
    let mut replayer = roundup::Replayer::new(&acp_options()).unwrap();
    for line in input {
        replayer.feed_payload(line.as_bytes(), &mut ());
    }
    replayer.finish(&mut ());
    let mut out = Vec::new();
    replayer.take_output(&mut out);
    String::from_utf8(out).unwrap()
}

/// The records of a replay moved to a new one between every two lines,
/// through its checkpoint as JSON.
fn moved_after_every_line(input: &[String]) -> String {
    let mut replayer = roundup::Replayer::new(&acp_options()).unwrap();
    let mut out = Vec::new();
    for line in input {
        replayer.feed_payload(line.as_bytes(), &mut ());
        replayer.take_output(&mut out);
        let saved = replayer.checkpoint().unwrap().to_json();
        replayer = roundup::Replayer::new(&acp_options()).unwrap();
        replayer.restore(roundup::ReplayCheckpoint::from_json(&saved).unwrap()).unwrap();
    }
    replayer.finish(&mut ());
    replayer.take_output(&mut out);
    String::from_utf8(out).unwrap()
}

/// The adapter reads a `tool_call` by the machine's open round even for a
/// call it forgot: a prompt to a subagent session (JetBrains Air's
/// `subagent_*` sessions) releases the calls of its tree, while its
/// parent's round stays open. Once that round closed, the same id declares
/// a new call (SPEC §6).
#[test]
fn a_tool_call_is_read_by_the_machines_open_round_even_for_a_call_forgotten() {
    let text = |t: &str| json!([{"type": "content", "content": {"type": "text", "text": t}}]);
    let complete = |id: &str, t: &str| {
        tool(
            "p",
            json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "completed", "content": text(t)}),
        )
    };
    let input = [
        notification("p", json!({"sessionUpdate": "subagent_spawned", "subagentSessionId": "c", "state": "running"})),
        tool("p", json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "ls", "rawInput": {"path": "."}})),
        tool("p", json!({"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "cat"})),
        complete("t1", "a.txt"),
        request(5, "session/prompt", json!({"sessionId": "c", "prompt": []})),
        tool(
            "p",
            json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "ls -a", "rawInput": {"all": true}}),
        ),
        complete("t1", "b.txt"),
        complete("t2", "x"),
        tool(
            "p",
            json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "ls -l", "rawInput": {"long": true}}),
        ),
        complete("t1", "c.txt"),
    ];
    let lines = lines(&input);
    check_rounds(&lines).unwrap();
    let calls: Vec<(Value, Value, Value)> = of_type(&lines, "round")
        .iter()
        .filter(|r| r["session"] == "p")
        .flat_map(|r| r["tool_calls"].as_array().unwrap().clone())
        .map(|c| (c["id"].clone(), c["arguments"].clone(), c["result"]["content"].clone()))
        .collect();
    assert_eq!(
        calls,
        [
            (json!("t1"), json!(r#"{"path":"."}"#), json!("a.txt")),
            (json!("t2"), json!(""), json!("x")),
            (json!("t1"), json!(r#"{"long":true}"#), json!("c.txt"))
        ]
    );
    let anomalies: Vec<(&Value, &Value)> =
        of_type(&lines, "anomaly").iter().map(|a| (&a["kind"], &a["detail"])).collect();
    assert_eq!(anomalies, [(&json!("duplicate_terminal"), &json!("b.txt"))]);
    assert_eq!(moved_after_every_line(&input), whole_replay(&input));
}

/// The adapter's checkpoint is the same bytes for the same state (its maps
/// are written sorted): saved after every line, restored into a new
/// adapter and saved again, it is unchanged; and the rest of the stream
/// translates into the same calls either way.
#[test]
fn the_adapters_checkpoint_is_the_same_bytes_for_the_same_state() {
    use roundup::adapters::acp::AcpAdapter;
    use roundup::adapters::Adapter;
    let sub = json!({"claudeCode": {"parentToolUseId": "task"}});
    let input = [
        request(0, "initialize", json!({"protocolVersion": 1})),
        request(1, "session/prompt", json!({"sessionId": "s", "prompt": [{"type": "text", "text": "go"}]})),
        request(2, "session/prompt", json!({"sessionId": "r", "prompt": []})),
        tool("s", json!({"sessionUpdate": "tool_call", "toolCallId": "task", "title": "Task"})),
        tool("s", json!({"sessionUpdate": "tool_call", "toolCallId": "b", "title": "b"})),
        tool("r", json!({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "a"})),
        tool("s", json!({"sessionUpdate": "tool_call", "_meta": sub, "toolCallId": "c", "title": "c"})),
        request(9, "session/request_permission", json!({"sessionId": "s", "toolCall": {"toolCallId": "b"}})),
        notification("s", json!({"sessionUpdate": "async_task_spawned", "asyncTaskId": "x", "toolCallId": "b"})),
        notification("s", json!({"sessionUpdate": "async_task_spawned", "asyncTaskId": "y", "toolCallId": "task"})),
        tool("s", json!({"sessionUpdate": "tool_call_update", "toolCallId": "b", "status": "completed"})),
        response(1, json!({"stopReason": "end_turn"})),
    ];
    let record = |adapter: &mut AcpAdapter, line: &str| {
        let mut calls = Vec::new();
        let mut sink = |session: Option<&str>, call: roundup::Call<'_>| {
            calls.push(format!("{session:?} {}", serde_json::to_string(&call).unwrap()))
        };
        adapter.translate(line.as_bytes(), &mut sink).unwrap();
        calls
    };
    let mut whole = AcpAdapter::new();
    for (at, line) in input.iter().enumerate() {
        record(&mut whole, line);
        let saved = serde_json::to_vec(&whole.save().unwrap()).unwrap();
        let mut again = AcpAdapter::new();
        again.restore(serde_json::from_slice(&saved).unwrap()).unwrap();
        assert_eq!(serde_json::to_vec(&again.save().unwrap()).unwrap(), saved, "after line {at}");
        let mut expected = AcpAdapter::new();
        expected.restore(serde_json::from_slice(&saved).unwrap()).unwrap();
        for rest in &input[at + 1..] {
            assert_eq!(record(&mut again, rest), record(&mut expected, rest), "restored after line {at}");
        }
    }
}

/// Metadata nested deeper than serde_json builds values (128 levels) is
/// kept as its JSON text, never replaced by `null`.
#[test]
fn metadata_nested_too_deep_for_a_value_is_kept_as_its_text() {
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    // Written by hand: serde_json builds no value this deep either.
    let line = format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","status":"pending","_meta":{{"deep":{deep}}}}}}}}}"#
    );
    let rounds: Vec<Value> = lines(&[line]).into_iter().filter(|l| l["type"] == "round").collect();
    let call = &rounds[0]["tool_calls"][0];
    assert_eq!(call["meta"]["deep"], json!(deep), "{call}");
}

/// A prompt answered `end_turn` while a call is still open: the run ended
/// well, so the call's placeholder says `completed`, like the summary.
#[test]
fn a_call_open_at_a_normal_end_gets_a_completed_placeholder() {
    let input = [
        request(1, "session/prompt", json!({"sessionId": "s", "prompt": []})),
        tool("s", json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "ls", "status": "pending"})),
        response(1, json!({"stopReason": "end_turn"})),
    ];
    let lines = lines(&input);
    check_rounds(&lines).unwrap();
    let call = &of_type(&lines, "round")[0]["tool_calls"][0];
    assert_eq!(call["result"], json!({"status": "placeholder", "reason": "completed"}));
    assert_eq!(of_type(&lines, "summary")[0]["finish_reason"], "completed");
}

/// A `_meta` that is not an object is read with its update like any other
/// and kept whole, as sent, wherever the update is in its line.
#[test]
fn a_meta_that_is_not_an_object_is_kept_as_sent() {
    let meta_of_call = |input: &[String]| {
        let records = lines(input);
        let rounds = of_type(&records, "round");
        rounds[0]["tool_calls"][0]["meta"]["_meta"].clone()
    };
    let declared = |meta: Value| json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "ls", "_meta": meta});
    let done = json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"});
    for meta in [json!([1, {"a": "é\n"}]), json!("text"), json!(7.5), json!(true)] {
        let request = [notification("s", declared(meta.clone())), notification("s", done.clone())];
        assert_eq!(meta_of_call(&request), meta, "in a session/update request");
        let bare = [
            json!({"sessionId": "s", "update": declared(meta.clone())}).to_string(),
            json!({"sessionId": "s", "update": done}).to_string(),
        ];
        assert_eq!(meta_of_call(&bare), meta, "in a bare notification");
    }
    // A permission request's tool call, read from the request.
    let asked = json!({"jsonrpc": "2.0", "id": 3, "method": "session/request_permission",
        "params": {"sessionId": "s", "toolCall": {"toolCallId": "t", "_meta": [2]}, "options": []}});
    let input = [notification("s", declared(json!({"k": 1}))), asked.to_string(), notification("s", done)];
    assert_eq!(meta_of_call(&input), json!([2]));
}
