"""Types of roundup.adapters: one namespace per input format."""

from typing import List, Protocol, Tuple

from ._roundup import Adapter as Adapter
from ._roundup import _Event, _InputFormat, _Op

__all__ = [
    "Adapter",
    "FORMATS",
    "ops",
    "acp",
    "opencode",
    "uagent",
    "deepwork",
    "mistral",
    "openai_chat",
    "openai_responses",
    "anthropic",
    "claude_transcript",
    "claude_code",
    "codex",
    "codex_rollout",
    "ollama",
    "gemini",
    "gemini_cli",
    "gemini_cli_chat",
    "ai_sdk",
    "bedrock",
]
FORMATS: Tuple[_InputFormat, ...]

class _Format(Protocol):
    name: _InputFormat
    about: str
    def Adapter(self) -> Adapter: ...
    def translate(self, event: _Event) -> List[_Op]: ...

ops: _Format
acp: _Format
opencode: _Format
uagent: _Format
deepwork: _Format
mistral: _Format
openai_chat: _Format
openai_responses: _Format
anthropic: _Format
claude_transcript: _Format
claude_code: _Format
codex: _Format
codex_rollout: _Format
ollama: _Format
gemini: _Format
gemini_cli: _Format
gemini_cli_chat: _Format
ai_sdk: _Format
bedrock: _Format
