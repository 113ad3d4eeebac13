//! The Claude Code transcript adapter on every fixture of
//! tests/fixtures/claude-transcript (session logs as Claude Code wrote
//! them), and each trap of the format as the smallest input that shows it.
//!
//! Expected token totals are worked out by hand from the files: for each
//! API message (`message.id` + `requestId`) the usage of its line with the
//! largest `output_tokens`, then input, output, cache reads and cache
//! writes summed over a run's messages. The per-message outputs are in the
//! comments beside each total.

use std::path::{Path, PathBuf};

use roundup_testkit::capture::{clean_replay, of_type, options, replay_lines};
use roundup_testkit::fixture_files;
use roundup_testkit::invariants::{check_rounds, check_ui_per_session};
use serde_json::{json, Value};

const FORMAT: &str = "claude-transcript";

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-transcript")
}

fn input(name: &str) -> Vec<u8> {
    std::fs::read(folder().join(name)).unwrap()
}

fn records(name: &str) -> Vec<Value> {
    clean_replay(&input(name), FORMAT, "records")
}

/// The records of hand-written lines, each line's `uuid`s made its own (the
/// line's position before them), as Claude Code's are: a `uuid` seen again
/// in a session is a line applied once.
fn lines(lines: &[&str]) -> Vec<Value> {
    let lines: Vec<String> =
        lines.iter().enumerate().map(|(at, line)| line.replace(r#""uuid":""#, &format!(r#""uuid":"{at}-"#))).collect();
    clean_replay(lines.join("\n").as_bytes(), FORMAT, "records")
}

fn rounds(out: &[Value]) -> Vec<&Value> {
    of_type(out, "round")
}

/// The summaries of one session, run by run.
fn summaries<'a>(out: &'a [Value], session: &str) -> Vec<&'a Value> {
    of_type(out, "summary").into_iter().filter(|s| s["session"] == session).collect()
}

/// (name, status) of each call of a round.
fn calls(round: &Value) -> Vec<(String, String)> {
    round["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap().to_owned(), c["result"]["status"].as_str().unwrap().to_owned()))
        .collect()
}

/// The records of a file: each line, and the subagent message a progress
/// line embeds.
fn records_of(name: &str) -> Vec<Value> {
    let text = String::from_utf8(input(name)).unwrap();
    let mut all = Vec::new();
    for line in text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()) {
        if line["data"]["message"].is_object() {
            all.push(line["data"]["message"].clone());
        }
        all.push(line);
    }
    all
}

/// Read from the file independently of the adapter: the text and thinking
/// of one API message's lines, their tool_use ids in order, and for each
/// id its arguments as written and its tool_result (text, error).
struct Message {
    text: String,
    thinking: String,
    tools: Vec<(String, String)>,
}

fn message(name: &str, id: &str) -> Message {
    let mut m = Message { text: String::new(), thinking: String::new(), tools: Vec::new() };
    for line in records_of(name) {
        if line["type"] != "assistant" || line["message"]["id"] != id {
            continue;
        }
        for block in line["message"]["content"].as_array().unwrap() {
            match block["type"].as_str().unwrap() {
                "text" => m.text.push_str(block["text"].as_str().unwrap()),
                "thinking" => m.thinking.push_str(block["thinking"].as_str().unwrap()),
                "tool_use" => m.tools.push((block["id"].as_str().unwrap().into(), block["input"].to_string())),
                other => panic!("{other}"),
            }
        }
    }
    m
}

/// The tool_result of `id` in the file: its content as text and whether it
/// is an error.
fn result_of(name: &str, id: &str) -> (String, bool) {
    for line in records_of(name) {
        let Some(blocks) = line["message"]["content"].as_array() else { continue };
        if let Some(block) = blocks.iter().find(|b| b["type"] == "tool_result" && b["tool_use_id"] == id) {
            let content = match &block["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts.iter().map(|p| p["text"].as_str().unwrap()).collect::<Vec<_>>().join("\n"),
                other => other.to_string(),
            };
            return (content, block["is_error"] == true);
        }
    }
    panic!("no result for {id}")
}

/// Every round of a fixture checked against the file: its message's text,
/// thinking, calls with final arguments (the same JSON value) and results.
fn check_against_file(name: &str, out: &[Value]) {
    for round in rounds(out) {
        let ids = round["meta"]["claude_message_ids"].as_array().unwrap();
        assert_eq!(ids.len(), 1, "{name}: one API message a round");
        let m = message(name, ids[0].as_str().unwrap());
        assert_eq!(round["message"].as_str().unwrap_or(""), m.text, "{name}");
        assert_eq!(round["thought"].as_str().unwrap_or(""), m.thinking, "{name}");
        let got = round["tool_calls"].as_array().unwrap();
        assert_eq!(got.len(), m.tools.len(), "{name}: {}", ids[0]);
        for (call, (id, args)) in got.iter().zip(&m.tools) {
            assert_eq!(call["id"], id.as_str());
            let parsed: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
            assert_eq!(parsed, serde_json::from_str::<Value>(args).unwrap(), "{name}: {id}");
            let (content, failed) = result_of(name, id);
            let status = if failed { "failed" } else { "completed" };
            assert_eq!(call["result"], json!({"status": status, "content": content}), "{name}: {id}");
        }
    }
}

