// The TypeScript declarations against what the package gives: every
// record, AG-UI event and AI SDK chunk of every vector and fixture fits
// index.d.ts key by key (no undeclared key, no missing one, the declared
// JSON types), and every declared key occurs somewhere, so that the
// declarations fail here when the Rust model changes. Then tsc --strict on
// the type tests and the examples.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Router, replaySync } from "roundup";
import { Checker, declarations } from "./declarations.mjs";
import { bytes, inputs } from "./helpers.mjs";

const here = fileURLToPath(new URL("..", import.meta.url));
const types = declarations(join(here, "index.d.ts"));

// Keys the declarations carry from the upstream types that roundup's
// output has no occasion to write on these inputs.
const UPSTREAM_ONLY = new Set([
  "AguiTokenUsage.inputTokens",
  "AguiTokenUsage.outputTokens",
]);

// A late result in a named session: no vector or fixture has one.
const extra = [
  { op: "tool_call", id: "t1", title: "bash", session: "s1" },
  { op: "message", text: "next", session: "s1" },
  { op: "tool_update", id: "t1", content: "late", status: "completed", session: "s1" },
].map((op) => `${JSON.stringify(op)}\n`).join("");

// Chunk types of the AI SDK stream roundup does not write.
const UNWRITTEN_CHUNKS = [];

function checkAll(emit, type) {
  const checker = new Checker(types);
  let values = 0;
  for (const { name, data } of [...inputs.map(({ name, path }) => ({ name, data: bytes(path) })), { name: "a late result in a session", data: extra }]) {
    for (const value of replaySync(data, { emit })) {
      const error = checker.check(value, type);
      assert.equal(error, null, `${name}: ${error}`);
      values += 1;
    }
  }
  return { checker, values };
}

test("every record fits RoundupRecord, and every key of the record types occurs", () => {
  const { checker, values } = checkAll("records", "RoundupRecord");
  assert.ok(values > 500, `${values} records`);
  const unseen = checker.unseen(["Round", "ToolCall", "Stitch", "Anomaly", "MetaPatch", "Summary", "CompletedResult", "FailedResult", "PlaceholderResult", "PlaceholderCounts"]);
  assert.deepEqual(unseen, []);
});

test("every AG-UI event fits AguiEvent, and every key of the event types occurs", () => {
  const { checker } = checkAll("agui", "AguiEvent");
  const compact = new Checker(types);
  for (const { path } of inputs) for (const value of replaySync(bytes(path), { emit: "agui-compact" })) assert.equal(compact.check(value, "AguiEvent"), null);
  for (const key of compact.seen) checker.seen.add(key);
  const names = [...types.keys()].filter((n) => n.startsWith("Agui") && types.get(n).object);
  assert.deepEqual(checker.unseen(names).filter((k) => !UPSTREAM_ONLY.has(k)), []);
});

test("every AI SDK chunk fits AiSdkChunk", () => {
  const { checker, values } = checkAll("ai-sdk", "AiSdkChunk");
  assert.ok(values > 500, `${values} chunks`);
  // Each chunk type declared occurs (by its `type` key), but those that
  // roundup declares for the reader's sake and does not write.
  const unseen = checker.unseen(["AiSdkChunk"]).filter((k) => k.endsWith(".type")).map((k) => /\{ type: ("[^"]*"|`[^`]*`)/.exec(k)?.[1]);
  assert.deepEqual(unseen, UNWRITTEN_CHUNKS);
});

test("every open round, after every call of every vector, fits OpenRound, and every key occurs", () => {
  const checker = new Checker(types);
  let rounds = 0;
  // Metadata on an open round and call: no vector has them.
  const meta = [
    { op: "tool_call", id: "t1", title: "bash" },
    { op: "tool_meta", id: "t1", meta: { cost: 1 } },
    { op: "round_meta", meta: { model: "m" } },
  ].map((op) => JSON.stringify(op)).join("\n");
  const vectors = inputs.filter((i) => i.name.startsWith("tests/vectors/")).map(({ name, path }) => ({ name, text: readFileSync(path, "utf8") }));
  for (const { name, text } of [...vectors, { name: "metadata", text: meta }]) {
    const router = new Router({ retainRounds: false });
    for (const line of text.split("\n").filter((l) => l.trim() !== "")) {
      const op = JSON.parse(line);
      try {
        router.call(op);
      } catch {
        continue; // an op that is not a call (a vector of bad input)
      }
      const open = router.session(op.session ?? null).openRound();
      if (open === null) continue;
      assert.equal(checker.check(open, "OpenRound"), null, `${name}: ${checker.check(open, "OpenRound")}`);
      rounds += 1;
    }
  }
  assert.ok(rounds > 100, `${rounds} open rounds`);
  assert.deepEqual(checker.unseen(["OpenRound", "OpenToolCall"]), []);
});

test("every live UI event fits UiEvent, and every kind of event and each of its keys occurs", () => {
  const { checker, values } = checkAll("ui", "UiEvent");
  assert.ok(values > 1000, `${values} events`);
  assert.deepEqual(checker.unseen(["UiEvent"]), []);
});

test("the checker catches what drifts: an undeclared key, a missing one, a wrong type", () => {
  const checker = new Checker(types);
  const [round] = replaySync('{"op":"message","text":"Hi"}\n');
  assert.equal(checker.check(round, "RoundupRecord"), null);
  assert.notEqual(checker.check({ ...round, extra: 1 }, "RoundupRecord"), null);
  const { thought: _, ...missing } = round;
  assert.notEqual(checker.check(missing, "RoundupRecord"), null);
  assert.notEqual(checker.check({ ...round, index: "0" }, "RoundupRecord"), null);
  assert.notEqual(checker.check({ ...round, closed_by: "other" }, "RoundupRecord"), null);
});

const tsc = join(here, "node_modules", ".bin", "tsc");

test("tsc --strict: the type tests and the examples", { skip: existsSync(tsc) ? false : "typescript is not installed (npm install in crates/roundup-node)" }, () => {
  execFileSync(tsc, ["-p", join(here, "test", "types", "tsconfig.json")], { stdio: "inherit" });
});

// The names the documentation's TypeScript uses without defining them.
const PRELUDE = `declare function persist(record: import("roundup").RoundupRecord): void;
declare function send(event: import("roundup").UiEvent): void;
declare const url: string;
declare const headers: Record<string, string>;
declare const body: string;
declare const upstream: Response;
declare const agentStdout: AsyncIterable<string>;
`;

test("tsc --strict: the TypeScript of README.md, docs/node.md and the package's README", { skip: existsSync(tsc) ? false : "typescript is not installed" }, () => {
  const repo = join(here, "..", "..");
  const dir = join(here, "test", "types", "docs");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  let blocks = 0;
  for (const doc of [join(repo, "README.md"), join(repo, "docs", "node.md"), join(here, "README.md")]) {
    for (const [i, [, code]] of [...readFileSync(doc, "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].entries()) {
      const name = `${doc.slice(repo.length + 1).replace(/[^A-Za-z0-9]+/g, "-")}-${i}.mts`;
      writeFileSync(join(dir, name), `${PRELUDE}${code}\nexport {};\n`);
      blocks += 1;
    }
  }
  assert.ok(blocks >= 4, `${blocks} blocks`);
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: "../tsconfig.json", include: ["*.mts"] }));
  execFileSync(tsc, ["-p", join(dir, "tsconfig.json")], { stdio: "inherit" });
  rmSync(dir, { recursive: true, force: true });
});
