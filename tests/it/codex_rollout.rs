//! The Codex rollout adapter on every recorded fixture
//! (tests/fixtures/codex-rollout), and the traps of the format, each as the
//! smallest file that shows it.

use std::path::Path;

use roundup_testkit::capture::{clean_replay, of_type, options, replay_lines};
use roundup_testkit::fixture_files;
use roundup_testkit::invariants::{check_rounds, check_ui_per_session};
use serde_json::{json, Value};

const FORMAT: &str = "codex-rollout";

fn input(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex-rollout").join(name)).unwrap()
}

fn records(name: &str) -> Vec<Value> {
    clean_replay(&input(name), FORMAT, "records")
}

/// A rollout written line by line: each `(type, payload)` in an envelope.
fn rollout(lines: &[(&str, Value)]) -> Vec<Value> {
    let text: String = lines
        .iter()
        .map(|(kind, payload)| {
            json!({"timestamp": "2026-01-02T03:04:05.000Z", "type": kind, "payload": payload}).to_string() + "\n"
        })
        .collect();
    clean_replay(text.as_bytes(), FORMAT, "records")
}

/// The file's own lines, read independently of the adapter.
fn items(name: &str) -> Vec<Value> {
    String::from_utf8(input(name)).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn calls(out: &[Value]) -> Vec<&Value> {
    of_type(out, "round").into_iter().flat_map(|r| r["tool_calls"].as_array().unwrap()).collect()
}

fn kinds(out: &[Value]) -> Vec<&str> {
    of_type(out, "anomaly").iter().map(|a| a["kind"].as_str().unwrap()).collect()
}

fn user(text: &str) -> (&'static str, Value) {
    ("response_item", json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}))
}

fn assistant(text: &str) -> (&'static str, Value) {
    (
        "response_item",
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}),
    )
}

fn usage(input: u64, cached: u64, output: u64, reasoning: u64) -> Value {
    json!({"input_tokens": input, "cached_input_tokens": cached, "output_tokens": output,
           "reasoning_output_tokens": reasoning, "total_tokens": input + output})
}

fn token_count(total: Value, last: Value) -> (&'static str, Value) {
    ("event_msg", json!({"type": "token_count", "info": {"total_token_usage": total, "last_token_usage": last}}))
}