#[test]
fn every_fixture_is_detected_keeps_the_invariants_and_its_file() {
    let mut files = 0;
    for path in fixture_files("claude-transcript") {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        files += 1;
        let input = input(&name);
        let (named, stats) = replay_lines(&input, &options(FORMAT, "records"));
        let (auto, auto_stats) = replay_lines(&input, &options("auto", "records"));
        assert_eq!(stats.bad_lines, 0, "{name}");
        assert_eq!(auto_stats.format.map(|f| f.name()), Some(FORMAT), "{name}");
        assert_eq!(named, auto, "{name}");
        check_rounds(&named).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (ui, _) = replay_lines(&input, &options(FORMAT, "ui"));
        check_ui_per_session(&ui).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(of_type(&named, "anomaly").is_empty(), "{name}: {:?}", of_type(&named, "anomaly"));
        check_against_file(&name, &named);
    }
    assert_eq!(files, 9);
}

#[test]
fn spotter_short_five_lines_one_round_rejected_and_canceled() {
    let name = "spotter-short-2.1.38.jsonl";
    let out = records(name);
    let rounds = rounds(&out);
    assert_eq!(rounds.len(), 1, "five assistant lines of one message");
    let round = rounds[0];
    // The whitespace-only text block, then the text after the thinking.
    assert!(round["message"].as_str().unwrap().starts_with("\n\nLet me check the project structure"));
    assert!(!round["thought"].as_str().unwrap().is_empty());
    assert_eq!(calls(round), [("Bash".into(), "failed".into()), ("Glob".into(), "failed".into())]);
    assert_eq!(round["tool_calls"][0]["result"]["content"], "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.");
    let summary = summaries(&out, "55604662-cf2a-4331-851a-ec234028f8ca");
    assert_eq!(summary.len(), 1);
    assert_eq!(summary[0]["finish_reason"], "canceled");
    // All five lines say output 13 (never final): 3 + 13 + 11515 + 13835.
    assert_eq!(summary[0]["last_token_usage"], 25366);
    assert_eq!(
        summary[0]["claude_usage"],
        json!({"input_tokens": 3, "output_tokens": 13, "cache_read_input_tokens": 11515,
               "cache_creation_input_tokens": 13835, "api_messages": 1})
    );
    assert_eq!(summary[0]["claude_prompt"], "mix phx.server doesnt seem to start");
    assert_eq!(
        summary[0]["claude_events"],
        json!({"file-history-snapshot": 1, "progress/hook_progress": 3, "system/local_command": 2})
    );
}

#[test]
fn spotter_tool_heavy_a_result_between_two_blocks_of_one_message() {
    let name = "spotter-tool_heavy-2.1.38.jsonl";
    let out = records(name);
    let runs = summaries(&out, "d6e0bada-1959-4eec-a9d2-0bfade768d8f");
    assert_eq!(runs.len(), 2, "the /mcp local command is no prompt");
    assert_eq!((&runs[0]["finish_reason"], &runs[1]["finish_reason"]), (&json!("canceled"), &json!("canceled")));
    let rounds = rounds(&out);
    assert_eq!(rounds.len(), 4);
    assert_eq!(calls(rounds[2]), [("WebSearch".into(), "completed".into()), ("Glob".into(), "completed".into())]);
    // msg_019BN3FRqb7NU4DgBN5jdsym: Read, its result, then WebFetch.
    assert_eq!(rounds[3]["meta"]["claude_message_ids"], json!(["msg_019BN3FRqb7NU4DgBN5jdsym"]));
    assert_eq!(calls(rounds[3]), [("Read".into(), "completed".into()), ("WebFetch".into(), "completed".into())]);
    assert_eq!(rounds[3]["closed_by"], "tools_done");
    assert_eq!(rounds[3]["meta"]["claude_usage"]["output_tokens"], 173, "the last line's 173, not the first's 25");
    // Run 1: msg_01LbyjvsALGe2gMsTgDSj7e6 (in 3, out 11, read 18014, write
    // 8490) and msg_019BN3FRqb7NU4DgBN5jdsym (in 47, out 173, read 26504,
    // write 1115).
    assert_eq!(
        runs[1]["claude_usage"],
        json!({"input_tokens": 50, "output_tokens": 184, "cache_read_input_tokens": 44518,
               "cache_creation_input_tokens": 9605, "api_messages": 2})
    );
    assert_eq!(runs[1]["last_token_usage"], 47 + 173 + 26504 + 1115);
    // Run 0: out 27 and 1; the interrupt, the caveat, /mcp and its output
    // stay with it.
    assert_eq!(runs[0]["claude_usage"]["output_tokens"], 28);
    let side = runs[0]["claude_user_lines"].as_array().unwrap();
    assert_eq!(side.len(), 4);
    assert!(side[2].as_str().unwrap().starts_with("<command-name>/mcp</command-name>"));
    assert_eq!(runs[0]["claude_events"]["queue-operation"], 2);
    assert!(runs[1]["claude_prompt"].as_str().unwrap().starts_with("scrolling back in xterm.js"));
}

