//! Adapter-level conservation: on generated native streams of each
//! protocol (ordinary and odd events alike: numeric ids, rich content,
//! batches, missing session ids, unknown types), every text, argument and
//! result that the protocol's semantics keep is in the output, as a round,
//! a stitch, metadata or an anomaly. The generators and the check are
//! `roundup_testkit::native`, which the adapter fuzz targets run too.

use proptest::prelude::*;
use roundup_testkit::capture::{options, replay_lines};
use roundup_testkit::native::{check_conservation, native_stream};

fn conserved(format: &str, script: &[u8]) -> Result<(), TestCaseError> {
    let stream = native_stream(format, script);
    let (lines, _) = replay_lines(&stream.input(), &options(format, "records"));
    check_conservation(&stream, &lines).map_err(TestCaseError::fail)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn acp_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("acp", &script)?;
    }

    #[test]
    fn uagent_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("uagent", &script)?;
    }

    #[test]
    fn deepwork_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("deepwork", &script)?;
    }

    #[test]
    fn openai_chat_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("openai-chat", &script)?;
    }

    #[test]
    fn openai_responses_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("openai-responses", &script)?;
    }

    #[test]
    fn anthropic_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("anthropic", &script)?;
    }

    #[test]
    fn claude_code_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("claude-code", &script)?;
    }

    #[test]
    fn claude_transcript_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("claude-transcript", &script)?;
    }

    #[test]
    fn codex_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("codex", &script)?;
    }

    #[test]
    fn codex_rollout_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("codex-rollout", &script)?;
    }

    #[test]
    fn ollama_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("ollama", &script)?;
    }

    #[test]
    fn mistral_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("mistral", &script)?;
    }

    #[test]
    fn opencode_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("opencode", &script)?;
    }

    #[test]
    fn gemini_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("gemini", &script)?;
    }

    #[test]
    fn gemini_cli_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("gemini-cli", &script)?;
    }

    #[test]
    fn ai_sdk_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("ai-sdk", &script)?;
    }

    #[test]
    fn gemini_cli_chat_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("gemini-cli-chat", &script)?;
    }

    #[test]
    fn bedrock_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("bedrock", &script)?;
    }
}

/// The property can fail: a stream whose marker is absent from the output
/// is caught (the check is not vacuous).
#[test]
fn a_lost_marker_is_caught() {
    let stream = native_stream("acp", &[0, 0, 0, 1, 0, 0]);
    assert_eq!(stream.markers.len(), 2);
    let (lines, _) = replay_lines(&stream.input(), &options("acp", "records"));
    assert!(check_conservation(&stream, &lines).is_ok());
    let without_thought: Vec<serde_json::Value> = lines.into_iter().filter(|l| l["type"] != "round").collect();
    assert!(check_conservation(&stream, &without_thought).unwrap_err().contains("zq0k was lost"));
}

use roundup_testkit::capture::of_type;
use serde_json::{json, Value};

fn records(format: &str, lines: &[Value]) -> Vec<Value> {
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    replay_lines(input.as_bytes(), &options(format, "records")).0
}

fn anomaly_details(lines: &[Value]) -> Vec<(String, String)> {
    of_type(lines, "anomaly")
        .iter()
        .map(|a| (a["kind"].as_str().unwrap().to_owned(), a["detail"].as_str().unwrap_or_default().to_owned()))
        .collect()
}

/// Reproductions of inputs that lost data: well-formed input that was dropped without a
/// trace is now translated, or reported with its payload.
#[test]
fn acp_session_requests_without_a_string_session_id() {
    let update = json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "kept"}});
    let lines = records(
        "acp",
        &[
            json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": update}}),
            json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": 42, "update": update}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"prompt": [{"type": "text", "text": "lost?"}]}}),
        ],
    );
    let anomalies = anomaly_details(&lines);
    assert_eq!(anomalies.len(), 2, "{anomalies:?}");
    assert!(anomalies[0].0 == "unknown_event" && anomalies[0].1.contains("session/update without a sessionId"));
    assert!(anomalies[0].1.contains("kept"), "the payload is in the anomaly");
    assert!(anomalies[1].1.contains("session/prompt without a sessionId") && anomalies[1].1.contains("lost?"));
    let round = of_type(&lines, "round")[0];
    assert_eq!((&round["session"], &round["message"]), (&json!("42"), &json!("kept")), "a numeric id is its text");
}

