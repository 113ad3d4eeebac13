// Every conformance vector and fixture, in every output format, through
// replay(): the values equal the command line's (`roundup replay --emit
// FORMAT`), value for value; fed whole, and in 97-byte pieces through a
// web ReadableStream. SSE output equals the command line's bytes.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { outputFormats, replay, replaySync, replayStream } from "roundup";
import { bytes, cli, cliValues, collect, inPieces, inputs } from "./helpers.mjs";

const formats = outputFormats().map((f) => f.name);

test("the output formats are the command line's", () => {
  assert.deepEqual(formats, ["records", "ui", "deepwork", "agui", "agui-compact", "ai-sdk", "openai-chat", "openai-responses", "anthropic", "otlp", "otlp-content"]);
});

test("there are inputs to check", () => {
  assert.ok(inputs.length >= 100, `${inputs.length} inputs`);
});

for (const emit of formats) {
  describe(`--emit ${emit}`, () => {
    for (const { name, path } of inputs) {
      test(name, async () => {
        const want = cliValues(path, "--emit", emit);
        const data = bytes(path);
        assert.deepStrictEqual(replaySync(data, { emit }), want, "whole");
        assert.deepStrictEqual(await collect(replay(inPieces(data, 97), { emit })), want, "in 97-byte pieces");
      });
    }
  });
}

describe("SSE: the command line's bytes", () => {
  for (const emit of ["agui", "ai-sdk"]) {
    for (const { name, path } of inputs) {
      test(`${emit} ${name}`, async () => {
        const want = cli(path, "--emit", emit, "--sse");
        const got = await collect(inPieces(bytes(path), 97).pipeThrough(replayStream({ emit, sse: true })));
        assert.equal(got.join(""), want);
        for (const event of got) assert.match(event, /\n\n$/);
      });
    }
  }
});
