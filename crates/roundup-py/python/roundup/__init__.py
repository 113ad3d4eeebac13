"""roundup: agent streams into rounds.

AI agents stream their work in fragments: text and reasoning deltas, tool
calls whose arguments arrive as deltas or snapshots, tool output, results,
token gauges. roundup aggregates them into **rounds** (one assistant turn
with its reasoning, its tool calls, their final arguments and exactly one
result per call), hands each round over the moment it closes, and reports
what the upstream did wrong instead of losing it.

This package binds the Rust crate ``roundup``: every rule runs there.
Records are plain ``dict``s, equal to ``json.loads`` of the lines the
``roundup`` command line writes (the contract's §4).

>>> import roundup
>>> rounds = []
>>> with roundup.RoundBuilder(on_record=rounds.append) as session:
...     session.message("Let me look.")
...     session.tool_call("t1", "read")
...     session.args_snapshot("t1", '{"path": "a.txt"}')
...     session.tool_result("t1", "hello")
>>> rounds[0]["type"], rounds[0]["tool_calls"][0]["result"]
('round', {'status': 'completed', 'content': 'hello'})
>>> rounds[1]["type"]
'summary'
"""

from . import adapters, encoders
from ._roundup import (
    Adapter,
    BadEventError,
    CheckpointError,
    ReplayIterator,
    Replayer,
    RoundBuilder,
    Router,
    __version__,
    replay,
)

__all__ = [
    "Adapter",
    "BadEventError",
    "CheckpointError",
    "ReplayIterator",
    "Replayer",
    "RoundBuilder",
    "Router",
    "__version__",
    "adapters",
    "encoders",
    "export",
    "replay",
]


# The types are in __init__.pyi.
def export(source, *, to, from_=None):
    """The provider history of each run of ``source``, as the list its next
    request sends: ``to`` is ``"openai-chat"``, ``"openai-responses"`` or
    ``"anthropic"``. An iterator, one value per run, read as needed."""
    if to not in encoders.HISTORIES:
        raise ValueError(f"to={to!r} is not a history format: {', '.join(encoders.HISTORIES)}")
    return replay(source, from_=from_, emit=to)
