"""Types of the package ``roundup``: the extension module's, and ``export``'s."""

from typing import Iterable, Optional, Union

from . import adapters as adapters
from . import encoders as encoders
from ._roundup import Adapter as Adapter
from ._roundup import BadEventError as BadEventError
from ._roundup import CheckpointError as CheckpointError
from ._roundup import ReplayIterator as ReplayIterator
from ._roundup import Replayer as Replayer
from ._roundup import RoundBuilder as RoundBuilder
from ._roundup import Router as Router
from ._roundup import _Event, _HistoryFormat, _InputFormat, _PathLike
from ._roundup import __version__ as __version__
from ._roundup import replay as replay

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

def export(
    source: Union[_PathLike, Iterable[_Event]],
    *,
    to: _HistoryFormat,
    from_: Optional[_InputFormat] = None,
) -> ReplayIterator: ...
