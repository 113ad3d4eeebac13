//! A run as the OpenAI Responses input the next request sends:
//! `{"session", "run", "input": [...]}` when the run finishes.
//!
//! The user's prompts are `user` messages; each round gives the reasoning
//! items the adapter kept (with their `encrypted_content`, which the API
//! wants back), an `assistant` message with the text, a `function_call`
//! per call with its final arguments, and a `function_call_output` per
//! call, so no `call_id` is left without its output. A call without a
//! result has the output `no result: {reason}`.
//!
//! ```
//! use roundup::encoders::OutputFormat;
//! assert!(OutputFormat::named("openai-responses").unwrap().about().contains("function_call_output"));
//! ```

use serde_json::{json, Value};

use super::history::{prompts, tool_name, HistoryEncoder, RunHistory};
use super::OutputFormat;
use crate::model::Summary;

/// The registry row of OpenAI Responses inputs.
///
/// ```
/// assert!(roundup::encoders::OutputFormat::named("openai-responses").is_some());
/// ```
pub static FORMAT: OutputFormat = OutputFormat {
    name: "openai-responses",
    about: "each run, when it finishes, as the OpenAI
Responses input the next request sends (every
function_call with its function_call_output)",
    encoder: || Box::new(HistoryEncoder::new("input", input)),
};

fn input(history: &RunHistory, summary: &Summary) -> Vec<Value> {
    let mut input: Vec<Value> = prompts(summary).into_iter().map(|p| json!({"role": "user", "content": p})).collect();
    for round in &history.rounds {
        let reasoning = round.meta.get("openai_reasoning_items").and_then(Value::as_array).into_iter().flatten();
        input.extend(reasoning.filter(|item| item.get("type").and_then(Value::as_str) == Some("reasoning")).cloned());
        if !round.message.is_empty() {
            input.push(json!({"role": "assistant", "content": round.message}));
        }
        for call in &round.tool_calls {
            let arguments = if call.arguments.is_empty() { "{}" } else { call.arguments.as_str() };
            input.push(
                json!({"type": "function_call", "call_id": call.id, "name": tool_name(call), "arguments": arguments}),
            );
        }
        for call in &round.tool_calls {
            let result = history.result(round, call);
            input.push(json!({"type": "function_call_output", "call_id": call.id, "output": result.text}));
        }
    }
    input
}
