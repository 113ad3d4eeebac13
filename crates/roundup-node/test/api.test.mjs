// The JavaScript API: sessions, callbacks, callbacks that throw,
// checkpoints, routers (two async producers, eviction, protocol events),
// the input kinds replay() reads, and the errors bad input gets.

import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, createReadStream } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { setImmediate as tick } from "node:timers/promises";
import { test } from "node:test";
import * as esm from "roundup";
import { Adapter, RoundBuilder, Replayer, Router, RoundupError, replay, replaySync, replayStream } from "roundup";
import { bytes, collect, fixture, inPieces } from "./helpers.mjs";

const require = createRequire(import.meta.url);

test("the CommonJS and ES module entry points are the same package", () => {
  const cjs = require("roundup");
  assert.equal(cjs.RoundBuilder, esm.RoundBuilder);
  assert.equal(cjs.replay, esm.replay);
  assert.deepEqual(Object.keys(cjs).sort(), Object.keys(esm).filter((k) => k !== "default").sort());
  assert.equal(cjs.default, cjs);
  assert.equal(esm.default, cjs);
  assert.match(esm.version, /^\d+\.\d+\.\d+/);
});

test("a round closes at new text, and a late result is stitched", () => {
  const records = [];
  const session = new RoundBuilder({ session: "s1", onRecord: (r) => records.push(r) });
  session.message("Let me look.");
  session.toolCall("t1", "bash");
  session.argsDelta("t1", '{"cmd":');
  session.argsDelta("t1", '"ls"}');
  session.message("Meanwhile...");
  session.toolResult("t1", "a.txt");
  session.close();
  assert.deepEqual(records.map((r) => r.type), ["round", "stitch", "round", "summary"]);
  assert.equal(records[0].session, "s1");
  assert.equal(records[0].tool_calls[0].arguments, '{"cmd":"ls"}');
  assert.deepEqual(records[0].tool_calls[0].result, { status: "placeholder", reason: "superseded" });
  assert.deepEqual(records[1].result, { status: "completed", content: "a.txt" });
  assert.equal(records[3].stitches, 1);
  assert.equal(session.rounds[0].tool_calls[0].result.content, "a.txt");
  assert.equal(session.session, "s1");
  assert.equal(session.finished, true);
});

test("the calls with their options: names, snapshots as values, failures, live output, usage, meta", () => {
  const records = [];
  const session = new RoundBuilder({ onRecord: (r) => records.push(r) });
  session.thought("hmm");
  session.toolCall("t1", "Read a.ts", "Read");
  session.argsSnapshot("t1", { path: "a.ts" });
  session.toolOutput("t1", "partial");
  session.toolOutput("t1", "whole", { replace: true });
  session.toolMeta("t1", { cost: 1 });
  session.toolCall("t2", "bash");
  session.toolResult("t2", "exit 1", { failed: true });
  session.toolResult("t1", "text");
  session.tokenUsage(1234);
  session.runMeta({ model: "m" });
  session.call({ op: "message", text: "done" });
  session.finish("completed");
  const [round, next, summary] = records;
  assert.equal(round.thought, "hmm");
  assert.deepEqual(round.tool_calls.map((c) => [c.id, c.name, c.arguments, c.result.status]), [
    ["t1", "Read", '{"path":"a.ts"}', "completed"],
    ["t2", undefined, "", "failed"],
  ]);
  assert.deepEqual(round.tool_calls[0].meta, { cost: 1 });
  assert.equal(next.message, "done");
  assert.equal(summary.type, "summary");
  assert.equal(summary.finish_reason, "completed");
  assert.equal(summary.last_token_usage, 1234);
  assert.equal(summary.failed_tool_calls, 1);
  assert.equal(summary.model, "m");
});

test("the open round and partial arguments are readable while it streams", () => {
  const session = new RoundBuilder();
  assert.equal(session.openRound(), null);
  session.thought("hmm");
  session.toolCall("t1", "edit");
  session.argsDelta("t1", '{"path": "a.rs", "text": "fn ma');
  const open = session.openRound();
  assert.equal(open.thought, "hmm");
  assert.equal(open.tool_calls[0].arguments, '{"path": "a.rs", "text": "fn ma');
  assert.equal(session.run, 0);
  assert.equal(session.finished, false);
  assert.equal(session.summary().rounds, 0);
});

