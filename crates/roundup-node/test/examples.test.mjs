// The examples run as a user runs them: the Claude Code aggregator on a
// recorded stream-json log, and the AG-UI endpoint in front of a recorded
// provider stream (served by a local server standing in for the
// provider's URL), read by the real AG-UI client's HttpAgent.

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { once } from "node:events";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { HttpAgent } from "@ag-ui/client";
import { replaySync } from "roundup";
import { fixture } from "./helpers.mjs";

const examples = fileURLToPath(new URL("../examples/", import.meta.url));

test("examples/claude-code-rounds.mjs aggregates a Claude Code log", () => {
  const log = fixture("claude-stream-json", "sidetone-stream-think-tool.ndjson");
  const out = execFileSync(process.execPath, [join(examples, "claude-code-rounds.mjs"), log], { encoding: "utf8" });
  const records = replaySync(readFileSync(log), { from: "claude-code" });
  const rounds = records.filter((r) => r.type === "round");
  assert.match(out, new RegExp(`^${rounds.length} rounds; tools: Bash ×1$`, "m"));
  assert.match(out, /^  tool: {4}Bash \{"command": "echo 391 403 437".* -> completed: 391 403 437$/m);
  const summary = records.find((r) => r.type === "summary");
  assert.match(out, new RegExp(`finished completed, \\$${summary.claude_total_cost_usd.toFixed(4)}`));
  // From standard input, as the records.
  const json = execFileSync(process.execPath, [join(examples, "claude-code-rounds.mjs"), "--json"], { input: readFileSync(log), encoding: "utf8" });
  assert.deepEqual(json.trim().split("\n").map((l) => JSON.parse(l)), records);
});

/** Starts the example server in front of `upstream`; its URL. */
async function startExample(env) {
  const child = spawn(process.execPath, [join(examples, "agui-server.mjs")], { env: { ...process.env, PORT: "0", ...env }, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  for await (const chunk of child.stdout) {
    out += chunk;
    const m = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
    if (m) return { child, url: `http://127.0.0.1:${m[1]}/` };
  }
  throw new Error(`the example did not start: ${out}`);
}

for (const [provider, file, from] of [
  ["anthropic", fixture("anthropic-messages", "anthropic-sdk-python-tool_use_response.sse"), "anthropic"],
  ["openai", fixture("openai-chat", "openai-python-parallel-tools.sse"), "openai-chat"],
]) {
  test(`examples/agui-server.mjs turns a ${provider} stream into AG-UI that HttpAgent rebuilds`, async () => {
    const body = readFileSync(file);
    let asked;
    const upstream = createServer(async (req, res) => {
      let text = "";
      for await (const chunk of req) text += chunk;
      asked = JSON.parse(text);
      res.writeHead(200, { "content-type": "text/event-stream" });
      // In pieces, as a provider streams.
      for (let at = 0; at < body.length; at += 97) res.write(body.subarray(at, at + 97));
      res.end();
    });
    upstream.listen(0, "127.0.0.1");
    await once(upstream, "listening");
    const { port } = upstream.address();
    const { child, url } = await startExample({ PROVIDER: provider, UPSTREAM_URL: `http://127.0.0.1:${port}/` });
    try {
      const agent = new HttpAgent({ url, threadId: "roundup", initialMessages: [{ id: "u1", role: "user", content: "What is the weather in Paris?" }] });
      await agent.runAgent();
      assert.deepEqual(asked.messages, [{ role: "user", content: "What is the weather in Paris?" }]);
      assert.equal(asked.stream, true);
      const rounds = replaySync(body, { from }).filter((r) => r.type === "round");
      assert.ok(rounds.length > 0);
      const assistant = agent.messages.filter((m) => m.role === "assistant");
      assert.equal(assistant.map((m) => m.content ?? "").join(""), rounds.map((r) => r.message).join(""));
      const calls = assistant.flatMap((m) => m.toolCalls ?? []);
      const want = rounds.flatMap((r) => r.tool_calls);
      assert.equal(calls.length, want.length);
      assert.ok(want.length > 0);
      assert.deepEqual(calls.map((c) => [c.function.name, c.function.arguments]), want.map((c) => [c.name || c.title, c.arguments]));
    } finally {
      child.kill();
      upstream.close();
    }
  });
}
