"""The output formats of roundup's registry: what ``replay(emit=...)`` and
``Replayer(emit=...)`` write.

>>> from roundup import encoders
>>> encoders.FORMATS[:4]
('records', 'ui', 'deepwork', 'agui')
"""

from ._roundup import output_formats as _output_formats

#: The output formats; the first is the default.
FORMATS = tuple(format["name"] for format in _output_formats())

#: The formats that write a provider's conversation history, one list per run.
HISTORIES = ("openai-chat", "openai-responses", "anthropic")

#: Each format's description.
ABOUT = {format["name"]: format["about"] for format in _output_formats()}

__all__ = ["ABOUT", "FORMATS", "HISTORIES"]