/// Every fixture: detected with no `--from`, the same output as with it,
/// rounds and UI events that keep the invariants, no bad line.
#[test]
fn every_fixture_is_detected_and_keeps_the_invariants() {
    let mut files = 0;
    for path in fixture_files("codex-rollout") {
        files += 1;
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let input = std::fs::read(&path).unwrap();
        let (named, stats) = replay_lines(&input, &options(FORMAT, "records"));
        let (auto, auto_stats) = replay_lines(&input, &options("auto", "records"));
        assert_eq!(auto_stats.format.map(|f| f.name()), Some(FORMAT), "{name}");
        assert_eq!(named, auto, "{name}");
        assert_eq!(stats.bad_lines, 0, "{name}");
        check_rounds(&named).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (ui, _) = replay_lines(&input, &options(FORMAT, "ui"));
        check_ui_per_session(&ui).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    assert_eq!(files, 5);
}

/// Codex's `exec --json` recordings stay the `codex` format's.
#[test]
fn exec_json_fixtures_stay_codex() {
    let mut files = 0;
    for path in fixture_files("codex-exec-json") {
        files += 1;
        let input = std::fs::read(&path).unwrap();
        let (_, stats) = replay_lines(&input, &options("auto", "records"));
        assert_eq!(stats.format.map(|f| f.name()), Some("codex"), "{}", path.display());
    }
    assert!(files > 0);
}

/// The 0.47 file: three prompts, three runs, one round per model request,
/// each call with its final arguments and its one result, and the usage of
/// each run counted once.
#[test]
fn pomodoro_runs_rounds_calls_and_usage() {
    let name = "ai-sessions-pomodoro-0.47.0.jsonl";
    let out = records(name);
    let lines = items(name);
    let payloads: Vec<&Value> = lines.iter().filter(|l| l["type"] == "response_item").map(|l| &l["payload"]).collect();
    let summaries = of_type(&out, "summary");
    assert_eq!(summaries.len(), 3);
    for summary in &summaries {
        assert_eq!(summary["session"], "019a085e-04c1-7f81-a09e-9555f6a1fb40");
        assert_eq!(summary["finish_reason"], "completed");
    }
    let prompts: Vec<&Value> = summaries.iter().map(|s| &s["codex_prompt"]).collect();
    assert!(prompts[0].as_str().unwrap().starts_with("Build a simple Pomodoro timer web app"));
    assert_eq!(prompts[1], "add smooth transitions between states");
    assert_eq!(prompts[2], "add a Pause/Resume feature");
    // The environment context is context, not a prompt.
    assert!(summaries[0]["codex_context"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("<environment_context>"));
    let rounds: Vec<u64> = summaries.iter().map(|s| s["rounds"].as_u64().unwrap()).collect();
    assert_eq!(rounds, [9, 3, 9], "one round per request: 21 turn_context lines");

    // Every call, in order, with its name, its arguments as sent and the
    // output paired by call_id.
    let declared: Vec<&&Value> =
        payloads.iter().filter(|p| p["type"] == "function_call" || p["type"] == "custom_tool_call").collect();
    let got = calls(&out);
    assert_eq!(got.len(), 18);
    assert_eq!(got.len(), declared.len());
    for (call, item) in got.iter().zip(&declared) {
        assert_eq!(call["id"], item["call_id"]);
        assert_eq!(call["name"], item["name"]);
        let arguments = item.get("arguments").or(item.get("input")).unwrap();
        assert_eq!(call["arguments"], *arguments);
        assert_eq!(call["result"]["status"], "completed");
    }
    // The 0.4x shell output is the JSON string `{output, metadata}`: the
    // result is its output, the metadata kept.
    let cat = got.iter().find(|c| c["id"] == "call_VZrM8BpXUXLbsmF9t2PwqUkk").unwrap();
    assert!(cat["result"]["content"].as_str().unwrap().starts_with("const WORK_DURATION = 25 * 60;\n"));
    assert_eq!(cat["meta"]["codex_output_metadata"]["exit_code"], 0);
    let failed_patch = got.iter().find(|c| c["id"] == "call_HmyR30UxhRcSEz8pnFlXVbHW").unwrap();
    assert!(failed_patch["result"]["content"].as_str().unwrap().starts_with("apply_patch verification failed"));

    // Text once: the answers as the response items say them, not doubled
    // by the agent_message events.
    let answers: Vec<&str> = payloads
        .iter()
        .filter(|p| p["type"] == "message" && p["role"] == "assistant")
        .map(|p| p["content"][0]["text"].as_str().unwrap())
        .collect();
    let messages: Vec<&str> =
        of_type(&out, "round").iter().filter_map(|r| r["message"].as_str()).filter(|m| !m.is_empty()).collect();
    assert_eq!(messages, answers);
    let thoughts: String = of_type(&out, "round").iter().filter_map(|r| r["thought"].as_str()).collect();
    let summaries_text: String = payloads
        .iter()
        .filter(|p| p["type"] == "reasoning")
        .map(|p| p["summary"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(thoughts, summaries_text);

    // Usage, by hand from the file: the cumulative total_tokens after the
    // last request of each turn is 66,732 (line 65), 97,456 (line 88) and
    // 230,731 (line 151); each run is the difference, 66,732, 30,724 and
    // 133,275, over 9, 3 and 9 requests (41 token_count events with info,
    // 20 of them repeats). Input 62,271 / 28,219 / 125,265 the same way.
    let run_total: Vec<u64> =
        summaries.iter().map(|s| s["codex_run_usage"]["total_tokens"].as_u64().unwrap()).collect();
    assert_eq!(run_total, [66_732, 30_724, 133_275]);
    let run_input: Vec<u64> =
        summaries.iter().map(|s| s["codex_run_usage"]["input_tokens"].as_u64().unwrap()).collect();
    assert_eq!(run_input, [62_271, 28_219, 125_265]);
    let requests: Vec<u64> = summaries.iter().map(|s| s["codex_requests"].as_u64().unwrap()).collect();
    assert_eq!(requests, [9, 3, 9]);
    assert_eq!(summaries[2]["codex_total_token_usage"]["total_tokens"], 230_731);
    // Summing every last_token_usage (repeats too) would give about twice.
    let naive: u64 =
        lines.iter().filter_map(|l| l["payload"]["info"]["last_token_usage"]["total_tokens"].as_u64()).sum();
    assert!(naive > 400_000, "{naive}");
    // Each round holds its own request's usage: the first request,
    // 4,990 in + 108 out (line 8), is round 0's.
    let first = &of_type(&out, "round")[0];
    assert_eq!(first["meta"]["codex_usage"]["total_tokens"], 5_098);
    assert_eq!(first["meta"]["codex_model"], "gpt-5-codex");
    // The gauge: the last request's size (line 151's last_token_usage).
    assert_eq!(summaries[2]["last_token_usage"], 19_856);
    assert!(kinds(&out).is_empty(), "{out:?}");
}

/// The exec 0.135 file: one prompt, developer and environment context, one
/// answer with its phase, `task_complete` ending the run.
#[test]
fn exec_rollout_with_context_and_task_events() {
    let out = records("agent-history-real-exec-0.135.0.jsonl");
    let rounds = of_type(&out, "round");
    assert_eq!(rounds.len(), 1);
    assert_eq!(rounds[0]["message"], "[REDACTED_ASSISTANT_TEXT]", "once, not twice");
    assert_eq!(rounds[0]["meta"]["codex_phase"], "final_answer");
    // 22,539 input (20,864 of it cached) + 10 output = 22,549: one request.
    assert_eq!(rounds[0]["meta"]["codex_usage"]["total_tokens"], 22_549);
    let summary = of_type(&out, "summary")[0];
    assert_eq!(summary["session"], "019e9625-802f-7e91-840a-cfe88d14117a");
    assert_eq!(summary["finish_reason"], "completed");
    assert_eq!(summary["codex_prompt"], "[REDACTED_PROMPT]");
    assert_eq!(summary["codex_turn_id"], "019e9625-806b-7343-9798-a7ca2de29a04");
    assert_eq!(summary["codex_run_usage"]["total_tokens"], 22_549);
    assert_eq!(summary["codex_run_usage"]["cached_input_tokens"], 20_864);
    assert_eq!(summary["last_token_usage"], 22_549);
    let context = summary["codex_context"].as_array().unwrap();
    assert_eq!(context.len(), 2, "the developer message and the environment");
    assert_eq!(context[0]["role"], "developer");
    assert!(kinds(&out).is_empty());
}

/// Function call, custom tool with a content-item list output, an MCP
/// name, and an unknown record kind kept.
#[test]
fn structured_outputs_and_an_unknown_record() {
    let out = records("claude-code-log-structured-constructed.jsonl");
    let got = calls(&out);
    let summary: Vec<(&str, &str, &str, &str)> = got
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap(),
                c["name"].as_str().unwrap(),
                c["arguments"].as_str().unwrap(),
                c["result"]["content"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "call-structured-001",
                "exec_command",
                r#"{"cmd":"find . -maxdepth 1 -type f"}"#,
                "./alpha.txt\n./beta.txt"
            ),
            (
                "call-custom-001",
                "apply_patch",
                "*** Begin Patch\n*** Add File: gamma.txt\n+synthetic\n*** End Patch",
                "Done!"
            ),
            ("call-mcp-001", "mcp__synthetic__lookup", r#"{"query":"fixture"}"#, r#"{"status":"ok"}"#),
        ]
    );
    let rounds = of_type(&out, "round");
    assert_eq!(rounds[0]["thought"], "I will inspect the synthetic directory.");
    assert_eq!(rounds[0]["meta"]["codex_encrypted_reasoning"], json!(["SYNTHETIC_ENCRYPTED_CONTENT_MUST_NOT_RENDER"]));
    assert_eq!(rounds.last().unwrap()["message"], "The synthetic files are alpha.txt and beta.txt.");
    let anomalies = of_type(&out, "anomaly");
    assert_eq!(anomalies.len(), 1);
    assert_eq!(anomalies[0]["kind"], "unknown_event");
    assert!(anomalies[0]["detail"]
        .as_str()
        .unwrap()
        .contains(r#""type":"future_synthetic_record","payload":{"safe":"ignored"}"#));
    let summary = of_type(&out, "summary")[0];
    assert_eq!(summary["session"], "11111111-1111-4111-8111-111111111111");
    assert_eq!(summary["codex_prompt"], "List the synthetic files.");
    assert_eq!(summary["finish_reason"], "completed");
}

/// Usage alone, no content: counted in a run of its own. By hand: the
/// totals move 0 → 1,200 → 4,200, so two requests of 1,200 and 3,000.
#[test]
fn token_counts_alone_sum_to_the_cumulative_total() {
    let out = records("ccusage-token_count-only-constructed.jsonl");
    let summary = of_type(&out, "summary")[0];
    assert_eq!(
        summary["codex_run_usage"],
        json!({"input_tokens": 3_500, "cached_input_tokens": 750,
        "output_tokens": 425, "reasoning_output_tokens": 275, "total_tokens": 4_200})
    );
    assert_eq!(summary["codex_requests"], 2);
    assert_eq!(summary["last_token_usage"], 3_000);
    assert_eq!(summary["codex_model"], "gpt-5.3-codex", "the model info names, not the turn_context's");
}

/// The schema-coverage file: several session_meta lines (the first names
/// the session), hosted tools, an aborted turn, a failed task, compactions
/// kept.
#[test]
fn newer_record_kinds() {
    let out = records("agent-sessions-stage0-small-constructed.jsonl");
    let summaries = of_type(&out, "summary");
    assert!(summaries.iter().all(|s| s["session"] == "019fc8be-3658-7ca3-9e29-000000000000"));
    assert_eq!(summaries[0]["finish_reason"], "canceled");
    assert_eq!(summaries[0]["codex_abort_reason"], "interrupted");
    assert_eq!(summaries[0]["codex_prompt"], "List the files");
    assert_eq!(summaries[2]["finish_reason"], "failed");
    let first: Vec<(&str, &str)> = of_type(&out, "round")[0]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["name"].as_str().unwrap()))
        .collect();
    assert_eq!(first, [("call-1", "shell"), ("call-2", "shell"), ("call-3", "tool_search"), ("ws-1", "web_search")]);
    let compacted: usize = summaries.iter().filter_map(|s| s["codex_compacted"].as_array()).map(Vec::len).sum();
    assert!(compacted >= 6, "{compacted}");
    assert!(kinds(&out).contains(&"unknown_event"));
}

/// The trap: content in response_item and again in event_msg.
#[test]
fn event_messages_do_not_double_the_text() {
    let out = rollout(&[
        ("event_msg", json!({"type": "user_message", "message": "Hi"})),
        user("Hi"),
        ("event_msg", json!({"type": "agent_reasoning", "text": "Think"})),
        ("response_item", json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "Think"}]})),
        ("event_msg", json!({"type": "agent_message", "message": "Hello"})),
        assistant("Hello"),
    ]);
    let round = of_type(&out, "round")[0];
    assert_eq!((round["message"].as_str(), round["thought"].as_str()), (Some("Hello"), Some("Think")));
}

