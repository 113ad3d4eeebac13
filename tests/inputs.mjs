// What the Node checks (tests/agui, tests/ai-sdk) read: every conformance
// vector and every fixture of the repository, and a vector's ops as the ops
// JSONL file `roundup replay` takes. Plain Node, no package of its own.

import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The roundup binary the checks run. */
export const bin = process.env.ROUNDUP_BIN ?? join(root, "target", "debug", "roundup");

/** Every file under `dir` (recursively) that is an input. Notes, expected
 * outputs and an origin's own recording file (whose stream is a fixture
 * beside it) are not. */
function inputsUnder(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...inputsUnder(path));
    else if (!/\.(md|txt)$/.test(name) && !/\.(expected\.jsonl|recording\.json)$/.test(name)) out.push(path);
  }
  return out;
}

/** The files named on the command line, else every vector and fixture. */
export function inputFiles(argv = process.argv) {
  return argv.length > 2
    ? argv.slice(2)
    : [...inputsUnder(join(root, "tests", "vectors")), ...inputsUnder(join(root, "tests", "fixtures"))];
}

const scratch = mkdtempSync(join(tmpdir(), "roundup-check-"));
const vectorsDir = join(root, "tests", "vectors");

/** A conformance vector (a .json of tests/vectors) as an ops JSONL file;
 * any other input (a fixture's JSON array body or document included) as
 * it is. */
export function input(file) {
  if (!file.endsWith(".json") || !resolve(file).startsWith(vectorsDir + sep)) return file;
  const vector = JSON.parse(readFileSync(file, "utf8"));
  const ops = join(scratch, `${vector.name}.ops.jsonl`);
  writeFileSync(ops, vector.ops.map((op) => JSON.stringify(op) + "\n").join(""));
  return ops;
}
