// What the tests share: the repository's inputs (every conformance vector
// and fixture, from tests/inputs.mjs), the command line's output for them,
// and a stream that gives bytes in pieces of a fixed size.

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { bin, input, inputFiles, root } from "../../../tests/inputs.mjs";

export { root };

if (!existsSync(bin)) {
  throw new Error(`the roundup binary is not at ${bin}: build it (cargo build --bin roundup) or set ROUNDUP_BIN`);
}

/** Every vector and fixture: its name, and the path of its input (a
 * vector as ops JSONL). */
export const inputs = inputFiles(["", ""]).map((file) => ({ name: relative(root, file), path: input(file) }));

/** The bytes of an input. */
export function bytes(path) {
  return readFileSync(path);
}

/** `roundup replay ARGS... PATH`: its standard output. */
export function cli(path, ...args) {
  return execFileSync(bin, ["replay", ...args, path], { maxBuffer: 1 << 30, stdio: ["ignore", "pipe", "ignore"] }).toString("utf8");
}

/** The JSON values of the command line's output lines. */
export function cliValues(path, ...args) {
  return cli(path, ...args).split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
}

/** A web ReadableStream giving `data` in pieces of `size` bytes. */
export function inPieces(data, size) {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= data.length) return controller.close();
      controller.enqueue(new Uint8Array(data.subarray(at, at + size)));
      at += size;
    },
  });
}

/** All values of an async iterable. */
export async function collect(iterable) {
  const out = [];
  for await (const value of iterable) out.push(value);
  return out;
}

export const fixture = (...parts) => join(root, "tests", "fixtures", ...parts);
