//! What a round's or a run's metadata says of the model behind it: its
//! name, its provider, the response's id, why it stopped, and the tokens
//! it used. The adapters keep these under their own keys
//! (`anthropic_model`, `openai_usage`, `gemini_model_version`, ...), each in
//! its provider's own shape; this reads them all into the few values the
//! outputs that count take (the trace spans' attributes, the database's
//! token columns), one reading for all of them.

use serde_json::{Map, Value};

use crate::model::Meta;

/// The model facts a span carries, where the metadata had them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct ModelFacts {
    pub(crate) model: Option<String>,
    /// The provider: the GenAI conventions' name and OpenInference's.
    pub(crate) provider: Option<Provider>,
    pub(crate) response_id: Option<String>,
    pub(crate) finish_reasons: Vec<String>,
    pub(crate) usage: Usage,
}

/// Token counts; `None` where the provider did not say.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Usage {
    /// Input tokens, cached ones included (as the GenAI conventions count
    /// them: Anthropic's and Bedrock's `input_tokens` leave the cache out,
    /// and it is added back).
    pub(crate) input: Option<u64>,
    /// Output tokens, reasoning included.
    pub(crate) output: Option<u64>,
    pub(crate) cache_read: Option<u64>,
    pub(crate) reasoning: Option<u64>,
    pub(crate) total: Option<u64>,
}

/// A provider as both vocabularies name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Provider {
    /// `gen_ai.provider.name`.
    pub(crate) gen_ai: &'static str,
    /// `llm.provider`, where OpenInference has a name for it.
    pub(crate) openinference: Option<&'static str>,
}

/// The metadata key prefixes of the adapters whose provider is known, and
/// that provider. Claude Code and Codex call Anthropic's and OpenAI's
/// models.
const PROVIDERS: &[(&str, Provider)] = &[
    ("anthropic_", Provider { gen_ai: "anthropic", openinference: Some("anthropic") }),
    ("claude_", Provider { gen_ai: "anthropic", openinference: Some("anthropic") }),
    ("openai_", Provider { gen_ai: "openai", openinference: Some("openai") }),
    ("codex_", Provider { gen_ai: "openai", openinference: Some("openai") }),
    ("gemini_", Provider { gen_ai: "gcp.gemini", openinference: Some("google") }),
    ("mistral_", Provider { gen_ai: "mistral_ai", openinference: Some("mistralai") }),
    ("bedrock_", Provider { gen_ai: "aws.bedrock", openinference: Some("aws") }),
    ("ollama_", Provider { gen_ai: "ollama", openinference: None }),
];

impl ModelFacts {
    /// Reads a round's or a run's metadata. Keys are read in their order;
    /// for each fact the first key that has it wins, except that a run's
    /// summed usage (`*_run_usage`) wins over a last request's.
    pub(crate) fn of(meta: &Meta) -> ModelFacts {
        let mut facts = ModelFacts::default();
        let mut usage_from_run_sum = false;
        for (key, value) in meta {
            let mut recognised = true;
            if key.ends_with("_model") || key.ends_with("_model_version") {
                if let (None, Some(model)) = (&facts.model, value.as_str().filter(|m| !m.is_empty())) {
                    facts.model = Some(model.to_owned());
                }
            } else if key.ends_with("_response_id") || key.ends_with("_completion_id") || key.ends_with("_message_id") {
                if let (None, Some(id)) = (&facts.response_id, value.as_str().filter(|id| !id.is_empty())) {
                    facts.response_id = Some(id.to_owned());
                }
            } else if key.ends_with("_stop_reason") || key.ends_with("_finish_reason") {
                if let Some(reason) = value.as_str().filter(|r| !r.is_empty()) {
                    facts.finish_reasons.push(reason.to_owned());
                }
            } else if key.ends_with("_usage") || key.ends_with("_tokens") {
                let run_sum = key.ends_with("_run_usage");
                if let Some(object) = value.as_object() {
                    let usage = Usage::of(object);
                    if usage != Usage::default()
                        && (facts.usage == Usage::default() || (run_sum && !usage_from_run_sum))
                    {
                        facts.usage = usage;
                        usage_from_run_sum = run_sum;
                    }
                }
            } else {
                recognised = false;
            }
            if recognised && facts.provider.is_none() {
                facts.provider =
                    PROVIDERS.iter().find(|(prefix, _)| key.starts_with(prefix)).map(|(_, provider)| *provider);
            }
        }
        facts
    }
}

