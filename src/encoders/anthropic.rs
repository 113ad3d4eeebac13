//! A run as the Anthropic Messages history the next request sends:
//! `{"session", "run", "messages": [...]}` when the run finishes.
//!
//! The user's prompts are `user` messages; each round is an `assistant`
//! message whose content is the thinking blocks the adapter kept (with
//! their exact `signature`, redacted ones as they came: the API wants them
//! back unchanged), the text, and a `tool_use` per call; then one `user`
//! message with a `tool_result` per call (`is_error` for a failure, and for
//! a call that never got a result, whose content says why), so no
//! `tool_use` is left without its `tool_result`, which the API rejects.
//! Arguments that are not a JSON object are kept whole as
//! `{"_arguments": text}`: `input` must be an object.
//!
//! ```
//! use roundup::encoders::OutputFormat;
//! assert!(OutputFormat::named("anthropic").unwrap().about().contains("tool_result"));
//! ```

use serde_json::{json, Value};

use super::history::{arguments_object, prompts, tool_name, HistoryEncoder, RunHistory};
use super::OutputFormat;
use crate::model::Summary;

/// The registry row of Anthropic Messages histories.
///
/// ```
/// assert!(roundup::encoders::OutputFormat::named("anthropic").is_some());
/// ```
pub static FORMAT: OutputFormat = OutputFormat {
    name: "anthropic",
    about: "each run, when it finishes, as the Anthropic
messages the next request sends (thinking
blocks kept, every tool_use with its
tool_result)",
    encoder: || Box::new(HistoryEncoder::new("messages", messages)),
};

fn messages(history: &RunHistory, summary: &Summary) -> Vec<Value> {
    let mut messages: Vec<Value> =
        prompts(summary).into_iter().map(|p| json!({"role": "user", "content": p})).collect();
    for round in &history.rounds {
        let mut content: Vec<Value> = round
            .meta
            .get("anthropic_kept_blocks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|block| matches!(block.get("type").and_then(Value::as_str), Some("thinking" | "redacted_thinking")))
            .cloned()
            .collect();
        if !round.message.is_empty() {
            content.push(json!({"type": "text", "text": round.message}));
        }
        for call in &round.tool_calls {
            content.push(
                json!({"type": "tool_use", "id": call.id, "name": tool_name(call), "input": arguments_object(call)}),
            );
        }
        if content.is_empty() {
            continue;
        }
        messages.push(json!({"role": "assistant", "content": content}));
        if !round.tool_calls.is_empty() {
            let results: Vec<Value> = round
                .tool_calls
                .iter()
                .map(|call| {
                    let result = history.result(round, call);
                    json!({"type": "tool_result", "tool_use_id": call.id, "content": result.text, "is_error": result.is_error})
                })
                .collect();
            messages.push(json!({"role": "user", "content": results}));
        }
    }
    messages
}
