//! The Gemini CLI chat adapter (saved chats, `gemini-cli-chat`) on every
//! recorded fixture (tests/fixtures/gemini-cli-chat), and the traps of the
//! format, each as the smallest input that shows it.

use std::path::Path;

use roundup_testkit::capture::{clean_replay, of_type, options, replay_lines};
use serde_json::Value;

fn input(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gemini-cli-chat").join(name)).unwrap()
}

fn rounds_of_run(lines: &[Value], run: u64) -> Vec<&Value> {
    of_type(lines, "round").into_iter().filter(|r| r["run"] == run).collect()
}

fn chat(text: &str) -> Vec<Value> {
    clean_replay(text.as_bytes(), "gemini-cli-chat", "records")
}

/// A chat of these JSON lines.
fn chat_lines(lines: &[&str]) -> Vec<Value> {
    chat(&(lines.join("\n") + "\n"))
}

#[test]
fn pomodoro_legacy_document_by_value() {
    let lines = clean_replay(&input("ai-sessions-pomodoro-gemini-2.5-pro.json"), "auto", "records");
    let summaries = of_type(&lines, "summary");
    // Five `user` messages in the file: five runs, each answered.
    assert_eq!(summaries.len(), 5);
    let rounds: Vec<u64> = summaries.iter().map(|s| s["rounds"].as_u64().unwrap()).collect();
    // Model messages per prompt: 2, 2, 3, 1, 6 (14 in all).
    assert_eq!(rounds, [2, 2, 3, 1, 6]);
    assert!(summaries.iter().all(|s| s["finish_reason"] == "completed"));
    // The first model message: three write_file calls, each with its final
    // arguments and its inline result, in one round.
    let first = &rounds_of_run(&lines, 0)[0];
    assert!(first["message"].as_str().unwrap().starts_with("Okay, I will build the Pomodoro timer."));
    assert!(first["thought"].as_str().unwrap().starts_with("Beginning the Build\n"));
    let calls = first["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 3);
    let paths: Vec<String> = calls
        .iter()
        .map(|c| {
            assert_eq!(c["name"], "write_file");
            assert_eq!(c["title"], "WriteFile");
            let args: Value = serde_json::from_str(c["arguments"].as_str().unwrap()).unwrap();
            args["file_path"].as_str().unwrap().rsplit('/').next().unwrap().to_owned()
        })
        .collect();
    assert_eq!(paths, ["index.html", "style.css", "script.js"]);
    assert_eq!(
        calls[0]["result"]["content"],
        "Successfully created and wrote to new file: /Users/yoavfarhi/dev/pomodoro/gemini/index.html."
    );
    // The `replace` with status error: a failed result holding the error.
    let failed = &rounds_of_run(&lines, 4)[4]["tool_calls"][0];
    assert_eq!(failed["result"]["status"], "failed");
    assert!(failed["result"]["content"].as_str().unwrap().contains("Failed to edit"), "{failed}");
    assert_eq!(summaries[4]["failed_tool_calls"], 1);
    // Tokens by hand from the file's `tokens.total`: run 0 is 0 (the first
    // message's counts are all zero) + 7373; run 4 is 9820 + 9873 + 11622 +
    // 12089 + 12394 + 12805 = 68603. The gauge is the last message's total.
    assert_eq!(summaries[0]["gemini_cli_chat_usage"]["total"], 7373);
    assert_eq!(summaries[0]["last_token_usage"], 7373);
    assert_eq!(summaries[4]["gemini_cli_chat_usage"]["total"], 68603);
    // Run 1: input 7320 + 7598 = 14918, cached 5784 + 7238 = 13022 (within
    // the input, not added), output 250 + 23, thoughts 62 + 41:
    // 14918 + 273 + 103 = 15294.
    let usage = &summaries[1]["gemini_cli_chat_usage"];
    assert_eq!(
        (usage["input"].as_u64(), usage["cached"].as_u64(), usage["total"].as_u64()),
        (Some(14918), Some(13022), Some(15294))
    );
    assert_eq!(summaries[1]["gemini_cli_chat_prompt"], "add smooth transitions between states");
    assert_eq!(summaries[1]["gemini_cli_chat_session"]["sessionId"], "0b23371a-ce2e-4b1c-81a0-44af5d94d9ce");
}

#[test]
fn aim_tool_only_messages_by_value() {
    let lines = clean_replay(&input("aim-control_pro_run1_final.json"), "auto", "records");
    let summaries = of_type(&lines, "summary");
    assert_eq!(summaries.len(), 1);
    let summary = summaries[0];
    // One Part-list prompt, 31 model messages: 30 tool-only ones (one call
    // each) and the answer.
    assert_eq!(summary["gemini_cli_chat_prompt"], "hello");
    assert_eq!((summary["rounds"].as_u64(), summary["tool_calls"].as_u64()), (Some(31), Some(30)));
    assert_eq!(summary["finish_reason"], "completed");
    let rounds = of_type(&lines, "round");
    assert!(rounds[..30].iter().all(|r| r["message"] == "" && r["closed_by"] == "tools_done"));
    assert_eq!(rounds[0]["tool_calls"][0]["name"], "read_file");
    assert_eq!(rounds[0]["tool_calls"][0]["id"], "read_file_1774507844899_0");
    assert!(rounds[30]["message"].as_str().unwrap().starts_with("I have successfully diagnosed"));
    // Summed by hand over the 31 `tokens`: input 498658 (cached 400164 of
    // it), output 2599, thoughts 16539, tool 0; 498658 + 2599 + 16539 =
    // 517796, which is also the sum of their `total`s.
    let usage = &summary["gemini_cli_chat_usage"];
    assert_eq!(usage["input"], 498658);
    assert_eq!(usage["cached"], 400164);
    assert_eq!(usage["total"], 517796);
    assert_eq!(summary["last_token_usage"], 21537);
}

#[test]
fn jsonl_layout_by_value() {
    let lines = clean_replay(&input("agent-sessions-jsonl_v040-constructed.jsonl"), "auto", "records");
    let rounds = of_type(&lines, "round");
    assert_eq!(rounds.len(), 2);
    let call = &rounds[0]["tool_calls"][0];
    assert_eq!(call["name"], "run_shell_command");
    assert_eq!(call["title"], "Shell");
    assert_eq!(call["arguments"], r#"{"command":"ls -F","description":"List files in the current directory."}"#);
    assert_eq!(call["result"]["content"], "Output: AgentSessions/\nREADME.md\nProcess Group PGID: 12345");
    assert_eq!(rounds[1]["message"], "Hello! I listed the files.");
    let summary = of_type(&lines, "summary")[0];
    // 11936 + 12216 = 24152; input 11855 + 12069 = 23924, output 81 + 147.
    assert_eq!(summary["gemini_cli_chat_usage"]["total"], 24152);
    assert_eq!(summary["gemini_cli_chat_usage"]["input"], 23924);
    assert_eq!(summary["last_token_usage"], 12216);
    // The `$set` heartbeat is merged into the session's metadata.
    assert_eq!(summary["gemini_cli_chat_session"]["lastUpdated"], "2026-04-29T21:39:33.156Z");
    assert_eq!(summary["gemini_cli_chat_session"]["kind"], "main");
}

#[test]
fn detected_by_auto_and_the_other_gemini_formats_still_themselves() {
    for name in [
        "ai-sessions-pomodoro-gemini-2.5-pro.json",
        "aim-control_pro_run1_final.json",
        "agent-sessions-jsonl_v040-constructed.jsonl",
    ] {
        let (_, stats) = replay_lines(&input(name), &options("auto", "records"));
        assert_eq!(stats.format.map(|f| f.name()), Some("gemini-cli-chat"), "{name}");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for (folder, format) in [("gemini-cli", "gemini-cli"), ("gemini", "gemini")] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                continue;
            }
            let (_, stats) = replay_lines(&std::fs::read(&path).unwrap(), &options("auto", "records"));
            assert_eq!(stats.format.map(|f| f.name()), Some(format), "{}", path.display());
        }
    }
}

