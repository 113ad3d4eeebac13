"""Per-round cost of aggregating a streamed assistant turn, from Python.

Four workloads, each one round of one session, built once in every
runner's native form before timing:

- W1 chat: 200 text deltas of 6 bytes.
- W2 reasoning: 150 reasoning deltas, then 100 text deltas.
- W3 parallel tools: 20 text deltas, then 4 tool calls whose arguments
  arrive in 40 deltas each, then their 4 results.
- W4 big arguments: one tool call whose 200 KB of arguments arrive in 2,000
  deltas of 100 bytes (a file being written), then its result.

Runners, each given what it reads in a real program:

- langchain-core: ``AIMessageChunk`` addition (``acc = acc + chunk``), then
  ``acc.tool_calls`` (which parses the arguments);
- openai: ``ChatCompletionStreamState.handle_chunk`` over
  ``ChatCompletionChunk`` objects, then ``get_final_completion()``;
- anthropic: ``accumulate_event`` over ``RawMessageStreamEvent`` objects
  (the SDK's ``MessageStream`` does this for every event);
- roundup, calls: a ``RoundBuilder`` with a sink, fed the deltas by its
  methods (what an adapter written in Python does), the round delivered to
  the sink as a dict;
- roundup, openai-chat dicts: a ``Router(from_="openai-chat")`` fed the
  chunks as dicts (``chunk.model_dump()``), roundup's adapter reading them.

Runners alternate round by round (paired), and each figure is the median
of the rounds. ``python bench/bench.py`` prints the Markdown table of
docs/python.md; ``--quick`` runs a few rounds, to check that it runs.
"""

import argparse
import json
import statistics
import time
from typing import Any, Callable, Dict, List, Tuple

from anthropic._models import construct_type as anthropic_construct
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import RawMessageStreamEvent
from langchain_core.messages import AIMessageChunk
from langchain_core.messages.tool import tool_call_chunk
from openai._models import construct_type as openai_construct
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk
from pydantic import TypeAdapter

import roundup

# --------------------------------------------------------------------------
# The workloads, as neutral steps: ("text", s), ("thought", s),
# ("call", index, id, name), ("args", index, s), ("result", id, s).


def w1() -> List[Tuple[Any, ...]]:
    return [("text", f"word{i % 10} ") for i in range(200)]


def w2() -> List[Tuple[Any, ...]]:
    return [("thought", f"hmm {i % 10} ") for i in range(150)] + [("text", f"word{i % 10} ") for i in range(100)]


def w3() -> List[Tuple[Any, ...]]:
    steps: List[Tuple[Any, ...]] = [("text", f"word{i % 10} ") for i in range(20)]
    for call in range(4):
        steps.append(("call", call, f"call_{call}", "read_file"))
        steps.append(("args", call, '{"path": "'))
        steps += [("args", call, f"dir{i}/") for i in range(38)]
        steps.append(("args", call, 'a.txt"}'))
    steps += [("result", f"call_{call}", f"contents of file {call}") for call in range(4)]
    return steps


def w4() -> List[Tuple[Any, ...]]:
    body = "x" * 92
    steps: List[Tuple[Any, ...]] = [("call", 0, "call_0", "write_file"), ("args", 0, '{"path": "big.txt", "text": "')]
    steps += [("args", 0, f"{i:07d}{body}") for i in range(2_000)]
    steps += [("args", 0, '"}'), ("result", "call_0", "written")]
    return steps


WORKLOADS = {"W1 chat": w1, "W2 reasoning": w2, "W3 parallel tools": w3, "W4 big arguments": w4}

# --------------------------------------------------------------------------
# Each runner: prepare(steps) -> native input, built once; run(native) -> the
# aggregate, timed.


