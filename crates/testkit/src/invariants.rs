//! Invariants of roundup's output, checked by the property tests and by the
//! fuzz targets (which include this file by path). Each returns the first
//! violation as a message. Only serde_json and roundup are used here.

use std::collections::HashMap;

use roundup::{Call, OpsLine};
use serde_json::Value;

/// UI events (of one session) are well formed: text starts and ends pair,
/// deltas only inside their pair, every tool call start gets exactly one
/// end or interrupted, a round ends with nothing open, and nothing is left
/// open once the run finished.
pub fn check_ui(events: &[Value]) -> Result<(), String> {
    let mut text: Option<&str> = None;
    let mut open_calls: Vec<String> = Vec::new();
    let mut round_calls: Vec<String> = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let name = event["event"].as_str().unwrap_or("?");
        let id = event["id"].as_str().unwrap_or_default().to_owned();
        let fail = |why: &str| Err(format!("event {i} ({event}): {why}"));
        match name {
            "message_start" | "thought_start" => {
                if text.is_some() {
                    return fail("start while a text stream is open");
                }
                text = Some(&name[..name.len() - "_start".len()]);
            }
            "message_delta" | "thought_delta" | "message_end" | "thought_end" => {
                let kind = name.split('_').next().unwrap_or_default();
                if text != Some(kind) {
                    return fail("delta or end outside its start/end pair");
                }
                if name.ends_with("_end") {
                    text = None;
                }
            }
            "tool_call_start" => {
                if text.is_some() {
                    return fail("tool call starts inside a text stream");
                }
                if round_calls.contains(&id) {
                    return fail("second start for an id of this round");
                }
                open_calls.push(id.clone());
                round_calls.push(id);
            }
            "tool_call_result" => {
                if !open_calls.contains(&id) {
                    return fail("result for a call that is not open");
                }
            }
            "tool_call_end" | "tool_call_interrupted" => {
                let Some(at) = open_calls.iter().position(|c| *c == id) else {
                    return fail("end for a call that is not open");
                };
                open_calls.remove(at);
            }
            "tool_call_args" | "tool_call_title" => {
                if !round_calls.contains(&id) {
                    return fail("arguments or title for a call of no open round");
                }
            }
            "round_end" => {
                if text.is_some() || !open_calls.is_empty() {
                    return fail("round ends with something open");
                }
                round_calls.clear();
            }
            "tool_call_stitched" | "token_usage" => {}
            other => return fail(&format!("unknown event {other}")),
        }
    }
    if text.is_some() || !open_calls.is_empty() {
        return Err("something is still open after the run finished".into());
    }
    Ok(())
}

/// [`check_ui`] for each session's events of a mixed stream (the
/// `session` field of `--emit ui` lines).
pub fn check_ui_per_session(events: &[Value]) -> Result<(), String> {
    let mut sessions: Vec<Option<&str>> = events.iter().map(|e| e["session"].as_str()).collect();
    sessions.sort_unstable();
    sessions.dedup();
    for session in sessions {
        let mine: Vec<Value> = events.iter().filter(|e| e["session"].as_str() == session).cloned().collect();
        check_ui(&mine).map_err(|e| format!("session {session:?}: {e}"))?;
    }
    Ok(())
}

/// Every tool call of every round has exactly one result (ids unique in a
/// round, a placeholder reason that matches what closed the round), and the
/// summaries count the same tool calls.
pub fn check_rounds(lines: &[Value]) -> Result<(), String> {
    let mut calls = 0;
    for round in lines.iter().filter(|l| l["type"] == "round") {
        let tool_calls = round["tool_calls"].as_array().ok_or("round without tool_calls")?;
        let mut ids: Vec<&str> = tool_calls.iter().filter_map(|c| c["id"].as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.len() != tool_calls.len() {
            return Err(format!("an id twice in one round: {round}"));
        }
        for call in tool_calls {
            let result = &call["result"];
            let ok = match (result["status"].as_str(), round["closed_by"].as_str()) {
                (Some("completed" | "failed"), _) => result["content"].is_string(),
                (Some("placeholder"), Some("next_chunk")) => result["reason"] == "superseded",
                (Some("placeholder"), Some("finish")) => {
                    result["reason"] == "canceled" || result["reason"] == "interrupted"
                }
                _ => false,
            };
            if !ok {
                return Err(format!("impossible result {result} in {round}"));
            }
        }
        calls += tool_calls.len() as u64;
    }
    let summed: u64 = lines.iter().filter(|l| l["type"] == "summary").filter_map(|s| s["tool_calls"].as_u64()).sum();
    if calls != summed {
        return Err(format!("{calls} tool calls in rounds, {summed} in summaries"));
    }
    Ok(())
}

/// What a stream fed in that must come out somewhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fed {
    Message(Option<String>, String),
    Thought(Option<String>, String),
    Terminal(Option<String>, String),
}

