//! The Bedrock (`ConverseStream`) adapter and the AWS event-stream framing
//! on every recorded fixture (tests/fixtures/bedrock: raw binary bodies and
//! the SDKs' JSON lines), and the traps of the protocol and of the framing,
//! each as the smallest stream that shows it.

use std::path::{Path, PathBuf};
use std::process::Command;

use proptest::prelude::*;
use roundup::{ReplayOptions, Replayer};
use roundup_testkit::capture::{
    clean_replay, of_type, options, parse_output, replay_in_pieces, replay_lines, replay_restored_at,
};
use roundup_testkit::fixture_files;
use roundup_testkit::invariants::{check_rounds, check_ui_per_session};
use serde_json::{json, Value};

fn path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bedrock").join(name)
}

fn input(name: &str) -> Vec<u8> {
    std::fs::read(path(name)).unwrap()
}

/// The recordings: every file of the folder but the req_llm recorder's own
/// JSON, whose transport chunks are read by a test of their own.
fn recordings() -> Vec<String> {
    fixture_files("bedrock")
        .into_iter()
        .filter(|path| path.extension().is_some_and(|e| e != "json"))
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// A frame with string headers, built here with its CRCs (as the service
/// sends them).
fn frame(headers: &[(&str, &str)], payload: &str) -> Vec<u8> {
    let mut head = Vec::new();
    for (name, value) in headers {
        head.push(u8::try_from(name.len()).unwrap());
        head.extend_from_slice(name.as_bytes());
        head.push(7);
        head.extend_from_slice(&u16::try_from(value.len()).unwrap().to_be_bytes());
        head.extend_from_slice(value.as_bytes());
    }
    let total = 12 + head.len() + payload.len() + 4;
    let mut out = Vec::new();
    out.extend_from_slice(&u32::try_from(total).unwrap().to_be_bytes());
    out.extend_from_slice(&u32::try_from(head.len()).unwrap().to_be_bytes());
    out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload.as_bytes());
    out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
    out
}

fn event(kind: &str, payload: Value) -> Vec<u8> {
    let headers = [(":event-type", kind), (":content-type", "application/json"), (":message-type", "event")];
    frame(&headers, &payload.to_string())
}

/// The frames of a body as (where each starts, its event type, its
/// payload), read here independently of the replay (lengths only).
fn frames(body: &[u8]) -> Vec<(usize, String, Value)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let be = |i: usize| u32::from_be_bytes(body[i..i + 4].try_into().unwrap()) as usize;
        let (total, headers) = (be(at), be(at + 4));
        let mut h = at + 12;
        let mut kind = String::new();
        while h < at + 12 + headers {
            let n = usize::from(body[h]);
            let name = &body[h + 1..h + 1 + n];
            assert_eq!(body[h + 1 + n], 7, "string headers in these recordings");
            let len = usize::from(u16::from_be_bytes([body[h + 2 + n], body[h + 3 + n]]));
            let value = std::str::from_utf8(&body[h + 4 + n..h + 4 + n + len]).unwrap();
            if name == b":event-type" {
                kind = value.to_owned();
            }
            h += 4 + n + len;
        }
        let payload = serde_json::from_slice(&body[at + 12 + headers..at + total - 4]).unwrap();
        out.push((at, kind, payload));
        at += total;
    }
    out
}

/// The body as the SDKs' JSON lines (`{"<event>": payload}`), padding
/// removed as they remove it.
fn sdk_lines(body: &[u8]) -> String {
    frames(body)
        .into_iter()
        .map(|(_, kind, mut payload)| {
            payload.as_object_mut().unwrap().remove("p");
            format!("{}\n", json!({ kind: payload }))
        })
        .collect()
}

fn records(name: &str) -> Vec<Value> {
    clean_replay(&input(name), "bedrock", "records")
}

fn lines(input: &str) -> Vec<Value> {
    clean_replay(input.as_bytes(), "bedrock", "records")
}

fn rounds(out: &[Value]) -> Vec<&Value> {
    of_type(out, "round")
}

fn summary(out: &[Value]) -> &Value {
    let summaries = of_type(out, "summary");
    assert_eq!(summaries.len(), 1, "one run: {out:?}");
    summaries[0]
}

fn anomalies(out: &[Value]) -> Vec<(String, String)> {
    of_type(out, "anomaly")
        .iter()
        .map(|a| (a["kind"].as_str().unwrap().to_owned(), a["detail"].as_str().unwrap().to_owned()))
        .collect()
}