def openai_chunk(delta: Dict[str, Any], finish: Any = None) -> Dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def openai_dicts(steps: List[Tuple[Any, ...]]) -> List[Dict[str, Any]]:
    chunks = [openai_chunk({"role": "assistant", "content": ""})]
    for step in steps:
        if step[0] == "text":
            chunks.append(openai_chunk({"content": step[1]}))
        elif step[0] == "thought":
            chunks.append(openai_chunk({"reasoning_content": step[1]}))
        elif step[0] == "call":
            call = {"index": step[1], "id": step[2], "type": "function", "function": {"name": step[3], "arguments": ""}}
            chunks.append(openai_chunk({"tool_calls": [call]}))
        elif step[0] == "args":
            chunks.append(openai_chunk({"tool_calls": [{"index": step[1], "function": {"arguments": step[2]}}]}))
    finish = "tool_calls" if any(step[0] == "call" for step in steps) else "stop"
    chunks.append(openai_chunk({}, finish))
    # Tool results are the host's messages, after the model call.
    chunks += [{"role": "tool", "tool_call_id": step[1], "content": step[2]} for step in steps if step[0] == "result"]
    return chunks


def prepare_openai(steps):
    return [ChatCompletionChunk.model_validate(c) for c in openai_dicts(steps) if c.get("object")]


def run_openai(chunks):
    state = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(chunk)
    return state.get_final_completion()


def prepare_langchain(steps):
    chunks = []
    for step in steps:
        if step[0] == "text":
            chunks.append(AIMessageChunk(content=step[1]))
        elif step[0] == "thought":
            chunks.append(AIMessageChunk(content="", additional_kwargs={"reasoning_content": step[1]}))
        elif step[0] == "call":
            chunks.append(AIMessageChunk(content="", tool_call_chunks=[tool_call_chunk(name=step[3], args="", id=step[2], index=step[1])]))
        elif step[0] == "args":
            chunks.append(AIMessageChunk(content="", tool_call_chunks=[tool_call_chunk(args=step[2], index=step[1])]))
    return chunks


def run_langchain(chunks):
    aggregate = chunks[0]
    for chunk in chunks[1:]:
        aggregate = aggregate + chunk
    return aggregate.tool_calls, aggregate


EVENTS = TypeAdapter(RawMessageStreamEvent)


def prepare_anthropic(steps):
    return [EVENTS.validate_python(e) for e in anthropic_dicts(steps)]


