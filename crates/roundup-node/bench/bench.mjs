// Per-round cost of rebuilding an assistant's turns from the wire, in
// Node: roundup against the AI SDK's readUIMessageStream and AG-UI's
// defaultApplyEvents, on the same sessions.
//
// Four workloads, each one session, written once as the bytes each runner
// reads (an SSE body, cut in 16 KiB pieces as a socket delivers it):
//
// - W1 long chat: 100 rounds, each 30 text deltas, one tool call whose
//   arguments arrive in 10 deltas, and its result;
// - W2 one long text: one round of 10,000 text deltas of 8 bytes;
// - W3 big arguments: one tool call whose 100 KB of arguments arrive in
//   1,000 deltas of 100 bytes, then its result;
// - W4 parallel calls: 8 tool calls whose arguments arrive interleaved,
//   20 deltas each, then their 8 results.
//
// Runners, each from the bytes to the rebuilt turns, as a program gets
// them:
//
// - ai: the AI SDK UI message stream body through parseJsonEventStream
//   with the package's uiMessageChunkSchema, then readUIMessageStream
//   (what useChat runs), to its last message;
// - ag-ui: the AG-UI SSE body through the client's runHttpRequest and
//   transformHttpEventStream (what HttpAgent runs), then
//   defaultApplyEvents, to its last state mutation;
// - roundup: the same AI SDK body through a Replayer (`from: "ai-sdk"`),
//   every record parsed into an object;
// - roundup (agui out): the same, with AG-UI events as output (`emit:
//   "agui"`), what a server that translates for a web client runs.
//
// Each runner's result is checked against the session (its text, its
// arguments, its results) before anything is timed. Runners take turns in
// blocks of runs, five times over, each block after an untimed run; each
// figure is the median per round (µs).
//
//   node bench/bench.mjs            the table of docs/node.md
//   node bench/bench.mjs --quick    a few runs, to check that it runs

import { performance } from "node:perf_hooks";
import { AbstractAgent, defaultApplyEvents, runHttpRequest, transformHttpEventStream } from "@ag-ui/client";
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from "ai";
import { lastValueFrom, tap } from "rxjs";
import { RoundBuilder, Replayer } from "roundup";

const quick = process.argv.includes("--quick");
const PIECE = 16 << 10;

// ---------------------------------------------------------------- sessions
// A session as neutral steps: ["text", s], ["call", id, name],
// ["args", id, s], ["result", id, s], ["round"] (a new step/round begins).

function w1() {
  const steps = [];
  for (let r = 0; r < 100; r++) {
    steps.push(["round"]);
    for (let i = 0; i < 30; i++) steps.push(["text", `word${i % 10} `]);
    const id = `call_${r}`;
    steps.push(["call", id, "read_file"]);
    steps.push(["args", id, '{"path": "']);
    for (let i = 0; i < 8; i++) steps.push(["args", id, `dir${i}/`]);
    steps.push(["args", id, 'a.txt"}']);
    steps.push(["result", id, `contents of file ${r}`]);
  }
  return steps;
}

function w2() {
  const steps = [["round"]];
  for (let i = 0; i < 10_000; i++) steps.push(["text", `wrd${String(i % 10000).padStart(4, "0")} `]);
  return steps;
}

function w3() {
  const body = "x".repeat(93);
  const steps = [["round"], ["call", "call_0", "write_file"], ["args", "call_0", '{"path": "big.txt", "text": "']];
  for (let i = 0; i < 1_000; i++) steps.push(["args", "call_0", `${String(i).padStart(7, "0")}${body}`]);
  steps.push(["args", "call_0", '"}'], ["result", "call_0", "written"]);
  return steps;
}

function w4() {
  const steps = [["round"], ["text", "Reading eight files."]];
  for (let c = 0; c < 8; c++) steps.push(["call", `call_${c}`, "read_file"]);
  for (let i = 0; i < 20; i++) {
    for (let c = 0; c < 8; c++) steps.push(["args", `call_${c}`, i === 0 ? '{"path": "' : i === 19 ? 'a.txt"}' : `d${i}/`]);
  }
  for (let c = 0; c < 8; c++) steps.push(["result", `call_${c}`, `contents of file ${c}`]);
  return steps;
}

