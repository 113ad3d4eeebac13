"""The examples run as tests: a LangChain astream turned into rounds, and a
FastAPI endpoint streaming AG-UI, checked with the AG-UI SDK's own types."""

import asyncio
import json
import pathlib
import sys

import pytest
from pydantic import TypeAdapter

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

import fastapi_agui  # noqa: E402
import langchain_rounds  # noqa: E402


def test_langchain_astream_becomes_rounds_that_match_langchains_own_aggregate():
    import roundup

    records = []
    with roundup.RoundBuilder("chat", on_record=records.append) as session:
        aggregates = asyncio.run(langchain_rounds.run_agent(langchain_rounds.weather_agent_model(), session))
    rounds = [r for r in records if r["type"] == "round"]
    assert len(rounds) == len(aggregates) == 2
    first, last = rounds
    # The same text, reasoning and arguments as LangChain's chunk addition.
    assert first["message"] == aggregates[0].text == "Let me check the weather."
    assert first["thought"] == "The user wants weather; call the tool."
    assert [json.loads(c["arguments"]) for c in first["tool_calls"]] == [c["args"] for c in aggregates[0].tool_calls]
    assert [c["result"]["content"] for c in first["tool_calls"]] == ["18 °C in Paris", "14:05"]
    assert first["closed_by"] == "tools_done"
    assert last["message"] == "It is 18 °C in Paris at 14:05."
    summary = records[-1]
    assert (summary["type"], summary["last_token_usage"], summary["tool_calls"]) == ("summary", 102, 2)


def test_the_langchain_example_runs_as_a_script():
    records = asyncio.run(langchain_rounds.main())
    assert [r["type"] for r in records] == ["round", "round", "summary"]


def test_fastapi_streams_agui_events_that_the_agui_sdk_accepts():
    from ag_ui.core import Event, EventType, RunAgentInput, UserMessage
    from fastapi.testclient import TestClient

    run = RunAgentInput(
        thread_id="t",
        run_id="r",
        state={},
        messages=[UserMessage(id="m1", role="user", content="Weather in Paris?")],
        tools=[],
        context=[],
        forwarded_props={},
    )
    events = []
    with TestClient(fastapi_agui.app) as client:
        with client.stream("POST", "/agent", json=json.loads(run.model_dump_json(by_alias=True))) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            for line in response.iter_lines():
                if line.startswith("data: "):
                    events.append(TypeAdapter(Event).validate_json(line[len("data: ") :]))
    kinds = [event.type for event in events]
    assert kinds[0] == EventType.RUN_STARTED and kinds[-1] == EventType.RUN_FINISHED
    text = "".join(e.delta for e in events if e.type == EventType.TEXT_MESSAGE_CONTENT)
    assert text == "Let me check the weather.It is 18 °C in Paris, with light rain."
    start = next(e for e in events if e.type == EventType.TOOL_CALL_START)
    # AG-UI ids are roundup's stable ones: thread, run, round, then the call's.
    assert start.tool_call_id.endswith("/round-0/call_1") and start.tool_call_name == "get_weather"
    args = "".join(e.delta for e in events if e.type == EventType.TOOL_CALL_ARGS)
    assert json.loads(args) == {"city": "Paris"}
    [result] = [e for e in events if e.type == EventType.TOOL_CALL_RESULT]
    assert (result.tool_call_id, result.content) == (start.tool_call_id, "18 °C, light rain")
    # Every message and tool call that starts also ends.
    assert kinds.count(EventType.TEXT_MESSAGE_START) == kinds.count(EventType.TEXT_MESSAGE_END) == 2
    assert kinds.count(EventType.TOOL_CALL_START) == kinds.count(EventType.TOOL_CALL_END) == 1


@pytest.mark.parametrize("example", ["langchain_rounds.py", "fastapi_agui.py"])
def test_the_examples_type_check(example):
    import mypy.api

    out, err, status = mypy.api.run(["--ignore-missing-imports", "--no-error-summary", str(EXAMPLES / example)])
    assert status == 0, out + err
