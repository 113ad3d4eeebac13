"""The Python in the README and the package's docstrings runs as written."""

import contextlib
import doctest
import io
import os
import re

import pytest

import roundup
from conftest import REPO


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


def test_the_readme_python_example_runs_and_prints_the_records():
    [block] = python_blocks(REPO / "README.md")
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    printed = out.getvalue()
    assert "'type': 'round'" in printed and "'content': 'hello'" in printed and "'type': 'summary'" in printed


def test_the_first_example_of_docs_python_runs():
    block = python_blocks(REPO / "docs" / "python.md")[0].replace("    ...  #", "    pass  #")
    exec(compile(block, "docs/python.md", "exec"), {})


@pytest.mark.parametrize("module", [roundup, roundup.adapters, roundup.encoders], ids=lambda m: m.__name__)
def test_the_docstring_examples_pass(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