#[test]
fn a_message_written_again_counts_once_the_last_record_winning() {
    let lines = chat_lines(&[
        r#"{"id":"u","type":"user","content":"go"}"#,
        r#"{"id":"m","type":"gemini","content":"","tokens":{"input":5,"output":1,"cached":0,"thoughts":0,"tool":0,"total":6},"toolCalls":[{"id":"t","name":"ls","args":{}}]}"#,
        r#"{"id":"m","type":"gemini","content":"","tokens":{"input":5,"output":1,"cached":0,"thoughts":0,"tool":0,"total":6},"toolCalls":[{"id":"t","name":"ls","args":{"d":"."},"status":"success","result":[{"functionResponse":{"id":"t","name":"ls","response":{"output":"a"}}}]}]}"#,
    ]);
    let rounds = of_type(&lines, "round");
    assert_eq!(rounds.len(), 1);
    assert_eq!(rounds[0]["tool_calls"][0]["arguments"], r#"{"d":"."}"#);
    assert_eq!(rounds[0]["tool_calls"][0]["result"]["content"], "a");
    assert_eq!(of_type(&lines, "summary")[0]["gemini_cli_chat_usage"]["total"], 6);
}

#[test]
fn a_rewind_drops_the_messages_from_its_target_on() {
    let lines = chat_lines(&[
        r#"{"id":"u","type":"user","content":"go"}"#,
        r#"{"id":"m1","type":"gemini","content":"kept"}"#,
        r#"{"id":"m2","type":"gemini","content":"dropped"}"#,
        r#"{"$rewindTo":"m2"}"#,
    ]);
    let rounds = of_type(&lines, "round");
    assert_eq!(rounds.len(), 1);
    assert_eq!(rounds[0]["message"], "kept");
}

#[test]
fn a_message_is_read_once_a_record_of_another_follows_it() {
    // Gemini CLI writes only its last message again: a record of the next
    // message is the sign that the one before is final, and its round is
    // delivered then, not at the next prompt.
    use roundup::adapters::InputFormat;
    use roundup::{Call, RoundBuilder, StreamHandler};
    let builder = RoundBuilder::new();
    let mut adapter = InputFormat::named("gemini-cli-chat").unwrap().adapter();
    let mut feed = |line: &str| {
        adapter.translate(line.as_bytes(), &mut |_: Option<&str>, call: Call<'_>| builder.call(call)).unwrap()
    };
    feed(r#"{"id":"u","type":"user","content":"go"}"#);
    feed(r#"{"id":"m1","type":"gemini","content":"","toolCalls":[{"id":"t","name":"ls","args":{}}]}"#);
    feed(
        r#"{"id":"m1","type":"gemini","content":"","toolCalls":[{"id":"t","name":"ls","args":{},"status":"success","result":[{"functionResponse":{"id":"t","name":"ls","response":{"output":"a"}}}]}]}"#,
    );
    assert!(builder.rounds().is_empty(), "the last message may still be written again");
    feed(r#"{"id":"m2","type":"gemini","content":"Done."}"#);
    let rounds = builder.rounds();
    assert_eq!(rounds.len(), 1);
    assert_eq!(rounds[0].tool_calls[0].result.content(), Some("a"));
}

#[test]
fn a_record_of_a_message_already_read_is_reported_not_applied() {
    let lines = chat_lines(&[
        r#"{"id":"u","type":"user","content":"go"}"#,
        r#"{"id":"m1","type":"gemini","content":"first"}"#,
        r#"{"id":"m2","type":"gemini","content":"second","toolCalls":[{"id":"t","name":"ls","args":{},"status":"success","result":"a"}]}"#,
        r#"{"id":"m1","type":"gemini","content":"changed"}"#,
    ]);
    let rounds = of_type(&lines, "round");
    assert_eq!(rounds[0]["message"], "first\n\nsecond");
    let anomalies = of_type(&lines, "anomaly");
    assert_eq!(anomalies.len(), 1);
    assert_eq!(anomalies[0]["kind"], "unknown_content");
    assert!(anomalies[0]["detail"].as_str().unwrap().contains("changed"), "the record is kept: {}", anomalies[0]);
}

#[test]
fn a_rewind_to_a_message_read_is_reported_and_its_rounds_stay() {
    // What was done before a rewind was done (its tokens spent, its tools
    // run): the rounds stay, and the rewind is reported.
    let lines = chat_lines(&[
        r#"{"id":"u1","type":"user","content":"one"}"#,
        r#"{"id":"m1","type":"gemini","content":"answer one"}"#,
        r#"{"id":"u2","type":"user","content":"two"}"#,
        r#"{"id":"m2","type":"gemini","content":"answer two"}"#,
        r#"{"$rewindTo":"u2"}"#,
        r#"{"id":"u3","type":"user","content":"two, again"}"#,
        r#"{"id":"m3","type":"gemini","content":"answer three"}"#,
    ]);
    let messages: Vec<&Value> = of_type(&lines, "round").iter().map(|round| &round["message"]).collect();
    assert_eq!(messages, ["answer one", "answer two", "answer three"]);
    let anomalies = of_type(&lines, "anomaly");
    assert_eq!(anomalies.len(), 1);
    assert!(anomalies[0]["detail"].as_str().unwrap().contains(r#""$rewindTo":"u2""#), "{}", anomalies[0]);
}

#[test]
fn an_unknown_record_is_kept_as_unknown_event() {
    let lines = chat("{\"id\":\"x\",\"type\":\"telemetry\",\"content\":\"z\"}\n{\"what\":1}\n");
    let anomalies = of_type(&lines, "anomaly");
    assert_eq!(anomalies.len(), 2);
    assert!(anomalies.iter().all(|a| a["kind"] == "unknown_event"));
    // The record of no kind at once; the message of an unknown type once
    // no record of it can follow, at the end.
    assert!(anomalies[0]["detail"].as_str().unwrap().contains("\"what\":1"));
    assert!(anomalies[1]["detail"].as_str().unwrap().contains("telemetry"));
}

#[test]
fn zero_tokens_leave_the_gauge_alone_and_the_round_stands() {
    let lines = chat(
        r#"{"sessionId":"s","projectHash":"h","messages":[{"id":"u","type":"user","content":"hi"},{"id":"m","type":"gemini","content":"yo","tokens":{"input":0,"output":0,"cached":0,"thoughts":0,"tool":0,"total":0}}]}"#,
    );
    assert_eq!(of_type(&lines, "round")[0]["message"], "yo");
    let summary = of_type(&lines, "summary")[0];
    assert_eq!(summary["last_token_usage"], Value::Null);
    assert_eq!(summary["gemini_cli_chat_usage"]["total"], 0);
}

#[test]
fn a_missing_total_is_input_output_thoughts_and_tool_never_cached() {
    let lines = chat(
        r#"{"sessionId":"s","projectHash":"h","messages":[{"id":"m","type":"gemini","content":"a","tokens":{"input":10,"output":2,"cached":7,"thoughts":3,"tool":4}}]}"#,
    );
    assert_eq!(of_type(&lines, "summary")[0]["last_token_usage"], 19);
}

#[test]
fn a_part_list_prompt_and_answer_are_their_texts() {
    let lines = chat(
        r#"{"sessionId":"s","projectHash":"h","messages":[{"id":"u","type":"user","content":[{"text":"a"},{"text":"b"}]},{"id":"m","type":"gemini","content":[{"text":"c"},{"text":"d"}]}]}"#,
    );
    assert_eq!(of_type(&lines, "round")[0]["message"], "cd");
    assert_eq!(of_type(&lines, "summary")[0]["gemini_cli_chat_prompt"], "ab");
}

#[test]
fn two_answers_in_a_row_are_paragraphs_of_one_round() {
    let lines = chat(
        r#"{"sessionId":"s","projectHash":"h","messages":[{"id":"m1","type":"gemini","content":"one"},{"id":"m2","type":"gemini","content":"two"}]}"#,
    );
    let rounds = of_type(&lines, "round");
    assert_eq!(rounds.len(), 1);
    assert_eq!(rounds[0]["message"], "one\n\ntwo");
}

#[test]
fn how_a_run_ends_follows_its_last_message() {
    let ends = |last: &str| {
        let document = format!(
            r#"{{"sessionId":"s","projectHash":"h","messages":[{{"id":"u","type":"user","content":"go"}},{last}]}}"#
        );
        let (lines, _) = replay_lines(document.as_bytes(), &options("gemini-cli-chat", "records"));
        of_type(&lines, "summary")[0]["finish_reason"].as_str().unwrap().to_owned()
    };
    assert_eq!(ends(r#"{"id":"m","type":"gemini","content":"done"}"#), "completed");
    assert_eq!(ends(r#"{"id":"e","type":"error","content":"quota"}"#), "failed");
    assert_eq!(
        ends(r#"{"id":"m","type":"gemini","content":"","toolCalls":[{"id":"t","name":"ls","status":"cancelled"}]}"#),
        "canceled"
    );
    assert_eq!(
        ends(r#"{"id":"m","type":"gemini","content":"","toolCalls":[{"id":"t","name":"ls","status":"success"}]}"#),
        "interrupted"
    );
    assert_eq!(ends(r#"{"id":"i","type":"info","content":"switched model"}"#), "interrupted");
}

#[test]
fn a_pretty_printed_document_read_in_any_pieces_is_one_event() {
    let document = input("ai-sessions-pomodoro-gemini-2.5-pro.json");
    let (whole, stats) = replay_lines(&document, &options("auto", "records"));
    assert_eq!(stats.payloads, 1);
    assert_eq!(stats.bad_lines, 0);
    let mut replayer = roundup::Replayer::new(&options("auto", "records")).unwrap();
    for piece in document.chunks(997) {
        replayer.feed(piece, &mut ());
    }
    replayer.finish(&mut ());
    let mut out = Vec::new();
    replayer.take_output(&mut out);
    let pieces: Vec<Value> =
        String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(pieces, whole);
}

#[test]
fn a_document_over_the_line_limit_is_reported_not_held() {
    let document = input("aim-control_pro_run1_final.json");
    let (lines, stats) = replay_lines(&document, &options("gemini-cli-chat", "records").max_line_bytes(1000));
    assert_eq!(stats.bad_lines, 1);
    assert!(of_type(&lines, "round").is_empty());
    let detail = of_type(&lines, "anomaly")[0]["detail"].as_str().unwrap().to_owned();
    assert!(detail.starts_with("line 1: longer than 1000 bytes"), "{detail}");
}

#[test]
fn a_chat_is_the_session_its_session_id_names_in_either_container() {
    for (name, id) in [
        ("ai-sessions-pomodoro-gemini-2.5-pro.json", "0b23371a-ce2e-4b1c-81a0-44af5d94d9ce"),
        ("agent-sessions-jsonl_v040-constructed.jsonl", "gemini_stage0_jsonl"),
    ] {
        let lines = clean_replay(&input(name), "auto", "records");
        assert!(!lines.is_empty(), "{name}");
        assert!(lines.iter().all(|line| line["session"] == id), "{name}: every record in {id}");
    }
}

#[test]
fn a_message_before_any_session_id_keeps_the_chat_in_one_unnamed_session() {
    let lines = chat(concat!(
        r#"{"id":"u","timestamp":"2026-01-01T00:00:00Z","type":"user","content":"hi"}"#,
        "\n",
        r#"{"sessionId":"late","projectHash":"h","startTime":"2026-01-01T00:00:00Z"}"#,
        "\n",
        r#"{"id":"m","timestamp":"2026-01-01T00:00:01Z","type":"gemini","content":"yo","toolCalls":[]}"#,
    ));
    assert_eq!(of_type(&lines, "round")[0]["message"], "yo");
    assert!(lines.iter().all(|line| line.get("session").is_none()), "{lines:?}");
    // The later sessionId is still kept with the run.
    assert_eq!(of_type(&lines, "summary")[0]["gemini_cli_chat_session"]["sessionId"], "late");
}
