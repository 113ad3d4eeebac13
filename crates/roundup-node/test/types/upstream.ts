// The AG-UI events and AI SDK chunks roundup declares are the real
// packages' types (tsc --strict fails here when they drift): each AI SDK
// chunk is assignable to the ai package's `UIMessageChunk`; each AG-UI
// event, but for its `type`, to the @ag-ui/core event of that type (whose
// `type` is a TypeScript enum member, which no string literal is
// assignable to: a cast, `event as Event`, is allowed and suffices).
import type { Event as AgUiEvent, Message as AgUiMessage } from "@ag-ui/core";
import type { UIMessageChunk } from "ai";
import type { AguiEvent, AguiMessage, AiSdkChunk, ReplayOptions, RoundupRecord, UiEvent } from "roundup";
import { replay, replaySync, replayStream, RoundBuilder, Router, RoundupError } from "roundup";

/** The @ag-ui/core event whose `type` is the string `T`. */
type Upstream<T extends string> = AgUiEvent extends infer E ? (E extends { type: infer K } ? (`${K & string}` extends T ? E : never) : never) : never;

/** Each of roundup's AG-UI events, but for `type`, is its upstream event. */
type Fits = { [T in AguiEvent["type"]]: Omit<Extract<AguiEvent, { type: T }>, "type"> extends Omit<Upstream<T>, "type"> ? true : T };
const fits: { [T in AguiEvent["type"]]: true } = null as unknown as Fits;
void fits;

export function asAgUi(event: AguiEvent): AgUiEvent {
  return event as AgUiEvent;
}

export function asAgUiMessage(message: AguiMessage): AgUiMessage {
  return message;
}

export function asUiMessageChunk(chunk: AiSdkChunk): UIMessageChunk {
  return chunk;
}

export async function typed(body: ReadableStream<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const event of replay(body, { from: "anthropic", emit: "agui" })) {
    const agui = event as AgUiEvent;
    if (agui.type === "TEXT_MESSAGE_CONTENT") n += agui.delta.length;
  }
  for await (const record of replay("", {})) {
    if (record.type === "round") n += record.tool_calls.length;
  }
  const chunks: UIMessageChunk[] = replaySync("", { emit: "ai-sdk" });
  const sse: string[] = replaySync(new Uint8Array(), { emit: "agui", sse: true });
  const stream: ReadableStream<AiSdkChunk> = body.pipeThrough(replayStream({ emit: "ai-sdk" }));
  const builder = new RoundBuilder({ session: "s1", onRecord: (r) => (n += r.run) });
  builder.toolCall("t1", "Read a.ts", "Read");
  builder.argsSnapshot("t1", { path: "a.ts" });
  builder.toolResult("t1", "...", { failed: false });
  const bytes: Uint8Array = builder.checkpoint({ history: true });
  builder.restore(bytes);
  const router = new Router({ from: "acp", maxSessions: 10 });
  router.session("s1").message("hi");
  try {
    router.feed("{");
  } catch (error) {
    if (error instanceof RoundupError && error.code === "BAD_EVENT") n += 1;
  }
  return n + chunks.length + sse.length + (stream ? 1 : 0) + values(n % 2 === 0 ? { emit: "ui" } : { sse: true });
}

/** Options known only as ReplayOptions: the values are what they may be. */
function values(options: ReplayOptions): number {
  const out = replaySync("", options);
  const each: (RoundupRecord | UiEvent | AguiEvent | AiSdkChunk | string | object)[] = out;
  // @ts-expect-error: a value may be a string (with `sse`), not a record.
  const records: RoundupRecord[] = out;
  const exact: AguiEvent[] = replaySync("", { emit: "agui" });
  const plain: RoundupRecord[] = replaySync("", {});
  const none: RoundupRecord[] = replaySync("");
  const lines: string[] = replaySync("", { emit: "ai-sdk", sse: true });
  return each.length + records.length + exact.length + plain.length + none.length + lines.length;
}
