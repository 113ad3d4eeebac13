// Types of the `roundup` package; the guide is docs/node.md.
//
// Records and events are declared here as the interfaces below, one
// `export interface` per JSON object roundup writes: test/types.test.mjs
// checks every key of every record and event of every vector and fixture
// against them (and that every declared key occurs), and test/types/
// checks with tsc that the AG-UI events and AI SDK chunks are assignable
// to @ag-ui/core's `Event` and the ai package's `UIMessageChunk`.

/// <reference types="node" />

// ---------------------------------------------------------------- records

/** Metadata: a JSON object an adapter or the caller attached. */
export type Meta = { [key: string]: unknown };

/** Why a run ended. */
export type FinishReason = "completed" | "failed" | "canceled" | "interrupted";

/** A tool call's status, as `toolUpdate` takes it. */
export type ToolCallStatus = "pending" | "in_progress" | "completed" | "failed";

/** A tool call's one result. */
export type ToolResult = CompletedResult | FailedResult | PlaceholderResult;

export interface CompletedResult {
  status: "completed";
  content: string;
}

export interface FailedResult {
  status: "failed";
  content: string;
}

/** No result came: `reason` is `superseded` or the run's finish reason;
 * `output` is the live output so far, when there was some. */
export interface PlaceholderResult {
  status: "placeholder";
  reason: "superseded" | FinishReason;
  output?: string;
}

export interface ToolCall {
  id: string;
  /** What a person is shown (`Read a.ts`); may be empty. */
  title: string;
  /** The tool's machine name, when the protocol gave one. */
  name?: string;
  /** The final arguments, as the JSON text the model wrote. */
  arguments: string;
  result: ToolResult;
  started_at_ms: number;
  finished_at_ms: number;
  meta?: Meta;
}

/** One assistant turn. */
export interface Round {
  type: "round";
  session?: string;
  run: number;
  index: number;
  closed_by: "next_chunk" | "tools_done" | "finish";
  message: string;
  thought: string;
  tool_calls: ToolCall[];
  started_at_ms: number;
  finished_at_ms: number;
  meta?: Meta;
}

/** A late result for a call of an earlier round. */
export interface Stitch {
  type: "stitch";
  session?: string;
  run: number;
  round: number;
  id: string;
  result: CompletedResult | FailedResult;
  finished_at_ms: number;
}

export type AnomalyKind =
  | "undeclared_terminal"
  | "duplicate_terminal"
  | "unknown_tool_call"
  | "after_finish"
  | "bad_line"
  | "bad_meta"
  | "unknown_event"
  | "unknown_content"
  | "unknown_status"
  | "protocol_error"
  | "restore_failed";

/** Something that could not be applied, kept. */
export interface Anomaly {
  type: "anomaly";
  session?: string;
  run: number;
  kind: AnomalyKind;
  id?: string;
  status?: "completed" | "failed";
  detail: string;
  content?: string;
}

/** Metadata for a tool call of an earlier round. */
export interface MetaPatch {
  type: "meta";
  session?: string;
  run: number;
  round: number;
  id: string;
  meta: Meta;
}

export interface PlaceholderCounts {
  superseded?: number;
  completed?: number;
  failed?: number;
  canceled?: number;
  interrupted?: number;
}

/** A run's counts, after all its other records. The run's metadata (an
 * adapter's `anthropic_usage`, `claude_cost_usd`, ...) is spread into it. */
export interface Summary {
  type: "summary";
  session?: string;
  run: number;
  finish_reason?: FinishReason;
  rounds: number;
  tool_calls: number;
  failed_tool_calls: number;
  placeholders: PlaceholderCounts;
  stitches: number;
  anomalies: number;
  message_bytes: number;
  thought_bytes: number;
  last_token_usage: number | null;
  [meta: string]: unknown;
}

/** A record: what `emit: "records"` (the default) gives, and `onRecord`. */
export type RoundupRecord = Round | Stitch | Anomaly | MetaPatch | Summary;

