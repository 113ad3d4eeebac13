"""FastAPI: a live agent's stream served to a browser as AG-UI events.

The agent here streams OpenAI Chat Completions chunks (what
``client.chat.completions.create(stream=True)`` yields, as dicts) and its
host's tool messages. A ``roundup.Replayer`` reads them as ``openai-chat``
and writes AG-UI over SSE: each event the agent sends goes out as the AG-UI
events it completes, at once. Any other input format works the same way
(``from_="anthropic"``, ``"acp"``, roundup's own ``"ops"``...).

Run it: ``uvicorn fastapi_agui:app`` (from this directory), then POST an
AG-UI ``RunAgentInput`` to ``/agent``.
"""

import asyncio
from typing import Any, AsyncIterator, Dict, List

from ag_ui.core import RunAgentInput
from fastapi import FastAPI
from fastapi.responses import StreamingResponse

import roundup

app = FastAPI()


def chunk(delta: Dict[str, Any], finish_reason: Any = None) -> Dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1764547200,
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def tool_delta(arguments: str, **first: str) -> Dict[str, Any]:
    call: Dict[str, Any] = {"index": 0, "function": {"arguments": arguments}}
    if first:
        call.update(id=first["id"], type="function")
        call["function"]["name"] = first["name"]
    return chunk({"tool_calls": [call]})


async def weather_agent(prompt: str) -> AsyncIterator[Dict[str, Any]]:
    """A scripted agent loop: a model call that asks for a tool, the tool's
    result, and a model call that answers."""
    script: List[Dict[str, Any]] = [
        {"role": "user", "content": prompt},
        chunk({"role": "assistant", "content": "Let me check "}),
        chunk({"content": "the weather."}),
        tool_delta('{"city": ', id="call_1", name="get_weather"),
        tool_delta('"Paris"}'),
        chunk({}, finish_reason="tool_calls"),
        {"role": "tool", "tool_call_id": "call_1", "content": "18 °C, light rain"},
        chunk({"role": "assistant", "content": "It is 18 °C in Paris, "}),
        chunk({"content": "with light rain."}),
        chunk({}, finish_reason="stop"),
    ]
    for event in script:
        await asyncio.sleep(0)  # the model and the tools take their time
        yield event


@app.post("/agent")
async def agent(run: RunAgentInput) -> StreamingResponse:
    prompt = next((m.content for m in reversed(run.messages) if m.role == "user"), "")

    async def events() -> AsyncIterator[str]:
        replayer = roundup.Replayer(from_="openai-chat", emit="agui", sse=True)
        async for event in weather_agent(str(prompt)):
            for frame in replayer.feed_event(event):
                yield frame
        for frame in replayer.close():
            yield frame

    return StreamingResponse(events(), media_type="text/event-stream")
