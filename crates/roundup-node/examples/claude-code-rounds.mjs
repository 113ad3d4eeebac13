// @ts-check
// Aggregates a Claude Code stream-json log (`claude -p --output-format
// stream-json --verbose`, a file or standard input) into its rounds: what
// the assistant said and thought in each, the tools it ran with their
// final input and outcome, and the run's totals (cost, turns, tokens).
//
//   node examples/claude-code-rounds.mjs session.ndjson
//   claude -p "..." --output-format stream-json --verbose | node examples/claude-code-rounds.mjs
//   node examples/claude-code-rounds.mjs --json session.ndjson   (the records, one per line)

import { createReadStream } from "node:fs";
import { replay } from "roundup";

const args = process.argv.slice(2);
const json = args.includes("--json");
const path = args.find((a) => a !== "--json");
const input = path === undefined ? process.stdin : createReadStream(path);

/** @param {string} text @param {number} width */
const short = (text, width) => {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
};

const tools = new Map();
let rounds = 0;
for await (const record of replay(input, { from: "claude-code" })) {
  if (json) {
    console.log(JSON.stringify(record));
    continue;
  }
  switch (record.type) {
    case "round": {
      rounds += 1;
      console.log(`round ${record.index} (run ${record.run}, ${record.finished_at_ms - record.started_at_ms} ms, closed by ${record.closed_by})`);
      if (record.thought !== "") console.log(`  thought: ${short(record.thought, 100)}`);
      if (record.message !== "") console.log(`  said:    ${short(record.message, 100)}`);
      for (const call of record.tool_calls) {
        const name = call.name ?? call.title;
        tools.set(name, (tools.get(name) ?? 0) + 1);
        const outcome = call.result.status === "placeholder" ? `no result (${call.result.reason})` : `${call.result.status}: ${short(call.result.content, 60)}`;
        console.log(`  tool:    ${name} ${short(call.arguments, 60)} -> ${outcome}`);
      }
      break;
    }
    case "stitch":
      console.log(`  late result for ${record.id} (round ${record.round}): ${record.result.status}`);
      break;
    case "anomaly":
      console.log(`  anomaly: ${record.kind}: ${short(record.detail, 100)}`);
      break;
    case "summary": {
      const cost = record.claude_total_cost_usd ?? record.claude_cost_usd;
      console.log(
        `run ${record.run}: ${record.rounds} rounds, ${record.tool_calls} tool calls (${record.failed_tool_calls} failed), ` +
          `finished ${record.finish_reason ?? "-"}${typeof cost === "number" ? `, $${cost.toFixed(4)}` : ""}` +
          `${typeof record.claude_num_turns === "number" ? `, ${record.claude_num_turns} turns` : ""}`,
      );
      break;
    }
  }
}
if (!json) console.log(`${rounds} rounds; tools: ${[...tools].map(([name, n]) => `${name} ×${n}`).join(", ") || "none"}`);
