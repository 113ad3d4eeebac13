//! The Google Gemini adapter: `streamGenerateContent` chunks of the Gemini
//! Developer API and Vertex AI (SSE `data:` events, or one chunk per line),
//! and the host's turns between responses in a recorded agent loop.
//!
//! Every chunk is a whole `GenerateContentResponse`; the chunks of one
//! `responseId` are one model call. A `functionCall` part comes whole (its
//! `args` are a snapshot) and usually without an `id`: each such part is a
//! new call, with an id made up from its order in the stream (`gemini-1`,
//! `gemini-2`, ...), so that parallel calls to one function, which arrive in
//! chunks of their own with no index, never collide. The results of client
//! functions come from the host, as a `{"role":"user","parts":[{
//! "functionResponse":...}]}` turn before the next response; code execution
//! and server-side tools have theirs in the stream. A response that ends
//! (`finishReason`) without calls for the host to run ends the run once the
//! response is over: at the next response, at a host turn, or at the end of
//! the stream (older endpoints repeat `STOP` on every chunk).
//!
//! ```
//! use roundup::adapters::InputFormat;
//! use roundup::{Call, RoundBuilder, StreamHandler};
//!
//! let builder = RoundBuilder::new();
//! let mut gemini = InputFormat::named("gemini").unwrap().adapter();
//! let mut apply = |_: Option<&str>, call: Call<'_>| builder.call(call);
//! for line in [
//!     r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"The user wants the weather.","thought":true}]}}],"responseId":"r1"}"#,
//!     r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"c2ln"}]},"finishReason":"STOP"}],"responseId":"r1"}"#,
//!     r#"{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"output":"sunny"}}}]}"#,
//! ] {
//!     gemini.translate(line.as_bytes(), &mut apply).unwrap();
//! }
//! let round = &builder.rounds()[0];
//! assert_eq!(round.thought, "The user wants the weather.");
//! let call = &round.tool_calls[0];
//! assert_eq!((call.id.as_str(), call.name.as_str()), ("gemini-1", "get_weather"), "an id made up, in order");
//! assert_eq!(call.arguments, r#"{"city":"Paris"}"#);
//! assert_eq!(call.result.content(), Some(r#"{"output":"sunny"}"#));
//! assert_eq!(call.meta["gemini_thought_signature"], "c2ln", "kept for the next request");
//! ```

use std::borrow::Cow;
use std::collections::VecDeque;

use crate::adapters::borrowed::Raw;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smallvec::SmallVec;

use super::borrowed::{opt_cow, raw_text, raw_value, scalar_text, utf8};
use super::support::{is_done_marker, one, report};
use super::{Adapter, CallSink, InputFormat};
use crate::bad_line::BadLine;
use crate::call::Call;
use crate::model::{AnomalyKind, FinishReason, Meta, ToolCallStatus};

/// The registry row of Gemini `streamGenerateContent` chunks.
///
/// ```
/// let gemini = &roundup::adapters::gemini::FORMAT;
/// let chunk = br#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]}}],"modelVersion":"gemini-2.5-flash"}"#;
/// assert_eq!(roundup::adapters::InputFormat::detect(chunk), gemini);
/// let blocked = br#"{"promptFeedback":{"blockReason":"SAFETY"}}"#;
/// assert_eq!(roundup::adapters::InputFormat::detect(blocked), gemini);
/// ```
pub static FORMAT: InputFormat = InputFormat {
    name: "gemini",
    about: "Google Gemini streamGenerateContent
chunks (Developer API, Vertex AI), with
the host's functionResponse turns between
responses; candidate 0 is the session,
candidate k > 0 is session candidate-k",
    detect: |event: &Map<String, Value>| {
        let google_error = event.get("error").is_some_and(|error| {
            error.get("status").is_some_and(Value::is_string) && error.get("code").is_some_and(Value::is_number)
        });
        event.get("candidates").is_some_and(Value::is_array)
            || event.get("promptFeedback").is_some_and(Value::is_object)
            || (event.get("usageMetadata").is_some_and(Value::is_object)
                && (event.contains_key("modelVersion") || event.contains_key("responseId")))
            || (google_error && event.len() == 1)
            || (matches!(event.get("role").and_then(Value::as_str), Some("user" | "model" | "function" | "tool"))
                && event.get("parts").and_then(Value::as_array).is_some_and(|parts| {
                    // Gemini's parts are objects with no `type` (other
                    // formats' message parts have one).
                    !parts.is_empty() && parts.iter().all(|part| part.is_object() && part.get("type").is_none())
                })
                && !event.contains_key("id"))
    },
    adapter: || Box::<GeminiAdapter>::default(),
};

/// Translates Gemini `streamGenerateContent` chunks and host turns into
/// calls.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct GeminiAdapter {
    /// The response being read (`responseId`; empty when the stream gives
    /// none): another id is the next model call.
    response: String,
    /// What the response said about itself, sent with its end.
    about: ResponseMeta,
    /// How many ids were made up so far, for the calls that came without.
    made_up: u64,
    /// Each candidate's stream, by its `index`.
    candidates: SmallVec<[(u64, Candidate); 1]>,
}

/// What a response says about itself, held until it ends.
#[derive(Debug, Default, Serialize, Deserialize)]
struct ResponseMeta {
    model_version: String,
    create_time: String,
    /// The latest `usageMetadata`, JSON as sent: cumulative, so each one
    /// replaces the last (one with a total is not replaced by one without,
    /// as Vertex sends before the last chunk).
    usage: String,
    usage_has_total: bool,
    /// The token total last told (it is repeated on every chunk).
    told_total: Option<u64>,
    /// Something above changed since it was last sent.
    unsent: bool,
}