test("UI events are objects, and returning false stops them", () => {
  const events = [];
  const session = new RoundBuilder({ session: "s", onUi: (e) => (events.push(e), events.length < 3 ? undefined : false) });
  for (const text of ["a", "b", "c", "d"]) session.message(text);
  assert.deepEqual(events.map((e) => e.event), ["run_start", "message_start", "message_delta"]);
  assert.deepEqual(events[2], { event: "message_delta", text: "a", session: "s" });
});

test("a callback that throws surfaces from the call that delivered it, after the call was applied, and loses nothing", () => {
  const seen = [];
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on("warning", onWarning);
  const session = new RoundBuilder({
    onRecord: (record) => {
      seen.push(record.type);
      throw new Error(`cannot persist ${record.type}`);
    },
  });
  session.message("one");
  session.toolCall("t1", "x");
  assert.throws(() => session.message("two"), { message: "cannot persist round" });
  // The call was applied: round 1 is open with "two".
  assert.equal(session.openRound().message, "two");
  // Round 1 and the summary: two errors; the first is thrown.
  assert.throws(() => session.finish(), { message: "cannot persist round" });
  assert.deepEqual(seen, ["round", "round", "summary"]);
  assert.equal(session.rounds.length, 2);
  return tick().then(() => {
    process.off("warning", onWarning);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0].message, /cannot persist summary/);
  });
});

test("a UI handler that throws is detached after throwing once", () => {
  let calls = 0;
  const records = [];
  const session = new RoundBuilder({
    onRecord: (r) => records.push(r),
    onUi: () => {
      calls += 1;
      throw new Error("view gone");
    },
  });
  assert.throws(() => session.message("a"), { message: "view gone" });
  session.message("b");
  session.finish();
  assert.equal(calls, 1);
  assert.equal(records[0].message, "ab");
});

test("a callback may call back into its builder: the output stays in order", () => {
  const types = [];
  const session = new RoundBuilder({
    onRecord: (r) => {
      types.push(`${r.type}:${r.message ?? ""}`);
      if (r.type === "round" && r.message === "first") session.message("second");
    },
  });
  session.message("first");
  session.toolCall("t", "x");
  session.toolResult("t", "ok");
  session.finish();
  assert.deepEqual(types, ["round:first", "round:second", "summary:"]);
});

test("a checkpoint restored in another builder continues the run", () => {
  const first = new RoundBuilder({ session: "s1" });
  first.message("Looking");
  first.toolCall("t1", "bash");
  first.argsDelta("t1", '{"cmd":"l');
  const saved = first.checkpoint();
  assert.ok(saved instanceof Uint8Array);
  assert.ok(JSON.parse(Buffer.from(saved).toString("utf8")).version >= 1);
  const records = [];
  const second = new RoundBuilder({ onRecord: (r) => records.push(r) });
  second.restore(saved);
  second.argsDelta("t1", 's"}');
  second.toolResult("t1", "a.txt");
  second.finish();
  const call = records[0].tool_calls[0];
  assert.deepEqual([records[0].message, call.arguments, call.result.content, records[0].session], ["Looking", '{"cmd":"ls"}', "a.txt", "s1"]);
  // With history, the closed rounds go in too.
  const withHistory = new RoundBuilder();
  withHistory.restore(second.checkpoint({ history: true }));
  assert.equal(withHistory.rounds.length, 1);
});

for (const [what, data, message] of [
  ["not JSON", Buffer.from("not json"), /corrupt/],
  ["an unknown version", Buffer.from('{"version": 999}'), /version 999/],
  ["empty", new Uint8Array(), /corrupt/],
]) {
  test(`a bad checkpoint (${what}) is a BAD_CHECKPOINT error and changes nothing`, () => {
    const session = new RoundBuilder();
    session.message("kept");
    assert.throws(() => session.restore(data), (e) => e instanceof RoundupError && e.code === "BAD_CHECKPOINT" && message.test(e.message));
    assert.equal(session.openRound().message, "kept");
  });
}

