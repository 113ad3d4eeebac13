"""LangChain: an agent's ``astream`` of message chunks, turned into rounds.

A LangChain chat model streams ``AIMessageChunk``s: text (a string, or
content blocks with text and reasoning), ``tool_call_chunks`` whose
arguments arrive in pieces keyed by ``index``, and usage. Tools answer
with ``ToolMessage``s. Instead of adding chunks together (``chunk + chunk``
copies the message each time, and the arguments with it), hand each piece to
a ``roundup.RoundBuilder``: every round reaches ``on_record`` the moment it
closes, with its final arguments and one result per call.

Run it: ``python examples/langchain_rounds.py`` prints the records.
"""

import asyncio
import json
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

import roundup


def feed_chunk(chunk: AIMessageChunk, session: roundup.RoundBuilder, ids: Dict[int, str]) -> None:
    """One ``AIMessageChunk`` as builder calls. ``ids`` maps a tool call's
    ``index`` to its id, which only its first chunk carries."""
    if isinstance(chunk.content, str):
        if chunk.content:
            session.message(chunk.content)
    else:
        for block in chunk.content:
            if isinstance(block, str):
                session.message(block)
            elif block.get("type") == "text":
                session.message(block["text"])
            elif block.get("type") == "reasoning":
                session.thought(block.get("reasoning", ""))
            elif block.get("type") == "thinking":
                session.thought(block.get("thinking", ""))
    for part in chunk.tool_call_chunks:
        index = part.get("index") or 0
        id, args = part.get("id"), part.get("args")
        if id:
            ids[index] = id
            session.tool_call(id, part.get("name") or "")
        if args and index in ids:
            session.args_delta(ids[index], args)
    if chunk.usage_metadata:
        session.token_usage(chunk.usage_metadata["total_tokens"])


def feed_tool_message(message: ToolMessage, session: roundup.RoundBuilder) -> None:
    session.tool_result(message.tool_call_id, str(message.content), failed=message.status == "error")


class ScriptedChatModel(BaseChatModel):
    """A chat model that streams scripted turns, the way provider
    integrations stream: a ``ChatGenerationChunk`` per piece."""

    turns: List[List[AIMessageChunk]]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _next_turn(self) -> List[AIMessageChunk]:
        return self.turns.pop(0)

    def _generate(
        self,
        messages: List[BaseMessage],
        stop: Optional[List[str]] = None,
        run_manager: Optional[CallbackManagerForLLMRun] = None,
        **kwargs: Any,
    ) -> ChatResult:
        turn = self._next_turn()
        whole = turn[0]
        for chunk in turn[1:]:
            whole = whole + chunk
        return ChatResult(generations=[ChatGeneration(message=whole)])

    def _stream(
        self,
        messages: List[BaseMessage],
        stop: Optional[List[str]] = None,
        run_manager: Optional[CallbackManagerForLLMRun] = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._next_turn():
            yield ChatGenerationChunk(message=chunk)

    async def _astream(
        self,
        messages: List[BaseMessage],
        stop: Optional[List[str]] = None,
        run_manager: Optional[AsyncCallbackManagerForLLMRun] = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._next_turn():
            await asyncio.sleep(0)
            yield ChatGenerationChunk(message=chunk)


def weather_agent_model() -> ScriptedChatModel:
    return ScriptedChatModel(
        turns=[
            [
                AIMessageChunk(content=[{"type": "reasoning", "reasoning": "The user wants weather; "}]),
                AIMessageChunk(content=[{"type": "reasoning", "reasoning": "call the tool."}]),
                AIMessageChunk(content="Let me check "),
                AIMessageChunk(content="the weather."),
                AIMessageChunk(content="", tool_call_chunks=[tool_call_chunk(name="get_weather", args='{"city": ', id="call_1", index=0)]),
                AIMessageChunk(content="", tool_call_chunks=[tool_call_chunk(args='"Paris", "unit"', index=0)]),
                AIMessageChunk(content="", tool_call_chunks=[tool_call_chunk(args=': "C"}', index=0)]),
                AIMessageChunk(content="", tool_call_chunks=[tool_call_chunk(name="get_time", args='{"tz": "CET"}', id="call_2", index=1)]),
                AIMessageChunk(content="", usage_metadata={"input_tokens": 40, "output_tokens": 25, "total_tokens": 65}),
            ],
            [
                AIMessageChunk(content="It is 18 °C in Paris "),
                AIMessageChunk(content="at 14:05."),
                AIMessageChunk(content="", usage_metadata={"input_tokens": 90, "output_tokens": 12, "total_tokens": 102}),
            ],
        ]
    )


TOOLS = {
    "get_weather": lambda args: f"{18} °{args['unit']} in {args['city']}",
    "get_time": lambda args: "14:05",
}


async def run_agent(model: BaseChatModel, session: roundup.RoundBuilder) -> List[AIMessageChunk]:
    """A minimal tool loop over ``model.astream``; every piece also goes to
    ``session``. Returns LangChain's own aggregate of each turn, to compare."""
    history: List[BaseMessage] = [HumanMessage("What is the weather in Paris, and the time?")]
    aggregates = []
    while True:
        ids: Dict[int, str] = {}
        aggregate: Optional[AIMessageChunk] = None
        async for chunk in model.astream(history):
            feed_chunk(chunk, session, ids)
            aggregate = chunk if aggregate is None else aggregate + chunk
        assert aggregate is not None
        aggregates.append(aggregate)
        history.append(aggregate)
        if not aggregate.tool_calls:
            return aggregates
        for call in aggregate.tool_calls:
            result = ToolMessage(TOOLS[call["name"]](call["args"]), tool_call_id=call["id"])
            feed_tool_message(result, session)
            history.append(result)


async def main() -> List[Dict[str, Any]]:
    records: List[Dict[str, Any]] = []
    with roundup.RoundBuilder("weather-chat", on_record=records.append) as session:
        await run_agent(weather_agent_model(), session)
    return records


if __name__ == "__main__":
    for record in asyncio.run(main()):
        print(json.dumps(record, ensure_ascii=False))
