"""The stubs describe what the extension module has, no more, no less."""

import ast
import inspect
import pathlib

import roundup
from roundup import _roundup

PACKAGE = pathlib.Path(roundup.__file__).parent


def stub_classes(path):
    tree = ast.parse(path.read_text())
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {
                item.name for item in node.body if isinstance(item, (ast.FunctionDef, ast.AnnAssign))
            }
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    return classes, functions


def test_the_stub_names_every_public_method_of_every_class():
    classes, functions = stub_classes(PACKAGE / "_roundup.pyi")
    for name, cls in inspect.getmembers(_roundup, inspect.isclass):
        if issubclass(cls, Exception):
            assert name in classes
            continue
        public = {m for m in dir(cls) if not m.startswith("_")} | (
            {m for m in ("__enter__", "__exit__", "__len__", "__iter__", "__next__") if hasattr(cls, m)}
        )
        assert public <= classes[name] | {"__init__"}, f"{name}: not in the stub: {public - classes[name]}"
        stubbed = {m for m in classes[name] if m != "__init__"}
        assert stubbed <= public, f"{name}: in the stub only: {stubbed - public}"
    module_functions = {n for n, f in inspect.getmembers(_roundup) if callable(f) and not inspect.isclass(f)}
    assert functions == module_functions


def test_the_adapters_stub_names_every_input_format():
    tree = ast.parse((PACKAGE / "adapters.pyi").read_text())
    stubbed = {node.target.id for node in tree.body if isinstance(node, ast.AnnAssign) and getattr(node.annotation, "id", None) == "_Format"}
    assert stubbed == {name.replace("-", "_") for name in roundup.adapters.FORMATS}


def test_the_package_is_marked_typed():
    assert (PACKAGE / "py.typed").exists()


def test_the_emit_literal_names_every_output_format():
    import pathlib
    import re

    stub = (pathlib.Path(roundup.__file__).parent / "_roundup.pyi").read_text()
    names = re.search(r"^Emit = Literal\[(.*)\]$", stub, re.M).group(1)
    assert {n.strip().strip('"') for n in names.split(",")} == set(roundup.encoders.FORMATS)