/// The trap: token_count re-emitted with an unchanged total counts once;
/// `info: null` counts nothing; the subsets are not added again.
#[test]
fn repeated_token_counts_count_once() {
    let one = usage(100, 40, 20, 5);
    let out = rollout(&[
        user("Hi"),
        ("event_msg", json!({"type": "token_count", "info": null, "rate_limits": {"primary": null}})),
        token_count(one.clone(), one.clone()),
        token_count(one.clone(), one.clone()),
        assistant("Hello"),
    ]);
    let summary = of_type(&out, "summary")[0];
    assert_eq!(summary["codex_run_usage"]["total_tokens"], 120, "100 in + 20 out, once");
    assert_eq!(summary["codex_run_usage"]["cached_input_tokens"], 40);
    assert_eq!(summary["codex_requests"], 1);
    assert_eq!(summary["last_token_usage"], 120);
}

/// A total that moves without a `last_token_usage`: the request is the
/// difference.
#[test]
fn a_request_without_its_own_figures_is_the_difference_of_totals() {
    let out = rollout(&[
        user("Hi"),
        ("event_msg", json!({"type": "token_count", "info": {"total_token_usage": usage(100, 0, 10, 0)}})),
        ("event_msg", json!({"type": "token_count", "info": {"total_token_usage": usage(250, 90, 30, 0)}})),
        assistant("Hello"),
    ]);
    let summary = of_type(&out, "summary")[0];
    assert_eq!(summary["codex_run_usage"]["total_tokens"], 280);
    assert_eq!(summary["last_token_usage"], 170);
}