/// Every fixture: detected with no `--from` (the binary ones by their
/// first bytes), the same output as with it, rounds and UI events that keep
/// the invariants, no bad frame and no anomaly.
#[test]
fn every_fixture_is_detected_and_keeps_the_invariants() {
    let names = recordings();
    assert_eq!(names.len(), 8, "{names:?}");
    for name in names {
        let input = input(&name);
        let (named, named_stats) = replay_lines(&input, &options("bedrock", "records"));
        let (auto, auto_stats) = replay_lines(&input, &options("auto", "records"));
        assert_eq!(named, auto, "{name}");
        assert_eq!(auto_stats.format.map(|f| f.name()), Some("bedrock"), "{name}");
        assert_eq!(named_stats.bad_lines, 0, "{name}: {named:?}");
        check_rounds(&named).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (ui, _) = replay_lines(&input, &options("bedrock", "ui"));
        check_ui_per_session(&ui).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(anomalies(&named), [], "{name}");
        if name.ends_with(".bin") {
            // One payload per frame, counted as the lines of a text input.
            assert_eq!(named_stats.lines, frames(&input).len() as u64, "{name}");
            // The raw body and its SDK log read the same.
            assert_eq!(named, lines(&sdk_lines(&input)), "{name}");
        }
    }
}

#[test]
fn claude_reasoning_its_signature_and_the_answer_from_a_raw_body() {
    let out = records("pydantic-ai-bedrock-thinking-part-stream.bin");
    let [round] = rounds(&out)[..] else { panic!("{out:?}") };
    assert_eq!(round["closed_by"], "finish");
    assert_eq!(round["message"], "Hello! It's nice to meet you. How can I help you today?");
    let thought = "The user has greeted me with a simple \"Hello\". I should respond in a friendly and welcoming \
                   manner. This is a straightforward greeting, so I'll respond warmly and ask how I can help them today.";
    assert_eq!(round["thought"], thought);
    let signature = frames(&input("pydantic-ai-bedrock-thinking-part-stream.bin"))
        .into_iter()
        .find_map(|(_, _, p)| p["delta"]["reasoningContent"]["signature"].as_str().map(str::to_owned))
        .unwrap();
    assert!(signature.starts_with("Eu0CCkgIBxAB") && signature.len() > 400);
    assert_eq!(
        round["meta"]["bedrock_kept_blocks"],
        json!([{"reasoningContent": {"reasoningText": {"text": thought, "signature": signature}}}]),
        "kept byte for byte, as a client sends it back"
    );
    assert_eq!(round["meta"]["bedrock_stop_reason"], "end_turn");
    assert_eq!(round["meta"]["bedrock_usage"], json!({"inputTokens": 36, "outputTokens": 73, "totalTokens": 109}));
    assert_eq!(round["meta"]["bedrock_metrics"], json!({"latencyMs": 1999}));
    let summary = summary(&out);
    assert_eq!(summary["finish_reason"], "completed");
    assert_eq!(summary["last_token_usage"], 109);
}