#[test]
fn sniffly_rejections_interrupt_continue_and_a_summary_of_another_file() {
    let out = records("sniffly-fed8ce56-1.0.17.jsonl");
    let runs = summaries(&out, "fed8ce56-bc79-401f-a83e-af084253362f");
    assert_eq!(runs.len(), 2);
    assert_eq!((&runs[0]["finish_reason"], &runs[1]["finish_reason"]), (&json!("canceled"), &json!("completed")));
    assert_eq!(runs[1]["claude_prompt"], "continue");
    // The summary line names no session: counted in the file's session.
    assert_eq!(runs[0]["claude_events"], json!({"summary": 1}));
    let rounds = rounds(&out);
    assert_eq!(rounds.len(), 4);
    assert_eq!(
        calls(rounds[1]),
        [("Bash".into(), "completed".into()), ("Bash".into(), "failed".into()), ("Bash".into(), "failed".into())]
    );
    // Outputs: run 0 3 + 1; run 1 max(1, 273) + 1 (keeping the first line
    // of msg_01WX61CfSu8G2G7SBbXQriTM would give 2).
    assert_eq!(runs[0]["claude_usage"]["output_tokens"], 4);
    assert_eq!(runs[1]["claude_usage"]["output_tokens"], 274);
    assert_eq!(runs[1]["claude_usage"]["input_tokens"], 4 + 8);
}

#[test]
fn a_summary_only_file_has_no_round() {
    let out = records("sniffly-ff71dbed-summary-only.jsonl");
    assert!(rounds(&out).is_empty());
    let summary = of_type(&out, "summary");
    assert_eq!(summary.len(), 1);
    assert_eq!(summary[0]["claude_events"], json!({"summary": 1}));
    assert_eq!(summary[0]["last_token_usage"], Value::Null);
}

#[test]
fn ccviewer_init_parallel_calls_out_of_order() {
    let out = records("ccviewer-1af7fc5e-1.0.98.jsonl");
    let runs = summaries(&out, "1af7fc5e-8455-4414-9ccd-011d40f70b2a");
    assert_eq!(runs.len(), 1);
    assert!(runs[0]["claude_prompt"].as_str().unwrap().starts_with("<command-message>init is analyzing"));
    assert_eq!(runs[0]["claude_user_lines"].as_array().unwrap().len(), 1, "the isMeta expansion");
    assert_eq!(runs[0]["finish_reason"], "completed");
    let rounds = rounds(&out);
    assert_eq!(rounds.len(), 7);
    assert_eq!(rounds[1]["tool_calls"].as_array().unwrap().len(), 5);
    assert_eq!(rounds[1]["closed_by"], "tools_done");
    assert_eq!(calls(rounds[4]), [("Write".into(), "failed".into())]);
    // Outputs per message: 322, 285, 146, 41, 1, 86, 72.
    assert_eq!(runs[0]["claude_usage"]["output_tokens"], 953);
    assert_eq!(runs[0]["claude_usage"]["api_messages"], 7);
}

#[test]
fn pomodoro_three_prompts_and_a_shell_exchange() {
    let out = records("ai-sessions-pomodoro-2.0.24.jsonl");
    let runs = summaries(&out, "36d9e1bc-63bf-4e97-8a3e-2b20ba8583f2");
    assert_eq!(runs.len(), 3, "the ! shell lines are no prompt");
    let counts: Vec<(u64, u64)> = runs
        .iter()
        .map(|r| (r["rounds"].as_u64().unwrap(), r["claude_usage"]["api_messages"].as_u64().unwrap()))
        .collect();
    assert_eq!(counts, [(9, 9), (16, 16), (15, 15)], "40 API messages, one round each");
    assert!(runs.iter().all(|r| r["finish_reason"] == "completed"));
    assert_eq!(runs[2]["claude_user_lines"].as_array().unwrap().len(), 3);
    assert!(runs[2]["claude_user_lines"][1].as_str().unwrap().starts_with("<bash-input>"));
    // Run 1's first message: thinking line output 2, tool_use line 213.
    let first = rounds(&out).into_iter().find(|r| r["run"] == 1).unwrap();
    assert_eq!(first["meta"]["claude_usage"]["output_tokens"], 213);
    // Output per message, run 1: 213 97 2 261 215 178 356 170 125 680 406
    // 464 371 455 208 359.
    assert_eq!(runs[1]["claude_usage"]["output_tokens"], 4560);
    // Run 0: 339 265 404 244 1184 244 1302 242 328; run 2: 386 94 271 199
    // 274 2 391 197 340 2 341 194 368 189 340.
    assert_eq!(runs[0]["claude_usage"]["output_tokens"], 4552);
    assert_eq!(runs[2]["claude_usage"]["output_tokens"], 3588);
}