test("two async producers on one router: every record, each session in order", async () => {
  const records = [];
  const router = new Router({ onRecord: (r) => records.push(r) });
  async function producer(name, n) {
    const session = router.session(name);
    for (let i = 0; i < n; i++) {
      session.message(`${name}-${i} `);
      session.toolCall(`t${i}`, "bash");
      await tick();
      session.toolResult(`t${i}`, `${i}`);
    }
    session.close("completed");
  }
  await Promise.all([producer("a", 50), producer("b", 30)]);
  assert.equal(router.finishAll(), 0);
  for (const [name, n] of [["a", 50], ["b", 30]]) {
    const rounds = records.filter((r) => r.type === "round" && r.session === name);
    assert.equal(rounds.length, n);
    assert.deepEqual(rounds.map((r) => r.index), [...Array(n).keys()]);
    assert.ok(rounds.every((r, i) => r.message === `${name}-${i} ` && r.tool_calls[0].result.content === `${i}`));
    const summary = records.find((r) => r.type === "summary" && r.session === name);
    assert.equal(summary.finish_reason, "completed");
  }
});

test("a router evicts idle sessions to a directory and restores them", () => {
  const dir = mkdtempSync(join(tmpdir(), "roundup-evict-"));
  const records = [];
  const router = new Router({ onRecord: (r) => records.push(r), maxSessions: 4, evictDir: dir });
  for (let i = 0; i < 50; i++) router.session(`s${i}`).message(`hello ${i}`);
  assert.ok(router.openSessions <= 4);
  assert.equal(router.size, 50);
  assert.ok(readdirSync(dir).length > 0);
  router.session("s0").message(", again");
  assert.equal(router.finishAll(), 50);
  const rounds = Object.fromEntries(records.filter((r) => r.type === "round").map((r) => [r.session, r.message]));
  assert.equal(rounds.s0, "hello 0, again");
  assert.equal(rounds.s49, "hello 49");
});

test("a router fed a protocol makes rounds; an event it cannot read is a BAD_EVENT error", () => {
  const records = [];
  const router = new Router({ from: "acp", onRecord: (r) => records.push(r) });
  assert.equal(router.from, "acp");
  const chunk = (text) => ({ sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } });
  router.feed(chunk("Hel"));
  router.feed(JSON.stringify(chunk("l")));
  router.feed(Buffer.from(JSON.stringify(chunk("o"))));
  assert.throws(() => router.feed("{not json"), (e) => e instanceof RoundupError && e.code === "BAD_EVENT" && /acp event/.test(e.message));
  router.finishAll();
  assert.deepEqual(records.filter((r) => r.type === "round").map((r) => r.message), ["Hello"]);
});

test("a router's UI events carry their session", () => {
  const events = [];
  const router = new Router({ onUi: (e) => events.push(e) });
  router.call({ op: "message", text: "hi", session: "x" });
  router.close("x");
  assert.ok(events.length > 0 && events.every((e) => e.session === "x"));
  assert.equal(router.size, 0);
});