def anthropic_dicts(steps: List[Tuple[Any, ...]]) -> List[Dict[str, Any]]:
    events: List[Dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        }
    ]
    block = -1
    kind = None
    by_call: Dict[int, int] = {}
    for step in steps:
        wanted = {"text": "text", "thought": "thinking", "call": "tool_use", "args": "tool_use"}.get(step[0])
        if step[0] in ("text", "thought") and kind != wanted or step[0] == "call":
            if block >= 0:
                events.append({"type": "content_block_stop", "index": block})
            block += 1
            kind = wanted
            if step[0] == "text":
                events.append({"type": "content_block_start", "index": block, "content_block": {"type": "text", "text": ""}})
            elif step[0] == "thought":
                events.append({"type": "content_block_start", "index": block, "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
            else:
                by_call[step[1]] = block
                events.append({"type": "content_block_start", "index": block, "content_block": {"type": "tool_use", "id": step[2], "name": step[3], "input": {}}})
        if step[0] == "text":
            events.append({"type": "content_block_delta", "index": block, "delta": {"type": "text_delta", "text": step[1]}})
        elif step[0] == "thought":
            events.append({"type": "content_block_delta", "index": block, "delta": {"type": "thinking_delta", "thinking": step[1]}})
        elif step[0] == "args":
            # Anthropic streams one tool block at a time.
            events.append({"type": "content_block_delta", "index": by_call[step[1]], "delta": {"type": "input_json_delta", "partial_json": step[2]}})
    if block >= 0:
        events.append({"type": "content_block_stop", "index": block})
    events.append({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 100}})
    events.append({"type": "message_stop"})
    return events


def run_anthropic(events):
    snapshot = None
    json_bufs: Dict[int, bytes] = {}
    for event in events:
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
    return snapshot


def prepare_roundup_calls(steps):
    return steps


def run_roundup_calls(steps):
    records: List[Dict[str, Any]] = []
    session = roundup.RoundBuilder(on_record=records.append, retain_rounds=False)
    ids = {}
    for step in steps:
        kind = step[0]
        if kind == "text":
            session.message(step[1])
        elif kind == "thought":
            session.thought(step[1])
        elif kind == "args":
            session.args_delta(ids[step[1]], step[2])
        elif kind == "call":
            ids[step[1]] = step[2]
            session.tool_call(step[2], step[3])
        else:
            session.tool_result(step[1], step[2])
    session.finish()
    return records


def prepare_roundup_openai(steps):
    return openai_dicts(steps)


def run_roundup_openai(chunks):
    records: List[Dict[str, Any]] = []
    router = roundup.Router(from_="openai-chat", on_record=records.append)
    for chunk in chunks:
        router.feed(chunk)
    router.finish_all()
    return records


RUNNERS: Dict[str, Tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "langchain-core `AIMessageChunk` +": (prepare_langchain, run_langchain),
    "openai `ChatCompletionStreamState`": (prepare_openai, run_openai),
    "anthropic `accumulate_event`": (prepare_anthropic, run_anthropic),
    "roundup, calls": (prepare_roundup_calls, run_roundup_calls),
    "roundup, openai-chat dicts": (prepare_roundup_openai, run_roundup_openai),
}
OTHERS = [name for name in RUNNERS if not name.startswith("roundup")]

# --------------------------------------------------------------------------
# From the wire: each runner gets the JSON text of each event, as a program
# reading a provider's stream has it, and pays what that program pays: the
# SDKs parse it and build their event object (as their Stream classes do,
# `construct_type`), then accumulate.


def wire_openai(steps):
    return [json.dumps(c) for c in openai_dicts(steps) if c.get("object")]


def wire_anthropic(steps):
    return [json.dumps(e) for e in anthropic_dicts(steps)]


def run_openai_wire(lines):
    state = ChatCompletionStreamState()
    for line in lines:
        state.handle_chunk(openai_construct(type_=ChatCompletionChunk, value=json.loads(line)))
    return state.get_final_completion()


def run_langchain_wire(lines):
    """As langchain-openai streams: each chunk's delta becomes an
    ``AIMessageChunk``, added to the ones before."""
    aggregate = None
    for line in lines:
        delta = json.loads(line)["choices"][0]["delta"]
        chunks = [
            tool_call_chunk(name=c.get("function", {}).get("name"), args=c.get("function", {}).get("arguments"), id=c.get("id"), index=c["index"])
            for c in delta.get("tool_calls") or []
        ]
        extra = {"reasoning_content": delta["reasoning_content"]} if "reasoning_content" in delta else {}
        chunk = AIMessageChunk(content=delta.get("content") or "", additional_kwargs=extra, tool_call_chunks=chunks)
        aggregate = chunk if aggregate is None else aggregate + chunk
    assert aggregate is not None
    return aggregate.tool_calls, aggregate


def run_anthropic_wire(lines):
    snapshot = None
    json_bufs: Dict[int, bytes] = {}
    for line in lines:
        event = anthropic_construct(type_=RawMessageStreamEvent, value=json.loads(line))
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
    return snapshot


def roundup_wire(format):
    def run(lines):
        records: List[Dict[str, Any]] = []
        router = roundup.Router(from_=format, on_record=records.append)
        feed = router.feed
        for line in lines:
            feed(line)
        router.finish_all()
        return records

    return run


WIRE: Dict[str, Tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "langchain-core (openai chunks)": (wire_openai, run_langchain_wire),
    "openai SDK": (wire_openai, run_openai_wire),
    "anthropic SDK": (wire_anthropic, run_anthropic_wire),
    "roundup, openai-chat": (wire_openai, roundup_wire("openai-chat")),
    "roundup, anthropic": (wire_anthropic, roundup_wire("anthropic")),
}



def check(name: str, output: Any, steps) -> None:
    """Every runner gets the same arguments out, so that none is timed
    doing less than the others."""
    wanted = "".join(step[2] for step in steps if step[0] == "args")
    if name.startswith("roundup"):
        got = "".join(c["arguments"] for r in output if r["type"] == "round" for c in r["tool_calls"])
    elif name.startswith("langchain"):
        got = "".join(chunk["args"] or "" for chunk in output[1].tool_call_chunks)
    elif name.startswith("openai"):
        got = "".join(c.function.arguments for c in output.choices[0].message.tool_calls or [])
    else:
        # Anthropic keeps the parsed input, not the text.
        got = "".join(json.dumps(b.input, separators=(",", ":")) for b in output.content if b.type == "tool_use")
        wanted = "".join(json.dumps(json.loads(a), separators=(",", ":")) for a in _per_call(steps))
    assert got == wanted, f"{name}: arguments differ"


def _per_call(steps):
    calls: Dict[int, str] = {}
    for step in steps:
        if step[0] == "args":
            calls[step[1]] = calls.get(step[1], "") + step[2]
    return [calls[k] for k in sorted(calls)]


def per_call_overhead(n: int) -> Dict[str, float]:
    """ns per ``message()`` from Python: no callable attached (the GIL kept),
    and with a sink attached (the GIL left and taken back per call)."""
    out = {}
    for label, session in [
        ("no callable", roundup.RoundBuilder(retain_rounds=False)),
        ("with a sink", roundup.RoundBuilder(on_record=lambda r: None, retain_rounds=False)),
    ]:
        message = session.message
        start = time.perf_counter_ns()
        for _ in range(n):
            message("x")
        out[label] = (time.perf_counter_ns() - start) / n
    empty = lambda text: None  # noqa: E731
    start = time.perf_counter_ns()
    for _ in range(n):
        empty("x")
    out["a Python function doing nothing"] = (time.perf_counter_ns() - start) / n
    return out


def table(runners, rounds: int) -> None:
    """One table: a row per workload, the median µs per round of each runner
    (paired rounds), and roundup's lead over the fastest of the others."""
    ours = [name for name in runners if name.startswith("roundup")]
    others = [name for name in runners if name not in ours]
    print("| workload | " + " | ".join(runners) + " | fastest other / roundup |")
    print("| --- " * (len(runners) + 2) + "|")
    for workload, make in WORKLOADS.items():
        steps = make()
        native = {name: prepare(steps) for name, (prepare, _) in runners.items()}
        for name, (_, run) in runners.items():
            check(name, run(native[name]), steps)
        times: Dict[str, List[float]] = {name: [] for name in runners}
        repeat = 1 if workload.startswith("W4") else 20
        for _ in range(rounds):
            for name, (_, run) in runners.items():
                start = time.perf_counter()
                for _ in range(repeat):
                    run(native[name])
                times[name].append((time.perf_counter() - start) / repeat * 1e6)
        median = {name: statistics.median(ts) for name, ts in times.items()}
        fastest = min(median[name] for name in others)
        cells = " | ".join(f"{median[name]:,.1f}" for name in runners)
        lead = ", ".join(f"{fastest / median[name]:.0f}x" for name in ours)
        print(f"| {workload} | {cells} | {lead} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one round per runner: check that it runs")
    parser.add_argument("--rounds", type=int, default=11, help="paired rounds (default 11)")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    print("From the wire (µs per round; each event's JSON text in):\n")
    table(WIRE, rounds)
    print("Accumulation only (µs per round; event objects built beforehand):\n")
    table(RUNNERS, rounds)
    for label, ns in per_call_overhead(200_000 if args.quick else 2_000_000).items():
        print(f"- `message()` {label}: {ns:.0f} ns per call")


if __name__ == "__main__":
    main()