#[test]
fn task_subagent_is_a_session_of_its_own() {
    let out = records("spotter-task-agent_progress-2.1.38.jsonl");
    let parent = "491e126e-1e71-469c-ade2-fcc8af567c74";
    let child = format!("{parent}/agent-afb92ff");
    let runs = summaries(&out, parent);
    assert_eq!(runs.len(), 2);
    assert_eq!((&runs[0]["finish_reason"], &runs[1]["finish_reason"]), (&json!("canceled"), &json!("completed")));
    // Outputs: 10 8 25 8 472 589 1 22; inputs 2 1562 1 1 1 1 1 1. The Task
    // result's usage (output 3130) and the subagent's are not the parent's.
    assert_eq!(runs[0]["claude_usage"]["output_tokens"], 1135);
    assert_eq!(runs[0]["claude_usage"]["input_tokens"], 1570);
    let task = rounds(&out)
        .into_iter()
        .flat_map(|r| r["tool_calls"].as_array().unwrap())
        .find(|c| c["name"] == "Task")
        .unwrap();
    assert_eq!(task["meta"]["claude_subagent_session"], child.as_str());
    assert_eq!(task["meta"]["claude_subagent"]["totalTokens"], 33894);
    assert!(task["result"]["content"].as_str().unwrap().starts_with("Excellent! Now I have all the information"));
    let sub = summaries(&out, &child);
    assert_eq!(sub.len(), 1);
    assert_eq!(sub[0]["finish_reason"], "completed");
    assert_eq!(sub[0]["claude_parent"], json!({"session": parent, "tool_call": "toolu_01Cz2Pnv7qNcnK1ZiocxWhQX"}));
    // Five subagent messages, each split over lines with results between.
    assert_eq!((&sub[0]["rounds"], &sub[0]["tool_calls"]), (&json!(5), &json!(9)));
    let sub_rounds: Vec<&Value> = rounds(&out).into_iter().filter(|r| r["session"] == child.as_str()).collect();
    assert_eq!(sub_rounds[0]["tool_calls"].as_array().unwrap().len(), 3);
    assert!(sub[0]["claude_prompt"][0]["text"].as_str().unwrap().starts_with("Draft bead content"));
}

#[test]
fn usage_only_lines_with_cost() {
    let out = records("ccusage-costUSD-constructed.jsonl");
    assert!(rounds(&out).is_empty());
    let summary = summaries(&out, "session-alpha");
    // Three messages: input 100 200 300, output 50 75 125, writes 25 50 0,
    // reads 10 20 40; cost 0.12 + 0.34 + 0.56.
    assert_eq!(
        summary[0]["claude_usage"],
        json!({"input_tokens": 600, "output_tokens": 250, "cache_read_input_tokens": 70,
               "cache_creation_input_tokens": 75, "api_messages": 3})
    );
    assert!((summary[0]["claude_cost_usd"].as_f64().unwrap() - 1.02).abs() < 1e-9);
    assert_eq!(summary[0]["last_token_usage"], 300 + 125 + 40);
}

// The traps, each as the smallest input.

const PROMPT: &str = r#"{"type":"user","sessionId":"s","uuid":"u0","message":{"role":"user","content":"go"}}"#;

fn assistant(id: &str, block: &str, output: u64) -> String {
    format!(
        r#"{{"type":"assistant","sessionId":"s","uuid":"a","requestId":"r-{id}","message":{{"id":"{id}","model":"m","content":[{block}],"usage":{{"input_tokens":10,"output_tokens":{output},"cache_read_input_tokens":100,"cache_creation_input_tokens":1000}}}}}}"#
    )
}

