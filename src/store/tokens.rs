//! Input and output tokens, read from the usage objects the adapters keep
//! in metadata, whatever the protocol calls them.
//!
//! Each adapter keeps its protocol's usage as it came (`claude_usage`,
//! `openai_usage`, `gemini_usage`, `bedrock_usage`, ...: a key ending in
//! `_usage`), in a round's metadata when the protocol counts per model
//! response and in the run's when it counts per run. The vocabularies
//! differ; the two numbers every one of them has are read here into
//! columns, so that "how many tokens did this session take" is one query.

use crate::model::Meta;
use serde_json::Value;

/// The names protocols give the tokens read (prompt, context).
const INPUT: [&str; 6] =
    ["input_tokens", "prompt_tokens", "inputTokens", "promptTokenCount", "input", "prompt_eval_count"];
/// The names protocols give the tokens written (completion, candidates).
const OUTPUT: [&str; 6] =
    ["output_tokens", "completion_tokens", "outputTokens", "candidatesTokenCount", "output", "eval_count"];

/// Input and output tokens counted by a usage object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tokens {
    pub(crate) input: Option<u64>,
    pub(crate) output: Option<u64>,
}

impl Tokens {
    /// The tokens of the first usage object of `meta` (a key ending in
    /// `_usage`) that counts any, in the order the adapter wrote them: the
    /// first is the one of this round or run (`codex_run_usage`), later
    /// ones may be running totals of the whole thread
    /// (`codex_total_token_usage`), which are never added in.
    pub(crate) fn of(meta: &Meta) -> Option<Tokens> {
        meta.iter()
            .filter(|(key, _)| key.ends_with("_usage"))
            .filter_map(|(_, value)| value.as_object())
            .map(|usage| Tokens { input: first(usage, &INPUT), output: first(usage, &OUTPUT) })
            .find(|tokens| tokens.input.is_some() || tokens.output.is_some())
    }
}

fn first(usage: &serde_json::Map<String, Value>, names: &[&str]) -> Option<u64> {
    names.iter().find_map(|name| usage.get(*name).and_then(Value::as_u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(json: &str) -> Meta {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn each_vocabulary_is_read() {
        let cases = [
            (r#"{"claude_usage":{"input_tokens":4,"cache_read_input_tokens":9,"output_tokens":341}}"#, (4, 341)),
            (r#"{"openai_usage":{"prompt_tokens":79,"completion_tokens":1,"total_tokens":80}}"#, (79, 1)),
            (r#"{"bedrock_usage":{"inputTokens":1002,"outputTokens":59}}"#, (1002, 59)),
            (r#"{"gemini_usage":{"promptTokenCount":21,"candidatesTokenCount":126}}"#, (21, 126)),
            (r#"{"gemini_cli_chat_usage":{"input":23924,"output":228,"cached":11502}}"#, (23924, 228)),
        ];
        for (json, (input, output)) in cases {
            assert_eq!(Tokens::of(&meta(json)), Some(Tokens { input: Some(input), output: Some(output) }), "{json}");
        }
    }

    #[test]
    fn only_the_first_usage_object_that_counts_is_read() {
        assert_eq!(Tokens::of(&meta(r#"{"claude_model":"x","acp_usage_meta":{"input_tokens":1}}"#)), None);
        assert_eq!(Tokens::of(&meta(r#"{"acp_usage":{"cachedReadTokens":0}}"#)), None);
        let run_and_total = meta(
            r#"{"x_usage":{"cached":1},"codex_run_usage":{"input_tokens":1,"output_tokens":2},"codex_total_token_usage":{"input_tokens":10}}"#,
        );
        assert_eq!(Tokens::of(&run_and_total), Some(Tokens { input: Some(1), output: Some(2) }));
    }
}
