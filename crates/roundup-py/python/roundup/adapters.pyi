"""Types of roundup.adapters: one namespace per input format."""

from typing import Any, Dict, List, Protocol, Tuple, Union

from ._roundup import Adapter as Adapter

__all__: List[str]
FORMATS: Tuple[str, ...]

class _Format(Protocol):
    name: str
    about: str
    def Adapter(self) -> Adapter: ...
    def translate(self, event: Union[Dict[str, Any], str, bytes]) -> List[Dict[str, Any]]: ...

ops: _Format
acp: _Format
uagent: _Format
deepwork: _Format
openai_chat: _Format
openai_responses: _Format
anthropic: _Format
claude_code: _Format
codex: _Format
ollama: _Format
mistral: _Format
opencode: _Format
gemini: _Format
gemini_cli: _Format
bedrock: _Format