fn tool_use(id: &str) -> String {
    format!(r#"{{"type":"tool_use","id":"{id}","name":"Bash","input":{{"command":"{id}"}}}}"#)
}

fn result(id: &str, error: bool) -> String {
    format!(
        r#"{{"type":"user","sessionId":"s","uuid":"r","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"out {id}","is_error":{error}}}]}}}}"#
    )
}

const TEXT: &str = r#"{"type":"text","text":"Hi"}"#;

#[test]
fn output_tokens_keep_the_largest_line_never_the_sum_nor_the_first() {
    let out = lines(&[
        PROMPT,
        &assistant("m1", TEXT, 2),
        &assistant("m1", &tool_use("t1"), 213),
        &assistant("m1", TEXT, 5),
        &result("t1", false),
    ]);
    let summary = summaries(&out, "s")[0];
    assert_eq!(summary["claude_usage"]["output_tokens"], 213);
    assert_eq!(summary["claude_usage"]["api_messages"], 1);
    assert_eq!(summary["last_token_usage"], 10 + 213 + 100 + 1000);
    assert_eq!(rounds(&out)[0]["message"], "HiHi");
}

#[test]
fn a_result_between_blocks_of_one_message_waits_for_its_round() {
    let out = lines(&[
        PROMPT,
        &assistant("m1", &tool_use("t1"), 1),
        r#"{"type":"progress","sessionId":"s","uuid":"p","data":{"type":"hook_progress"}}"#,
        &result("t1", false),
        &assistant("m1", &tool_use("t2"), 9),
        &result("t2", true),
        &assistant("m2", TEXT, 3),
    ]);
    let rounds = rounds(&out);
    assert_eq!(rounds.len(), 2);
    assert_eq!(calls(rounds[0]), [("Bash".into(), "completed".into()), ("Bash".into(), "failed".into())]);
    assert_eq!(rounds[0]["tool_calls"][1]["result"]["content"], "out t2");
    assert_eq!(rounds[0]["tool_calls"][0]["arguments"], r#"{"command":"t1"}"#);
    assert_eq!(summaries(&out, "s")[0]["claude_events"], json!({"progress/hook_progress": 1}));
}

#[test]
fn results_pair_by_id_in_any_order() {
    let both = format!("{},{}", tool_use("t1"), tool_use("t2"));
    let out = lines(&[PROMPT, &assistant("m1", &both, 1), &result("t2", false), &result("t1", true)]);
    let round = rounds(&out)[0];
    assert_eq!(round["tool_calls"][0]["result"], json!({"status": "failed", "content": "out t1"}));
    assert_eq!(round["tool_calls"][1]["result"], json!({"status": "completed", "content": "out t2"}));
}

#[test]
fn a_text_after_a_call_in_one_message_stays_in_its_round() {
    let out = lines(&[PROMPT, &assistant("m1", &tool_use("t1"), 1), &assistant("m1", TEXT, 2), &result("t1", false)]);
    let rounds = rounds(&out);
    assert_eq!(rounds.len(), 1);
    assert_eq!((&rounds[0]["message"], &rounds[0]["closed_by"]), (&json!("Hi"), &json!("tools_done")));
}

#[test]
fn an_interrupt_cancels_the_run_and_its_unanswered_call() {
    let interrupt = r#"{"type":"user","sessionId":"s","uuid":"i","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]}}"#;
    let out = lines(&[PROMPT, &assistant("m1", &tool_use("t1"), 1), interrupt, PROMPT, &assistant("m2", TEXT, 1)]);
    let runs = summaries(&out, "s");
    assert_eq!(runs.len(), 2);
    assert_eq!((&runs[0]["finish_reason"], &runs[1]["finish_reason"]), (&json!("canceled"), &json!("completed")));
    assert_eq!(rounds(&out)[0]["tool_calls"][0]["result"], json!({"status": "placeholder", "reason": "canceled"}));
}

#[test]
fn lines_that_are_not_prompts_begin_no_run() {
    let meta = r#"{"type":"user","sessionId":"s","uuid":"c","isMeta":true,"message":{"role":"user","content":"<local-command-caveat>Caveat</local-command-caveat>"}}"#;
    let local = r#"{"type":"user","sessionId":"s","uuid":"l","message":{"role":"user","content":"<command-name>/mcp</command-name>"}}"#;
    let stdout = r#"{"type":"user","sessionId":"s","uuid":"o","message":{"role":"user","content":"<local-command-stdout>ok</local-command-stdout>"}}"#;
    let bash = r#"{"type":"user","sessionId":"s","uuid":"b","message":{"role":"user","content":"<bash-input>ls</bash-input>"}}"#;
    let out = lines(&[PROMPT, &assistant("m1", TEXT, 1), meta, local, stdout, bash]);
    let runs = summaries(&out, "s");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["claude_user_lines"].as_array().unwrap().len(), 4);
    assert_eq!(runs[0]["claude_prompt"], "go");
}

#[test]
fn a_slash_command_the_model_answers_begins_a_run() {
    let command = r#"{"type":"user","sessionId":"s","uuid":"c","message":{"role":"user","content":"<command-message>init</command-message>\n<command-name>/init</command-name>"}}"#;
    let expansion = r#"{"type":"user","sessionId":"s","uuid":"e","isMeta":true,"message":{"role":"user","content":[{"type":"text","text":"Analyze this codebase"}]}}"#;
    let out = lines(&[PROMPT, &assistant("m1", TEXT, 1), command, expansion, &assistant("m2", TEXT, 1)]);
    let runs = summaries(&out, "s");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["finish_reason"], "completed");
    assert!(runs[1]["claude_prompt"].as_str().unwrap().starts_with("<command-message>init"));
    assert_eq!(runs[1]["claude_user_lines"][0][0]["text"], "Analyze this codebase");
}

