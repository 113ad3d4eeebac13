"""The input formats of roundup's registry, one attribute each.

``roundup.adapters.acp`` (``openai_chat`` for ``openai-chat``, ...) is the
format's namespace: ``Adapter()`` makes the translator of one stream, which
keeps what it needs across events, and ``translate(event)`` translates a
single event with a fresh one. Each call comes back as its ops object
(``{"op": "message", "text": "Hi", "session": "s1"}``) that
``RoundBuilder.call`` and ``Router.call`` take.

>>> from roundup import adapters
>>> adapters.acp.translate({"sessionId": "s1", "update": {
...     "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}}})
[{'op': 'message', 'text': 'Hi', 'session': 's1'}]
"""

import functools as _functools
import types as _types

from ._roundup import Adapter, input_formats as _input_formats

__all__ = ["Adapter", "FORMATS"]

#: The input formats, in the order ``from_=None`` detection tries them.
FORMATS = tuple(format["name"] for format in _input_formats())


def _namespace(name, about):
    def translate(event):
        return Adapter(name).translate(event)

    translate.__doc__ = f"The calls of one {name} event, read by a fresh adapter."
    namespace = _types.SimpleNamespace(
        name=name,
        about=about,
        Adapter=_functools.partial(Adapter, name),
        translate=translate,
    )
    return namespace


for _format in _input_formats():
    _attribute = _format["name"].replace("-", "_")
    globals()[_attribute] = _namespace(_format["name"], _format["about"])
    __all__.append(_attribute)