/** The round being built, as a reconnecting UI draws it (`openRound()`). */
export interface OpenRound {
  session?: string;
  run: number;
  index: number;
  message: string;
  thought: string;
  tool_calls: OpenToolCall[];
  /** When its first fragment came; null before any did. */
  started_at_ms: number | null;
  meta?: Meta;
}

/** A call of the round being built: its arguments and live output so
 * far, and its result once one came. */
export interface OpenToolCall {
  id: string;
  title: string;
  name?: string;
  arguments: string;
  output: string;
  result: ToolResult | null;
  started_at_ms: number;
  meta?: Meta;
}

// --------------------------------------------------------- live UI events

/** A live UI event (`onUi`, and `emit: "ui"`); `session` names the
 * session where it has a name. */
export type UiEvent =
  | { event: "run_start"; run: number; session?: string }
  | { event: "run_end"; run: number; reason: FinishReason; session?: string }
  | { event: "message_start"; session?: string }
  | { event: "message_delta"; text: string; session?: string }
  | { event: "message_end"; session?: string }
  | { event: "thought_start"; session?: string }
  | { event: "thought_delta"; text: string; session?: string }
  | { event: "thought_end"; session?: string }
  | { event: "tool_call_start"; id: string; title: string; name?: string; session?: string }
  | { event: "tool_call_title"; id: string; title: string; name?: string; session?: string }
  | { event: "tool_call_args"; id: string; args: string; replace: boolean; session?: string }
  | { event: "tool_call_output"; id: string; content: string; replace: boolean; session?: string }
  | { event: "tool_call_result"; id: string; content: string; success: boolean; session?: string }
  | { event: "tool_call_end"; id: string; session?: string }
  | { event: "tool_call_interrupted"; id: string; reason: "superseded" | FinishReason; session?: string }
  | { event: "tool_call_stitched"; id: string; run: number; round: number; content: string; success: boolean; session?: string }
  | { event: "token_usage"; total: number; session?: string }
  | { event: "round_end"; run: number; index: number; closed_by: "next_chunk" | "tools_done" | "finish"; session?: string };

// ------------------------------------------------------------ AG-UI events

/** The AG-UI events roundup writes (`emit: "agui"` and `"agui-compact"`),
 * each assignable to @ag-ui/core's `Event`. */
export type AguiEvent =
  | AguiRunStarted
  | AguiRunFinished
  | AguiRunError
  | AguiTextMessageStart
  | AguiTextMessageContent
  | AguiTextMessageEnd
  | AguiReasoningStart
  | AguiReasoningEnd
  | AguiReasoningMessageStart
  | AguiReasoningMessageContent
  | AguiReasoningMessageEnd
  | AguiToolCallStart
  | AguiToolCallArgs
  | AguiToolCallEnd
  | AguiToolCallResult
  | AguiMessagesSnapshot
  | AguiCustom;

export interface AguiTokenUsage {
  totalTokens?: number;
  inputTokens?: number;
  outputTokens?: number;
}

export interface AguiRunStarted {
  type: "RUN_STARTED";
  threadId: string;
  runId: string;
  timestamp?: number;
}

export interface AguiRunFinished {
  type: "RUN_FINISHED";
  threadId: string;
  runId: string;
  outcome?: { type: "success" } | { type: "cancelled" };
  usage?: AguiTokenUsage[];
  timestamp?: number;
}

export interface AguiRunError {
  type: "RUN_ERROR";
  message: string;
  code?: string;
  metadata?: Meta;
  usage?: AguiTokenUsage[];
  timestamp?: number;
}

export interface AguiTextMessageStart {
  type: "TEXT_MESSAGE_START";
  messageId: string;
  role: "assistant";
  timestamp?: number;
}

export interface AguiTextMessageContent {
  type: "TEXT_MESSAGE_CONTENT";
  messageId: string;
  delta: string;
  timestamp?: number;
}

export interface AguiTextMessageEnd {
  type: "TEXT_MESSAGE_END";
  messageId: string;
  timestamp?: number;
}

export interface AguiReasoningStart {
  type: "REASONING_START";
  messageId: string;
  timestamp?: number;
}

