//! The attribute names the OpenTelemetry traces carry, each a constant with
//! where it comes from.
//!
//! Two vocabularies describe an agent's work as spans, and backends read one
//! or the other: the OpenTelemetry GenAI semantic conventions (`gen_ai.*`,
//! read by GenAI-aware backends such as Langfuse and Datadog), and
//! OpenInference (`openinference.span.kind`, `llm.*`, `tool.*`, read by
//! Arize Phoenix). roundup writes both on every span, so that a trace reads
//! the same in either.
//!
//! The names are defined here rather than taken from a crate: the GenAI
//! conventions are still in development (the `opentelemetry-semantic-conventions`
//! crate marks them as moved to their own repository), and OpenInference has
//! no Rust crate. A name that changes upstream changes in this one file.
//!
//! What roundup itself knows and neither vocabulary has a name for (a
//! round's index, why it closed, a placeholder's reason, an anomaly) goes
//! under `roundup.*`.
//!
//! ```
//! use roundup::encoders::otlp::semconv;
//! assert_eq!(semconv::GEN_AI_OPERATION_NAME, "gen_ai.operation.name");
//! assert_eq!(semconv::OPENINFERENCE_SPAN_KIND, "openinference.span.kind");
//! ```

// ---------------------------------------------------------------------------
// OpenTelemetry general conventions.

/// The logical name of the service that produced the spans (resource
/// attribute).
pub const SERVICE_NAME: &str = "service.name";
/// The class of error an operation ended with; set only on a span whose
/// status is an error.
pub const ERROR_TYPE: &str = "error.type";

// ---------------------------------------------------------------------------
// OpenTelemetry GenAI semantic conventions (development status).

/// The operation a span is: [`OP_INVOKE_AGENT`], [`OP_CHAT`] or
/// [`OP_EXECUTE_TOOL`].
pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
/// The operation of a run's span: an agent invoked on one prompt.
pub const OP_INVOKE_AGENT: &str = "invoke_agent";
/// The operation of a round's span: one model response.
pub const OP_CHAT: &str = "chat";
/// The operation of a tool call's span.
pub const OP_EXECUTE_TOOL: &str = "execute_tool";
/// The provider of the model, as the conventions name them (`openai`,
/// `anthropic`, `gcp.gemini`, `aws.bedrock`, `mistral_ai`).
pub const GEN_AI_PROVIDER_NAME: &str = "gen_ai.provider.name";
/// The model the request named.
pub const GEN_AI_REQUEST_MODEL: &str = "gen_ai.request.model";
/// The model that answered.
pub const GEN_AI_RESPONSE_MODEL: &str = "gen_ai.response.model";
/// The provider's id of the response.
pub const GEN_AI_RESPONSE_ID: &str = "gen_ai.response.id";
/// Why the model stopped, as the provider said it (a string array).
pub const GEN_AI_RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
/// The conversation the span belongs to: the session.
pub const GEN_AI_CONVERSATION_ID: &str = "gen_ai.conversation.id";
/// Tokens of the model's input (cached ones included).
pub const GEN_AI_USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// Tokens of the model's output (reasoning included).
pub const GEN_AI_USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// Input tokens served from the provider's cache.
pub const GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: &str = "gen_ai.usage.cache_read.input_tokens";
/// Output tokens spent on reasoning.
pub const GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: &str = "gen_ai.usage.reasoning.output_tokens";
/// The tool's name, as the model called it.
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
/// The id the model gave the tool call.
pub const GEN_AI_TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// The call's final arguments (content: opt-in).
pub const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
/// The call's result (content: opt-in).
pub const GEN_AI_TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
/// The user's messages the run answered, as a JSON array of messages
/// (content: opt-in).
pub const GEN_AI_INPUT_MESSAGES: &str = "gen_ai.input.messages";
/// The model's output, as a JSON array of messages with their parts: text,
/// reasoning, tool calls (content: opt-in).
pub const GEN_AI_OUTPUT_MESSAGES: &str = "gen_ai.output.messages";

// ---------------------------------------------------------------------------
// OpenInference semantic conventions.