/// The state of one candidate's stream.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Candidate {
    /// The tool calls of the run still without a result, oldest first.
    open: VecDeque<OpenCall>,
    /// The call whose arguments are streaming (`partialArgs`).
    streamed: Option<Streamed>,
    /// How the run ends if the response ends here (its `finishReason`).
    ending: Option<FinishReason>,
    /// The run ended: what comes next begins the next one.
    ended: bool,
}

#[derive(Debug, Serialize, Deserialize)]
struct OpenCall {
    id: String,
    name: String,
    kind: ToolKind,
    /// Declared by the response being read, not an earlier model call.
    current: bool,
}

/// Who runs a tool, which says where its result comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum ToolKind {
    /// A client function: the host runs it, and answers with a
    /// `functionResponse` (in the stream only for automatic or MCP calls).
    Function,
    /// Code execution: its `codeExecutionResult` follows in the stream.
    Code,
    /// A server-side tool (`toolCall`): its `toolResponse` follows.
    Server,
}

/// A call whose arguments stream as `partialArgs` (Vertex AI).
#[derive(Debug, Serialize, Deserialize)]
struct Streamed {
    id: String,
    /// The argument values by JSON path, in the order the paths came (a
    /// map: a path is found at once however many there are).
    values: Map<String, Value>,
}

/// Tool calls without a result kept per candidate at most (a response has
/// a few): the oldest is forgotten, and a late result for it is reported.
const MAX_OPEN_CALLS: usize = 256;
/// Candidates kept at most (the API gives up to 8).
const MAX_CANDIDATES: usize = 64;
/// Path segments an argument path may have (deeper paths are kept as keys).
const MAX_PATH_DEPTH: usize = 64;
/// The largest array index an argument path may name.
const MAX_PATH_INDEX: usize = 10_000;
/// Array slots a call's streamed arguments may make up to reach the
/// indexes their paths name (paths that name items in order need none).
const MAX_PADDING: usize = 65_536;

/// One payload: a chunk, an error body, or a host turn (a `Content`).
/// Read in place ([`read_in_place!`]): a derived read moves the view
/// out through each layer's `Result`, some five copies a line.
#[derive(Debug, Default)]
struct Chunk<'a> {
    candidates: Option<SmallVec<[CandidateChunk<'a>; 1]>>,
    usage_metadata: Option<Raw<'a>>,
    model_version: Option<Cow<'a, str>>,
    response_id: Option<Cow<'a, str>>,
    create_time: Option<Cow<'a, str>>,
    prompt_feedback: Option<Raw<'a>>,
    error: Option<Raw<'a>>,
    /// A host turn: its role and parts.
    role: Option<Cow<'a, str>>,
    parts: Option<SmallVec<[Part<'a>; 1]>>,
}

read_in_place!(Chunk {
    "candidates" => candidates in place,
    "usageMetadata" => usage_metadata,
    "modelVersion" => model_version as OptCow,
    "responseId" => response_id as OptCow,
    "createTime" => create_time as OptCow,
    "promptFeedback" => prompt_feedback,
    "error" => error,
    "role" => role as OptCow,
    "parts" => parts in place,
});

#[derive(Debug, Default)]
struct CandidateChunk<'a> {
    index: Option<u64>,
    content: Option<Content<'a>>,
    finish_reason: Option<Cow<'a, str>>,
    finish_message: Option<Cow<'a, str>>,
    safety_ratings: Option<Raw<'a>>,
    citation_metadata: Option<Raw<'a>>,
    grounding_metadata: Option<Raw<'a>>,
    url_context_metadata: Option<Raw<'a>>,
    avg_logprobs: Option<Raw<'a>>,
    logprobs_result: Option<Raw<'a>>,
}

read_in_place!(CandidateChunk {
    "index" => index,
    "content" => content in place,
    "finishReason" => finish_reason as OptCow,
    "finishMessage" => finish_message as OptCow,
    "safetyRatings" => safety_ratings,
    "citationMetadata" => citation_metadata,
    "groundingMetadata" => grounding_metadata,
    "urlContextMetadata" => url_context_metadata,
    "avgLogprobs" => avg_logprobs,
    "logprobsResult" => logprobs_result,
});

#[derive(Debug, Default)]
struct Content<'a> {
    parts: Option<SmallVec<[Part<'a>; 1]>>,
}

read_in_place!(Content {
    "parts" => parts in place,
});

#[derive(Debug, Default)]
struct Part<'a> {
    text: Option<Cow<'a, str>>,
    thought: Option<bool>,
    thought_signature: Option<Cow<'a, str>>,
    function_call: Option<FunctionCall<'a>>,
    function_response: Option<FunctionResponse<'a>>,
    /// Kept as sent: it is the call's arguments.
    executable_code: Option<Raw<'a>>,
    code_execution_result: Option<CodeExecutionResult<'a>>,
    tool_call: Option<ServerTool<'a>>,
    tool_response: Option<ServerTool<'a>>,
    inline_data: Option<Raw<'a>>,
    file_data: Option<Raw<'a>>,
}

read_in_place!(Part {
    "text" => text as OptCow,
    "thought" => thought,
    "thoughtSignature" => thought_signature as OptCow,
    "functionCall" => function_call in place,
    "functionResponse" => function_response in place,
    "executableCode" => executable_code,
    "codeExecutionResult" => code_execution_result in place,
    "toolCall" => tool_call in place,
    "toolResponse" => tool_response in place,
    "inlineData" => inline_data,
    "fileData" => file_data,
});

#[derive(Debug, Default)]
struct FunctionCall<'a> {
    id: Option<Cow<'a, str>>,
    name: Option<Cow<'a, str>>,
    args: Option<Raw<'a>>,
    partial_args: Option<SmallVec<[PartialArg<'a>; 1]>>,
    will_continue: Option<bool>,
}

read_in_place!(FunctionCall {
    "id" => id as ScalarText,
    "name" => name as OptCow,
    "args" => args,
    "partialArgs" => partial_args in place,
    "willContinue" => will_continue,
});