impl Fed {
    /// What the call feeds, if it feeds anything checked here.
    pub fn of(session: Option<&str>, call: &Call<'_>) -> Option<Fed> {
        let session = session.map(str::to_owned);
        match *call {
            Call::Message { text } => Some(Fed::Message(session, text.to_owned())),
            Call::Thought { text } => Some(Fed::Thought(session, text.to_owned())),
            Call::ToolUpdate { content, status, .. } if status.is_terminal() => {
                Some(Fed::Terminal(session, content.to_owned()))
            }
            _ => None,
        }
    }

    /// What an ops JSONL input feeds, as the library's own reader sees it.
    pub fn from_jsonl(input: &[u8]) -> Vec<Fed> {
        input
            .split(|b| *b == b'\n')
            .filter_map(|line| OpsLine::parse(line).ok())
            .filter_map(|line| Fed::of(line.session(), &line.call().ok()??))
            .collect()
    }
}

/// Nothing is lost: per session, all text fed in is in the rounds (or,
/// after `finish`, in the anomaly reporting it), in order; and every
/// terminal's content is in exactly one place: a result, a stitch or an
/// anomaly (compared as multisets, so repeated contents count).
pub fn check_nothing_lost(fed: &[Fed], lines: &[Value]) -> Result<(), String> {
    let mut sessions: Vec<Option<String>> = fed
        .iter()
        .map(|f| match f {
            Fed::Message(s, _) | Fed::Thought(s, _) | Fed::Terminal(s, _) => s.clone(),
        })
        .collect();
    sessions.sort();
    sessions.dedup();
    for session in &sessions {
        let mine = |l: &&Value| l["session"].as_str() == session.as_deref();
        for op in ["message", "thought"] {
            let fed_text: String = fed
                .iter()
                .filter_map(|f| match f {
                    Fed::Message(s, t) if op == "message" && s == session => Some(t.as_str()),
                    Fed::Thought(s, t) if op == "thought" && s == session => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            let out_text: String = lines
                .iter()
                .filter(mine)
                .filter_map(|l| match l["type"].as_str() {
                    Some("round") => l[op].as_str(),
                    Some("anomaly") if l["kind"] == "after_finish" && l["detail"] == op => l["content"].as_str(),
                    _ => None,
                })
                .collect();
            if fed_text != out_text {
                return Err(format!("session {session:?}: {op} text fed {fed_text:?}, found {out_text:?}"));
            }
        }
        let mut fed_results: HashMap<String, i64> = HashMap::new();
        for f in fed {
            if let Fed::Terminal(s, content) = f {
                if s == session {
                    *fed_results.entry(content.clone()).or_default() += 1;
                }
            }
        }
        let mut found: HashMap<String, i64> = HashMap::new();
        let mut add = |v: &Value| *found.entry(v.as_str().unwrap_or_default().to_owned()).or_default() += 1;
        for line in lines.iter().filter(mine) {
            match line["type"].as_str() {
                Some("round") => {
                    for call in line["tool_calls"].as_array().into_iter().flatten() {
                        if !call["result"]["content"].is_null() {
                            add(&call["result"]["content"]);
                        }
                    }
                }
                Some("stitch") => add(&line["result"]["content"]),
                Some("anomaly") => match line["kind"].as_str() {
                    Some("duplicate_terminal" | "undeclared_terminal") => add(&line["detail"]),
                    Some("after_finish") if line["detail"] == "tool_update" && !line["status"].is_null() => {
                        // An empty content is not repeated in the anomaly:
                        // `add` reads a missing one as "".
                        add(&line["content"])
                    }
                    _ => {}
                },
                _ => {}
            }
        }
        if fed_results != found {
            return Err(format!("session {session:?}: terminal contents fed {fed_results:?}, found {found:?}"));
        }
    }
    Ok(())
}