/// The kind of span: [`KIND_AGENT`], [`KIND_LLM`] or [`KIND_TOOL`].
pub const OPENINFERENCE_SPAN_KIND: &str = "openinference.span.kind";
/// The span kind of a run.
pub const KIND_AGENT: &str = "AGENT";
/// The span kind of a round.
pub const KIND_LLM: &str = "LLM";
/// The span kind of a tool call.
pub const KIND_TOOL: &str = "TOOL";
/// The session the span belongs to.
pub const SESSION_ID: &str = "session.id";
/// The operation's input (content: opt-in).
pub const INPUT_VALUE: &str = "input.value";
/// The MIME type of [`INPUT_VALUE`] (`application/json` when it is JSON).
pub const INPUT_MIME_TYPE: &str = "input.mime_type";
/// The operation's output (content: opt-in).
pub const OUTPUT_VALUE: &str = "output.value";
/// The model's name.
pub const LLM_MODEL_NAME: &str = "llm.model_name";
/// The model's provider, as OpenInference names them (`openai`,
/// `anthropic`, `google`, `aws`, `mistralai`).
pub const LLM_PROVIDER: &str = "llm.provider";
/// Tokens of the prompt.
pub const LLM_TOKEN_COUNT_PROMPT: &str = "llm.token_count.prompt";
/// Tokens of the completion.
pub const LLM_TOKEN_COUNT_COMPLETION: &str = "llm.token_count.completion";
/// Tokens of prompt and completion together.
pub const LLM_TOKEN_COUNT_TOTAL: &str = "llm.token_count.total";
/// Prompt tokens served from the cache.
pub const LLM_TOKEN_COUNT_PROMPT_CACHE_READ: &str = "llm.token_count.prompt_details.cache_read";
/// Completion tokens spent on reasoning.
pub const LLM_TOKEN_COUNT_COMPLETION_REASONING: &str = "llm.token_count.completion_details.reasoning";
/// The prefix of the model's output messages, flattened:
/// `llm.output_messages.0.message.role` (content: opt-in).
pub const LLM_OUTPUT_MESSAGES: &str = "llm.output_messages";
/// A flattened message's role, under a message prefix.
pub const MESSAGE_ROLE: &str = "message.role";
/// A flattened message's text, under a message prefix.
pub const MESSAGE_CONTENT: &str = "message.content";
/// The prefix of a flattened message's tool calls.
pub const MESSAGE_TOOL_CALLS: &str = "message.tool_calls";
/// A flattened tool call's id, under a tool call prefix.
pub const TOOL_CALL_ID: &str = "tool_call.id";
/// A flattened tool call's function name, under a tool call prefix.
pub const TOOL_CALL_FUNCTION_NAME: &str = "tool_call.function.name";
/// A flattened tool call's arguments (JSON), under a tool call prefix.
pub const TOOL_CALL_FUNCTION_ARGUMENTS: &str = "tool_call.function.arguments";
/// The tool's name on a tool span.
pub const TOOL_NAME: &str = "tool.name";
/// The tool's arguments on a tool span (content: opt-in).
pub const TOOL_PARAMETERS: &str = "tool.parameters";

// ---------------------------------------------------------------------------
// roundup's own.

/// The run's place in its session, counted from 0.
pub const ROUNDUP_RUN: &str = "roundup.run";
/// How the run ended: `completed`, `failed`, `canceled` or `interrupted`.
pub const ROUNDUP_FINISH_REASON: &str = "roundup.finish_reason";
/// The run's rounds.
pub const ROUNDUP_ROUNDS: &str = "roundup.rounds";
/// The run's tool calls.
pub const ROUNDUP_TOOL_CALLS: &str = "roundup.tool_calls";
/// The run's anomalies.
pub const ROUNDUP_ANOMALIES: &str = "roundup.anomalies";
/// The late results stitched into the run's rounds.
pub const ROUNDUP_STITCHES: &str = "roundup.stitches";
/// The last context-window occupancy the agent reported (a gauge, not
/// billing).
pub const ROUNDUP_TOKEN_USAGE_LAST: &str = "roundup.token_usage.last";
/// The round's place in its run, counted from 0.
pub const ROUNDUP_ROUND_INDEX: &str = "roundup.round.index";
/// What closed the round: `next_chunk`, `tools_done` or `finish`.
pub const ROUNDUP_ROUND_CLOSED_BY: &str = "roundup.round.closed_by";
/// The tool call's title: what a person is shown (`Read a.ts`).
pub const ROUNDUP_TOOL_TITLE: &str = "roundup.tool.title";
/// The call's result status: `completed`, `failed` or `placeholder`.
pub const ROUNDUP_TOOL_RESULT_STATUS: &str = "roundup.tool.result.status";
/// Why a placeholder stands in for the result: `superseded` or the run's
/// finish reason.
pub const ROUNDUP_PLACEHOLDER_REASON: &str = "roundup.placeholder.reason";
/// The live output a call without a result had sent (content: opt-in).
pub const ROUNDUP_TOOL_OUTPUT: &str = "roundup.tool.output";
/// Whether the call's result came late and was stitched into its round.
pub const ROUNDUP_TOOL_STITCHED: &str = "roundup.tool.stitched";
/// The name of the event a stitched late result adds to its call's span.
pub const EVENT_STITCH: &str = "roundup.stitch";
/// The name prefix of an anomaly's event: `roundup.anomaly.{kind}`.
pub const EVENT_ANOMALY: &str = "roundup.anomaly";
/// An anomaly's kind (`undeclared_terminal`, `bad_line`, ...).
pub const ROUNDUP_ANOMALY_KIND: &str = "roundup.anomaly.kind";
/// The tool call id an anomaly named.
pub const ROUNDUP_ANOMALY_ID: &str = "roundup.anomaly.id";
/// The terminal status of a dropped result.
pub const ROUNDUP_ANOMALY_STATUS: &str = "roundup.anomaly.status";
/// An anomaly's detail: what was dropped, or why (content for the kinds
/// whose detail is the input's own: opt-in).
pub const ROUNDUP_ANOMALY_DETAIL: &str = "roundup.anomaly.detail";
/// The payload a call after the run's finish carried (content: opt-in).
pub const ROUNDUP_ANOMALY_CONTENT: &str = "roundup.anomaly.content";