/** What the rebuilt session must hold: its text, each call's arguments
 * and result. */
function expected(steps) {
  const args = new Map();
  const results = new Map();
  let text = "";
  for (const step of steps) {
    if (step[0] === "text") text += step[1];
    if (step[0] === "call") args.set(step[1], "");
    if (step[0] === "args") args.set(step[1], args.get(step[1]) + step[2]);
    if (step[0] === "result") results.set(step[1], step[2]);
  }
  return { text, args, results, rounds: steps.filter((s) => s[0] === "round").length };
}

const sse = (values) => values.map((v) => `data: ${JSON.stringify(v)}\n\n`).join("");

/** The AI SDK UI message stream body of a session. */
function aiSdkBody(steps) {
  const out = [{ type: "start", messageId: "m1" }];
  let text = null;
  let n = 0;
  const args = new Map();
  const names = new Map();
  const endText = () => {
    if (text !== null) out.push({ type: "text-end", id: text });
    text = null;
  };
  let inStep = false;
  for (const step of steps) {
    switch (step[0]) {
      case "round":
        endText();
        if (inStep) out.push({ type: "finish-step" });
        out.push({ type: "start-step" });
        inStep = true;
        break;
      case "text":
        if (text === null) {
          text = `t${n++}`;
          out.push({ type: "text-start", id: text });
        }
        out.push({ type: "text-delta", id: text, delta: step[1] });
        break;
      case "call":
        endText();
        args.set(step[1], "");
        names.set(step[1], step[2]);
        out.push({ type: "tool-input-start", toolCallId: step[1], toolName: step[2] });
        break;
      case "args":
        args.set(step[1], args.get(step[1]) + step[2]);
        out.push({ type: "tool-input-delta", toolCallId: step[1], inputTextDelta: step[2] });
        break;
      case "result":
        if (args.has(step[1])) {
          out.push({ type: "tool-input-available", toolCallId: step[1], toolName: names.get(step[1]), input: JSON.parse(args.get(step[1])) });
          args.delete(step[1]);
        }
        out.push({ type: "tool-output-available", toolCallId: step[1], output: step[2] });
        break;
    }
  }
  endText();
  out.push({ type: "finish-step" }, { type: "finish", finishReason: "stop" });
  return sse(out) + "data: [DONE]\n\n";
}

/** The AG-UI body of a session. */
function aguiBody(steps) {
  const out = [{ type: "RUN_STARTED", threadId: "t", runId: "r" }];
  let text = null;
  let round = 0;
  const open = new Set();
  const endText = () => {
    if (text !== null) out.push({ type: "TEXT_MESSAGE_END", messageId: text });
    text = null;
  };
  for (const step of steps) {
    switch (step[0]) {
      case "round":
        endText();
        round += 1;
        break;
      case "text":
        if (text === null) {
          text = `m${round}`;
          out.push({ type: "TEXT_MESSAGE_START", messageId: text, role: "assistant" });
        }
        out.push({ type: "TEXT_MESSAGE_CONTENT", messageId: text, delta: step[1] });
        break;
      case "call":
        endText();
        open.add(step[1]);
        out.push({ type: "TOOL_CALL_START", toolCallId: step[1], toolCallName: step[2], parentMessageId: `m${round}` });
        break;
      case "args":
        out.push({ type: "TOOL_CALL_ARGS", toolCallId: step[1], delta: step[2] });
        break;
      case "result":
        if (open.delete(step[1])) out.push({ type: "TOOL_CALL_END", toolCallId: step[1] });
        out.push({ type: "TOOL_CALL_RESULT", messageId: `${step[1]}/result`, toolCallId: step[1], content: step[2], role: "tool" });
        break;
    }
  }
  endText();
  out.push({ type: "RUN_FINISHED", threadId: "t", runId: "r" });
  return sse(out);
}