export interface AguiReasoningEnd {
  type: "REASONING_END";
  messageId: string;
  timestamp?: number;
}

export interface AguiReasoningMessageStart {
  type: "REASONING_MESSAGE_START";
  messageId: string;
  role: "reasoning";
  timestamp?: number;
}

export interface AguiReasoningMessageContent {
  type: "REASONING_MESSAGE_CONTENT";
  messageId: string;
  delta: string;
  timestamp?: number;
}

export interface AguiReasoningMessageEnd {
  type: "REASONING_MESSAGE_END";
  messageId: string;
  timestamp?: number;
}

export interface AguiToolCallStart {
  type: "TOOL_CALL_START";
  toolCallId: string;
  toolCallName: string;
  parentMessageId?: string;
  timestamp?: number;
}

export interface AguiToolCallArgs {
  type: "TOOL_CALL_ARGS";
  toolCallId: string;
  delta: string;
  timestamp?: number;
}

export interface AguiToolCallEnd {
  type: "TOOL_CALL_END";
  toolCallId: string;
  timestamp?: number;
}

export interface AguiToolCallResult {
  type: "TOOL_CALL_RESULT";
  messageId: string;
  toolCallId: string;
  content: string;
  role?: "tool";
  metadata?: Meta;
  timestamp?: number;
}

export interface AguiCustom {
  type: "CUSTOM";
  name: string;
  value: unknown;
  timestamp?: number;
}

/** A message of a `MESSAGES_SNAPSHOT` (`emit: "agui-compact"`). */
export type AguiMessage = AguiAssistantMessage | AguiToolMessage | AguiReasoningMessage;

export interface AguiAssistantMessage {
  id: string;
  role: "assistant";
  content?: string;
  toolCalls?: AguiToolCall[];
}

export interface AguiToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface AguiToolMessage {
  id: string;
  role: "tool";
  toolCallId: string;
  content: string;
  error?: string;
}

export interface AguiReasoningMessage {
  id: string;
  role: "reasoning";
  content: string;
}

export interface AguiMessagesSnapshot {
  type: "MESSAGES_SNAPSHOT";
  messages: AguiMessage[];
}

// ------------------------------------------------------- AI SDK UI chunks

/** The AI SDK UI message stream chunks roundup writes (`emit: "ai-sdk"`),
 * each assignable to the ai package's `UIMessageChunk`. `session` names
 * the session where the input had one. */
export type AiSdkChunk =
  | { type: "start"; messageId?: string; messageMetadata?: unknown; session?: string }
  | { type: "start-step"; session?: string }
  | { type: "finish-step"; session?: string }
  | { type: "finish"; finishReason?: AiSdkFinishReason; messageMetadata?: unknown; session?: string }
  | { type: "abort"; reason?: string; session?: string }
  | { type: "text-start"; id: string; providerMetadata?: AiSdkProviderMetadata; session?: string }
  | { type: "text-delta"; id: string; delta: string; providerMetadata?: AiSdkProviderMetadata; session?: string }
  | { type: "text-end"; id: string; providerMetadata?: AiSdkProviderMetadata; session?: string }
  | { type: "reasoning-start"; id: string; providerMetadata?: AiSdkProviderMetadata; session?: string }
  | { type: "reasoning-delta"; id: string; delta: string; providerMetadata?: AiSdkProviderMetadata; session?: string }
  | { type: "reasoning-end"; id: string; providerMetadata?: AiSdkProviderMetadata; session?: string }
  | { type: "tool-input-start"; toolCallId: string; toolName: string; title?: string; providerMetadata?: AiSdkProviderMetadata; dynamic?: boolean; session?: string }
  | { type: "tool-input-delta"; toolCallId: string; inputTextDelta: string; session?: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: unknown; title?: string; providerMetadata?: AiSdkProviderMetadata; dynamic?: boolean; session?: string }
  | { type: "tool-input-error"; toolCallId: string; toolName: string; input: unknown; errorText: string; title?: string; providerMetadata?: AiSdkProviderMetadata; dynamic?: boolean; session?: string }
  | { type: "tool-output-available"; toolCallId: string; output: unknown; providerMetadata?: AiSdkProviderMetadata; preliminary?: boolean; dynamic?: boolean; session?: string }
  | { type: "tool-output-error"; toolCallId: string; errorText: string; providerMetadata?: AiSdkProviderMetadata; dynamic?: boolean; session?: string }
  | { type: "message-metadata"; messageMetadata: unknown; session?: string }
  | { type: `data-${string}`; id?: string; data: unknown; transient?: boolean; session?: string };