/// One fragment of streamed arguments: a value at a JSON path (a string
/// may come in pieces).
#[derive(Debug, Default)]
struct PartialArg<'a> {
    json_path: Option<Cow<'a, str>>,
    string_value: Option<Cow<'a, str>>,
    number_value: Option<Raw<'a>>,
    bool_value: Option<bool>,
    null_value: Option<Raw<'a>>,
}

read_in_place!(PartialArg {
    "jsonPath" => json_path as OptCow,
    "stringValue" => string_value as OptCow,
    "numberValue" => number_value,
    "boolValue" => bool_value,
    "nullValue" => null_value,
});

#[derive(Debug, Default)]
struct FunctionResponse<'a> {
    id: Option<Cow<'a, str>>,
    name: Option<Cow<'a, str>>,
    response: Option<Raw<'a>>,
}

read_in_place!(FunctionResponse {
    "id" => id as ScalarText,
    "name" => name as OptCow,
    "response" => response,
});

#[derive(Debug, Default)]
struct CodeExecutionResult<'a> {
    id: Option<Cow<'a, str>>,
    outcome: Option<Cow<'a, str>>,
    output: Option<Cow<'a, str>>,
}

read_in_place!(CodeExecutionResult {
    "id" => id as ScalarText,
    "outcome" => outcome as OptCow,
    "output" => output as OptCow,
});

/// A server-side tool's call (`toolCall`) or response (`toolResponse`).
#[derive(Debug, Default)]
struct ServerTool<'a> {
    id: Option<Cow<'a, str>>,
    tool_type: Option<Cow<'a, str>>,
    args: Option<Raw<'a>>,
    response: Option<Raw<'a>>,
}

read_in_place!(ServerTool {
    "id" => id as ScalarText,
    "toolType" => tool_type as OptCow,
    "args" => args,
    "response" => response,
});

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Usage {
    #[serde(default)]
    total_token_count: Option<u64>,
    #[serde(default)]
    prompt_token_count: Option<u64>,
    #[serde(default)]
    candidates_token_count: Option<u64>,
    #[serde(default)]
    thoughts_token_count: Option<u64>,
    #[serde(default)]
    tool_use_prompt_token_count: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    block_reason: Option<Cow<'a, str>>,
}

impl Adapter for GeminiAdapter {
    state_is_self!();

    /// The response the stream ended in is over: its calls' streamed
    /// arguments are final, and a run it ended finishes.
    fn end(&mut self, calls: &mut dyn CallSink) {
        self.end_response(calls);
    }

    fn translate(&mut self, payload: &[u8], calls: &mut dyn CallSink) -> Result<(), BadLine> {
        // Gemini sends no `[DONE]`; a gateway that speaks OpenAI's SSE may
        // append one.
        if is_done_marker(payload) {
            return Ok(());
        }
        let text = utf8(payload)?;
        let mut chunk = Chunk::default();
        Chunk::read_into(text, &mut chunk).map_err(|error| BadLine::json(&error))?;
        if let Some(error) = chunk.error {
            self.error(error, calls);
        } else if let Some(parts) = chunk.parts {
            self.host_turn(chunk.role.as_deref(), &parts, text, calls);
        } else if chunk.candidates.is_some()
            || chunk.usage_metadata.is_some()
            || chunk.prompt_feedback.is_some()
            || chunk.response_id.is_some()
            || chunk.model_version.is_some()
        {
            self.chunk(&chunk, text, calls);
        } else {
            report(calls, None, AnomalyKind::UnknownEvent, &format!("gemini: unknown event: {text}"));
        }
        Ok(())
    }
}

impl GeminiAdapter {
    fn chunk(&mut self, chunk: &Chunk<'_>, text: &str, calls: &mut dyn CallSink) {
        let response = chunk.response_id.as_deref().unwrap_or("");
        if !response.is_empty() && response != self.response {
            self.end_response(calls);
            self.response.clear();
            self.response.push_str(response);
            self.about.unsent = true;
        }
        for (field, value) in
            [(&mut self.about.model_version, &chunk.model_version), (&mut self.about.create_time, &chunk.create_time)]
        {
            if let Some(value) = value.as_deref().filter(|v| *v != field.as_str()) {
                field.clear();
                field.push_str(value);
                self.about.unsent = true;
            }
        }
        if let Some(usage) = chunk.usage_metadata {
            self.usage(usage, calls);
        }
        if let Some(feedback) = chunk.prompt_feedback {
            self.prompt_feedback(feedback, calls);
        }
        for (position, candidate) in chunk.candidates.iter().flatten().enumerate() {
            self.candidate(position, candidate, text, calls);
        }
    }

    /// Where candidate `index`'s state is (made when it is new).
    fn state(&mut self, index: u64, calls: &mut dyn CallSink) -> usize {
        if let Some(at) = self.candidates.iter().position(|(i, _)| *i == index) {
            return at;
        }
        // A stream that names candidates without end is bounded: the
        // oldest one's response is over.
        if self.candidates.len() >= MAX_CANDIDATES {
            let (oldest, mut state) = self.candidates.remove(0);
            state.end_response(candidate_session(oldest).as_deref(), calls);
        }
        self.candidates.push((index, Candidate::default()));
        self.candidates.len() - 1
    }

    /// Where candidate `index`'s state is, its run begun (`start` after
    /// one that ended).
    fn begin(&mut self, index: u64, calls: &mut dyn CallSink) -> usize {
        let at = self.state(index, calls);
        if std::mem::take(&mut self.candidates[at].1.ended) {
            calls.call(candidate_session(index).as_deref(), Call::Start);
        }
        at
    }

