"""Types of the extension module; the documentation is in docs/python.md.

The aliases' names start with an underscore: they exist for the type
checker only (the module has no such attributes at run time).
"""

import os
from types import TracebackType
from typing import Any, Callable, Dict, Iterable, Iterator, List, Literal, Optional, Type, Union, final

__all__ = [
    "RoundBuilder",
    "Router",
    "Adapter",
    "Replayer",
    "ReplayIterator",
    "replay",
    "input_formats",
    "output_formats",
    "CheckpointError",
    "BadEventError",
    "__version__",
]

__version__: str

#: A record: a round, stitch, anomaly, meta patch or run summary (SPEC §4),
#: as ``json.loads`` of the command line's line gives it.
_Record = Dict[str, Any]
#: A live UI event, as the line of ``roundup replay --emit ui``.
_UiEvent = Dict[str, Any]
#: One call as its ops JSONL object (SPEC §3).
_Op = Dict[str, Any]
_Status = Literal["pending", "in_progress", "completed", "failed"]
_Reason = Literal["completed", "failed", "canceled", "interrupted"]
#: An input format (``roundup.adapters.FORMATS``), in detection order.
_InputFormat = Literal[
    "ops",
    "acp",
    "opencode",
    "uagent",
    "deepwork",
    "mistral",
    "openai-chat",
    "openai-responses",
    "anthropic",
    "claude-transcript",
    "claude-code",
    "codex",
    "codex-rollout",
    "ollama",
    "gemini",
    "gemini-cli",
    "gemini-cli-chat",
    "ai-sdk",
    "bedrock",
]
#: An output format (``roundup.encoders.FORMATS``); the first is the default.
_OutputFormat = Literal[
    "records",
    "ui",
    "deepwork",
    "agui",
    "agui-compact",
    "ai-sdk",
    "openai-chat",
    "openai-responses",
    "anthropic",
    "otlp",
    "otlp-content",
]
#: An output format that writes a provider's history (``roundup.encoders.HISTORIES``).
_HistoryFormat = Literal["openai-chat", "openai-responses", "anthropic"]
#: An event: a parsed JSON object, or the text of one line.
_Event = Union[Dict[str, Any], str, bytes]
_RecordSink = Callable[[_Record], object]
#: Returns ``False`` to receive no more events (the client went away).
_UiHandler = Callable[[_UiEvent], Optional[bool]]
_PathLike = Union[str, "os.PathLike[str]"]

class CheckpointError(ValueError):
    """Bytes that are not a checkpoint this build of roundup reads."""

class BadEventError(ValueError):
    """An event its input format cannot read."""

@final
class RoundBuilder:
    """One session's aggregation: feed it the calls of the stream, get rounds."""

    def __new__(
        cls,
        session: Optional[str] = None,
        *,
        on_record: Optional[_RecordSink] = None,
        on_ui: Optional[_UiHandler] = None,
        retain_rounds: bool = True,
    ) -> "RoundBuilder": ...
    @property
    def session(self) -> Optional[str]: ...
    def message(self, text: str) -> None: ...
    def thought(self, text: str) -> None: ...
    def tool_call(self, id: str, title: Optional[str] = None, name: Optional[str] = None) -> None: ...
    def tool_update(self, id: str, content: str, status: _Status = "in_progress") -> None: ...
    def args_delta(self, id: str, delta: str) -> None: ...
    def args_snapshot(self, id: str, args: str) -> None: ...
    def tool_result(self, id: str, content: str, *, failed: bool = False) -> None: ...
    def tool_output(self, id: str, content: str, *, replace: bool = False) -> None: ...
    def token_usage(self, total: int) -> None: ...
    def start(self) -> None: ...
    def finish(self, reason: _Reason = "interrupted") -> None: ...
    def tool_meta(self, id: str, meta: Dict[str, Any]) -> None: ...
    def run_meta(self, meta: Dict[str, Any]) -> None: ...
    def round_meta(self, meta: Dict[str, Any]) -> None: ...
    def anomaly(self, kind: str, detail: str, id: Optional[str] = None) -> None: ...
    def call(self, op: _Op) -> None: ...
    @property
    def rounds(self) -> List[_Record]: ...
    def open_round(self) -> Optional[Dict[str, Any]]: ...
    def summary(self) -> _Record: ...
    @property
    def run(self) -> int: ...
    @property
    def finished(self) -> bool: ...
    def checkpoint(self, *, history: bool = False) -> bytes: ...
    def restore(self, checkpoint: bytes) -> None: ...
    def __enter__(self) -> "RoundBuilder": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
        /,
    ) -> Literal[False]: ...

@final
class Router:
    """Many sessions, one builder each, made on first sight."""

    def __new__(
        cls,
        *,
        from_: Optional[_InputFormat] = None,
        on_record: Optional[_RecordSink] = None,
        on_ui: Optional[_UiHandler] = None,
        retain_rounds: bool = False,
        max_sessions: Optional[int] = None,
        evict_dir: Optional[_PathLike] = None,
    ) -> "Router": ...
    @property
    def from_(self) -> Optional[_InputFormat]: ...
    def session(self, name: Optional[str] = None) -> RoundBuilder: ...
    def call(self, op: _Op) -> None: ...
    def feed(self, event: _Event) -> None: ...
    def close(self, name: Optional[str], reason: _Reason = "interrupted") -> None: ...
    def finish_all(self, reason: _Reason = "interrupted") -> int: ...
    def __len__(self) -> int: ...
    @property
    def open_sessions(self) -> int: ...
    def __enter__(self) -> "Router": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
        /,
    ) -> Literal[False]: ...

@final
class Adapter:
    """The translator of one stream of a protocol."""

    def __new__(cls, format: _InputFormat) -> "Adapter": ...
    @property
    def format(self) -> _InputFormat: ...
    def translate(self, event: _Event) -> List[_Op]: ...
    def end(self) -> List[_Op]: ...

@final
class Replayer:
    """A replay driven by its caller: feed it input, take its output."""

    def __new__(
        cls,
        *,
        from_: Optional[_InputFormat] = None,
        emit: _OutputFormat = "records",
        sse: bool = False,
        max_sessions: Optional[int] = None,
        evict_dir: Optional[_PathLike] = None,
    ) -> "Replayer": ...
    def feed(self, data: Union[str, bytes]) -> List[Any]: ...
    def feed_event(self, event: _Event) -> List[Any]: ...
    def close(self) -> List[Any]: ...
    @property
    def stats(self) -> Dict[str, Any]: ...

@final
class ReplayIterator(Iterator[Any]):
    """The output of a replay, value by value, read as it is needed."""

    def __iter__(self) -> "ReplayIterator": ...
    def __next__(self) -> Any: ...
    @property
    def stats(self) -> Dict[str, Any]: ...

def replay(
    source: Union[_PathLike, Iterable[_Event]],
    *,
    from_: Optional[_InputFormat] = None,
    emit: _OutputFormat = "records",
    sse: bool = False,
    max_sessions: Optional[int] = None,
    evict_dir: Optional[_PathLike] = None,
) -> ReplayIterator: ...
def input_formats() -> List[Dict[str, str]]: ...
def output_formats() -> List[Dict[str, str]]: ...
