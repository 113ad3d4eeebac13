"""Types of roundup.encoders: the output formats."""

from typing import Dict, Tuple

from ._roundup import _HistoryFormat, _OutputFormat

__all__ = ["ABOUT", "FORMATS", "HISTORIES"]
FORMATS: Tuple[_OutputFormat, ...]
HISTORIES: Tuple[_HistoryFormat, ...]
ABOUT: Dict[str, str]