for (const [what, f, code, message] of [
  ["an unknown status", (s) => s.toolUpdate("t", "x", "done"), "BAD_ARGUMENT", /"pending", "in_progress"/],
  ["an unknown finish reason", (s) => s.finish("done"), "BAD_ARGUMENT", /"completed", "failed", "canceled", "interrupted"/],
  ["an unknown anomaly kind", (s) => s.anomaly("weird", "x"), "BAD_ARGUMENT", /anomaly kind/],
  ["an op missing a field", (s) => s.call({ op: "message" }), "BAD_OP", /missing field `text`/],
  ["an op that is not JSON", (s) => s.call("{"), "BAD_OP", /./],
  ["meta that is not an object", (s) => s.runMeta("[1]"), "BAD_ARGUMENT", /meta/],
  ["a negative token count", (s) => s.tokenUsage(-1), "BAD_ARGUMENT", /whole number/],
  ["a fractional token count", (s) => s.tokenUsage(1.5), "BAD_ARGUMENT", /whole number/],
  ["text that is not a string", (s) => s.message(Buffer.from("x")), "BAD_ARGUMENT", /text must be a string/],
  ["a missing id", (s) => s.toolCall(), "BAD_ARGUMENT", /id must be a string/],
  ["args that cannot be JSON", (s) => s.argsSnapshot("t", { n: 1n }), "BAD_ARGUMENT", /args cannot be written as JSON/],
  ["a checkpoint that is not bytes", (s) => s.restore("x"), "BAD_ARGUMENT", /Uint8Array/],
]) {
  test(`bad input gets a RoundupError: ${what}`, () => {
    assert.throws(() => f(new RoundBuilder()), (e) => e instanceof RoundupError && e instanceof Error && e.name === "RoundupError" && e.code === code && message.test(e.message));
  });
}

test("unknown formats and options are named with the known ones", () => {
  assert.throws(() => new Router({ from: "nope" }), { code: "BAD_ARGUMENT", message: /"nope" is not an input format: ops, acp/ });
  assert.throws(() => new Replayer({ emit: "nope" }), { code: "BAD_ARGUMENT", message: /is not an output format: records, ui/ });
  assert.throws(() => new Router({ evictDir: "/tmp" }), { code: "BAD_ARGUMENT", message: /evictDir needs maxSessions/ });
  assert.throws(() => new Router({ maxSessions: 0 }), { code: "BAD_ARGUMENT" });
  assert.throws(() => new Router().feed({}), { code: "BAD_ARGUMENT", message: /feed needs an input format/ });
  assert.throws(() => new RoundBuilder({ onRecord: 3 }), { code: "BAD_ARGUMENT", message: /onRecord must be a function/ });
  assert.throws(() => new Router({ from: "acp", maxSessions: 2, evictDir: "/dev/null/x" }), { code: "IO" });
});

test("bad input never crashes: random bytes through replay and a router come out as bad lines and errors", async () => {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff);
  for (let n = 0; n < 20; n++) {
    const data = Uint8Array.from({ length: 2000 }, random);
    const values = await collect(replay(inPieces(Buffer.from(data), 97)));
    assert.ok(values.every((v) => typeof v.type === "string"));
    const router = new Router({ from: n % 2 ? "openai-chat" : "claude-code", onRecord: () => {} });
    try {
      router.feed(data);
    } catch (e) {
      assert.ok(e instanceof RoundupError && e.code === "BAD_EVENT");
    }
    router.finishAll();
  }
  const lines = replaySync('{"op":"message","text":"ok"}\n{"op":\n\xff\xfe\n');
  assert.ok(lines.some((l) => l.type === "anomaly" && l.kind === "bad_line"));
  assert.equal(lines.find((l) => l.type === "round").message, "ok");
});

const claude = fixture("claude-stream-json", "sidetone-stream-think-tool.ndjson");