export type AiSdkFinishReason = "stop" | "length" | "content-filter" | "tool-calls" | "error" | "interrupted" | "other";

export type AiSdkProviderMetadata = { [provider: string]: { [key: string]: any } };

// ------------------------------------------------------------------- names

/** The input formats, in detection order (`inputFormats()`). */
export type InputFormat =
  | "ops"
  | "acp"
  | "opencode"
  | "uagent"
  | "deepwork"
  | "mistral"
  | "openai-chat"
  | "openai-responses"
  | "anthropic"
  | "claude-transcript"
  | "claude-code"
  | "codex"
  | "codex-rollout"
  | "ollama"
  | "gemini"
  | "gemini-cli"
  | "gemini-cli-chat"
  | "ai-sdk"
  | "bedrock";

/** The output formats (`outputFormats()`); the first is the default. */
export type OutputFormat =
  | "records"
  | "ui"
  | "deepwork"
  | "agui"
  | "agui-compact"
  | "ai-sdk"
  | "openai-chat"
  | "openai-responses"
  | "anthropic"
  | "otlp"
  | "otlp-content";

/** One call as its ops object (the contract's §3). */
export interface Op {
  op: string;
  session?: string;
  at_ms?: number;
  [field: string]: unknown;
}

// ------------------------------------------------------------------ errors

/**
 * What went wrong:
 * - `BAD_ARGUMENT`: an argument of the wrong type, or an unknown name
 *   (format, status, finish reason, anomaly kind);
 * - `BAD_EVENT`: an event its input format cannot read (`Router.feed`);
 * - `BAD_OP`: an ops object that is not a call (`call`);
 * - `BAD_CHECKPOINT`: bytes that are not a checkpoint this build reads;
 * - `CLOSED`: input after the end of a replay's input;
 * - `IO`: a file or directory (`evictDir`) that cannot be used;
 * - `INTERNAL`: a bug of roundup's, met on this input (the process goes
 *   on; please report it with the input).
 */
export type RoundupErrorCode = "BAD_ARGUMENT" | "BAD_EVENT" | "BAD_OP" | "BAD_CHECKPOINT" | "CLOSED" | "IO" | "INTERNAL";

export class RoundupError extends Error {
  readonly name: "RoundupError";
  readonly code: RoundupErrorCode;
  constructor(code: RoundupErrorCode, message: string, options?: { cause?: unknown });
}

// ---------------------------------------------------------------- sessions

/** Called with each record as it is made. A callback that throws does not
 * stop roundup: the error is thrown from the call that delivered it. */
export type RecordCallback = (record: RoundupRecord) => unknown;
/** Called with each live UI event; returning `false` stops the events
 * (the client is gone). */
export type UiCallback = (event: UiEvent) => unknown;

export interface RoundBuilderOptions {
  /** The session's name (records carry it as `session`). */
  session?: string | null;
  onRecord?: RecordCallback | null;
  onUi?: UiCallback | null;
  /** Keep closed rounds for `rounds` (default true). */
  retainRounds?: boolean;
}