impl Usage {
    /// One provider's usage object: OpenAI's (`prompt_tokens`, and
    /// Responses' `input_tokens`), Anthropic's, Gemini's
    /// (`promptTokenCount`), Bedrock's and ACP's (`inputTokens`), Codex's,
    /// Gemini CLI's and opencode's (`input`).
    pub(crate) fn of(usage: &Map<String, Value>) -> Usage {
        let first = |keys: &[&str]| keys.iter().find_map(|key| number_at(usage, key));
        let mut input = first(&["input_tokens", "prompt_tokens", "inputTokens", "promptTokenCount", "input"]);
        let mut output =
            first(&["output_tokens", "completion_tokens", "outputTokens", "candidatesTokenCount", "output"]);
        let cache_read = first(&[
            "cache_read_input_tokens",
            "cached_input_tokens",
            "cacheReadInputTokens",
            "cachedReadTokens",
            "cachedContentTokenCount",
            "cached",
            "cache.read",
            "prompt_tokens_details.cached_tokens",
            "input_tokens_details.cached_tokens",
        ]);
        let reasoning = first(&[
            "reasoning_output_tokens",
            "reasoningOutputTokens",
            "thoughtsTokenCount",
            "thoughts",
            "reasoning",
            "completion_tokens_details.reasoning_tokens",
            "output_tokens_details.reasoning_tokens",
            "output_tokens_details.thinking_tokens",
        ]);
        let total = first(&["total_tokens", "totalTokens", "totalTokenCount", "total"]);
        // Anthropic's and Bedrock's input counts leave the cache out.
        if usage.contains_key("cache_read_input_tokens") || usage.contains_key("cache_creation_input_tokens") {
            let cached =
                first(&["cache_read_input_tokens"]).unwrap_or(0) + first(&["cache_creation_input_tokens"]).unwrap_or(0);
            input = input.map(|n| n.saturating_add(cached));
        } else if usage.contains_key("cacheReadInputTokens") || usage.contains_key("cacheWriteInputTokens") {
            let cached = first(&["cacheReadInputTokens"]).unwrap_or(0) + first(&["cacheWriteInputTokens"]).unwrap_or(0);
            input = input.map(|n| n.saturating_add(cached));
        }
        // Gemini counts its thoughts apart from the candidates.
        if usage.contains_key("candidatesTokenCount") {
            if let (Some(out), Some(thoughts)) = (output, first(&["thoughtsTokenCount"])) {
                output = Some(out.saturating_add(thoughts));
            }
        }
        let total = total.or_else(|| Some(input?.saturating_add(output?)));
        Usage { input, output, cache_read, reasoning, total }
    }

    /// Two usages added up, field by field (a field either one has).
    pub(crate) fn plus(self, other: Usage) -> Usage {
        let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.saturating_add(b)),
            (a, b) => a.or(b),
        };
        Usage {
            input: add(self.input, other.input),
            output: add(self.output, other.output),
            cache_read: add(self.cache_read, other.cache_read),
            reasoning: add(self.reasoning, other.reasoning),
            total: add(self.total, other.total),
        }
    }
}

/// A non-negative integer at `path` (dots go into nested objects).
fn number_at(object: &Map<String, Value>, path: &str) -> Option<u64> {
    let mut parts = path.split('.');
    let mut value = object.get(parts.next()?)?;
    for part in parts {
        value = value.get(part)?;
    }
    value.as_u64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(value: Value) -> Meta {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn each_providers_usage_reads_the_same() {
        let openai = json!({"prompt_tokens": 79, "completion_tokens": 5, "total_tokens": 84,
            "prompt_tokens_details": {"cached_tokens": 64}, "completion_tokens_details": {"reasoning_tokens": 3}});
        assert_eq!(
            Usage::of(openai.as_object().unwrap()),
            Usage { input: Some(79), output: Some(5), cache_read: Some(64), reasoning: Some(3), total: Some(84) }
        );
        let anthropic = json!({"input_tokens": 2, "cache_creation_input_tokens": 10, "cache_read_input_tokens": 100, "output_tokens": 7});
        assert_eq!(
            Usage::of(anthropic.as_object().unwrap()),
            Usage { input: Some(112), output: Some(7), cache_read: Some(100), reasoning: None, total: Some(119) },
            "Anthropic's input leaves the cache out: it is added"
        );
        let gemini = json!({"promptTokenCount": 21, "candidatesTokenCount": 126, "thoughtsTokenCount": 10, "totalTokenCount": 157});
        assert_eq!(
            Usage::of(gemini.as_object().unwrap()),
            Usage { input: Some(21), output: Some(136), cache_read: None, reasoning: Some(10), total: Some(157) }
        );
        let opencode = json!({"input": 22443, "output": 118, "reasoning": 0, "cache": {"read": 21415, "write": 0}});
        assert_eq!(Usage::of(opencode.as_object().unwrap()).cache_read, Some(21415));
        assert_eq!(Usage::of(json!({"latencyMs": 3}).as_object().unwrap()), Usage::default());
    }

    #[test]
    fn facts_come_from_the_adapters_keys() {
        let facts = ModelFacts::of(&meta(json!({
            "claude_message_ids": ["m1"],
            "claude_model": "claude-sonnet-4-5",
            "claude_stop_reason": "tool_use",
            "claude_usage": {"input_tokens": 2, "output_tokens": 9},
        })));
        assert_eq!(facts.model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(facts.provider.map(|p| p.gen_ai), Some("anthropic"));
        assert_eq!(facts.finish_reasons, ["tool_use"]);
        assert_eq!((facts.usage.input, facts.usage.output), (Some(2), Some(9)));
        assert_eq!(facts.response_id, None, "a list of ids is not one response's id");
        let run = ModelFacts::of(&meta(json!({
            "codex_usage": {"input_tokens": 5, "output_tokens": 1},
            "codex_run_usage": {"input_tokens": 50, "output_tokens": 10},
        })));
        assert_eq!(run.usage.input, Some(50), "a run's sum wins over its last request");
        let acp = ModelFacts::of(&meta(json!({"acp_stop_reason": "end_turn"})));
        assert_eq!((acp.provider, acp.finish_reasons.len()), (None, 1), "ACP names no provider");
    }
}