function pieces(text) {
  const bytes = new TextEncoder().encode(text);
  const out = [];
  for (let at = 0; at < bytes.length; at += PIECE) out.push(bytes.subarray(at, at + PIECE));
  return out;
}

function stream(chunks) {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(chunks[i++]);
      else controller.close();
    },
  });
}

// ----------------------------------------------------------------- runners

async function runAi(body) {
  const chunks = parseJsonEventStream({ stream: stream(body), schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (!result.success) throw result.error;
        controller.enqueue(result.value);
      },
    }),
  );
  let last;
  for await (const message of readUIMessageStream({ stream: chunks })) last = message;
  return last;
}

class Agent extends AbstractAgent {
  run() {
    throw new Error("not run");
  }
}

async function runAgui(body) {
  // What HttpAgent runs on a response: runHttpRequest, then
  // transformHttpEventStream (SSE parsing and the events' schemas).
  const response = async () => new Response(stream(body), { headers: { "content-type": "text/event-stream" } });
  const events$ = transformHttpEventStream(runHttpRequest(response));
  const input = { threadId: "t", runId: "r", messages: [], tools: [], context: [], state: {}, forwardedProps: {} };
  let messages = [];
  await lastValueFrom(defaultApplyEvents(input, events$, new Agent({ threadId: "t" }), []).pipe(tap((m) => m.messages && (messages = m.messages))), { defaultValue: undefined });
  return messages;
}

function runRoundup(body, emit = "records") {
  const replayer = new Replayer({ from: "ai-sdk", emit });
  const out = [];
  for (const piece of body) for (const value of replayer.feed(piece)) out.push(value);
  for (const value of replayer.end()) out.push(value);
  return out;
}

// ------------------------------------------------------- what each rebuilt

function fail(runner, what) {
  throw new Error(`${runner}: ${what}`);
}

function checkAi(message, want) {
  const text = message.parts.filter((p) => p.type === "text").map((p) => p.text).join("");
  if (text !== want.text) fail("ai", "text");
  const tools = message.parts.filter((p) => p.type.startsWith("tool-"));
  if (tools.length !== want.args.size) fail("ai", `${tools.length} tool parts`);
  for (const part of tools) {
    if (JSON.stringify(part.input) !== JSON.stringify(JSON.parse(want.args.get(part.toolCallId)))) fail("ai", `input of ${part.toolCallId}`);
    if (part.output !== want.results.get(part.toolCallId)) fail("ai", `output of ${part.toolCallId}`);
  }
}

function checkAgui(messages, want) {
  const text = messages.filter((m) => m.role === "assistant").map((m) => m.content ?? "").join("");
  if (text !== want.text) fail("ag-ui", "text");
  const calls = messages.flatMap((m) => m.toolCalls ?? []);
  if (calls.length !== want.args.size) fail("ag-ui", `${calls.length} calls`);
  for (const call of calls) if (call.function.arguments !== want.args.get(call.id)) fail("ag-ui", `arguments of ${call.id}`);
  for (const [id, result] of want.results) if (!messages.some((m) => m.role === "tool" && m.toolCallId === id && m.content === result)) fail("ag-ui", `result of ${id}`);
}

function checkRoundup(records, want) {
  const rounds = records.filter((r) => r.type === "round");
  if (rounds.length !== want.rounds) fail("roundup", `${rounds.length} rounds for ${want.rounds}`);
  if (rounds.map((r) => r.message).join("") !== want.text) fail("roundup", "text");
  const calls = rounds.flatMap((r) => r.tool_calls);
  if (calls.length !== want.args.size) fail("roundup", `${calls.length} calls`);
  for (const call of calls) {
    if (JSON.stringify(JSON.parse(call.arguments)) !== JSON.stringify(JSON.parse(want.args.get(call.id)))) fail("roundup", `arguments of ${call.id}`);
    if (call.result.content !== JSON.stringify(want.results.get(call.id)) && call.result.content !== want.results.get(call.id)) fail("roundup", `result of ${call.id}: ${call.result.content}`);
  }
}