/// Environment context and developer messages are not prompts: one run.
#[test]
fn context_is_not_a_prompt() {
    let out = rollout(&[
        (
            "response_item",
            json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Rules"}]}),
        ),
        user("<environment_context>\n  <cwd>/tmp</cwd>\n</environment_context>"),
        user("Do it"),
        assistant("Done"),
    ]);
    let summaries = of_type(&out, "summary");
    assert_eq!(summaries.len(), 1);
    assert_eq!(summaries[0]["codex_prompt"], "Do it");
    assert_eq!(summaries[0]["codex_context"].as_array().unwrap().len(), 2);
    assert_eq!(summaries[0]["finish_reason"], "completed");
}

/// Arguments as a JSON string, raw custom input, and outputs as a string,
/// a wrapped shell output with a failing exit code, and content items.
#[test]
fn argument_and_output_shapes() {
    let out = rollout(&[
        user("Go"),
        (
            "response_item",
            json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"false\"]}", "call_id": "a"}),
        ),
        (
            "response_item",
            json!({"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch", "call_id": "b"}),
        ),
        (
            "response_item",
            json!({"type": "function_call_output", "call_id": "a",
            "output": "{\"output\":\"boom\",\"metadata\":{\"exit_code\":1,\"duration_seconds\":0.1}}"}),
        ),
        (
            "response_item",
            json!({"type": "custom_tool_call_output", "call_id": "b",
            "output": [{"type": "input_text", "text": "one"}, {"type": "input_text", "text": "two"}]}),
        ),
    ]);
    let got = calls(&out);
    assert_eq!(got[0]["arguments"], r#"{"command":["false"]}"#);
    assert_eq!(got[0]["result"], json!({"status": "failed", "content": "boom"}));
    assert_eq!(got[1]["arguments"], "*** Begin Patch");
    assert_eq!(got[1]["result"]["content"], "one\n\ntwo");
    assert_eq!(of_type(&out, "round").len(), 1, "both calls in one request");
}