    /// `usageMetadata`: a cumulative snapshot, a gauge (never added up).
    fn usage(&mut self, raw: Raw<'_>, calls: &mut dyn CallSink) {
        let usage: Usage = match serde_json::from_str(raw.get()) {
            Ok(usage) => usage,
            Err(error) => {
                let detail = format!("gemini: usageMetadata that does not read ({error}): {}", raw.get());
                return report(calls, None, AnomalyKind::UnknownContent, &detail);
            }
        };
        let total = usage.total_token_count.or_else(|| {
            [usage.prompt_token_count, usage.candidates_token_count, usage.thoughts_token_count]
                .into_iter()
                .chain([usage.tool_use_prompt_token_count])
                .flatten()
                .reduce(u64::saturating_add)
        });
        if usage.total_token_count.is_some() || !self.about.usage_has_total {
            self.about.usage.clear();
            self.about.usage.push_str(raw.get());
            self.about.usage_has_total = usage.total_token_count.is_some();
            self.about.unsent = true;
        }
        if let Some(total) = total.filter(|total| self.about.told_total != Some(*total)) {
            self.about.told_total = Some(total);
            self.begin(0, calls);
            calls.call(None, Call::TokenUsage { total });
        }
    }

    /// `promptFeedback`: kept in the run; a `blockReason` means the prompt
    /// was refused and no candidate follows, so the run fails.
    fn prompt_feedback(&mut self, raw: Raw<'_>, calls: &mut dyn CallSink) {
        let feedback: PromptFeedback<'_> = match serde_json::from_str(raw.get()) {
            Ok(feedback) => feedback,
            Err(error) => {
                let detail = format!("gemini: promptFeedback that does not read ({error}): {}", raw.get());
                return report(calls, None, AnomalyKind::UnknownContent, &detail);
            }
        };
        let at = self.begin(0, calls);
        let mut meta = one("gemini_prompt_feedback", raw_value(raw));
        if let Some(reason) = feedback.block_reason {
            self.candidates[at].1.ending = Some(FinishReason::Failed);
            meta.insert("gemini_block_reason".into(), Value::from(reason.as_ref()));
        }
        calls.call(None, Call::RunMeta { meta: &meta });
    }

    fn candidate(&mut self, position: usize, candidate: &CandidateChunk<'_>, text: &str, calls: &mut dyn CallSink) {
        // Proto3 JSON leaves a zero out: no `index` is the first candidate.
        let index = candidate.index.unwrap_or(0);
        let session = candidate_session(index);
        let session = session.as_deref();
        let at = self.begin(index, calls);
        let made_up = &mut self.made_up;
        let state = &mut self.candidates[at].1;
        for (part_at, part) in candidate.content.iter().flat_map(|c| c.parts.iter().flatten()).enumerate() {
            let whole = || part_json(text, Some(position), part_at);
            state.part(made_up, part, &whole, session, calls);
        }
        let mut meta = Meta::new();
        if let Some(ratings) = candidate.safety_ratings {
            // A list: the ratings of every chunk, each once.
            meta.insert("gemini_safety_ratings".into(), raw_value(ratings));
        }
        if let Some(citations) = candidate.citation_metadata {
            meta.insert("gemini_citation_metadata".into(), Value::Array(vec![raw_value(citations)]));
        }
        if let Some(grounding) = candidate.grounding_metadata.filter(|g| !is_empty_object(*g)) {
            meta.insert("gemini_grounding_metadata".into(), raw_value(grounding));
        }
        if let Some(context) = candidate.url_context_metadata.filter(|c| !is_empty_object(*c)) {
            meta.insert("gemini_url_context_metadata".into(), raw_value(context));
        }
        if let Some(average) = candidate.avg_logprobs {
            meta.insert("gemini_avg_logprobs".into(), raw_value(average));
        }
        if let Some(logprobs) = candidate.logprobs_result {
            meta.insert("gemini_logprobs_result".into(), Value::Array(vec![raw_value(logprobs)]));
        }
        if let Some(reason) = &candidate.finish_reason {
            state.close_streamed(session, calls);
            state.ending = state.finish(reason);
            meta.insert("gemini_finish_reason".into(), Value::from(reason.as_ref()));
            if let Some(message) = &candidate.finish_message {
                meta.insert("gemini_finish_message".into(), Value::from(message.as_ref()));
            }
            if index == 0 {
                self.about.take_into(&self.response, &mut meta);
            }
        }
        if !meta.is_empty() {
            calls.call(session, Call::RoundMeta { meta: &meta });
        }
    }

    /// A host turn between responses: `functionResponse` parts are the
    /// results of the calls they answer; text (and other parts) is the
    /// user's next prompt, a new run. A model turn (history sent whole) is
    /// read as a response.
    fn host_turn(&mut self, role: Option<&str>, parts: &[Part<'_>], text: &str, calls: &mut dyn CallSink) {
        let user = match role {
            Some("user" | "function" | "tool") => true,
            Some("model") => false,
            _ => {
                let detail = format!("gemini: a turn of no role this format knows: {text}");
                return report(calls, None, AnomalyKind::UnknownEvent, &detail);
            }
        };
        self.end_response(calls);
        self.response.clear();
        if !user {
            let at = self.begin(0, calls);
            let made_up = &mut self.made_up;
            let state = &mut self.candidates[at].1;
            for (part_at, part) in parts.iter().enumerate() {
                state.part(made_up, part, &|| part_json(text, None, part_at), None, calls);
            }
            return state.close_streamed(None, calls);
        }
        let mut prompt = String::new();
        let mut attachments = Vec::new();
        for (part_at, part) in parts.iter().enumerate() {
            match (&part.function_response, &part.text) {
                (Some(answer), _) => {
                    // A result after the run ended is reported by the
                    // machine (`after_finish`), not the start of a run.
                    let at = self.state(0, calls);
                    self.candidates[at].1.function_response(answer, None, calls);
                }
                (None, Some(said)) if part.thought != Some(true) => prompt.push_str(said),
                _ => attachments.push(json_of(&part_json(text, None, part_at))),
            }
        }
        if prompt.is_empty() && attachments.is_empty() {
            return;
        }
        let at = self.state(0, calls);
        let state = &mut self.candidates[at].1;
        state.open.clear();
        state.ending = None;
        state.ended = false;
        calls.call(None, Call::Start);
        let mut meta = one("gemini_user_message", Value::from(prompt));
        if !attachments.is_empty() {
            meta.insert("gemini_user_parts".into(), Value::Array(attachments));
        }
        calls.call(None, Call::RunMeta { meta: &meta });
    }

    /// An error body (`{"error":{"code","message","status"}}`, sent for an
    /// HTTP error even on an SSE stream): the model call failed.
    fn error(&mut self, error: Raw<'_>, calls: &mut dyn CallSink) {
        self.begin(0, calls);
        report(calls, None, AnomalyKind::ProtocolError, &format!("gemini: error: {}", error.get()));
        for (_, state) in self.candidates.iter_mut().filter(|(_, state)| !state.ended) {
            state.ending = Some(FinishReason::Failed);
        }
        self.end_response(calls);
    }

    /// The response being read is over: streamed arguments are final, what
    /// it said about itself goes to its last round, and each run its
    /// `finishReason` ended finishes.
    fn end_response(&mut self, calls: &mut dyn CallSink) {
        for (index, state) in &mut self.candidates {
            state.close_streamed(candidate_session(*index).as_deref(), calls);
        }
        let mut meta = Meta::new();
        self.about.take_into(&self.response, &mut meta);
        if !meta.is_empty() {
            self.begin(0, calls);
            calls.call(None, Call::RoundMeta { meta: &meta });
        }
        self.about = ResponseMeta::default();
        for (index, state) in &mut self.candidates {
            state.end_response(candidate_session(*index).as_deref(), calls);
        }
    }
}

