// Checks roundup's AG-UI output (`roundup replay --emit agui`) with the real
// AG-UI client (@ag-ui/client and @ag-ui/core, exact versions in
// package.json): every event against the client's schemas, every thread's
// events through the client's own verifier and event applier (an agent
// subclass whose run replays them), and the messages the client rebuilds
// against roundup's rounds for the same input. Then one stream served over
// SSE on 127.0.0.1 and read by `HttpAgent`, and a stream with one
// `TOOL_CALL_END` removed, which the verifier must reject.
//
// usage: ROUNDUP_BIN=target/debug/roundup node tests/agui/check.mjs [FILE...]
// (no FILE: every conformance vector and every fixture of the repository)

import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { join, relative } from "node:path";
import { AbstractAgent, HttpAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";
import { from } from "rxjs";
import { bin, input, inputFiles, root } from "../inputs.mjs";
import { finish, record } from "../tally.mjs";

// The client warns where it repairs a stream (a tool call started twice, a
// message it does not know): a stream it has to warn about is not clean, so
// each warning while a stream is applied is a failure of that input.
const warn = console.warn;
let warnings = [];
console.warn = (...args) => {
  warnings.push(args.map(String).join(" "));
  warn(...args);
};

function replay(file, ...args) {
  const out = execFileSync(bin, ["replay", ...args, input(file)], { maxBuffer: 1 << 30, stdio: ["ignore", "pipe", "ignore"] });
  return out.toString("utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
}

/** An agent whose run is a recorded event stream: runAgent puts it through
 * the client's verifier and applier, as it would a live one. */
class Replayed extends AbstractAgent {
  constructor(events, threadId) {
    super({ threadId });
    this.events = events;
  }
  run() {
    return from(this.events);
  }
}

/** The events of each thread, in order. A run's events carry ids that
 * begin with its runId; RUN_* events carry it. */
function byThread(events) {
  const threads = new Map();
  const active = new Map(); // runId -> threadId
  for (const event of events) {
    let thread;
    if (event.type === "RUN_STARTED" || event.type === "RUN_FINISHED") {
      thread = event.threadId;
      if (event.type === "RUN_STARTED") active.set(event.runId, event.threadId);
    } else if (event.type === "RUN_ERROR") {
      // The error event names no thread: roundup puts it in its metadata.
      thread = event.metadata?.roundup?.threadId;
    } else {
      const id = event.messageId ?? event.toolCallId ?? event.value?.toolCallId ?? "";
      let best = "";
      for (const runId of active.keys()) if (id.startsWith(runId + "/") && runId.length > best.length) best = runId;
      thread = active.get(best);
    }
    if (thread === undefined) throw new Error(`an event of no run: ${JSON.stringify(event)}`);
    if (!threads.has(thread)) threads.set(thread, []);
    threads.get(thread).push(event);
  }
  return threads;
}

/** What the client must have rebuilt from `rounds` (of one thread). */
function expectations(thread, rounds, stitches, renamed = new Map()) {
  const out = [];
  // A late result is its call's one result (the placeholder waited for it).
  const late = new Map(stitches.map((s) => [`${thread}/run-${s.run}/round-${s.round}/${s.id}`, s.result.content ?? ""]));
  for (const round of rounds) {
    const id = `${thread}/run-${round.run}/round-${round.index}`;
    if (round.message !== "") out.push({ what: `message ${id}`, id, field: "content", want: round.message });
    if (round.thought !== "") out.push({ what: `reasoning ${id}`, id: `${id}/reasoning`, field: "content", want: round.thought });
    for (const call of round.tool_calls) {
      const callId = `${id}/${call.id}`;
      out.push({ what: `arguments of ${callId}`, call: callId, field: "arguments", want: call.arguments });
      // The tool's machine name when the source gave one, else its title;
      // a machine name changed after the call started is the started one
      // in the client, and the final one in a roundup.tool_call_renamed.
      const name = call.name || call.title;
      const rename = renamed.get(callId);
      if (rename) out.push({ what: `final name of ${callId}`, value: rename.name, want: name });
      out.push({ what: `name of ${callId}`, call: callId, field: "name", want: rename ? rename.from : name });
      const own = call.result.status === "placeholder" ? `no result: ${call.result.reason}` : (call.result.content ?? "");
      const result = late.has(callId) ? late.get(callId) : own;
      out.push({ what: `result of ${callId}`, result: callId, nth: 0, want: result });
      out.push({ what: `one tool message for ${callId}`, results: callId, want: 1 });
    }
  }
  return out;
}

function found(messages, e) {
  if (e.value !== undefined) return e.value;
  if (e.id !== undefined) return messages.find((m) => m.id === e.id)?.content;
  if (e.call !== undefined) {
    for (const m of messages) {
      const call = m.toolCalls?.find((c) => c.id === e.call);
      if (call) return e.field === "name" ? call.function.name : call.function.arguments;
    }
    return undefined;
  }
  if (e.results !== undefined) return messages.filter((m) => m.role === "tool" && m.toolCallId === e.results).length;
  return messages.filter((m) => m.role === "tool" && m.toolCallId === e.result)[e.nth]?.content;
}


/** Runs one thread's events through the client; the rebuilt messages and
 * the runs it was told failed (`RUN_ERROR`, which the client takes as the
 * end of that run: the thread's next run starts anew), or the error the
 * client raised. */
async function apply(thread, events) {
  const agent = new Replayed(events, thread);
  const errored = [];
  warnings = [];
  try {
    await agent.runAgent({}, { onRunErrorEvent: ({ event }) => errored.push(event.metadata?.roundup?.runId) });
    if (warnings.length > 0) return { error: `the client warned: ${warnings.join("; ")}` };
    return { messages: agent.messages, errored };
  } catch (error) {
    return { error: String(error?.message ?? error) };
  }
}

async function checkFile(file) {
  const name = relative(root, file);
  let events, records;
  try {
    events = replay(file, "--emit", "agui");
    records = replay(file);
  } catch (error) {
    return record(false, name, `roundup failed: ${error.message}`);
  }
  for (const event of events) {
    const parsed = EventSchemas.safeParse(event);
    if (!parsed.success) return record(false, name, `schema: ${JSON.stringify(event)}: ${parsed.error.message}`);
  }
  const threads = byThread(events);
  for (const [thread, own] of threads) {
    const { messages, errored, error } = await apply(thread, own);
    if (error) return record(false, `${name} (${thread})`, `the client rejected the stream: ${error}`);
    const session = (l) => (l.session ?? "roundup") === thread;
    // Every failed run, and no other, reached the client as its error.
    const failedRuns = records.filter((l) => l.type === "summary" && session(l) && l.finish_reason === "failed")
      .map((l) => `${thread}/run-${l.run}`);
    if (JSON.stringify(errored) !== JSON.stringify(failedRuns)) {
      return record(false, `${name} (${thread})`, `the client saw RUN_ERROR for ${JSON.stringify(errored)}, the failed runs are ${JSON.stringify(failedRuns)}`);
    }
    const rounds = records.filter((l) => l.type === "round" && session(l));
    const stitches = records.filter((l) => l.type === "stitch" && session(l));
    const renamed = new Map(own.filter((e) => e.type === "CUSTOM" && e.name === "roundup.tool_call_renamed").map((e) => [e.value.toolCallId, e.value]));
    for (const e of expectations(thread, rounds, stitches, renamed)) {
      const got = found(messages, e);
      if (got !== e.want) return record(false, `${name} (${thread}) ${e.what}`, `client has ${JSON.stringify(got)}, round has ${JSON.stringify(e.want)}`);
    }
  }
  record(true, name);
  await checkCompact(file, name, records);
}

/** `--emit agui --compact`: each run one MESSAGES_SNAPSHOT of its thread;
 * the client must rebuild the same messages from it, with no warning, and
 * be told each failed run. */
async function checkCompact(file, name, records) {
  let events;
  try {
    events = replay(file, "--emit", "agui", "--compact");
  } catch (error) {
    return record(false, `${name} --compact`, `roundup failed: ${error.message}`);
  }
  const threads = new Map();
  let current;
  for (const event of events) {
    const parsed = EventSchemas.safeParse(event);
    if (!parsed.success) return record(false, `${name} --compact`, `schema: ${parsed.error.message}`);
    if (event.type === "RUN_STARTED") current = event.threadId;
    if (current === undefined) return record(false, `${name} --compact`, `an event before any run: ${JSON.stringify(event)}`);
    if (!threads.has(current)) threads.set(current, []);
    threads.get(current).push(event);
  }
  for (const [thread, own] of threads) {
    const { messages, errored, error } = await apply(thread, own);
    if (error) return record(false, `${name} --compact (${thread})`, `the client rejected the stream: ${error}`);
    const session = (l) => (l.session ?? "roundup") === thread;
    const failedRuns = records.filter((l) => l.type === "summary" && session(l) && l.finish_reason === "failed")
      .map((l) => `${thread}/run-${l.run}`);
    if (JSON.stringify(errored) !== JSON.stringify(failedRuns)) {
      return record(false, `${name} --compact (${thread})`, `RUN_ERROR for ${JSON.stringify(errored)}, failed runs ${JSON.stringify(failedRuns)}`);
    }
    const rounds = records.filter((l) => l.type === "round" && session(l));
    const stitches = records.filter((l) => l.type === "stitch" && session(l));
    for (const e of expectations(thread, rounds, stitches)) {
      const got = found(messages, e);
      if (got !== e.want) return record(false, `${name} --compact (${thread}) ${e.what}`, `client has ${JSON.stringify(got)}, round has ${JSON.stringify(e.want)}`);
    }
  }
  record(true, `${name} --compact`);
}

/** A stream with one TOOL_CALL_END removed must be rejected by the verifier. */
async function checkBrokenStreamIsRejected(file) {
  const events = replay(file, "--emit", "agui");
  const at = events.findIndex((e) => e.type === "TOOL_CALL_END");
  if (at < 0) return record(false, "broken stream", `no TOOL_CALL_END in ${file}`);
  const broken = events.filter((_, i) => i !== at);
  const [thread, own] = [...byThread(broken)][0];
  // The client logs the rejection it is expected to make.
  const log = console.error;
  console.error = () => {};
  const { error } = await apply(thread, own).finally(() => (console.error = log));
  record(error !== undefined && /still active|TOOL_CALL/.test(error), "a stream missing a TOOL_CALL_END is rejected", error ?? "accepted");
}

/** One stream over SSE, read by the client's HttpAgent. */
async function checkHttpAgent(file) {
  const body = execFileSync(bin, ["replay", "--emit", "agui", "--sse", file], { maxBuffer: 1 << 30 });
  const records = replay(file);
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(200, { "Content-Type": "text/event-stream" });
    response.end(body);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address();
    const agent = new HttpAgent({ url: `http://127.0.0.1:${port}/`, threadId: "roundup" });
    await agent.runAgent();
    const rounds = records.filter((l) => l.type === "round");
    const messages = agent.messages;
    const bad = expectations("roundup", rounds, []).find((e) => found(messages, e) !== e.want);
    record(bad === undefined && rounds.length > 0, `HttpAgent over SSE (${relative(root, file)})`, bad && bad.what);
  } catch (error) {
    record(false, "HttpAgent over SSE", String(error?.message ?? error));
  } finally {
    server.close();
  }
}

const files = inputFiles();
for (const file of files) await checkFile(file);
const oneRun = join(root, "tests", "fixtures", "anthropic-messages", "anthropic-sdk-python-tool_use_response.sse");
await checkBrokenStreamIsRejected(oneRun);
await checkHttpAgent(oneRun);
finish();