/** One session's aggregation: feed it the calls of the stream, get rounds. */
export class RoundBuilder {
  constructor(options?: RoundBuilderOptions);
  /** The session's name; null for the session without one. */
  readonly session: string | null;
  message(text: string): void;
  thought(text: string): void;
  toolCall(id: string, title?: string | null, name?: string | null): void;
  toolUpdate(id: string, content: string, status?: ToolCallStatus): void;
  argsDelta(id: string, delta: string): void;
  /** The whole arguments: their JSON text, or a value written as JSON. */
  argsSnapshot(id: string, args: string | object): void;
  toolResult(id: string, content: string, options?: { failed?: boolean }): void;
  toolOutput(id: string, content: string, options?: { replace?: boolean }): void;
  tokenUsage(total: number): void;
  start(): void;
  finish(reason?: FinishReason): void;
  toolMeta(id: string, meta: Meta | string): void;
  runMeta(meta: Meta | string): void;
  roundMeta(meta: Meta | string): void;
  anomaly(kind: AnomalyKind, detail: string, id?: string | null): void;
  /** One call as its ops object (or its JSON text). */
  call(op: Op | string): void;
  /** Finishes the open run, if one is open; a router's session is also
   * forgotten. */
  close(reason?: FinishReason): void;
  /** The rounds closed so far (with `retainRounds`). */
  readonly rounds: Round[];
  /** The round being built; null when none is open. */
  openRound(): OpenRound | null;
  /** The current run's summary record. */
  summary(): Summary;
  /** The run being built or last finished, counted from 0. */
  readonly run: number;
  /** Whether the current run has finished. */
  readonly finished: boolean;
  /** The session's state as bytes, for `restore` here or in another process. */
  checkpoint(options?: { history?: boolean }): Uint8Array;
  /** Continues from a checkpoint; throws `BAD_CHECKPOINT` and changes
   * nothing when the bytes are not one. */
  restore(checkpoint: Uint8Array): void;
}

export interface RouterOptions {
  /** The input format `feed` reads. */
  from?: InputFormat | null;
  onRecord?: RecordCallback | null;
  onUi?: UiCallback | null;
  /** Sessions keep their closed rounds (default false). */
  retainRounds?: boolean;
  /** Keep at most this many sessions in memory, the others evicted as
   * checkpoints (in memory, or in files of `evictDir`). */
  maxSessions?: number | null;
  evictDir?: string | null;
}

/** An event of a protocol: parsed, its JSON text, or its bytes. */
export type ProtocolEvent = object | string | Uint8Array | ArrayBuffer;

/** Many sessions, one builder each, made on first sight. */
export class Router {
  constructor(options?: RouterOptions);
  readonly from: InputFormat | null;
  /** The session of that name (none: the session without a name). */
  session(name?: string | null): RoundBuilder;
  /** One call as its ops object; its `session` key addresses it. */
  call(op: Op | string): void;
  /** One event of the input format; throws `BAD_EVENT` (and changes
   * nothing) for one it cannot read. */
  feed(event: ProtocolEvent): void;
  /** Finishes a session's open run and forgets the session. */
  close(name: string | null, reason?: FinishReason): void;
  /** End of the stream: every session's open run finishes; returns how
   * many sessions there were. */
  finishAll(reason?: FinishReason): number;
  /** Sessions seen and not closed (open or evicted). */
  readonly size: number;
  /** Sessions held in memory. */
  readonly openSessions: number;
}

/** The translator of one stream of a protocol: its events in, the calls
 * they mean out, as ops objects that any builder or router takes. */
export class Adapter {
  constructor(format: InputFormat);
  readonly format: InputFormat;
  /** The calls one event means; throws `BAD_EVENT` for one it cannot read. */
  translate(event: ProtocolEvent): Op[];
  /** The stream ended: the calls for what the adapter still holds. */
  end(): Op[];
}

// ------------------------------------------------------------------ replay

export interface ReplayOptions {
  /** The input format; detected from the first events when absent. */
  from?: InputFormat | null;
  /** The output format (default `"records"`). */
  emit?: OutputFormat | null;
  /** SSE events (strings, ready to send) instead of objects. */
  sse?: boolean;
  maxSessions?: number | null;
  evictDir?: string | null;
}