impl ResponseMeta {
    /// What was not sent yet, as round metadata.
    fn take_into(&mut self, response: &str, meta: &mut Meta) {
        if !std::mem::take(&mut self.unsent) {
            return;
        }
        for (key, value) in [
            ("gemini_response_id", response),
            ("gemini_model_version", &self.model_version),
            ("gemini_create_time", &self.create_time),
        ] {
            if !value.is_empty() {
                meta.insert(key.into(), Value::from(value));
            }
        }
        if !self.usage.is_empty() {
            meta.insert("gemini_usage".into(), json_of(&self.usage));
        }
    }
}

impl Candidate {
    /// The end of this candidate's response: the run its `finishReason`
    /// ended finishes, and no call of it is the current model call's any
    /// more.
    fn end_response(&mut self, session: Option<&str>, calls: &mut dyn CallSink) {
        self.close_streamed(session, calls);
        for call in &mut self.open {
            call.current = false;
        }
        if let Some(reason) = self.ending.take() {
            calls.call(session, Call::Finish { reason });
            self.ended = true;
            self.open.clear();
        }
    }

    /// How a `finishReason` ends the run, if the response ends with it:
    /// `STOP` and `MAX_TOKENS` complete it, unless the model called
    /// functions the host is to run (the loop goes on); every other reason
    /// (`SAFETY`, `RECITATION`, `MALFORMED_FUNCTION_CALL`, ...) fails it.
    fn finish(&self, reason: &str) -> Option<FinishReason> {
        let awaiting = self.open.iter().any(|call| call.current && call.kind == ToolKind::Function);
        match reason {
            "STOP" | "MAX_TOKENS" if awaiting => None,
            "STOP" | "MAX_TOKENS" => Some(FinishReason::Completed),
            _ => Some(FinishReason::Failed),
        }
    }

