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
import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:http";
import { join, dirname, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { AbstractAgent, HttpAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";
import { from } from "rxjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

// A call renamed while it ran is started again with its final name, which
// the client applies with a warning: expected, not news.
const warn = console.warn;
console.warn = (...args) => {
  if (!String(args[0]).startsWith("TOOL_CALL_START: tool call")) warn(...args);
};
const bin = process.env.ROUNDUP_BIN ?? join(root, "target", "debug", "roundup");

/** Every file under `dir` (recursively) that is an input: not a README. */
function inputs(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...inputs(path));
    // Notes, expected outputs and an origin's own recording file (whose
    // stream is a fixture beside it) are not inputs.
    else if (!/\.(md|txt)$/.test(name) && !/\.(expected\.jsonl|recording\.json)$/.test(name)) out.push(path);
  }
  return out;
}

/** A conformance vector's ops as an ops JSONL file; any other input (a
 * fixture's JSON array body included) as is. */
const scratch = mkdtempSync(join(tmpdir(), "roundup-agui-"));
const vectorsDir = join(root, "tests", "vectors");
function input(file) {
  if (!file.endsWith(".json") || !resolve(file).startsWith(vectorsDir + sep)) return file;
  const vector = JSON.parse(readFileSync(file, "utf8"));
  const ops = join(scratch, `${vector.name}.ops.jsonl`);
  writeFileSync(ops, vector.ops.map((op) => JSON.stringify(op) + "\n").join(""));
  return ops;
}

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
function expectations(thread, rounds, stitches) {
  const out = [];
  for (const round of rounds) {
    const id = `${thread}/run-${round.run}/round-${round.index}`;
    if (round.message !== "") out.push({ what: `message ${id}`, id, field: "content", want: round.message });
    if (round.thought !== "") out.push({ what: `reasoning ${id}`, id: `${id}/reasoning`, field: "content", want: round.thought });
    for (const call of round.tool_calls) {
      const callId = `${id}/${call.id}`;
      out.push({ what: `arguments of ${callId}`, call: callId, field: "arguments", want: call.arguments });
      // The tool's machine name when the source gave one, else its title.
      out.push({ what: `name of ${callId}`, call: callId, field: "name", want: call.name || call.title });
      const result = call.result.status === "placeholder" ? `no result: ${call.result.reason}` : (call.result.content ?? "");
      out.push({ what: `result of ${callId}`, result: callId, nth: 0, want: result });
    }
  }
  for (const stitch of stitches) {
    const callId = `${thread}/run-${stitch.run}/round-${stitch.round}/${stitch.id}`;
    out.push({ what: `stitched result of ${callId}`, result: callId, nth: 1, want: stitch.result.content ?? "" });
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
  return messages.filter((m) => m.role === "tool" && m.toolCallId === e.result)[e.nth]?.content;
}

let passed = 0;
let failed = 0;
function record(ok, what, detail) {
  if (ok) passed += 1;
  else {
    failed += 1;
    console.log(`FAIL ${what}${detail ? `: ${detail}` : ""}`);
  }
}

/** Runs one thread's events through the client; the rebuilt messages, or
 * the error the client raised. */
async function apply(thread, events) {
  const agent = new Replayed(events, thread);
  try {
    await agent.runAgent();
    return { messages: agent.messages };
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
    const { messages, error } = await apply(thread, own);
    if (error) return record(false, `${name} (${thread})`, `the client rejected the stream: ${error}`);
    const session = (l) => (l.session ?? "roundup") === thread;
    const rounds = records.filter((l) => l.type === "round" && session(l));
    const stitches = records.filter((l) => l.type === "stitch" && session(l));
    for (const e of expectations(thread, rounds, stitches)) {
      const got = found(messages, e);
      if (got !== e.want) return record(false, `${name} (${thread}) ${e.what}`, `client has ${JSON.stringify(got)}, round has ${JSON.stringify(e.want)}`);
    }
  }
  record(true, name);
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

const files = process.argv.length > 2
  ? process.argv.slice(2)
  : [...inputs(join(root, "tests", "vectors")), ...inputs(join(root, "tests", "fixtures"))];
for (const file of files) await checkFile(file);
const oneRun = join(root, "tests", "fixtures", "anthropic-messages", "anthropic-sdk-python-tool_use_response.sse");
await checkBrokenStreamIsRejected(oneRun);
await checkHttpAgent(oneRun);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