test("replay reads a string, bytes, an async iterable, a Node stream, a web stream, parsed events; the values are the same", async () => {
  const data = bytes(claude);
  const want = replaySync(data);
  assert.ok(want.some((r) => r.type === "round"));
  assert.deepEqual(await collect(replay(data.toString("utf8"))), want);
  assert.deepEqual(await collect(replay(data.buffer.slice(data.byteOffset, data.byteOffset + data.length))), want);
  assert.deepEqual(await collect(replay(createReadStream(claude, { highWaterMark: 100 }))), want);
  assert.deepEqual(await collect(replay(Readable.toWeb(createReadStream(claude)))), want);
  async function* lines() {
    for (const line of data.toString("utf8").split("\n")) yield `${line}\n`;
  }
  assert.deepEqual(await collect(replay(lines())), want);
  const events = data.toString("utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
  assert.deepEqual(await collect(replay(events, { from: "claude-code" })), replaySync(data, { from: "claude-code" }));
  const it = replay(data);
  await collect(it);
  assert.equal(it.stats.format, "claude-code");
  assert.ok(it.stats.lines > 0 && it.stats.bytes === data.length);
});

test("replay is lazy: values come as their input arrives", async () => {
  let fed = 0;
  async function* slow() {
    for (let i = 0; i < 3; i++) {
      fed += 1;
      yield `{"op":"message","text":"m${i}","session":"s${i}"}\n{"op":"finish","reason":"completed","session":"s${i}"}\n`;
    }
  }
  const seen = [];
  for await (const record of replay(slow())) {
    seen.push([record.type, fed]);
  }
  assert.deepEqual(seen.slice(0, 2), [["round", 1], ["summary", 1]]);
  assert.equal(seen.length, 6);
});

test("replayStream pipes bytes into values, and SSE text out", async () => {
  const data = bytes(claude);
  const values = await collect(inPieces(data, 97).pipeThrough(replayStream({ emit: "agui" })));
  assert.deepEqual(values, replaySync(data, { emit: "agui" }));
  const sse = await collect(inPieces(data, 97).pipeThrough(replayStream({ emit: "agui", sse: true })));
  assert.ok(sse.every((event) => event.startsWith("data: ") && event.endsWith("\n\n")));
  assert.deepEqual(sse.map((event) => JSON.parse(event.slice(6))), values);
});

test("a Replayer ended reads nothing more", () => {
  const replayer = new Replayer();
  assert.deepEqual(replayer.feed('{"op":"message","text":"Hi"}'), []);
  const rest = replayer.end();
  assert.deepEqual(rest.map((r) => r.type), ["round", "summary"]);
  assert.deepEqual(replayer.end(), []);
  assert.throws(() => replayer.feed("x"), { code: "CLOSED" });
  assert.throws(() => replayer.feed(42), { code: "BAD_ARGUMENT" });
});

test("replay of something that is not input is a clear error", async () => {
  await assert.rejects(collect(replay(42)), { code: "BAD_ARGUMENT", message: /replay reads a string, bytes/ });
  // The options are read when replay is called.
  assert.throws(() => replay("", { emit: "nope" }), { code: "BAD_ARGUMENT" });
});

test("an Adapter translates events into ops objects that a builder takes", () => {
  const acp = new Adapter("acp");
  assert.equal(acp.format, "acp");
  const update = { sessionId: "s1", update: { sessionUpdate: "tool_call", toolCallId: "t", title: "ls", status: "pending" } };
  assert.deepEqual(acp.translate(update), [{ op: "tool_call", id: "t", title: "ls", session: "s1" }]);
  assert.deepEqual(new Adapter("acp").translate(JSON.stringify(update)), acp.translate(update));
  const uagent = new Adapter("uagent").translate({ type: "text_delta", text: "Hi", at: "1970-01-01T00:00:02Z", v: 1 });
  assert.deepEqual(uagent, [{ op: "message", text: "Hi", at_ms: 2000 }]);
  assert.throws(() => acp.translate("{not json"), { code: "BAD_EVENT", message: /acp event/ });
  assert.throws(() => new Adapter("nope"), { code: "BAD_ARGUMENT" });
  const session = new RoundBuilder();
  for (const op of new Adapter("acp").translate({ sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hello" } } })) session.call(op);
  session.close();
  assert.equal(session.rounds[0].message, "Hello");
  assert.deepEqual(acp.end(), []);
});

test("a replay left early releases its input", async () => {
  const stream = createReadStream(claude, { highWaterMark: 64 });
  for await (const record of replay(stream)) {
    assert.equal(typeof record.type, "string");
    break;
  }
  await tick();
  assert.equal(stream.destroyed, true);
  let cancelled = false;
  const web = new ReadableStream({
    pull(controller) {
      controller.enqueue(new TextEncoder().encode('{"op":"message","text":"x","session":"a"}\n{"op":"finish","session":"a"}\n'));
    },
    cancel() {
      cancelled = true;
    },
  });
  for await (const _ of replay(web)) break;
  assert.equal(cancelled, true);
});
