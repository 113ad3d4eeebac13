// Checks roundup's AI SDK output (`roundup replay --emit ai-sdk --sse`) with
// the real `ai` package (exact version in package.json), read as `useChat`
// reads a chat endpoint's body: the SSE body through `parseJsonEventStream`
// with the package's own `uiMessageChunkSchema` (every chunk must pass), the
// chunks through `readUIMessageStream` (the client's message builder, which
// throws on a chunk out of place), and the UI messages it builds against
// roundup's records for the same input (text, reasoning, tool names and
// titles, final inputs, outputs, errors, placeholders, late results), then
// through `validateUIMessages`. A stream with a chunk removed, one with two
// chunks swapped, and one missing a text delta must each be caught.
//
// usage: ROUNDUP_BIN=target/debug/roundup node tests/ai-sdk/check.mjs [FILE...]
// (no FILE: every conformance vector and every fixture of the repository)

import { execFileSync } from "node:child_process";
import { join, relative } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { getToolName, isToolUIPart, parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, validateUIMessages } from "ai";
import { bin, input, inputFiles, root } from "../inputs.mjs";
import { finish, record } from "../tally.mjs";

function run(args) {
  return execFileSync(bin, args, { maxBuffer: 1 << 30, stdio: ["ignore", "pipe", "ignore"] });
}

