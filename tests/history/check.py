"""Validates roundup's history exports against the providers' own request
types, for every conformance vector and every fixture.

    roundup replay --emit openai-chat|openai-responses|anthropic FILE

gives one line per run: the list the next request to the provider sends.
Each list is validated with pydantic against the official SDKs' typed
request params (the exact versions in requirements.txt), and checked for
what the types cannot say and the APIs reject: every tool call paired with
exactly one result, after it (Anthropic: the `tool_result`s of an assistant
message's `tool_use`s are in the next user message).

usage: ROUNDUP_BIN=target/debug/roundup python tests/history/check.py [FILE...]
"""

import json
import re
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from inputs import all_inputs, as_input  # noqa: E402  (tests/inputs.py)
from typing import List

from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputItemParam
from pydantic import TypeAdapter

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("ROUNDUP_BIN", str(ROOT / "target" / "debug" / "roundup"))
TYPES = {
    "openai-chat": ("messages", TypeAdapter(List[ChatCompletionMessageParam])),
    "openai-responses": ("input", TypeAdapter(List[ResponseInputItemParam])),
    "anthropic": ("messages", TypeAdapter(List[MessageParam])),
}


def force(value):
    """Walks a validated value so that lazily validated iterables (pydantic
    validates `Iterable[...]` fields as they are iterated) are validated."""
    if isinstance(value, dict):
        return {k: force(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [force(v) for v in value]
    if hasattr(value, "__next__") or type(value).__name__ == "ValidatorIterator":
        return [force(v) for v in value]
    return value


def paired_openai_chat(messages):
    pending = []
    for m in messages:
        if m["role"] == "assistant":
            if pending:
                return f"tool_calls {pending} without a tool message before the next assistant message"
            pending = [c["id"] for c in m.get("tool_calls") or []]
        elif m["role"] == "tool":
            if m["tool_call_id"] not in pending:
                return f"tool message for {m['tool_call_id']}, which no pending call has"
            pending.remove(m["tool_call_id"])
    return f"tool_calls {pending} without a tool message" if pending else None


def paired_responses(items):
    open_calls = []
    for item in items:
        kind = item.get("type")
        if kind == "function_call":
            open_calls.append(item["call_id"])
        elif kind == "function_call_output":
            if item["call_id"] not in open_calls:
                return f"function_call_output for {item['call_id']}, which no open call has"
            open_calls.remove(item["call_id"])
    return f"function_calls {open_calls} without an output" if open_calls else None


def paired_anthropic(messages):
    for i, m in enumerate(messages):
        if m["role"] != "assistant" or isinstance(m["content"], str):
            continue
        uses = [b["id"] for b in m["content"] if b["type"] == "tool_use"]
        if not uses:
            continue
        following = messages[i + 1] if i + 1 < len(messages) else None
        blocks = following["content"] if following and following["role"] == "user" and not isinstance(following["content"], str) else []
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        if sorted(results) != sorted(uses):
            return f"tool_use {uses} answered by {results} in the next user message"
    return None


def held_nothing(path):
    """Whether every run of the input held nothing (no round, no anomaly, no
    metadata): then there is no history to write."""
    out = subprocess.run([BIN, "replay", str(as_input(path))], capture_output=True, check=True)
    summaries = [json.loads(l) for l in out.stdout.decode().splitlines() if '"type":"summary"' in l]
    fields = {"type", "session", "run", "finish_reason", "rounds", "tool_calls", "failed_tool_calls", "placeholders",
              "stitches", "anomalies", "message_bytes", "thought_bytes", "last_token_usage"}
    return all(s["rounds"] == 0 and s["anomalies"] == 0 and s["last_token_usage"] is None and set(s) <= fields
               for s in summaries)


PAIRED = {"openai-chat": paired_openai_chat, "openai-responses": paired_responses, "anthropic": paired_anthropic}


def call_ids(history):
    """Every tool call id a history declares, in order."""
    for item in history:
        for call in item.get("tool_calls") or []:
            yield call["id"]
        if item.get("type") == "function_call":
            yield item["call_id"]
        content = item.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    yield block["id"]


def repeated_ids(history):
    """The tool call ids a history declares more than once: Anthropic's API
    refuses such a conversation, OpenAI's pairs its results ambiguously."""
    ids = list(call_ids(history))
    return sorted({i for i in ids if ids.count(i) > 1})

# What the providers' APIs take as a tool's name (the request types do not
# check it; the APIs refuse anything else).
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def tool_names(history):
    """Every tool name a history's items carry."""
    for item in history:
        for call in item.get("tool_calls") or []:
            yield call["function"]["name"]
        if item.get("type") == "function_call":
            yield item["name"]
        content = item.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    yield block["name"]


def main():
    files = [Path(f) for f in sys.argv[1:]] or all_inputs()
    passed = failed = 0
    for path in files:
        for fmt, (key, adapter) in TYPES.items():
            name = f"{path.relative_to(ROOT) if path.is_absolute() else path} as {fmt}"
            try:
                out = subprocess.run([BIN, "replay", "--emit", fmt, str(as_input(path))], capture_output=True, check=True)
                lines = [json.loads(l) for l in out.stdout.decode().splitlines() if l.strip()]
                for line in lines:
                    force(adapter.validate_python(line[key]))
                    problem = PAIRED[fmt](line[key])
                    if problem:
                        raise ValueError(f"run {line['run']}: {problem}")
                    repeated = repeated_ids(line[key])
                    if repeated:
                        raise ValueError(f"run {line['run']}: tool call ids declared twice: {repeated}")
                    bad = [n for n in tool_names(line[key]) if not TOOL_NAME.match(n)]
                    if bad:
                        raise ValueError(f"run {line['run']}: tool names the API refuses: {bad}")
                if not lines and not held_nothing(path):
                    raise ValueError("no history")
                passed += 1
            except Exception as error:  # noqa: BLE001 - every failure is reported, then counted
                failed += 1
                print(f"FAIL {name}: {str(error)[:600]}")
    # The checks can fail: a list with a result dropped, and one with a
    # message the types do not allow, are each caught.
    broken = {
        "openai-chat": [{"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "x", "arguments": "{}"}}]}],
        "openai-responses": [{"type": "function_call", "call_id": "a", "name": "x", "arguments": "{}"}],
        "anthropic": [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "x", "input": {}}]}],
    }
    for fmt, (key, adapter) in TYPES.items():
        if PAIRED[fmt](broken[fmt]) is None:
            failed += 1
            print(f"FAIL {fmt}: a call without its result was not caught")
        else:
            passed += 1
        try:
            force(adapter.validate_python([{"role": "robot", "content": 7}]))
            failed += 1
            print(f"FAIL {fmt}: a message of no known role passed the provider's types")
        except Exception:  # noqa: BLE001 - the rejection is the point
            passed += 1
        if not repeated_ids(broken[fmt] + broken[fmt]):
            failed += 1
            print(f"FAIL {fmt}: a call id declared twice was not caught")
        else:
            passed += 1
        renamed = json.loads(json.dumps(broken[fmt]).replace('"name": "x"', '"name": "ls -la"'))
        if all(TOOL_NAME.match(n) for n in tool_names(renamed)):
            failed += 1
            print(f"FAIL {fmt}: a display title as a tool name was not caught")
        else:
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