/// `turn_aborted` cancels the run; its call without output gets the
/// cancel placeholder.
#[test]
fn an_aborted_turn_is_canceled() {
    let out = rollout(&[
        user("Go"),
        ("response_item", json!({"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "a"})),
        ("event_msg", json!({"type": "turn_aborted", "reason": "interrupted"})),
        user("Again"),
        assistant("Ok"),
    ]);
    let summaries = of_type(&out, "summary");
    assert_eq!(summaries[0]["finish_reason"], "canceled");
    assert_eq!(calls(&out)[0]["result"], json!({"status": "placeholder", "reason": "canceled"}));
    assert_eq!(summaries[1]["codex_prompt"], "Again");
    assert!(kinds(&out).is_empty(), "{out:?}");
}

/// A compaction is kept with its run, and the rounds before it stand.
#[test]
fn compaction_keeps_the_rounds_before_it() {
    let out = rollout(&[
        user("Go"),
        assistant("First"),
        ("compacted", json!({"message": "summary", "replacement_history": []})),
        ("event_msg", json!({"type": "context_compacted"})),
        assistant("Second"),
    ]);
    let rounds = of_type(&out, "round");
    assert_eq!(rounds[0]["message"], "First\n\nSecond");
    let summary = of_type(&out, "summary")[0];
    assert_eq!(summary["codex_compacted"][0]["message"], "summary");
}

/// Several session_meta lines: the first names the session, all are kept.
#[test]
fn the_first_session_meta_names_the_session() {
    let out = rollout(&[
        ("session_meta", json!({"id": "s1", "cwd": "/a"})),
        ("session_meta", json!({"id": "parent", "cwd": "/b"})),
        user("Go"),
        assistant("Ok"),
    ]);
    let summary = of_type(&out, "summary")[0];
    assert_eq!(summary["session"], "s1");
    assert_eq!(summary["codex_session_meta"].as_array().unwrap().len(), 2);
}

/// An unknown record kind, and an unknown event_msg, are kept whole.
#[test]
fn unknown_kinds_are_kept() {
    let out = rollout(&[
        user("Go"),
        ("brand_new_record", json!({"x": 1})),
        ("event_msg", json!({"type": "brand_new_event", "y": 2})),
        assistant("Ok"),
    ]);
    let anomalies = of_type(&out, "anomaly");
    assert_eq!(kinds(&out), ["unknown_event", "unknown_event"]);
    assert!(anomalies[0]["detail"].as_str().unwrap().contains(r#""payload":{"x":1}"#));
    assert!(anomalies[1]["detail"].as_str().unwrap().contains("brand_new_event"));
    assert_eq!(of_type(&out, "round")[0]["message"], "Ok");
}

/// Lines that are not JSON are bad lines, never a panic, and the rest is
/// read.
#[test]
fn a_broken_line_is_reported_and_skipped() {
    let text = "{\"timestamp\":\"x\",\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":\"Go\"}}\nnot json\n{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Ok\"}]}}\n";
    let (out, stats) = replay_lines(text.as_bytes(), &options(FORMAT, "records"));
    assert_eq!(stats.bad_lines, 1);
    assert_eq!(of_type(&out, "round")[0]["message"], "Ok");
    assert_eq!(of_type(&out, "summary")[0]["codex_prompt"], "Go");
}

/// A run's lists (compactions, context messages) hold every item in order,
/// whether the run ends with `task_complete` or at the end of input, and
/// keep the place their first item gave them among the run's metadata.
#[test]
fn a_runs_lists_hold_every_item_however_the_run_ends() {
    let compacted = |message: &str| ("compacted", json!({"message": message}));
    let context = |text: &str| {
        (
            "response_item",
            json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": text}]}),
        )
    };
    let out = rollout(&[
        ("session_meta", json!({"id": "s"})),
        user("one"),
        compacted("c1"),
        context("x1"),
        compacted("c2"),
        context("x2"),
        compacted("c3"),
        assistant("done"),
        ("event_msg", json!({"type": "task_complete"})),
        user("two"),
        compacted("c4"),
        compacted("c5"),
    ]);
    let summaries = of_type(&out, "summary");
    assert_eq!(summaries.len(), 2);
    let messages = |s: &Value, key: &str, field: &str| -> Vec<Value> {
        s[key].as_array().unwrap().iter().map(|i| i[field].clone()).collect()
    };
    assert_eq!(summaries[0]["finish_reason"], "completed");
    assert_eq!(messages(summaries[0], "codex_compacted", "message"), [json!("c1"), json!("c2"), json!("c3")]);
    assert_eq!(summaries[0]["codex_context"].as_array().unwrap().len(), 2);
    let keys: Vec<&String> = summaries[0].as_object().unwrap().keys().collect();
    let place = |key: &str| keys.iter().position(|k| *k == key).unwrap();
    assert!(place("codex_prompt") < place("codex_compacted") && place("codex_compacted") < place("codex_context"));
    assert_eq!(summaries[1]["finish_reason"], "interrupted");
    assert_eq!(messages(summaries[1], "codex_compacted", "message"), [json!("c4"), json!("c5")]);
    assert!(summaries[1].get("codex_context").is_none());
}
