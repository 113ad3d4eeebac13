// The package's AG-UI events straight into the real AG-UI client, and its
// AI SDK chunks into the real ai package, in this process: every vector
// and fixture. The AG-UI events of each thread go through an AbstractAgent
// whose run() returns them (the client's verifier and event applier), and
// the messages it rebuilds must equal the rounds; the AI SDK chunks of each
// session go through readUIMessageStream (which throws on a chunk out of
// place), and the UI message of each run must hold the rounds.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { AbstractAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";
import { getToolName, isToolUIPart, readUIMessageStream, uiMessageChunkSchema, validateUIMessages } from "ai";
import { from } from "rxjs";
import { replay, replaySync } from "roundup";
import { bytes, collect, inPieces, inputs } from "./helpers.mjs";

// The client warns where it repairs a stream: a warning is a failure.
const warn = console.warn;
let warnings = [];
console.warn = (...args) => {
  warnings.push(args.map(String).join(" "));
  warn(...args);
};

/** An agent whose run is the package's event stream. */
class Replayed extends AbstractAgent {
  constructor(events, threadId) {
    super({ threadId });
    this.events = events;
  }
  run() {
    return from(this.events);
  }
}

/** The events of each thread, in order (a run's ids begin with its runId). */
function byThread(events) {
  const threads = new Map();
  const active = new Map();
  for (const event of events) {
    let thread;
    if (event.type === "RUN_STARTED" || event.type === "RUN_FINISHED") {
      thread = event.threadId;
      if (event.type === "RUN_STARTED") active.set(event.runId, event.threadId);
    } else if (event.type === "RUN_ERROR") {
      thread = event.metadata?.roundup?.threadId;
    } else if (event.type === "MESSAGES_SNAPSHOT") {
      thread = [...active.values()].at(-1);
    } else {
      const id = event.messageId ?? event.toolCallId ?? event.value?.toolCallId ?? "";
      let best = "";
      for (const runId of active.keys()) if (id.startsWith(runId + "/") && runId.length > best.length) best = runId;
      thread = active.get(best);
    }
    assert.notEqual(thread, undefined, `an event of no run: ${JSON.stringify(event)}`);
    if (!threads.has(thread)) threads.set(thread, []);
    threads.get(thread).push(event);
  }
  return threads;
}

/** What the client must have rebuilt from one thread's rounds. */
function expectations(thread, rounds, stitches, renamed) {
  const out = [];
  const late = new Map(stitches.map((s) => [`${thread}/run-${s.run}/round-${s.round}/${s.id}`, s.result.content ?? ""]));
  for (const round of rounds) {
    const id = `${thread}/run-${round.run}/round-${round.index}`;
    if (round.message !== "") out.push({ what: `message ${id}`, id, want: round.message });
    if (round.thought !== "") out.push({ what: `reasoning ${id}`, id: `${id}/reasoning`, want: round.thought });
    for (const call of round.tool_calls) {
      const callId = `${id}/${call.id}`;
      out.push({ what: `arguments of ${callId}`, call: callId, field: "arguments", want: call.arguments });
      const name = call.name || call.title;
      const rename = renamed.get(callId);
      out.push({ what: `name of ${callId}`, call: callId, field: "name", want: rename ? rename.from : name });
      const own = call.result.status === "placeholder" ? `no result: ${call.result.reason}` : (call.result.content ?? "");
      out.push({ what: `result of ${callId}`, result: callId, want: late.has(callId) ? late.get(callId) : own });
      out.push({ what: `one tool message for ${callId}`, results: callId, want: 1 });
    }
  }
  return out;
}

function found(messages, e) {
  if (e.id !== undefined) return messages.find((m) => m.id === e.id)?.content;
  if (e.call !== undefined) {
    for (const m of messages) {
      const call = m.toolCalls?.find((c) => c.id === e.call);
      if (call) return e.field === "name" ? call.function.name : call.function.arguments;
    }
    return undefined;
  }
  if (e.results !== undefined) return messages.filter((m) => m.role === "tool" && m.toolCallId === e.results).length;
  return messages.filter((m) => m.role === "tool" && m.toolCallId === e.result)[0]?.content;
}

async function runAgent(thread, events) {
  const agent = new Replayed(events, thread);
  const errored = [];
  warnings = [];
  await agent.runAgent({}, { onRunErrorEvent: ({ event }) => errored.push(event.metadata?.roundup?.runId) });
  assert.deepEqual(warnings, [], "the client warned");
  return { messages: agent.messages, errored };
}

async function checkAgui(events, records) {
  for (const event of events) {
    const parsed = EventSchemas.safeParse(event);
    assert.ok(parsed.success, `schema: ${JSON.stringify(event)}: ${parsed.error?.message}`);
  }
  const threads = byThread(events);
  for (const [thread, own] of threads) {
    const { messages, errored } = await runAgent(thread, own);
    const mine = (l) => (l.session ?? "roundup") === thread;
    const failedRuns = records.filter((l) => l.type === "summary" && mine(l) && l.finish_reason === "failed").map((l) => `${thread}/run-${l.run}`);
    assert.deepEqual(errored, failedRuns, `${thread}: the runs the client was told failed`);
    const rounds = records.filter((l) => l.type === "round" && mine(l));
    const stitches = records.filter((l) => l.type === "stitch" && mine(l));
    const renamed = new Map(own.filter((e) => e.type === "CUSTOM" && e.name === "roundup.tool_call_renamed").map((e) => [e.value.toolCallId, e.value]));
    for (const e of expectations(thread, rounds, stitches, renamed)) assert.equal(found(messages, e), e.want, `${thread} ${e.what}`);
  }
  return threads.size;
}