#[test]
fn nova_thinks_in_its_text_and_calls_a_tool() {
    let out = records("pydantic-ai-bedrock-iter-stream-1-tool-use.bin");
    let [round] = rounds(&out)[..] else { panic!("{out:?}") };
    // Nova's reasoning is text it writes between tags: it stays the text
    // the model sent.
    let message = round["message"].as_str().unwrap();
    assert!(message.starts_with("<thinking> To find the temperature of the capital of France,"), "{message}");
    assert!(message.ends_with("in Paris.</thinking>\n"), "{message}");
    assert_eq!(round["thought"], "");
    let call = &round["tool_calls"][0];
    assert_eq!(call["id"], "tooluse_lAG_zP8QRHmSYOwZzzaCqA");
    assert_eq!((&call["title"], &call["name"]), (&json!("get_temperature"), &json!("get_temperature")));
    assert_eq!(call["arguments"], r#"{"city":"Paris"}"#);
    // The host runs it: the recording ends before its result.
    assert_eq!(call["result"], json!({"status": "placeholder", "reason": "interrupted"}));
    assert_eq!(round["meta"]["bedrock_stop_reason"], "tool_use");
    assert_eq!(round["meta"]["bedrock_usage"]["totalTokens"], 562);
    assert_eq!(summary(&out)["finish_reason"], "interrupted", "tool_use: the run goes on");
}

#[test]
fn the_follow_up_answer_reports_its_own_usage() {
    let out = records("pydantic-ai-bedrock-iter-stream-2-answer.bin");
    let [round] = rounds(&out)[..] else { panic!("{out:?}") };
    assert_eq!(round["message"], "The current temperature in Paris, the capital of France, is 30°C.");
    assert_eq!(round["meta"]["bedrock_usage"], json!({"inputTokens": 577, "outputTokens": 18, "totalTokens": 595}));
    assert_eq!(round["meta"]["bedrock_metrics"], json!({"latencyMs": 223}));
    assert_eq!(summary(&out)["finish_reason"], "completed");
    assert_eq!(summary(&out)["last_token_usage"], 595);
}

#[test]
fn the_loop_of_two_requests_reads_as_one_run_with_the_hosts_result_between() {
    let first = sdk_lines(&input("pydantic-ai-bedrock-iter-stream-1-tool-use.bin"));
    let second = sdk_lines(&input("pydantic-ai-bedrock-iter-stream-2-answer.bin"));
    let host = r#"{"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_lAG_zP8QRHmSYOwZzzaCqA","content":[{"text":"30°C"}],"status":"success"}}]}"#;
    let out = lines(&format!("{first}{host}\n{second}"));
    let rounds = rounds(&out);
    assert_eq!(rounds.len(), 2, "{out:?}");
    assert_eq!(rounds[0]["closed_by"], "tools_done");
    assert_eq!(rounds[0]["tool_calls"][0]["result"], json!({"status": "completed", "content": "30°C"}));
    assert_eq!(rounds[1]["message"], "The current temperature in Paris, the capital of France, is 30°C.");
    // Usage is per request: each round has its own, the gauge the last.
    assert_eq!(rounds[0]["meta"]["bedrock_usage"]["totalTokens"], 562);
    assert_eq!(rounds[1]["meta"]["bedrock_usage"]["totalTokens"], 595);
    let summary = summary(&out);
    assert_eq!((&summary["finish_reason"], &summary["last_token_usage"]), (&json!("completed"), &json!(595)));
}

#[test]
fn a_server_tool_has_its_result_in_the_stream() {
    let out = records("pydantic-ai-bedrock-code-execution-tool-stream.bin");
    let rounds = rounds(&out);
    assert_eq!(rounds.len(), 2, "{out:?}");
    let server = &rounds[0]["tool_calls"][0];
    assert_eq!(rounds[0]["closed_by"], "tools_done");
    assert_eq!(server["id"], "tooluse_VQNZJRUFMoqZzszVsRd4og");
    assert_eq!(server["name"], "nova_code_interpreter");
    assert_eq!(server["arguments"], r#"{"snippet":"1234 * 5678"}"#);
    assert_eq!(
        server["result"],
        json!({"status": "completed", "content": r#"{"stdOut":"7006652","stdErr":"","exitCode":0,"isError":false}"#})
    );
    assert_eq!(
        server["meta"],
        json!({"bedrock_tool_type": "server_tool_use", "bedrock_result_type": "nova_code_interpreter_result", "bedrock_result_status": "success"})
    );
    // Block 2 (the index counts on across tool, result, tool) is the
    // client's tool.
    let client = &rounds[1]["tool_calls"][0];
    assert_eq!((&client["id"], &client["name"]), (&json!("tooluse_ptgCcZ0uQu-UUMz0abqoWw"), &json!("final_result")));
    assert_eq!(client["arguments"], r#"{"result":7006652.0}"#);
    assert_eq!(client.get("meta"), None, "type tool_use is the ordinary kind");
    assert_eq!(rounds[1]["meta"]["bedrock_usage"]["serverToolUsage"], json!({}));
    assert_eq!(summary(&out)["last_token_usage"], 1061);
}

#[test]
fn haiku_reasoning_from_its_recorder() {
    let out = records("req_llm-converse_reasoning_streaming.bin");
    let [round] = rounds(&out)[..] else { panic!("{out:?}") };
    assert_eq!(round["thought"], "17 times 23\n17 × 23 = 17 × 20 + 17 × 3\n= 340 + 51\n= 391");
    assert_eq!(round["message"], "391");
    let kept = &round["meta"]["bedrock_kept_blocks"][0]["reasoningContent"]["reasoningText"];
    assert!(kept["signature"].as_str().unwrap().starts_with("EqECCoQBCBEQARgCKkAkKS51"));
    assert_eq!(round["meta"]["bedrock_usage"]["totalTokens"], 102);
    assert_eq!(summary(&out)["finish_reason"], "completed");
}

#[test]
fn the_sdk_logs_read_as_the_bodies_do() {
    let out = records("vercel-amazon-bedrock-text.chunks.jsonl");
    let [round] = rounds(&out)[..] else { panic!("{out:?}") };
    assert_eq!(
        round["message"],
        "Let me count the \"r\"s in \"strawberry\":\n\ns-t-**r**-a-w-b-e-**r**-**r**-y\n\nThere are **3** r's in \"strawberry.\""
    );
    assert_eq!(round["meta"]["bedrock_additional_model_response_fields"], json!({"delta": {"stop_sequence": null}}));
    assert_eq!(round["meta"]["bedrock_usage"]["totalTokens"], 77);
    assert_eq!(summary(&out)["finish_reason"], "completed");

    let out = records("vercel-amazon-bedrock-reasoning.chunks.jsonl");
    let [round] = rounds(&out)[..] else { panic!("{out:?}") };
    assert_eq!(
        round["thought"],
        "Let me count the r's in \"strawberry\":\n\ns-t-r-a-w-b-e-r-r-y\n\nr appears at positions 3, 8, and 9.\n\nSo there are 3 r's."
    );
    assert_eq!(round["message"], "There are **3** r's in \"strawberry\":\n\n1. st**r**awbe**r****r**y");
    let kept = &round["meta"]["bedrock_kept_blocks"][0]["reasoningContent"]["reasoningText"];
    assert!(kept["signature"].as_str().unwrap().ends_with("fY6dXiklo94vgpFTPuZ97mfiN3LY6uYyBwL8RkDaGAE="));
    assert_eq!(summary(&out)["last_token_usage"], 145);

    let out = records("vercel-amazon-bedrock-tool-no-args.chunks.jsonl");
    let [round] = rounds(&out)[..] else { panic!("{out:?}") };
    assert_eq!(round["message"], "I'll update the issue list for you.");
    let call = &round["tool_calls"][0];
    assert_eq!((&call["id"], &call["name"]), (&json!("tool-use-id"), &json!("updateIssueList")));
    assert_eq!(call["arguments"], "{}", "only \"\" came: no arguments");
    assert_eq!(round["meta"]["bedrock_stop_reason"], "tool_use");
    assert_eq!(summary(&out)["last_token_usage"], 125);
}

/// The base64 of the recorder's chunks, decoded here.
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = text.bytes().filter(|c| *c != b'=').map(value).collect();
    digits
        .chunks(4)
        .flat_map(|group| {
            let n = group.iter().enumerate().fold(0u32, |n, (i, d)| n | u32::from(*d) << (18 - 6 * i));
            n.to_be_bytes()[1..group.len()].to_vec()
        })
        .collect()
}

#[test]
fn the_transport_chunks_as_they_came_read_as_the_whole_body() {
    let recording: Value =
        serde_json::from_slice(&input("req_llm-converse_reasoning_streaming.recording.json")).unwrap();
    let chunks: Vec<Vec<u8>> =
        recording["chunks"].as_array().unwrap().iter().map(|c| base64(c["b64"].as_str().unwrap())).collect();
    assert_eq!(chunks.len(), 15);
    let body = input("req_llm-converse_reasoning_streaming.bin");
    assert_eq!(chunks.concat(), body);
    // They do not align with frames: the first holds two.
    let starts: Vec<usize> = frames(&body).iter().map(|(at, _, _)| *at).collect();
    assert!(starts.iter().filter(|at| **at < chunks[0].len()).count() >= 2);
    let mut cuts = Vec::new();
    let mut at = 0;
    for chunk in &chunks {
        at += chunk.len();
        cuts.push(at);
    }
    let whole = replay_in_pieces(&body, &[], &ReplayOptions::new());
    assert_eq!(replay_in_pieces(&body, &cuts, &ReplayOptions::new()), whole);
    assert!(whole.starts_with(br#"{"type":"round","run":0,"index":0,"closed_by":"finish","message":"391""#));
}

#[test]
fn frames_cut_at_every_byte_read_the_same() {
    for name in recordings().iter().filter(|n| n.ends_with(".bin")) {
        let body = input(name);
        let whole = replay_in_pieces(&body, &[], &ReplayOptions::new());
        let every: Vec<usize> = (1..body.len()).collect();
        assert_eq!(replay_in_pieces(&body, &every, &ReplayOptions::new()), whole, "{name}: byte by byte");
        for cut in 0..body.len() {
            assert_eq!(replay_in_pieces(&body, &[cut], &ReplayOptions::new()), whole, "{name}: cut at {cut}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn frames_cut_anywhere_read_the_same(cuts in prop::collection::vec(0usize..5_749, 0..40)) {
        let body = input("pydantic-ai-bedrock-thinking-part-stream.bin");
        let mut cuts = cuts;
        cuts.sort_unstable();
        let whole = replay_in_pieces(&body, &[], &ReplayOptions::new());
        prop_assert_eq!(replay_in_pieces(&body, &cuts, &ReplayOptions::new()), whole);
    }
}

#[test]
fn a_frame_whose_crc_fails_is_reported_and_the_rest_is_read() {
    let mut body = input("pydantic-ai-bedrock-thinking-part-stream.bin");
    let frames = frames(&body);
    // Frame 5 is the reasoning delta " a simple \"Hello\".".
    let (at, _, payload) = &frames[4];
    assert_eq!(payload["delta"]["reasoningContent"]["text"], " a simple \"Hello\".");
    let flip = frames[5].0 - 10;
    body[flip] ^= 0x20;
    let (out, stats) = replay_lines(&body, &options("auto", "records"));
    assert_eq!(stats.bad_lines, 1);
    let [(kind, detail)] = &anomalies(&out)[..] else { panic!("{out:?}") };
    assert_eq!(kind, "bad_line");
    assert!(detail.starts_with(&format!("frame 5: at byte {at}: message CRC32 ")), "{detail}");
    assert!(detail.ends_with("the frame is read past"), "{detail}");
    let [round] = rounds(&out)[..] else { panic!("{out:?}") };
    assert_eq!(round["message"], "Hello! It's nice to meet you. How can I help you today?");
    let thought = round["thought"].as_str().unwrap();
    assert!(thought.starts_with("The user has greeted me with I should respond in a friendly"), "{thought}");
    assert_eq!(summary(&out)["finish_reason"], "completed");
}

#[test]
fn a_broken_prelude_stops_the_reading_and_says_so() {
    let mut body = input("pydantic-ai-bedrock-iter-stream-2-answer.bin");
    let frames = frames(&body);
    let at = frames[3].0;
    body[at + 2] ^= 1;
    let (out, stats) = replay_lines(&body, &options("auto", "records"));
    assert_eq!(stats.bad_lines, 1);
    let [(kind, detail)] = &anomalies(&out)[..] else { panic!("{out:?}") };
    assert_eq!(kind, "bad_line");
    assert!(detail.starts_with(&format!("frame 4: at byte {at}: prelude CRC32 ")), "{detail}");
    assert!(detail.ends_with("the frames' boundaries are lost, the rest of the input is not read"), "{detail}");
    // The first three frames were read: two text deltas.
    let [round] = rounds(&out)[..] else { panic!("{out:?}") };
    assert_eq!(round["message"], "The current temperature in Paris, the");
    assert_eq!(summary(&out)["finish_reason"], "interrupted");
}

#[test]
fn a_body_cut_short_reports_its_last_frame() {
    let body = input("pydantic-ai-bedrock-iter-stream-2-answer.bin");
    let last = frames(&body)[8].0;
    let (out, _) = replay_lines(&body[..last + 20], &options("auto", "records"));
    let [(_, detail)] = &anomalies(&out)[..] else { panic!("{out:?}") };
    assert_eq!(
        detail,
        &format!("frame 9: at byte {last}: the input ended 20 bytes into a frame of {} bytes", body.len() - last)
    );
    assert_eq!(summary(&out)["finish_reason"], "completed", "the stop came, its metadata did not");
}

#[test]
fn a_frame_over_the_line_limit_is_read_past() {
    let big = json!({"contentBlockIndex": 0, "delta": {"text": "x".repeat(3_000)}});
    let body = [
        event("messageStart", json!({"role": "assistant"})),
        event("contentBlockDelta", big),
        event("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"text": "ok"}})),
    ]
    .concat();
    let options = ReplayOptions::new().max_line_bytes(1_000);
    let (out, stats) = replay_lines(&body, &options);
    assert_eq!((stats.lines, stats.bad_lines), (3, 1));
    let [(_, detail)] = &anomalies(&out)[..] else { panic!("{out:?}") };
    assert!(detail.starts_with("frame 2: longer than 1000 bytes ("), "{detail}");
    assert_eq!(rounds(&out)[0]["message"], "ok");
    let cuts: Vec<usize> = (0..body.len()).step_by(7).collect();
    assert_eq!(replay_in_pieces(&body, &cuts, &options), replay_in_pieces(&body, &[], &options));
}

#[test]
fn an_exception_as_the_only_frame_fails_the_run() {
    let body = frame(
        &[
            (":exception-type", "validationException"),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        r#"{"message":"The model returned the following errors: bad input"}"#,
    );
    let (out, stats) = replay_lines(&body, &options("auto", "records"));
    assert_eq!(stats.format.map(|f| f.name()), Some("bedrock"));
    assert_eq!(
        anomalies(&out),
        [(
            "protocol_error".to_owned(),
            r#"bedrock: exception: {"validationException":{"message":"The model returned the following errors: bad input"}}"#
                .to_owned()
        )]
    );
    assert_eq!(summary(&out)["finish_reason"], "failed");
    // The SDKs' form of the same.
    let out = lines(r#"{"throttlingException":{"message":"Too many requests"}}"#);
    assert_eq!(anomalies(&out)[0].0, "protocol_error");
    assert_eq!(summary(&out)["finish_reason"], "failed");
}

#[test]
fn an_exception_mid_stream_ends_what_began_and_fails() {
    let body = [
        event("messageStart", json!({"role": "assistant"})),
        event("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"text": "Partial"}})),
        frame(
            &[(":message-type", "exception"), (":exception-type", "modelStreamErrorException")],
            r#"{"message":"boom"}"#,
        ),
    ]
    .concat();
    let (out, _) = replay_lines(&body, &options("auto", "records"));
    assert_eq!(rounds(&out)[0]["message"], "Partial");
    assert_eq!(summary(&out)["finish_reason"], "failed");
    assert!(anomalies(&out)[0].1.contains("modelStreamErrorException"));
    // After the stop, before the metadata: the same response, which fails.
    let out = lines(
        r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Hi"}}}
{"messageStop":{"stopReason":"end_turn"}}
{"internalServerException":{"message":"oops"}}
"#,
    );
    assert_eq!(summary(&out)["finish_reason"], "failed");
}

#[test]
fn text_and_reasoning_need_no_block_start() {
    let out = lines(
        r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"Think"}}}}
{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":""}}}}
{"contentBlockDelta":{"contentBlockIndex":1,"delta":{"text":"Say"}}}
{"messageStop":{"stopReason":"end_turn"}}
"#,
    );
    let [round] = rounds(&out)[..] else { panic!("{out:?}") };
    assert_eq!((&round["thought"], &round["message"]), (&json!("Think"), &json!("Say")));
    assert_eq!(round["meta"].get("bedrock_kept_blocks"), None, "no signature: nothing to send back");
    assert_eq!(summary(&out)["finish_reason"], "completed");
}

#[test]
fn usage_after_the_stop_is_not_lost_and_the_run_ends_with_it() {
    let out = lines(
        r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Hi"}}}
{"messageStop":{"stopReason":"end_turn"}}
{"metadata":{"usage":{"inputTokens":3,"outputTokens":2,"totalTokens":5,"cacheReadInputTokens":0},"metrics":{"latencyMs":9},"trace":{"guardrail":{}}}}
"#,
    );
    let [round] = rounds(&out)[..] else { panic!("{out:?}") };
    assert_eq!(round["meta"]["bedrock_usage"]["totalTokens"], 5);
    assert_eq!(round["meta"]["bedrock_metrics"], json!({"latencyMs": 9}));
    assert_eq!(round["meta"]["bedrock_trace"], json!({"guardrail": {}}));
    assert_eq!(summary(&out)["last_token_usage"], 5);
    assert_eq!(anomalies(&out), [], "nothing after the finish");
    // No total: the counts added up.
    let out = lines(
        r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Hi"}}}
{"metadata":{"usage":{"inputTokens":3,"outputTokens":2,"cacheWriteInputTokens":4}}}
{"messageStop":{"stopReason":"max_tokens"}}
"#,
    );
    assert_eq!(summary(&out)["last_token_usage"], 9);
    assert_eq!(summary(&out)["finish_reason"], "completed", "metadata before the stop: it ends at the stop");
}

#[test]
fn the_next_response_after_an_end_turn_is_the_next_run() {
    let out = lines(
        r#"{"messageStart":{"role":"assistant"}}
{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"One"}}}
{"messageStop":{"stopReason":"end_turn"}}
{"messageStart":{"role":"assistant"}}
{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Two"}}}
{"messageStop":{"stopReason":"stop_sequence"}}
"#,
    );
    let summaries = of_type(&out, "summary");
    assert_eq!(summaries.len(), 2);
    assert_eq!((&summaries[0]["run"], &summaries[0]["finish_reason"]), (&json!(0), &json!("completed")));
    assert_eq!((&summaries[1]["run"], &summaries[1]["finish_reason"]), (&json!(1), &json!("completed")));
    assert_eq!(rounds(&out)[1]["message"], "Two");
}

#[test]
fn stop_reasons_end_the_run_as_they_mean() {
    for (reason, finish) in [
        ("end_turn", "completed"),
        ("stop_sequence", "completed"),
        ("max_tokens", "completed"),
        ("guardrail_intervened", "failed"),
        ("content_filtered", "failed"),
        ("tool_use", "interrupted"),
        ("a_future_reason", "interrupted"),
    ] {
        let out = lines(&format!(
            "{}\n{}\n",
            r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Hi"}}}"#,
            json!({"messageStop": {"stopReason": reason}})
        ));
        assert_eq!(summary(&out)["finish_reason"], finish, "{reason}");
        assert_eq!(rounds(&out)[0]["meta"]["bedrock_stop_reason"], reason);
    }
}

#[test]
fn tool_input_in_one_piece_in_fragments_or_none() {
    let start = |index: u64, id: &str| json!({"contentBlockStart": {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": id, "name": "f"}}}});
    let input = |index: u64, text: &str| json!({"contentBlockDelta": {"contentBlockIndex": index, "delta": {"toolUse": {"input": text}}}});
    let stop = |index: u64| json!({"contentBlockStop": {"contentBlockIndex": index}});
    let stream = [
        start(0, "whole"),
        input(0, r#"{"a":1}"#),
        stop(0),
        start(1, "pieces"),
        input(1, r#"{"b":"#),
        input(1, r#"[1,"#),
        input(1, "2]}"),
        stop(1),
        start(2, "empty"),
        input(2, ""),
        stop(2),
        start(3, "none"),
        stop(3),
        json!({"contentBlockDelta": {"contentBlockIndex": 4, "delta": {"toolUse": {"input": "{}"}}}}),
    ];
    let text: String = stream.iter().map(|event| format!("{event}\n")).collect();
    let out = lines(&text);
    let round = rounds(&out)[0];
    let arguments: Vec<(&str, &str)> = round["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|call| (call["id"].as_str().unwrap(), call["arguments"].as_str().unwrap()))
        .collect();
    assert_eq!(arguments, [("whole", r#"{"a":1}"#), ("pieces", r#"{"b":[1,2]}"#), ("empty", "{}"), ("none", "{}")]);
    // A tool delta for a block no toolUse opened: reported, kept.
    let [(kind, detail)] = &anomalies(&out)[..] else { panic!("{out:?}") };
    assert_eq!(kind, "unknown_content");
    assert!(detail.starts_with("bedrock: a delta for block 4, which is not open for it: "), "{detail}");
}

#[test]
fn padding_is_ignored_wherever_it_is() {
    let out = lines(
        r#"{"messageStart":{"p":"abc","role":"assistant"},"p":"xyz"}
{"contentBlockStart":{"contentBlockIndex":0,"p":"ab","start":{"p":"a"}}}
{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Hi"},"p":"abcdef"}}
{"messageStop":{"p":"a","stopReason":"end_turn"}}
"#,
    );
    assert_eq!(anomalies(&out), []);
    assert_eq!(rounds(&out)[0]["message"], "Hi");
    assert_eq!(summary(&out)["finish_reason"], "completed");
}

#[test]
fn redacted_reasoning_is_kept_as_it_came() {
    let out = lines(
        r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"reasoningContent":{"redactedContent":"AAEC/w=="}}}}
{"contentBlockStop":{"contentBlockIndex":0}}
{"contentBlockDelta":{"contentBlockIndex":1,"delta":{"text":"Done"}}}
"#,
    );
    let round = rounds(&out)[0];
    assert_eq!(round["meta"]["bedrock_kept_blocks"], json!([{"reasoningContent": {"redactedContent": "AAEC/w=="}}]));
}

#[test]
fn a_failed_server_tool_result_and_a_host_error_fail_their_calls() {
    let out = lines(
        r#"{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"s1","name":"nova_code_interpreter","type":"server_tool_use"}}}}
{"contentBlockStop":{"contentBlockIndex":0}}
{"contentBlockStart":{"contentBlockIndex":1,"start":{"toolResult":{"toolUseId":"s1","status":"error"}}}}
{"contentBlockDelta":{"contentBlockIndex":1,"delta":{"toolResult":[{"text":"Time"},{"text":"out"}]}}}
{"contentBlockStop":{"contentBlockIndex":1}}
{"contentBlockStart":{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"c1","name":"ls"}}}}
{"contentBlockStop":{"contentBlockIndex":2}}
{"messageStop":{"stopReason":"tool_use"}}
{"role":"user","content":[{"toolResult":{"toolUseId":"c1","content":[{"json":{"error":"denied"}}],"status":"error"}}]}
"#,
    );
    let calls: Vec<&Value> = rounds(&out).iter().flat_map(|r| r["tool_calls"].as_array().unwrap()).collect();
    assert_eq!(calls[0]["result"], json!({"status": "failed", "content": "Timeout"}));
    assert_eq!(calls[1]["result"], json!({"status": "failed", "content": r#"{"error":"denied"}"#}));
}

#[test]
fn a_users_prompt_between_responses_begins_the_next_run() {
    let out = lines(
        r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"One"}}}
{"messageStop":{"stopReason":"end_turn"}}
{"role":"user","content":[{"text":"And again?"}]}
{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Two"}}}
"#,
    );
    let summaries = of_type(&out, "summary");
    assert_eq!(summaries.len(), 2);
    assert_eq!(summaries[0]["finish_reason"], "completed");
    assert_eq!(summaries[1]["bedrock_user_message"], json!([{"text": "And again?"}]));
}

#[test]
fn unknown_events_deltas_and_blocks_are_kept() {
    let out = lines(
        r#"{"futureEvent":{"x":1}}
{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"citation":{"title":"t"}}}}
{"contentBlockStart":{"contentBlockIndex":1,"start":{"image":{"format":"png"}}}}
"#,
    );
    let found = anomalies(&out);
    assert_eq!(
        found,
        [
            ("unknown_event".to_owned(), r#"bedrock: unknown event: {"futureEvent":{"x":1}}"#.to_owned()),
            (
                "unknown_content".to_owned(),
                r#"bedrock: a delta of a kind this format does not know: {"contentBlockDelta":{"contentBlockIndex":0,"delta":{"citation":{"title":"t"}}}}"#
                    .to_owned()
            ),
            (
                "unknown_content".to_owned(),
                r#"bedrock: a block of a kind this format does not know: {"contentBlockStart":{"contentBlockIndex":1,"start":{"image":{"format":"png"}}}}"#
                    .to_owned()
            ),
        ]
    );
}

#[test]
fn a_frame_that_is_not_json_is_a_bad_frame() {
    let body =
        [event("messageStart", json!({"role": "assistant"})), frame(&[(":event-type", "contentBlockDelta")], "{oops")]
            .concat();
    let (out, stats) = replay_lines(&body, &options("auto", "records"));
    assert_eq!(stats.bad_lines, 1);
    let [(kind, detail)] = &anomalies(&out)[..] else { panic!("{out:?}") };
    assert_eq!(kind, "bad_line");
    assert!(detail.starts_with("frame 2: not valid JSON"), "{detail}");
}

#[test]
fn a_checkpoint_inside_a_frame_continues_it() {
    let body = input("pydantic-ai-bedrock-code-execution-tool-stream.bin");
    let whole = replay_in_pieces(&body, &[], &ReplayOptions::new());
    for cut in [5, 12, 200, 1_000, body.len() - 3] {
        assert_eq!(replay_restored_at(&body, cut, &ReplayOptions::new()), whole, "checkpoint at {cut}");
    }
}

#[test]
fn text_input_is_not_held_back_and_other_formats_are_not_sniffed() {
    // A text input is decided at its first byte: a line is read at once.
    let mut replayer = Replayer::new(&ReplayOptions::new()).unwrap();
    replayer.feed(b"{\"op\":\"message\",\"text\":\"Hi\"}\n", &mut ());
    assert_eq!(replayer.stats().lines, 1);
    // A body replayed as another format is read as lines, and reported.
    let body = input("pydantic-ai-bedrock-iter-stream-2-answer.bin");
    let (_, stats) = replay_lines(&body, &options("anthropic", "records"));
    assert_eq!(stats.format.map(|f| f.name()), Some("anthropic"));
    assert!(stats.bad_lines > 0);
}

#[test]
fn the_command_line_reads_a_body_with_no_from() {
    let output = Command::new(env!("CARGO_BIN_EXE_roundup"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["replay", "tests/fixtures/bedrock/pydantic-ai-bedrock-iter-stream-2-answer.bin"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let out = parse_output(&output.stdout);
    assert_eq!(rounds(&out)[0]["message"], "The current temperature in Paris, the capital of France, is 30°C.");
    assert_eq!(summary(&out)["finish_reason"], "completed");
}

/// Standard base64, as the service encodes a chunk's bytes.
fn base64_of(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for group in bytes.chunks(3) {
        let n = group.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= group.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `InvokeModelWithResponseStream`: each chunk's bytes are one of the
/// model's own events (Claude's are Anthropic Messages events). Every
/// Anthropic fixture, wrapped chunk by chunk as the service sends it (as the
/// SDKs' JSON lines, and as event-stream frames), reads to the records the
/// Anthropic reading gives.
#[test]
fn invoke_model_chunks_read_as_the_model_s_own_events() {
    let mut compared = 0;
    for path in roundup_testkit::fixture_files("anthropic-messages") {
        if !path.to_string_lossy().ends_with(".chunks.jsonl") {
            continue;
        }
        let native = std::fs::read_to_string(&path).unwrap();
        let expected = clean_replay(native.as_bytes(), "anthropic", "records");
        let wrapped: String = native
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| format!("{{\"chunk\":{{\"bytes\":\"{}\"}},\"p\":\"abc\"}}\n", base64_of(line.as_bytes())))
            .collect();
        assert_eq!(clean_replay(wrapped.as_bytes(), "bedrock", "records"), expected, "{}", path.display());
        let (auto, _) = replay_lines(wrapped.as_bytes(), &ReplayOptions::new());
        assert_eq!(auto, expected, "detected: {}", path.display());
        let framed: Vec<u8> = native
            .lines()
            .filter(|line| !line.trim().is_empty())
            .flat_map(|line| {
                let payload = format!("{{\"bytes\":\"{}\",\"p\":\"abcd\"}}", base64_of(line.as_bytes()));
                frame(
                    &[(":message-type", "event"), (":event-type", "chunk"), (":content-type", "application/json")],
                    &payload,
                )
            })
            .collect();
        let (binary, _) = replay_lines(&framed, &ReplayOptions::new());
        assert_eq!(binary, expected, "as frames: {}", path.display());
        compared += 1;
    }
    assert!(compared >= 5, "{compared} fixtures");
}

#[test]
fn a_chunk_that_is_not_base64_or_not_an_event_is_reported_kept() {
    let input = format!(
        "{}\n{}\n",
        r#"{"chunk":{"bytes":"not base64!"}}"#,
        format_args!(r#"{{"chunk":{{"bytes":"{}"}}}}"#, base64_of(b"{\"outputText\":\"Titan says hi\"}"))
    );
    let out = clean_replay(input.as_bytes(), "bedrock", "records");
    let details: Vec<&str> =
        out.iter().filter(|l| l["type"] == "anomaly").map(|l| l["detail"].as_str().unwrap()).collect();
    assert_eq!(details.len(), 2, "{out:?}");
    assert!(details[0].contains("not base64") && details[0].contains("not base64!"), "{details:?}");
    assert!(details[1].contains("Titan says hi"), "another model's event is kept: {details:?}");
}