#[test]
fn unknown_line_kinds_are_kept() {
    let odd = r#"{"type":"brand-new-kind","sessionId":"s","uuid":"x","payload":42}"#;
    let out = lines(&[PROMPT, odd, &assistant("m1", TEXT, 1)]);
    let anomalies = of_type(&out, "anomaly");
    assert_eq!(anomalies.len(), 1);
    assert_eq!(anomalies[0]["kind"], "unknown_event");
    assert_eq!(anomalies[0]["session"], "s");
    // The line as read: `lines` made its uuid the second line's own.
    assert!(anomalies[0]["detail"].as_str().unwrap().ends_with(&odd.replace(r#""uuid":"x""#, r#""uuid":"1-x""#)));
    assert_eq!(rounds(&out).len(), 1);
}

#[test]
fn known_non_turn_kinds_are_counted() {
    let out = lines(&[
        r#"{"type":"file-history-snapshot","messageId":"x","snapshot":{}}"#,
        PROMPT,
        r#"{"type":"queue-operation","sessionId":"s","operation":"enqueue"}"#,
        r#"{"type":"system","sessionId":"s","uuid":"y","subtype":"compact_boundary"}"#,
        &assistant("m1", TEXT, 1),
    ]);
    let summary = summaries(&out, "s")[0];
    assert_eq!(
        summary["claude_events"],
        json!({"file-history-snapshot": 1, "queue-operation": 1, "system/compact_boundary": 1})
    );
    assert_eq!(summary["rounds"], 1);
}

#[test]
fn a_compaction_summary_is_no_prompt() {
    let compacted = r#"{"type":"user","sessionId":"s","uuid":"c","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued from a previous conversation."}}"#;
    let out = lines(&[
        PROMPT,
        &assistant("m1", &tool_use("t1"), 1),
        &result("t1", false),
        compacted,
        &assistant("m2", TEXT, 1),
    ]);
    let runs = summaries(&out, "s");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["rounds"], 2);
    assert!(runs[0]["claude_user_lines"][0].as_str().unwrap().starts_with("This session is being continued"));
}

#[test]
fn synthetic_lines_are_no_model_call_and_an_api_error_fails_the_run() {
    let synthetic = r#"{"type":"assistant","sessionId":"s","uuid":"z","isApiErrorMessage":true,"message":{"id":"x","model":"<synthetic>","content":[{"type":"text","text":"API Error: overloaded"}],"usage":{"input_tokens":0,"output_tokens":0}}}"#;
    let out = lines(&[PROMPT, &assistant("m1", &tool_use("t1"), 7), &result("t1", false), synthetic]);
    let summary = summaries(&out, "s")[0];
    assert_eq!(summary["finish_reason"], "failed");
    assert_eq!(summary["rounds"], 1);
    assert_eq!(summary["claude_usage"]["api_messages"], 1);
    assert_eq!(summary["claude_synthetic_messages"][0][0]["text"], "API Error: overloaded");
}

#[test]
fn a_sidechain_is_a_session_of_its_own() {
    let side = r#"{"type":"assistant","sessionId":"s","uuid":"q","isSidechain":true,"agentId":"a1","requestId":"rq","message":{"id":"sm","content":[{"type":"text","text":"sub"}],"usage":{"input_tokens":5,"output_tokens":5}}}"#;
    let out = lines(&[PROMPT, side, &assistant("m1", TEXT, 1)]);
    let sub = summaries(&out, "s/agent-a1");
    assert_eq!(sub.len(), 1);
    assert_eq!(sub[0]["claude_usage"]["output_tokens"], 5);
    assert_eq!(summaries(&out, "s")[0]["claude_usage"]["output_tokens"], 1);
}

#[test]
fn agent_progress_usage_is_the_subagents() {
    let task = r#"{"type":"tool_use","id":"task1","name":"Task","input":{"prompt":"p"}}"#;
    let progress = r#"{"type":"progress","sessionId":"s","uuid":"g","parentToolUseID":"task1","data":{"type":"agent_progress","agentId":"ag","message":{"type":"assistant","requestId":"rs","message":{"id":"sub1","content":[{"type":"text","text":"working"}],"usage":{"input_tokens":1,"output_tokens":400}}}}}"#;
    let done = r#"{"type":"user","sessionId":"s","uuid":"d","toolUseResult":{"agentId":"ag","totalTokens":401,"usage":{"output_tokens":400}},"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"task1","content":[{"type":"text","text":"done"}]}]}}"#;
    let out = lines(&[PROMPT, &assistant("m1", task, 20), progress, done]);
    assert_eq!(summaries(&out, "s")[0]["claude_usage"]["output_tokens"], 20);
    let sub = summaries(&out, "s/agent-ag");
    assert_eq!(
        (&sub[0]["finish_reason"], &sub[0]["claude_usage"]["output_tokens"]),
        (&json!("completed"), &json!(400))
    );
    let call = &rounds(&out).into_iter().find(|r| r["session"] == "s").unwrap()["tool_calls"][0];
    assert_eq!(call["result"]["content"], "done");
    assert_eq!(call["meta"]["claude_subagent"]["totalTokens"], 401);
    assert_eq!(call["meta"]["claude_subagent_session"], "s/agent-ag");
}

#[test]
fn lines_that_do_not_read_are_bad_lines_not_panics() {
    let input = [
        "not json",
        r#"{"type":"user","sessionId":"s","isMeta":"yes","message":{"content":"x"}}"#,
        r#"{"type":"assistant","sessionId":"s","uuid":"a","message":{"id":"m","content":"bare"}}"#,
        r#"{"type":"assistant","sessionId":"s","uuid":"a2","message":{"id":"m2","content":[{"type":"text"},7]}}"#,
        r#"{"type":"user","sessionId":"s","uuid":"u"}"#,
    ]
    .join("\n");
    let (out, stats) = replay_lines(input.as_bytes(), &options(FORMAT, "records"));
    assert_eq!(stats.bad_lines, 2);
    let kinds: Vec<&Value> = of_type(&out, "anomaly").iter().map(|a| &a["kind"]).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "unknown_content").count(), 3, "{out:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "unknown_event").count(), 1, "{out:?}");
}

// Subagents' own files, read with their parent's.

const PARENT: &str = "spotter-task-agent_progress-2.1.38.jsonl";
/// Built from the parent's `agent_progress` copies (see SOURCES.md).
const AGENT_FILE: &str = "spotter-agent-afb92ff-2.1.38-constructed.jsonl";
const SESSION: &str = "491e126e-1e71-469c-ade2-fcc8af567c74";
const TASK: &str = "toolu_01Cz2Pnv7qNcnK1ZiocxWhQX";

/// The subagent's session.
fn child() -> String {
    format!("{SESSION}/agent-afb92ff")
}

/// A projects folder as Claude Code 2.1 writes it, in a folder of its own:
/// `proj/<session>.jsonl` and the subagent's own file
/// `proj/<session>/subagents/agent-afb92ff.jsonl`, with `more` lines after
/// its own. Returns the folder `proj`.
pub(crate) fn projects_folder(name: &str, more: &[&str]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("roundup-claude-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let project = dir.join("proj");
    let subagents = project.join(SESSION).join("subagents");
    std::fs::create_dir_all(&subagents).unwrap();
    std::fs::write(project.join(format!("{SESSION}.jsonl")), input(PARENT)).unwrap();
    let mut agent = input(AGENT_FILE);
    for line in more {
        agent.extend_from_slice(line.as_bytes());
        agent.push(b'\n');
    }
    std::fs::write(subagents.join("agent-afb92ff.jsonl"), agent).unwrap();
    project
}

/// The subagent's final answer as its own file has it and the parent's
/// progress lines do not: a message of its own, after the last copy.
pub(crate) const ANSWER: &str = r#"{"parentUuid":"67c42ffc-274f-4374-8ebb-eb15f013c4ec","isSidechain":true,"userType":"external","cwd":"/home/marco/projects/spotter","sessionId":"491e126e-1e71-469c-ade2-fcc8af567c74","version":"2.1.38","gitBranch":"master","agentId":"afb92ff","slug":"humble-seeking-umbrella","message":{"model":"claude-opus-4-6","id":"msg_answer","type":"message","role":"assistant","content":[{"type":"text","text":"Here is the draft."}],"stop_reason":"end_turn","usage":{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":50}},"requestId":"req_answer","type":"assistant","uuid":"a0000000-0000-4000-8000-000000000001","timestamp":"2026-02-10T21:58:40.000Z"}"#;

fn replay_folder(folder: &Path) -> Vec<Value> {
    let out = crate::cli::roundup(&["replay", "--emit", "records", folder.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

fn rounds_of<'a>(out: &'a [Value], session: &str) -> Vec<&'a Value> {
    rounds(out).into_iter().filter(|r| r["session"] == session).collect()
}

/// Token totals of the subagent's five API messages, worked out by hand
/// from the copies: per message the line with the largest output, then
/// summed. Inputs 2 6 6 6 4, outputs 3 1 1 1 1, cache reads 15584 17982
/// 18344 20728 22705, cache writes 2398 362 2384 1977 7164.
fn subagent_usage() -> Value {
    json!({"input_tokens": 24, "output_tokens": 7, "cache_read_input_tokens": 95343,
        "cache_creation_input_tokens": 14285, "api_messages": 5})
}

#[test]
fn a_subagents_own_file_read_with_its_parent_is_one_session_counted_once() {
    let alone = records(PARENT);
    let folder = projects_folder("once", &[]);
    let together = replay_folder(&folder);
    let child = child();
    // The parent's copies came first: every line of the subagent's file is
    // one seen, counted and not applied.
    let sub = summaries(&together, &child);
    assert_eq!(sub.len(), 1);
    assert_eq!(sub[0]["claude_usage"], subagent_usage());
    assert_eq!(summaries(&alone, &child)[0]["claude_usage"], subagent_usage());
    assert_eq!(sub[0]["claude_events"], json!({"duplicate_line": 19}));
    assert_eq!(sub[0]["claude_parent"], json!({"session": SESSION, "tool_call": TASK}));
    assert_eq!(rounds_of(&together, &child), rounds_of(&alone, &child));
    assert_eq!(rounds_of(&together, &child).len(), 5);
    let task =
        rounds(&together).into_iter().flat_map(|r| r["tool_calls"].as_array().unwrap()).find(|c| c["id"] == TASK);
    assert_eq!(task.unwrap()["meta"]["claude_subagent_session"], child.as_str());
    // Everything else is the parent's file alone, record for record.
    let without_counts = |out: &[Value]| -> Vec<Value> {
        let mut out = out.to_vec();
        for record in &mut out {
            if record["type"] == "summary" && record["session"] == child.as_str() {
                record.as_object_mut().unwrap().remove("claude_events");
            }
        }
        out
    };
    assert_eq!(without_counts(&together), without_counts(&alone));
    let _ = std::fs::remove_dir_all(folder.parent().unwrap());
}

#[test]
fn the_files_named_apart_are_two_inputs_and_count_the_subagent_twice() {
    let (parent, agent) = (folder().join(PARENT), folder().join(AGENT_FILE));
    let out = crate::cli::roundup(&["replay", "--emit", "records", parent.to_str().unwrap(), agent.to_str().unwrap()]);
    let out: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let sub = summaries(&out, &child());
    assert_eq!(sub.len(), 2);
    assert!(sub.iter().all(|s| s["claude_usage"] == subagent_usage()));
    // Alone, the subagent's file knows its parent session, not the call.
    assert_eq!(sub[1]["claude_parent"], json!({"session": SESSION}));
}

#[test]
fn a_line_of_the_subagents_file_not_among_the_copies_is_applied_once() {
    let alone = records(PARENT);
    let folder = projects_folder("answer", &[ANSWER, ANSWER]);
    let together = replay_folder(&folder);
    let child = child();
    let sub = summaries(&together, &child);
    // One run: the answer joins the run its copies began.
    assert_eq!(sub.len(), 1);
    assert_eq!(sub[0]["finish_reason"], "completed");
    assert_eq!(sub[0]["claude_events"], json!({"duplicate_line": 20}));
    assert_eq!(
        sub[0]["claude_usage"],
        json!({"input_tokens": 24 + 3, "output_tokens": 7 + 50, "cache_read_input_tokens": 95343 + 1000,
            "cache_creation_input_tokens": 14285 + 100, "api_messages": 6})
    );
    let (got, before) = (rounds_of(&together, &child), rounds_of(&alone, &child));
    assert_eq!(got.len(), 6);
    assert_eq!(got[..5], before[..]);
    assert_eq!(got[5]["message"], "Here is the draft.");
    let _ = std::fs::remove_dir_all(folder.parent().unwrap());
}

#[test]
fn a_task_result_links_its_subagent_without_progress_lines() {
    let task = r#"{"type":"assistant","sessionId":"s","uuid":"a1","requestId":"r1","message":{"id":"m1","content":[{"type":"tool_use","id":"task1","name":"Task","input":{"prompt":"look"}}],"usage":{"input_tokens":1,"output_tokens":1}}}"#;
    let done = r#"{"type":"user","sessionId":"s","uuid":"d1","toolUseResult":{"agentId":"zz","totalTokens":9},"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"task1","content":"found"}]}}"#;
    let sub = r#"{"type":"assistant","sessionId":"s","uuid":"z1","isSidechain":true,"agentId":"zz","requestId":"rz","message":{"id":"mz","content":[{"type":"text","text":"looking"}],"usage":{"input_tokens":2,"output_tokens":7}}}"#;
    // The subagent's lines after the result (its own file), and before it.
    for order in [[PROMPT, task, done, sub], [PROMPT, sub, task, done]] {
        let out = clean_replay(order.join("\n").as_bytes(), FORMAT, "records");
        let call = &rounds_of(&out, "s")[0]["tool_calls"][0];
        assert_eq!(call["meta"]["claude_subagent_session"], "s/agent-zz", "{order:?}");
        assert_eq!(call["meta"]["claude_subagent"]["totalTokens"], 9);
        let child = summaries(&out, "s/agent-zz");
        assert_eq!(child.len(), 1);
        assert_eq!(child[0]["claude_parent"], json!({"session": "s", "tool_call": "task1"}), "{order:?}");
        assert_eq!(child[0]["claude_usage"]["output_tokens"], 7);
    }
}

#[test]
fn a_line_seen_again_is_counted_not_applied() {
    let text = assistant("m1", TEXT, 4);
    let out = clean_replay([PROMPT, &text, &text, PROMPT].join("\n").as_bytes(), FORMAT, "records");
    let runs = summaries(&out, "s");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["rounds"], 1);
    assert_eq!(runs[0]["claude_events"], json!({"duplicate_line": 2}));
    assert_eq!(runs[0]["claude_usage"]["api_messages"], 1);
}

#[test]
fn a_subagents_file_alone_is_its_session_naming_its_parent_session() {
    let out = records(AGENT_FILE);
    let session = "491e126e-1e71-469c-ade2-fcc8af567c74/agent-afb92ff";
    let runs = summaries(&out, session);
    assert_eq!(runs.len(), 1);
    assert_eq!(of_type(&out, "summary").len(), 1);
    // No parent line was read: the call that started it is not known.
    assert_eq!(runs[0]["claude_parent"], json!({"session": "491e126e-1e71-469c-ade2-fcc8af567c74"}));
    assert_eq!(runs[0]["claude_usage"], subagent_usage());
    assert_eq!(rounds(&out).len(), 5);
}

/// The reminders Claude Code writes beside tool results gather in the run's
/// `claude_user_lines`, every one in order, whether the run completes or is
/// left waiting for a tool at the end of input.
#[test]
fn a_runs_user_lines_hold_every_reminder_however_the_run_ends() {
    let call = |n: usize| {
        format!(
            r#"{{"type":"assistant","sessionId":"s","uuid":"","message":{{"id":"m{n}","role":"assistant","model":"claude","content":[{{"type":"tool_use","id":"t{n}","name":"Bash","input":{{}}}}],"stop_reason":"tool_use"}}}}"#
        )
    };
    let result = |n: usize| {
        format!(
            r#"{{"type":"user","sessionId":"s","uuid":"","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{n}","content":"ok"}},{{"type":"text","text":"reminder {n}"}}]}}}}"#
        )
    };
    let prompt = |text: &str| {
        format!(r#"{{"type":"user","sessionId":"s","uuid":"","message":{{"role":"user","content":"{text}"}}}}"#)
    };
    let answer = r#"{"type":"assistant","sessionId":"s","uuid":"","message":{"id":"end","role":"assistant","model":"claude","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn"}}"#;
    let input = [
        prompt("one"),
        call(1),
        result(1),
        call(2),
        result(2),
        call(3),
        result(3),
        answer.to_owned(),
        prompt("two"),
        call(4),
        result(4),
        call(5),
        result(5),
        call(6),
    ];
    let out = lines(&input.iter().map(String::as_str).collect::<Vec<_>>());
    let runs = summaries(&out, "s");
    assert_eq!(runs.len(), 2);
    let texts = |run: &Value| -> Vec<String> {
        run["claude_user_lines"].as_array().unwrap().iter().map(|l| l[0]["text"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(runs[0]["finish_reason"], "completed");
    assert_eq!(texts(runs[0]), ["reminder 1", "reminder 2", "reminder 3"]);
    assert_eq!(runs[1]["finish_reason"], "interrupted");
    assert_eq!(texts(runs[1]), ["reminder 4", "reminder 5"]);
}