describe("AG-UI: the events into the real @ag-ui/client", () => {
  let threads = 0;
  for (const { name, path } of inputs) {
    test(name, async () => {
      const data = bytes(path);
      const records = replaySync(data);
      threads += await checkAgui(await collect(replay(inPieces(data, 97), { emit: "agui" })), records);
      await checkAgui(replaySync(data, { emit: "agui-compact" }), records);
    });
  }
  test("threads were rebuilt", () => assert.ok(threads >= inputs.length, `${threads} threads`));
});

/** The name the encoder gives a tool: the APIs' `^[a-zA-Z0-9_-]{1,64}$`. */
function toolName(call) {
  const source = call.name || call.title;
  if (source !== "" && source.length <= 64 && /^[A-Za-z0-9_-]+$/.test(source)) return source;
  let name = "";
  let replaced = false;
  for (const c of source) {
    if (name.length === 64) break;
    if (/^[A-Za-z0-9_-]$/.test(c)) {
      name += c;
      replaced = false;
    } else if (!replaced) {
      name += "_";
      replaced = true;
    }
  }
  name = name.replace(/^_+|_+$/g, "");
  return name === "" ? "tool" : name;
}

function sameValue(got, text) {
  if (typeof got === "string") return got === text;
  try {
    return isDeepStrictEqual(got, JSON.parse(text));
  } catch {
    return false;
  }
}

/** The UI messages the client builds from `chunks`, the last state of each. */
async function build(chunks) {
  const stream = new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const messages = new Map();
  let error;
  for await (const message of readUIMessageStream({ stream, terminateOnError: true, onError: (e) => (error ??= e) })) {
    messages.set(message.id, structuredClone(message));
  }
  if (error) throw error;
  return [...messages.values()];
}

function steps(message) {
  const out = [];
  for (const part of message.parts) {
    if (part.type === "step-start") out.push([]);
    else if (out.length > 0) out[out.length - 1].push(part);
  }
  return out;
}

function checkMessage(message, rounds, stitches, summary) {
  const got = steps(message);
  assert.equal(got.length, rounds.length, "one step per round");
  for (const [at, round] of rounds.entries()) {
    const parts = got[at];
    const where = `round ${round.index}`;
    assert.equal(parts.filter((p) => p.type === "text").map((p) => p.text).join(""), round.message, `${where} text`);
    assert.equal(parts.filter((p) => p.type === "reasoning").map((p) => p.text).join(""), round.thought, `${where} reasoning`);
    const tools = parts.filter(isToolUIPart);
    assert.equal(tools.length, round.tool_calls.length, `${where} tool parts`);
    for (const [i, call] of round.tool_calls.entries()) {
      const part = tools[i];
      const what = `${where} call ${call.id}`;
      assert.equal(getToolName(part), toolName(call), `${what} name`);
      if (call.title !== "") assert.equal(part.title, call.title, `${what} title`);
      assert.ok(sameValue(part.input, call.arguments === "" ? "{}" : call.arguments), `${what} input ${JSON.stringify(part.input)}`);
      const stitch = stitches.find((s) => s.round === round.index && s.id === call.id);
      const result = stitch ? stitch.result : call.result;
      if (result.status === "completed") {
        assert.equal(part.state, "output-available", `${what} state`);
        assert.ok(sameValue(part.output, result.content), `${what} output`);
      } else {
        const error = result.status === "failed" ? result.content : `no result: ${result.reason}`;
        assert.equal(part.state, "output-error", `${what} state`);
        assert.equal(part.errorText, error, `${what} error`);
      }
    }
  }
  if (summary) assert.equal(message.metadata?.roundup?.summary?.finish_reason, summary.finish_reason, "the summary's finish reason");
}

describe("AI SDK: the chunks into the real ai package's readUIMessageStream", () => {
  let messages = 0;
  for (const { name, path } of inputs) {
    test(name, async () => {
      const data = bytes(path);
      const records = replaySync(data);
      const chunks = await collect(replay(inPieces(data, 97), { emit: "ai-sdk" }));
      for (const chunk of chunks) {
        const { session: _, ...plain } = chunk;
        const parsed = await uiMessageChunkSchema().validate(plain);
        assert.ok(parsed.success, `schema: ${JSON.stringify(chunk)}`);
      }
      for (const session of new Set(records.map((l) => l.session ?? null))) {
        const mine = records.filter((l) => (l.session ?? null) === session);
        const built = await build(chunks.filter((c) => (c.session ?? null) === session).map(({ session: _, ...c }) => c));
        const thread = session ?? "roundup";
        for (const run of new Set(mine.filter((l) => l.type === "summary").map((l) => l.run))) {
          const message = built.find((m) => m.id === `${thread}/run-${run}`);
          const rounds = mine.filter((l) => l.type === "round" && l.run === run);
          if (message === undefined) {
            assert.equal(rounds.length, 0, `no message for run ${run} of ${thread}`);
            continue;
          }
          messages += 1;
          checkMessage(
            message,
            rounds,
            mine.filter((l) => l.type === "stitch" && l.run === run),
            mine.find((l) => l.type === "summary" && l.run === run),
          );
        }
        if (built.length > 0) await validateUIMessages({ messages: built });
      }
    });
  }
  test("messages were built", () => assert.ok(messages >= inputs.length / 2, `${messages} messages`));
});