function checkRoundupAgui(events, want) {
  const deltas = events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
  if (deltas !== want.text) fail("roundup (agui out)", "text");
  if (events.filter((e) => e.type === "TOOL_CALL_RESULT").length !== want.results.size) fail("roundup (agui out)", "results");
}

// ------------------------------------------------------------------- timing

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

async function bench(name, steps) {
  const want = expected(steps);
  const ai = pieces(aiSdkBody(steps));
  const agui = pieces(aguiBody(steps));
  checkAi(await runAi(ai), want);
  checkAgui(await runAgui(agui), want);
  checkRoundup(runRoundup(ai), want);
  checkRoundupAgui(runRoundup(ai, "agui"), want);
  const runners = {
    ai: () => runAi(ai),
    "ag-ui": () => runAgui(agui),
    roundup: async () => runRoundup(ai),
    "roundup (agui out)": async () => runRoundup(ai, "agui"),
  };
  const times = Object.fromEntries(Object.keys(runners).map((k) => [k, []]));
  const runs = quick ? 3 : name.startsWith("W4") ? 200 : name.startsWith("W1") ? 30 : 60;
  // Blocks of runs, runner after runner, five times over: each block
  // starts with an untimed run (which takes the garbage of the block
  // before), and the blocks alternate so that a change of the machine's
  // load falls on every runner.
  const blocks = quick ? 1 : 5;
  for (let b = 0; b < blocks; b++) {
    for (const [runner, run] of Object.entries(runners)) {
      await run();
      for (let i = 0; i < runs / blocks; i++) {
        const start = performance.now();
        await run();
        times[runner].push(((performance.now() - start) * 1000) / want.rounds);
      }
    }
  }
  const per = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
  const bytes = ai.reduce((n, p) => n + p.length, 0);
  return { name, rounds: want.rounds, bytes, per };
}

const workloads = [
  ["W1 long chat", w1()],
  ["W2 one long text", w2()],
  ["W3 100 KB of arguments", w3()],
  ["W4 8 parallel calls", w4()],
];

const fmt = (x) => x.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
console.log(`Node ${process.version}, ${quick ? "quick run" : "full run"}; µs per round, median of the runs.\n`);
console.log("| workload | rounds | AI SDK body | ai readUIMessageStream | AG-UI defaultApplyEvents | roundup (records) | roundup (AG-UI out) | faster than the faster peer |");
console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
for (const [name, steps] of workloads) {
  const { rounds, bytes, per } = await bench(name, steps);
  const peer = Math.min(per.ai, per["ag-ui"]);
  console.log(
    `| ${name} | ${rounds} | ${fmt(bytes / 1024)} KiB | ${fmt(per.ai)} | ${fmt(per["ag-ui"])} | ${fmt(per.roundup)} | ${fmt(per["roundup (agui out)"])} | ${Math.round(peer / per.roundup)}×, ${Math.round(peer / per["roundup (agui out)"])}× |`,
  );
}

// The cost of one call from JavaScript: what an adapter written in
// JavaScript pays per event, where replay() and Router.feed pay per piece.
function perCall(label, builder) {
  const n = quick ? 10_000 : 1_000_000;
  for (let i = 0; i < 10_000; i++) builder.message("x");
  const start = performance.now();
  for (let i = 0; i < n; i++) builder.message("x");
  console.log(`- \`message()\` ${label}: ${Math.round(((performance.now() - start) * 1e6) / n)} ns per call`);
}
console.log("\nPer call:\n");
perCall("without callbacks", new RoundBuilder({ retainRounds: false }));
perCall("with a record callback", new RoundBuilder({ retainRounds: false, onRecord: () => {} }));
perCall("with a UI callback (one event per call)", new RoundBuilder({ retainRounds: false, onUi: () => {} }));
