#!/usr/bin/env node
// Builds the native addon from the Rust crate with cargo and copies it
// beside index.cjs as roundup.node: what `npm install` of this package
// runs (the `install` script). Needs Rust (https://rustup.rs).
//
//   node scripts/build.cjs            release build
//   ROUNDUP_NODE_PROFILE=debug node scripts/build.cjs
"use strict";

const { execFileSync } = require("node:child_process");
const { copyFileSync, existsSync, renameSync } = require("node:fs");
const { join } = require("node:path");

const here = join(__dirname, "..");
const profile = process.env.ROUNDUP_NODE_PROFILE === "debug" ? "debug" : "release";
const cargo = process.env.CARGO ?? "cargo";

let metadata;
try {
  metadata = JSON.parse(execFileSync(cargo, ["metadata", "--format-version", "1", "--no-deps"], { cwd: here, maxBuffer: 1 << 28 }).toString("utf8"));
} catch (error) {
  if (error.code === "ENOENT") {
    console.error(`roundup: ${cargo} is not installed: building the addon needs Rust (https://rustup.rs)`);
    process.exit(1);
  }
  throw error;
}
const root = metadata.workspace_root;
const args = ["build", "-p", "roundup-node"];
if (profile === "release") args.push("--release");
// The lockfile as committed, when there is one.
if (existsSync(join(root, "Cargo.lock"))) args.push("--locked");
console.log(`roundup: cargo ${args.join(" ")}`);
execFileSync(cargo, args, { cwd: here, stdio: "inherit" });

const names = { linux: "libroundup_node.so", darwin: "libroundup_node.dylib", win32: "roundup_node.dll" };
const name = names[process.platform] ?? "libroundup_node.so";
const built = join(metadata.target_directory, profile, name);
if (!existsSync(built)) {
  console.error(`roundup: cargo built no ${built}`);
  process.exit(1);
}
// Copied then renamed, so that a running process never loads half a file.
const target = join(here, "roundup.node");
copyFileSync(built, `${target}.tmp`);
renameSync(`${target}.tmp`, target);
console.log(`roundup: ${built} -> ${target}`);