    /// One part of the candidate's content. `whole` gives the part as it
    /// came, for what is kept or reported whole.
    fn part(
        &mut self,
        made_up: &mut u64,
        part: &Part<'_>,
        whole: &dyn Fn() -> String,
        session: Option<&str>,
        calls: &mut dyn CallSink,
    ) {
        let signature = part.thought_signature.as_deref();
        if let Some(call) = &part.function_call {
            self.ending = None;
            return self.function_call(made_up, call, signature, session, calls);
        }
        // Any other part ends the call whose arguments were streaming.
        self.close_streamed(session, calls);
        let mut known = signature.is_some();
        if let Some(text) = &part.text {
            known = true;
            if !text.is_empty() {
                self.ending = None;
            }
            if part.thought == Some(true) {
                calls.call(session, Call::Thought { text });
            } else {
                calls.call(session, Call::Message { text });
            }
        }
        if let Some(signature) = signature {
            // Opaque, and sent back with the next request as it came.
            let kept = Value::Array(vec![Value::from(signature)]);
            calls.call(session, Call::RoundMeta { meta: &one("gemini_thought_signatures", kept) });
        }
        if let Some(code) = part.executable_code {
            known = true;
            self.ending = None;
            #[derive(Deserialize)]
            struct Id<'a> {
                #[serde(borrow, default, deserialize_with = "scalar_text")]
                id: Option<Cow<'a, str>>,
            }
            // The arguments are the part as sent; only an id is read.
            let given = serde_json::from_str::<Id<'_>>(code.get()).ok().and_then(|code| code.id);
            let id = self.declare(made_up, given.as_deref(), "code_execution", ToolKind::Code, session, calls);
            calls.call(session, Call::ArgsSnapshot { id: &id, args: code.get() });
        }
        if let Some(result) = &part.code_execution_result {
            known = true;
            self.ending = None;
            self.code_result(result, session, calls);
        }
        if let Some(answer) = &part.function_response {
            known = true;
            self.ending = None;
            self.function_response(answer, session, calls);
        }
        if let Some(tool) = &part.tool_call {
            known = true;
            self.ending = None;
            let name = tool.tool_type.as_deref().unwrap_or("tool_call");
            let id = self.declare(made_up, tool.id.as_deref(), name, ToolKind::Server, session, calls);
            let args = tool.args.filter(|a| a.get() != "null").map_or(Cow::Borrowed("{}"), raw_text);
            calls.call(session, Call::ArgsSnapshot { id: &id, args: &args });
        }
        if let Some(tool) = &part.tool_response {
            known = true;
            self.ending = None;
            self.server_result(tool, session, calls);
        }
        for (key, data) in [("gemini_inline_data", part.inline_data), ("gemini_file_data", part.file_data)] {
            if let Some(data) = data {
                known = true;
                self.ending = None;
                let kept = Value::Array(vec![raw_value(data)]);
                calls.call(session, Call::RoundMeta { meta: &one(key, kept) });
            }
        }
        if !known {
            let part = whole();
            if !is_empty_object_text(&part) {
                self.ending = None;
                let detail = format!("gemini: a part of a kind this format does not know: {part}");
                report(calls, session, AnomalyKind::UnknownEvent, &detail);
            }
        }
    }

    /// A `functionCall` part: a whole call (`name`, `args`), or a piece of
    /// one whose arguments stream (`willContinue`, `partialArgs`), which an
    /// empty `functionCall` ends.
    fn function_call(
        &mut self,
        made_up: &mut u64,
        call: &FunctionCall<'_>,
        signature: Option<&str>,
        session: Option<&str>,
        calls: &mut dyn CallSink,
    ) {
        let name = call.name.as_deref().filter(|name| !name.is_empty());
        let streaming = call.will_continue == Some(true) || call.partial_args.is_some();
        let id = if !streaming {
            self.close_streamed(session, calls);
            if name.is_none() && call.args.is_none() && call.id.is_none() {
                // `functionCall: {}` ends the streamed call (closed above).
                if let Some(signature) = signature {
                    let kept = Value::Array(vec![Value::from(signature)]);
                    calls.call(session, Call::RoundMeta { meta: &one("gemini_thought_signatures", kept) });
                }
                return;
            }
            let id = self.declare(made_up, call.id.as_deref(), name.unwrap_or(""), ToolKind::Function, session, calls);
            // A call with no arguments (no `args` at all) has `{}`.
            let args = call.args.filter(|a| a.get() != "null").map_or(Cow::Borrowed("{}"), raw_text);
            calls.call(session, Call::ArgsSnapshot { id: &id, args: &args });
            id
        } else {
            if name.is_some() || self.streamed.is_none() {
                self.close_streamed(session, calls);
                let id =
                    self.declare(made_up, call.id.as_deref(), name.unwrap_or(""), ToolKind::Function, session, calls);
                let mut values = Map::new();
                if let Some(args) = call.args.filter(|a| a.get() != "null") {
                    values.insert("$".to_owned(), raw_value(args));
                }
                self.streamed = Some(Streamed { id, values });
            }
            let Some(streamed) = self.streamed.as_mut() else { return };
            for arg in call.partial_args.iter().flatten() {
                streamed.fragment(arg);
            }
            let id = streamed.id.clone();
            if call.will_continue != Some(true) {
                self.close_streamed(session, calls);
            }
            id
        };
        if let Some(signature) = signature {
            // Sent back with the call in the next request, as it came.
            let meta = one("gemini_thought_signature", Value::from(signature));
            calls.call(session, Call::ToolMeta { id: &id, meta: &meta });
        }
    }

    /// Declares a tool call: the id the model gave, else one made up from
    /// the count of made-up ids (deterministic: the same stream gives the
    /// same ids).
    fn declare(
        &mut self,
        made_up: &mut u64,
        given: Option<&str>,
        name: &str,
        kind: ToolKind,
        session: Option<&str>,
        calls: &mut dyn CallSink,
    ) -> String {
        let id = match given.filter(|id| !id.is_empty()) {
            Some(id) => id.to_owned(),
            None => {
                *made_up = made_up.saturating_add(1);
                format!("gemini-{made_up}")
            }
        };
        calls.call(session, Call::ToolCall { id: &id, title: name, name });
        if self.open.len() >= MAX_OPEN_CALLS {
            self.open.pop_front();
        }
        self.open.push_back(OpenCall { id: id.clone(), name: name.to_owned(), kind, current: true });
        id
    }

    /// The most recent call of `kind` still without a result.
    fn latest(&self, kind: ToolKind) -> Option<&OpenCall> {
        self.open.iter().rev().find(|call| call.kind == kind)
    }

    /// A `codeExecutionResult`: the result of the code it names, else of the
    /// latest code without one; `OUTCOME_OK` completes it, another outcome
    /// fails it.
    fn code_result(&mut self, result: &CodeExecutionResult<'_>, session: Option<&str>, calls: &mut dyn CallSink) {
        let named = result.id.as_deref().filter(|id| self.open.iter().any(|c| c.id == *id)).map(str::to_owned);
        let id = named.or_else(|| self.latest(ToolKind::Code).map(|call| call.id.clone()));
        let failed = result.outcome.as_deref().is_some_and(|outcome| outcome != "OUTCOME_OK");
        let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
        let content = result.output.as_deref().unwrap_or("");
        let Some(id) = id else {
            // No code to answer: the machine reports the result, kept.
            let id = result.id.as_deref().unwrap_or("code_execution");
            return calls.call(session, Call::ToolUpdate { id, content, status });
        };
        self.open.retain(|call| call.id != id);
        if let Some(outcome) = &result.outcome {
            let meta = one("gemini_code_outcome", Value::from(outcome.as_ref()));
            calls.call(session, Call::ToolMeta { id: &id, meta: &meta });
        }
        calls.call(session, Call::ToolUpdate { id: &id, content, status });
    }

    /// A `toolResponse`: the result of the server-side tool call it names,
    /// else of the latest one without a result.
    fn server_result(&mut self, tool: &ServerTool<'_>, session: Option<&str>, calls: &mut dyn CallSink) {
        let given = tool.id.as_deref().filter(|id| !id.is_empty());
        let position = given
            .and_then(|id| self.open.iter().position(|call| call.id == id))
            .or_else(|| self.open.iter().rposition(|call| call.kind == ToolKind::Server));
        let content = tool.response.map(raw_text).unwrap_or_default();
        let status = ToolCallStatus::Completed;
        match position.and_then(|at| self.open.remove(at)) {
            Some(call) => calls.call(session, Call::ToolUpdate { id: &call.id, content: &content, status }),
            None => {
                let id = given.or(tool.tool_type.as_deref()).unwrap_or("tool_call");
                calls.call(session, Call::ToolUpdate { id, content: &content, status });
            }
        }
    }

    /// A `functionResponse` (from the host, or in the stream for automatic
    /// and MCP calls): the result of the call with its `id`, else of the
    /// oldest call of its `name` still without one (parallel calls to one
    /// function are answered in order). A response whose value has an
    /// `error` key failed.
    fn function_response(&mut self, answer: &FunctionResponse<'_>, session: Option<&str>, calls: &mut dyn CallSink) {
        let given = answer.id.as_deref().filter(|id| !id.is_empty());
        let name = answer.name.as_deref().unwrap_or("");
        let position = given
            .and_then(|id| self.open.iter().position(|call| call.id == id))
            .or_else(|| self.open.iter().position(|call| call.kind == ToolKind::Function && call.name == name));
        let content = answer.response.map(raw_text).unwrap_or_default();
        let failed = answer.response.is_some_and(has_error_key);
        let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
        match position.and_then(|at| self.open.remove(at)) {
            Some(call) => calls.call(session, Call::ToolUpdate { id: &call.id, content: &content, status }),
            // No call to answer: the machine reports the result, kept.
            None => calls.call(session, Call::ToolUpdate { id: given.unwrap_or(name), content: &content, status }),
        }
    }

    /// The streamed call's arguments are whole: one snapshot of them.
    fn close_streamed(&mut self, session: Option<&str>, calls: &mut dyn CallSink) {
        if let Some(streamed) = self.streamed.take() {
            let args = streamed.json();
            calls.call(session, Call::ArgsSnapshot { id: &streamed.id, args: &args });
        }
    }
}

