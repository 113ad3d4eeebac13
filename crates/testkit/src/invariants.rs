//! Invariants of roundup's output, checked by the property tests, the
//! stress tests and the fuzz targets. Each returns the first violation as a
//! message.

use std::collections::HashMap;

use roundup::{Call, OpsLine};
use serde_json::Value;

/// UI events (of one session) are well formed: runs start and end in pairs
/// and every other event is inside one, text starts and ends pair, deltas
/// only inside their pair, every tool call start gets exactly one end or
/// interrupted, live output only while its call is open, a round ends with
/// nothing open, and nothing is left open once the run finished.
pub fn check_ui(events: &[Value]) -> Result<(), String> {
    let mut in_run = false;
    let mut text: Option<&str> = None;
    let mut open_calls: Vec<String> = Vec::new();
    let mut round_calls: Vec<String> = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let name = event["event"].as_str().unwrap_or("?");
        let id = event["id"].as_str().unwrap_or_default().to_owned();
        let fail = |why: &str| Err(format!("event {i} ({event}): {why}"));
        if name == "run_start" {
            if in_run {
                return fail("a run starts while one is open");
            }
            in_run = true;
            continue;
        }
        if !in_run {
            return fail("an event outside a run");
        }
        match name {
            "run_end" => {
                if text.is_some() || !open_calls.is_empty() {
                    return fail("a run ends with something open");
                }
                in_run = false;
                round_calls.clear();
            }
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
            "tool_call_result" | "tool_call_output" => {
                if !open_calls.contains(&id) {
                    return fail("result or output for a call that is not open");
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
    if in_run || text.is_some() || !open_calls.is_empty() {
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
/// round, a placeholder reason that matches what closed the round: a
/// finish's reason, the run's `finish_reason` when its summary is there),
/// and the summaries count the same tool calls.
pub fn check_rounds(lines: &[Value]) -> Result<(), String> {
    // What each run's summary says ended it: a call left open at the end
    // gets a placeholder of that reason.
    let ends: Vec<(&Value, &Value, &Value)> = lines
        .iter()
        .filter(|l| l["type"] == "summary")
        .map(|s| (&s["session"], &s["run"], &s["finish_reason"]))
        .collect();
    let end_of = |round: &Value| {
        ends.iter().find(|(session, run, _)| **session == round["session"] && **run == round["run"]).map(|e| e.2)
    };
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
                // The finish reason (SPEC v3: completed, failed, canceled,
                // interrupted).
                (Some("placeholder"), Some("finish")) => {
                    let known = ["completed", "failed", "canceled", "interrupted"];
                    let reason = result["reason"].as_str().unwrap_or("");
                    known.contains(&reason) && end_of(round).is_none_or(|end| end == reason)
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
    /// A terminal `tool_update`: session, id, content.
    Terminal(Option<String>, String, String),
    /// A `tool_output`: session, id, content, replace.
    Output(Option<String>, String, String, bool),
}

impl Fed {
    /// What the call feeds, if it feeds anything checked here.
    pub fn of(session: Option<&str>, call: &Call<'_>) -> Option<Fed> {
        let session = session.map(str::to_owned);
        match *call {
            Call::Message { text } => Some(Fed::Message(session, text.to_owned())),
            Call::Thought { text } => Some(Fed::Thought(session, text.to_owned())),
            Call::ToolUpdate { id, content, status } if status.is_terminal() => {
                Some(Fed::Terminal(session, id.to_owned(), content.to_owned()))
            }
            Call::ToolOutput { id, content, replace } => {
                Some(Fed::Output(session, id.to_owned(), content.to_owned(), replace))
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

    /// What an ops input feeds, framed the way the replay frames it: a
    /// JSON array body when its first byte other than whitespace (after a
    /// byte order mark) is `[`, a JSON document when it is a `{` alone on
    /// its line, JSON lines otherwise.
    ///
    /// `None` when an array or a document does not parse whole: where a
    /// broken value ends is then the splitter's own recovery, which an
    /// oracle cannot restate without copying it.
    pub fn from_input(input: &[u8]) -> Option<Vec<Fed>> {
        let body = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
        let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
        let Some(start) = body.iter().position(|b| !space(b)) else {
            return Some(Fed::from_jsonl(input));
        };
        let rest = &body[start..];
        let first_line = rest.split(|b| *b == b'\n').next().unwrap_or_default();
        let elements: Vec<&[u8]> = if rest[0] == b'[' {
            let array: Vec<&serde_json::value::RawValue> = serde_json::from_slice(body).ok()?;
            array.iter().map(|element| element.get().as_bytes()).collect()
        } else if rest[0] == b'{' && first_line[1..].iter().all(space) {
            let values = serde_json::Deserializer::from_slice(body).into_iter::<&serde_json::value::RawValue>();
            let mut elements = Vec::new();
            for value in values {
                elements.push(value.ok()?.get().as_bytes());
            }
            elements
        } else {
            return Some(Fed::from_jsonl(input));
        };
        Some(
            elements
                .into_iter()
                .filter_map(|element| OpsLine::parse(element).ok())
                .filter_map(|line| Fed::of(line.session(), &line.call().ok()??))
                .collect(),
        )
    }

    fn session(&self) -> &Option<String> {
        match self {
            Fed::Message(s, _) | Fed::Thought(s, _) | Fed::Terminal(s, ..) | Fed::Output(s, ..) => s,
        }
    }
}

/// Nothing is lost: per session, all text fed in is in the rounds (or,
/// after `finish`, in the anomaly reporting it), in order; every terminal's
/// non-empty content is in exactly one place (a result, a stitch or an
/// anomaly; compared as multisets, so repeated contents count), and there
/// is one such place per terminal (an empty terminal takes the call's live
/// output, SPEC rule 13); and every piece of live output is in a result, a
/// placeholder's `output`, a stitch or an anomaly, unless a later
/// `replace` or a later non-empty terminal of the same id superseded it.
pub fn check_nothing_lost(fed: &[Fed], lines: &[Value]) -> Result<(), String> {
    let mut sessions: Vec<Option<String>> = fed.iter().map(|f| f.session().clone()).collect();
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
        let mut terminals = 0;
        for f in fed {
            if let Fed::Terminal(s, _, content) = f {
                if s == session {
                    terminals += 1;
                    if !content.is_empty() {
                        *fed_results.entry(content.clone()).or_default() += 1;
                    }
                }
            }
        }
        let mut found: HashMap<String, i64> = HashMap::new();
        let mut places = 0;
        // Every text a piece of output may have gone to.
        let mut haystack = String::new();
        let mut add = |v: &Value| {
            places += 1;
            *found.entry(v.as_str().unwrap_or_default().to_owned()).or_default() += 1;
        };
        for line in lines.iter().filter(mine) {
            match line["type"].as_str() {
                Some("round") => {
                    for call in line["tool_calls"].as_array().into_iter().flatten() {
                        if !call["result"]["content"].is_null() {
                            add(&call["result"]["content"]);
                        }
                        for text in [&call["result"]["content"], &call["result"]["output"]] {
                            haystack.push_str(text.as_str().unwrap_or_default());
                            haystack.push('\u{0}');
                        }
                    }
                }
                Some("stitch") => {
                    add(&line["result"]["content"]);
                    haystack.push_str(line["result"]["content"].as_str().unwrap_or_default());
                }
                Some("anomaly") => {
                    match line["kind"].as_str() {
                        Some("duplicate_terminal" | "undeclared_terminal") => add(&line["detail"]),
                        Some("after_finish") if line["detail"] == "tool_update" && !line["status"].is_null() => {
                            // An empty content is not repeated in the anomaly:
                            // `add` reads a missing one as "".
                            add(&line["content"])
                        }
                        _ => {}
                    }
                    for text in [&line["detail"], &line["content"]] {
                        haystack.push_str(text.as_str().unwrap_or_default());
                    }
                }
                _ => {}
            }
            haystack.push('\u{0}');
        }
        // An empty terminal may have taken live output: those match no
        // fed content, only a place.
        for (content, count) in &fed_results {
            if found.get(content).copied().unwrap_or(0) < *count {
                return Err(format!("session {session:?}: terminal contents fed {fed_results:?}, found {found:?}"));
            }
        }
        if places != terminals {
            return Err(format!("session {session:?}: {terminals} terminals fed, {places} places found: {found:?}"));
        }
        for (at, f) in fed.iter().enumerate() {
            let Fed::Output(s, id, content, _) = f else { continue };
            if s != session || content.is_empty() {
                continue;
            }
            let superseded = fed[at + 1..].iter().any(|later| match later {
                Fed::Output(s2, id2, _, true) => s2 == s && id2 == id,
                Fed::Terminal(s2, id2, content) => s2 == s && id2 == id && !content.is_empty(),
                _ => false,
            });
            if !superseded && !haystack.contains(content.as_str()) {
                return Err(format!("session {session:?}: output {content:?} of {id:?} is nowhere"));
            }
        }
    }
    Ok(())
}
