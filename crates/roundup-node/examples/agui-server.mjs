// @ts-check
// An HTTP endpoint for an AG-UI web client: it calls a model provider's
// streaming API (Anthropic's Messages API, or OpenAI's Chat Completions)
// and sends the answer to the browser as AG-UI events over SSE, as
// roundup translates the provider's stream on the fly. The client
// (@ag-ui/client's HttpAgent, CopilotKit, ...) posts its RunAgentInput
// here and gets RUN_STARTED, TEXT_MESSAGE_*, TOOL_CALL_*, RUN_FINISHED.
//
//   ANTHROPIC_API_KEY=... node examples/agui-server.mjs
//   PROVIDER=openai OPENAI_API_KEY=... node examples/agui-server.mjs
//   UPSTREAM_URL=http://127.0.0.1:9000/ node examples/agui-server.mjs  (any server that streams one of the two)
//
// PORT (default 8000) is where it listens.

import { createServer } from "node:http";
import { replayStream } from "roundup";

const provider = process.env.PROVIDER === "openai" ? "openai" : "anthropic";
const upstream = {
  anthropic: { url: "https://api.anthropic.com/v1/messages", from: /** @type {const} */ ("anthropic") },
  openai: { url: "https://api.openai.com/v1/chat/completions", from: /** @type {const} */ ("openai-chat") },
}[provider];
const url = process.env.UPSTREAM_URL ?? upstream.url;

/**
 * The provider's request for an AG-UI RunAgentInput: its messages, as
 * text.
 * @param {{ messages?: { role: string, content?: unknown }[] }} input
 * @returns {{ headers: Record<string, string>, body: object }}
 */
function request(input) {
  const messages = (input.messages ?? [])
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => ({ role: m.role, content: typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? "") }));
  if (provider === "openai") {
    return {
      headers: { authorization: `Bearer ${process.env.OPENAI_API_KEY ?? ""}` },
      body: { model: process.env.MODEL ?? "gpt-4.1-mini", stream: true, messages },
    };
  }
  return {
    headers: { "x-api-key": process.env.ANTHROPIC_API_KEY ?? "", "anthropic-version": "2023-06-01" },
    body: { model: process.env.MODEL ?? "claude-sonnet-4-5", max_tokens: 1024, stream: true, messages },
  };
}

/** @param {import("node:http").IncomingMessage} req */
async function body(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? {} : JSON.parse(text);
}

const server = createServer(async (req, res) => {
  if (req.method !== "POST") {
    res.writeHead(405).end();
    return;
  }
  // A client that goes away stops the provider's stream too.
  const abort = new AbortController();
  res.on("close", () => abort.abort());
  try {
    const { headers, body: payload } = request(await body(req));
    const answer = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(payload),
      signal: abort.signal,
    });
    if (!answer.ok || answer.body === null) {
      res.writeHead(502, { "content-type": "text/plain" }).end(`the provider answered ${answer.status}`);
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    // The provider's bytes in, AG-UI events out as SSE text, as they come.
    const events = answer.body.pipeThrough(replayStream({ from: upstream.from, emit: "agui", sse: true }));
    for await (const event of events) res.write(event);
    res.end();
  } catch (error) {
    if (abort.signal.aborted) return;
    if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
    res.end(String(error instanceof Error ? error.message : error));
  }
});

server.listen(Number(process.env.PORT ?? 8000), "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : address;
  console.log(`AG-UI endpoint on http://127.0.0.1:${port}/ (${provider}${process.env.UPSTREAM_URL ? ` at ${url}` : ""})`);
});