function records(file) {
  return run(["replay", input(file)]).toString("utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
}

/** One session's body, as a chat endpoint would serve it. */
function body(file, session) {
  return run(["replay", "--emit", "ai-sdk", "--sse", "--session", session ?? "-", input(file)]);
}

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

/** An SSE body as the chunks the client's parser gives, each checked
 * against the package's chunk schema. */
async function parse(bytes) {
  const stream = new ReadableStream({
    start(controller) {
      controller.enqueue(new Uint8Array(bytes));
      controller.close();
    },
  });
  const chunks = [];
  for await (const result of parseJsonEventStream({ stream, schema: uiMessageChunkSchema })) {
    if (!result.success) throw new Error(`a chunk the schema rejects: ${JSON.stringify(result.rawValue)}: ${result.error.message}`);
    chunks.push(result.value);
  }
  return chunks;
}

/** The UI messages the client builds from `chunks`, the last state of
 * each, in order; throws what the client throws. */
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

/** A text as the SDK value roundup sends: the JSON value it is, or the
 * text itself. */
function sameValue(got, text) {
  if (typeof got === "string") return got === text;
  try {
    return isDeepStrictEqual(got, JSON.parse(text));
  } catch {
    return false;
  }
}

/** The parts of each step of a message. */
function steps(message) {
  const out = [];
  for (const part of message.parts) {
    if (part.type === "step-start") out.push([]);
    else if (out.length > 0) out[out.length - 1].push(part);
  }
  return out;
}

/** What differs between the client's `message` and the run's records;
 * undefined when nothing does. */
function compare(message, rounds, stitches, summary) {
  const got = steps(message);
  if (got.length !== rounds.length) return `${got.length} steps for ${rounds.length} rounds`;
  for (const [at, round] of rounds.entries()) {
    const parts = got[at];
    const where = `round ${round.index}`;
    const text = parts.filter((p) => p.type === "text").map((p) => p.text).join("");
    if (text !== round.message) return `${where} text: ${JSON.stringify(text)} vs ${JSON.stringify(round.message)}`;
    const reasoning = parts.filter((p) => p.type === "reasoning").map((p) => p.text).join("");
    if (reasoning !== round.thought) return `${where} reasoning: ${JSON.stringify(reasoning)} vs ${JSON.stringify(round.thought)}`;
    const tools = parts.filter(isToolUIPart);
    if (tools.length !== round.tool_calls.length) return `${where}: ${tools.length} tool parts for ${round.tool_calls.length} calls`;
    for (const [i, call] of round.tool_calls.entries()) {
      const part = tools[i];
      const what = `${where} call ${call.id}`;
      if (getToolName(part) !== toolName(call)) return `${what} name: ${getToolName(part)} vs ${toolName(call)}`;
      if (call.title !== "" && part.title !== call.title) return `${what} title: ${part.title} vs ${call.title}`;
      // No arguments are the SDK's empty input.
      const input = sameValue(part.input, call.arguments === "" ? "{}" : call.arguments);
      if (!input) return `${what} input: ${JSON.stringify(part.input)} vs ${JSON.stringify(call.arguments)}`;
      const stitch = stitches.find((s) => s.round === round.index && s.id === call.id);
      const result = stitch ? stitch.result : call.result;
      if (result.status === "completed") {
        if (part.state !== "output-available" || part.preliminary) return `${what}: ${part.state}, not its output`;
        if (!sameValue(part.output, result.content)) return `${what} output: ${JSON.stringify(part.output)} vs ${JSON.stringify(result.content)}`;
      } else {
        const error = result.status === "failed" ? result.content : `no result: ${result.reason}`;
        if (part.state !== "output-error" || part.errorText !== error) return `${what}: ${part.state} ${JSON.stringify(part.errorText)} vs ${JSON.stringify(error)}`;
        if (result.status === "placeholder" && part.resultProviderMetadata?.roundup?.placeholder !== result.reason) return `${what}: the placeholder is not marked`;
      }
      if (stitch && part.resultProviderMetadata?.roundup?.stitched !== true) return `${what}: the late result is not marked`;
    }
  }
  if (summary && message.metadata?.roundup?.summary?.finish_reason !== summary.finish_reason) return `the summary's finish reason is not in the metadata`;
  return undefined;
}


/** One session of one input: parsed, built, compared, validated. */
async function checkSession(file, session, lines) {
  const mine = lines.filter((l) => (l.session ?? null) === session);
  const thread = session ?? "roundup";
  const chunks = await parse(body(file, session));
  const messages = await build(chunks);
  const runs = [...new Set(mine.filter((l) => l.type === "summary").map((l) => l.run))];
  for (const run of runs) {
    const message = messages.find((m) => m.id === `${thread}/run-${run}`);
    const rounds = mine.filter((l) => l.type === "round" && l.run === run);
    if (message === undefined) {
      if (rounds.length > 0) return `no message for run ${run}`;
      continue;
    }
    if (message.role !== "assistant") return `run ${run} is a ${message.role} message`;
    const stitches = mine.filter((l) => l.type === "stitch" && l.run === run);
    const summary = mine.find((l) => l.type === "summary" && l.run === run);
    const difference = compare(message, rounds, stitches, summary);
    if (difference) return `run ${run}: ${difference}`;
  }
  if (messages.length > 0) await validateUIMessages({ messages });
  return undefined;
}

async function checkFile(file) {
  const name = relative(root, file);
  try {
    const lines = records(file);
    const sessions = [...new Set(lines.map((l) => l.session ?? null))];
    for (const session of sessions) {
      const difference = await checkSession(file, session, lines);
      if (difference) return record(false, `${name} (${session ?? "-"})`, difference);
    }
    record(true, name);
  } catch (error) {
    record(false, name, String(error?.message ?? error));
  }
}

/** Broken streams must be caught: by the client (a chunk removed, two
 * swapped) or by the comparison (a text delta removed). */
async function checkBrokenStreams(file) {
  const lines = records(file);
  const good = await parse(body(file, null));
  const rounds = lines.filter((l) => l.type === "round");
  const stitches = lines.filter((l) => l.type === "stitch");
  const summary = lines.find((l) => l.type === "summary");
  const [message] = await build(good);
  record(compare(message, rounds, stitches, summary) === undefined, "the unbroken stream matches its records");

  const without = (type) => {
    const at = good.findIndex((c) => c.type === type);
    return at < 0 ? undefined : good.filter((_, i) => i !== at);
  };
  const rejected = async (what, chunks) => {
    if (chunks === undefined) return record(false, what, `no such chunk in ${file}`);
    try {
      await build(chunks);
      record(false, what, "accepted");
    } catch (error) {
      record(/No tool invocation|missing|tool call/i.test(String(error?.message ?? error)), what, String(error?.message ?? error));
    }
  };
  await rejected("a stream missing its tool-input-start is rejected", without("tool-input-start"));
  const start = good.findIndex((c) => c.type === "text-start");
  const swapped = [...good];
  if (start >= 0) [swapped[start], swapped[start + 1]] = [swapped[start + 1], swapped[start]];
  await rejected("a stream with a text-delta before its text-start is rejected", start >= 0 ? swapped : undefined);
  const noDelta = without("text-delta");
  if (noDelta === undefined) return record(false, "a stream missing a text delta", `no text-delta in ${file}`);
  const [short] = await build(noDelta);
  const difference = compare(short, rounds, stitches, summary);
  record(difference !== undefined, "a stream missing a text delta differs from its records", difference ?? "not caught");
}

const files = inputFiles();
for (const file of files) await checkFile(file);
await checkBrokenStreams(join(root, "tests", "fixtures", "anthropic-messages", "anthropic-sdk-python-tool_use_response.sse"));
finish();
