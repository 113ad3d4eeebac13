//! A run as the OpenAI Chat Completions history the next request sends:
//! `{"session", "run", "messages": [...]}` when the run finishes.
//!
//! The user's prompts (where the source carried them) are `user` messages;
//! each round is an `assistant` message (its text, its `tool_calls` with
//! their final arguments) followed by one `tool` message per call, so no
//! `tool_calls` id is left without its `tool` message, which the API
//! rejects. A call without a result has the content `no result: {reason}`.
//! Reasoning is not sent back: the Chat Completions request takes none.
//!
//! ```
//! use roundup::encoders::{Framing, Frames, OutputFormat};
//! use roundup::{FinishReason, Output, RoundBuilder, StreamHandler};
//! use std::sync::{Arc, Mutex};
//!
//! let lines = Arc::new(Mutex::new(Frames::new(Framing::Lines)));
//! let encoder = Arc::new(Mutex::new(OutputFormat::named("openai-chat").unwrap().encoder()));
//! let (out, enc) = (Arc::clone(&lines), Arc::clone(&encoder));
//! let builder = RoundBuilder::new().with_sink(move |record| enc.lock().unwrap().record(record, &mut out.lock().unwrap()));
//! builder.message("Looking.");
//! builder.tool_call("call_1", "ls");
//! builder.finish(FinishReason::Canceled);
//! let history: serde_json::Value = serde_json::from_slice(lines.lock().unwrap().bytes()).unwrap();
//! assert_eq!(history["messages"][1], serde_json::json!({"role": "tool", "tool_call_id": "call_1", "content": "no result: canceled"}));
//! ```

use serde_json::{json, Value};

use super::history::{prompts, tool_name, HistoryEncoder, RunHistory};
use super::OutputFormat;
use crate::model::Summary;

/// The registry row of OpenAI Chat Completions histories.
///
/// ```
/// assert!(roundup::encoders::OutputFormat::named("openai-chat").is_some());
/// ```
pub static FORMAT: OutputFormat = OutputFormat {
    name: "openai-chat",
    about: "each run, when it finishes, as the OpenAI
Chat Completions messages the next request
sends (every tool call with its tool message)",
    encoder: || Box::new(HistoryEncoder::new("messages", messages)),
};

fn messages(history: &RunHistory, summary: &Summary) -> Vec<Value> {
    let mut messages: Vec<Value> =
        prompts(summary).into_iter().map(|p| json!({"role": "user", "content": p})).collect();
    for round in &history.rounds {
        let mut assistant = json!({"role": "assistant", "content": if round.message.is_empty() { Value::Null } else { round.message.as_str().into() }});
        if !round.tool_calls.is_empty() {
            let calls: Vec<Value> = round
                .tool_calls
                .iter()
                .map(|call| {
                    let arguments = if call.arguments.is_empty() { "{}" } else { call.arguments.as_str() };
                    json!({"id": call.id, "type": "function", "function": {"name": tool_name(call), "arguments": arguments}})
                })
                .collect();
            assistant["tool_calls"] = Value::Array(calls);
        } else if round.message.is_empty() {
            // A round of reasoning only: nothing this API takes back.
            continue;
        }
        messages.push(assistant);
        for call in &round.tool_calls {
            let result = history.result(round, call);
            messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": result.text}));
        }
    }
    messages
}