impl Streamed {
    /// One `partialArgs` entry: a string value appends to the one its path
    /// holds (strings come in pieces), any other value replaces it.
    fn fragment(&mut self, arg: &PartialArg<'_>) {
        let path = arg.json_path.as_deref().unwrap_or("$");
        let held = self.values.get_mut(path);
        let value = if let Some(text) = &arg.string_value {
            if let Some(Value::String(held)) = held {
                return held.push_str(text);
            }
            Value::from(text.as_ref())
        } else if let Some(number) = arg.number_value {
            raw_value(number)
        } else if let Some(flag) = arg.bool_value {
            Value::Bool(flag)
        } else if arg.null_value.is_some() {
            Value::Null
        } else {
            // A fragment that only says more is to come.
            return;
        };
        match held {
            Some(held) => *held = value,
            None => {
                self.values.insert(path.to_owned(), value);
            }
        }
    }

    /// The arguments as JSON: each value at its path (a path that does not
    /// read is a key of its own, kept).
    fn json(&self) -> String {
        let mut root = Value::Object(Map::new());
        // Array slots made up to reach an index, at most, so that paths
        // naming far indexes cannot make the arguments huge.
        let mut padding = MAX_PADDING;
        for (path, value) in &self.values {
            let placed = path_segments(path).is_some_and(|segments| {
                let fits = fits_in(&root, &segments, &mut padding);
                if fits {
                    insert_at(&mut root, &segments, value.clone());
                }
                fits
            });
            if !placed {
                if !root.is_object() {
                    // A whole value came at `$`: it stays, under `$`.
                    let whole = std::mem::take(&mut root);
                    root = Value::Object(Map::from_iter([("$".to_owned(), whole)]));
                }
                if let Value::Object(map) = &mut root {
                    map.insert(path.clone(), value.clone());
                }
            }
        }
        root.to_string()
    }
}

/// One step of a JSON path.
#[derive(Debug, PartialEq, Eq)]
enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// The steps of a JSON path as Gemini writes them (`$.a.b`, `$.a[0]`,
/// `$['a b']`); `None` when it does not read, or is deeper or wider than
/// arguments are.
fn path_segments(path: &str) -> Option<SmallVec<[Segment<'_>; 4]>> {
    let mut rest = path.strip_prefix('$')?;
    let mut segments = SmallVec::new();
    while !rest.is_empty() {
        if segments.len() >= MAX_PATH_DEPTH {
            return None;
        }
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return None;
            }
            segments.push(Segment::Key(&after[..end]));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let close = after.find(']')?;
            let inner = &after[..close];
            let quoted = ["'", "\""].iter().find_map(|q| inner.strip_prefix(q).and_then(|i| i.strip_suffix(q)));
            match quoted {
                Some(key) if inner.len() >= 2 => segments.push(Segment::Key(key)),
                _ => {
                    let index: usize = inner.parse().ok()?;
                    if index > MAX_PATH_INDEX {
                        return None;
                    }
                    segments.push(Segment::Index(index));
                }
            }
            rest = &after[close + 1..];
        } else {
            return None;
        }
    }
    Some(segments)
}