#[test]
fn numeric_tool_ids_are_their_text_in_every_adapter() {
    let acp = records(
        "acp",
        &[
            json!({"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": 5, "title": "t", "status": "completed", "rawOutput": "out"}}),
        ],
    );
    let uagent = records(
        "uagent",
        &[
            json!({"type": "tool_called", "call_id": 5, "name": "t", "arguments": "{}", "v": 1}),
            json!({"type": "tool_finished", "call_id": 5, "ok": true, "detail": "out", "v": 1}),
        ],
    );
    let deepwork = records(
        "deepwork",
        &[
            json!({"kind": "tool_start", "tool": {"id": 5, "name": "t", "input": {}}}),
            json!({"kind": "tool_result", "tool": {"id": 5, "output": "out"}}),
        ],
    );
    for (format, lines) in [("acp", acp), ("uagent", uagent), ("deepwork", deepwork)] {
        let call = &of_type(&lines, "round")[0]["tool_calls"][0];
        assert_eq!((&call["id"], &call["result"]["content"]), (&json!("5"), &json!("out")), "{format}");
        assert!(of_type(&lines, "anomaly").is_empty(), "{format}: {lines:?}");
    }
}

#[test]
fn rich_text_content_is_reported_with_it() {
    let deepwork = records("deepwork", &[json!({"kind": "text", "content": {"rich": "deep"}})]);
    let uagent = records("uagent", &[json!({"type": "text_delta", "text": {"rich": "deep"}, "v": 1})]);
    for (format, lines) in [("deepwork", deepwork), ("uagent", uagent)] {
        let anomalies = anomaly_details(&lines);
        assert_eq!(anomalies.len(), 1, "{format}");
        assert!(anomalies[0].0 == "unknown_content" && anomalies[0].1.contains("\"rich\":\"deep\""), "{format}");
    }
}

#[test]
fn acp_responses_to_no_request_and_batches() {
    let chunk = |text: &str| {
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s",
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}})
    };
    let lines = records(
        "acp",
        &[
            json!({"jsonrpc": "2.0", "id": 77, "result": {"stopReason": "end_turn"}}),
            json!([chunk("one "), chunk("two"), {"jsonrpc": "2.0", "id": 78, "error": {"code": 1, "message": "orphan"}}]),
        ],
    );
    assert_eq!(of_type(&lines, "round")[0]["message"], "one two", "a batch's members are translated");
    let anomalies = anomaly_details(&lines);
    assert_eq!(anomalies.len(), 2);
    assert!(anomalies[0].1.contains("a response to no request seen, id 77") && anomalies[0].1.contains("end_turn"));
    assert!(anomalies[1].1.contains("id 78") && anomalies[1].1.contains("orphan"));
}

/// Arguments nested deeper than serde_json's recursion limit (128) are
/// still the call's arguments, as raw text: the line is not refused.
#[test]
fn acp_arguments_deeper_than_the_recursion_limit_are_kept() {
    let deep = format!("{}{}", "[".repeat(1_000), "]".repeat(1_000));
    let line = format!(
        r#"{{"sessionId":"s","update":{{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","rawInput":{deep},"status":"completed","rawOutput":"ok"}}}}"#
    );
    let (lines, stats) = replay_lines(line.as_bytes(), &options("acp", "records"));
    assert_eq!(stats.bad_lines, 0);
    let call = &of_type(&lines, "round")[0]["tool_calls"][0];
    assert_eq!(call["arguments"], deep);
    assert_eq!(call["result"]["status"], "completed", "not an undeclared_terminal");
}