/** The value type of each output format. */
export interface EmitValues {
  records: RoundupRecord;
  ui: UiEvent;
  agui: AguiEvent;
  "agui-compact": AguiEvent;
  "ai-sdk": AiSdkChunk;
  deepwork: { [key: string]: unknown };
  "openai-chat": unknown[];
  "openai-responses": unknown[];
  anthropic: unknown[];
  otlp: OtlpTraces;
  "otlp-content": OtlpTraces;
}

/** One finished run as OpenTelemetry traces: an OTLP/JSON
 * `ExportTraceServiceRequest`, as the OTLP file exporter writes it
 * (docs/otlp.md has the spans and their attributes). */
export interface OtlpTraces {
  resourceSpans: unknown[];
}

/** The values of output format `E`; records when none is named. */
export type EmitValue<E> = E extends keyof EmitValues ? EmitValues[E] : RoundupRecord;

/** The output values of `options`: exact for options written out
 * (`{ emit: "agui" }` gives `AguiEvent`s, `{ sse: true }` strings), the
 * union of what they may be for options only known as `ReplayOptions`. */
export type ReplayValue<O> = O extends { sse: true } ? string : EmitValueOf<O> | SseValueOf<O>;
type EmitValueOf<O> = O extends { emit?: infer E } ? EmitValue<E> : RoundupRecord;
type SseValueOf<O> = O extends { sse?: infer S } ? (unknown extends S ? never : true extends S ? string : never) : never;

export interface ReplayStats {
  lines: number;
  badLines: number;
  payloads: number;
  bytes: number;
  sessions: number;
  format: InputFormat | null;
}

/** What `replay` reads: the whole input (text or bytes), or its pieces
 * (bytes or text cut anywhere, or parsed events) from an async or sync
 * iterable, a web `ReadableStream` (what `fetch` gives) or a Node stream. */
export type ReplayInput =
  | string
  | Uint8Array
  | ArrayBuffer
  | AsyncIterable<Uint8Array | string | object>
  | Iterable<Uint8Array | string | object>
  | ReadableStream<Uint8Array | string>
  | NodeJS.ReadableStream;

export interface ReplayIterator<T> extends AsyncGenerator<T, void, undefined> {
  /** What was read so far. */
  readonly stats: ReplayStats;
}

/** Replays `input`, giving the output values as they complete: the
 * command line's (`roundup replay`), value for value. */
export function replay<const O extends ReplayOptions = {}>(input: ReplayInput, options?: O): ReplayIterator<ReplayValue<O>>;

/** `replay` of a whole input at hand, at once. */
export function replaySync<const O extends ReplayOptions = {}>(input: string | Uint8Array | ArrayBuffer, options?: O): ReplayValue<O>[];

/** `replay` as a TransformStream, for `pipeThrough`. */
export function replayStream<const O extends ReplayOptions = {}>(options?: O): TransformStream<Uint8Array | string | object, ReplayValue<O>>;

/** A replay driven by its caller. */
export class Replayer<const O extends ReplayOptions = {}> {
  constructor(options?: O);
  /** A piece of input; the output it completed. */
  feed(chunk: string | Uint8Array | ArrayBuffer): ReplayValue<O>[];
  /** One whole event; the output it completed. */
  feedEvent(event: object | string): ReplayValue<O>[];
  /** The input ended: the rest of the output. */
  end(): ReplayValue<O>[];
  /** The input ended: the rest of the output, one session at a time. */
  endIncrementally(): Generator<ReplayValue<O>, void, undefined>;
  readonly stats: ReplayStats;
}

export interface FormatInfo {
  name: string;
  about: string;
}

export function inputFormats(): FormatInfo[];
export function outputFormats(): FormatInfo[];

/** The version of the Rust crate the addon was built from. */
export const version: string;

declare const roundup: {
  Adapter: typeof Adapter;
  RoundBuilder: typeof RoundBuilder;
  Router: typeof Router;
  Replayer: typeof Replayer;
  RoundupError: typeof RoundupError;
  replay: typeof replay;
  replaySync: typeof replaySync;
  replayStream: typeof replayStream;
  inputFormats: typeof inputFormats;
  outputFormats: typeof outputFormats;
  version: string;
};
export default roundup;