/// Whether putting a value at `segments` under `node` makes up no more
/// array slots than `budget` has left (taking them from it).
fn fits_in(node: &Value, segments: &[Segment<'_>], budget: &mut usize) -> bool {
    let mut node = Some(node);
    for segment in segments {
        match segment {
            Segment::Key(key) => node = node.and_then(|n| n.get(*key)),
            Segment::Index(index) => {
                let len = node.and_then(Value::as_array).map_or(0, Vec::len);
                let made_up = index.saturating_sub(len);
                if made_up > *budget {
                    return false;
                }
                *budget -= made_up;
                node = node.and_then(|n| n.get(*index));
            }
        }
    }
    true
}

/// Puts `value` at `segments` under `node`, making the objects and arrays
/// on the way.
fn insert_at(node: &mut Value, segments: &[Segment<'_>], value: Value) {
    let Some((first, rest)) = segments.split_first() else {
        *node = value;
        return;
    };
    match first {
        Segment::Key(key) => {
            if !node.is_object() {
                *node = Value::Object(Map::new());
            }
            if let Value::Object(map) = node {
                insert_at(map.entry(*key).or_insert(Value::Null), rest, value);
            }
        }
        Segment::Index(index) => {
            if !node.is_array() {
                *node = Value::Array(Vec::new());
            }
            if let Value::Array(items) = node {
                if items.len() <= *index {
                    items.resize(index + 1, Value::Null);
                }
                if let Some(item) = items.get_mut(*index) {
                    insert_at(item, rest, value);
                }
            }
        }
    }
}

/// The session of candidate `index`: the stream's own for the first, one
/// of its own for each other (`candidateCount` asks for alternatives).
fn candidate_session(index: u64) -> Option<String> {
    (index > 0).then(|| format!("candidate-{index}"))
}

/// Whether a function's response value reports an error
/// (`{"error": ...}`, the convention of Gemini's function responses).
fn has_error_key(response: Raw<'_>) -> bool {
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(borrow, default)]
        error: Option<Raw<'a>>,
    }
    serde_json::from_str::<Head<'_>>(response.get()).is_ok_and(|head| head.error.is_some())
}

fn is_empty_object(raw: Raw<'_>) -> bool {
    is_empty_object_text(raw.get())
}

fn is_empty_object_text(json: &str) -> bool {
    json.strip_prefix('{').and_then(|rest| rest.strip_suffix('}')).is_some_and(|inner| inner.trim().is_empty())
}

/// JSON text as a value (text deeper than serde_json builds is kept as a
/// string).
fn json_of(json: &str) -> Value {
    super::borrowed::json_value(json)
}

/// Part `part_at` of a payload's candidate at `candidate_at` (or of a host
/// turn's `parts`), as it came: read again only for what is kept or
/// reported whole.
fn part_json(text: &str, candidate_at: Option<usize>, part_at: usize) -> String {
    let Ok(event) = serde_json::from_str::<Value>(text) else { return text.to_owned() };
    let parts = match candidate_at {
        Some(at) => event.get("candidates").and_then(|c| c.get(at)).and_then(|c| c.get("content")),
        None => Some(&event),
    };
    match parts.and_then(|p| p.get("parts")).and_then(|p| p.get(part_at)) {
        Some(part) => part.to_string(),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_paths_read_as_gemini_writes_them() {
        use Segment::{Index, Key};
        assert_eq!(path_segments("$").unwrap().as_slice(), []);
        assert_eq!(path_segments("$.a.b").unwrap().as_slice(), [Key("a"), Key("b")]);
        assert_eq!(path_segments("$.items[2].name").unwrap().as_slice(), [Key("items"), Index(2), Key("name")]);
        assert_eq!(path_segments("$['a b'][\"c\"]").unwrap().as_slice(), [Key("a b"), Key("c")]);
        for bad in ["a", "$.", "$..a", "$[x]", "$[1", "$[99999999]", "$x"] {
            assert_eq!(path_segments(bad), None, "{bad}");
        }
        assert_eq!(path_segments(&format!("${}", ".a".repeat(100))), None, "too deep");
    }

    #[test]
    fn streamed_arguments_are_built_into_json() {
        let arg = |path: &str, value: &str| -> PartialArg<'static> {
            let json = format!(r#"{{"jsonPath":"{path}",{value}}}"#);
            serde_json::from_str(Box::leak(json.into_boxed_str())).unwrap()
        };
        let mut streamed = Streamed { id: "x".into(), values: Map::new() };
        for (path, value) in [
            ("$.location", r#""stringValue":"San ""#),
            ("$.location", r#""stringValue":"Francisco""#),
            ("$.location", r#""stringValue":"""#),
            ("$.days", r#""numberValue":3"#),
            ("$.units[1]", r#""boolValue":true"#),
            ("$.note", r#""nullValue":"NULL_VALUE""#),
            ("not a path", r#""stringValue":"kept""#),
            ("$.more", r#""willContinue":true"#),
        ] {
            streamed.fragment(&arg(path, value));
        }
        assert_eq!(
            streamed.json(),
            r#"{"location":"San Francisco","days":3,"units":[null,true],"note":null,"not a path":"kept"}"#
        );
        assert_eq!(Streamed { id: "y".into(), values: Map::new() }.json(), "{}");
        // Far indexes cannot make the arguments huge: past the budget, a
        // path is kept as a key.
        let mut far = Streamed { id: "z".into(), values: Map::new() };
        for n in 0..20 {
            far.fragment(&arg(&format!("$.k{n}[9999]"), r#""boolValue":true"#));
        }
        let json: Value = serde_json::from_str(&far.json()).unwrap();
        assert_eq!(json["k5"].as_array().map(Vec::len), Some(10_000));
        assert_eq!(json["$.k19[9999]"], true);
        assert!(far.json().len() < 500_000);
    }

    #[test]
    fn empty_objects_are_seen_through_whitespace() {
        assert!(is_empty_object_text("{}") && is_empty_object_text("{ \n }"));
        assert!(!is_empty_object_text(r#"{"a":1}"#) && !is_empty_object_text("[]"));
    }
}
