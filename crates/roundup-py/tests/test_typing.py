"""The stubs describe what the extension module has, no more, no less;
their Literals name every format of the registry; and they type-check
code that uses the package under `mypy --strict`.

The whole comparison with the built module is `python -m mypy.stubtest
roundup`, which `.ci/run` runs after installing the wheel; these tests
check what stubtest cannot see: the values of the Literals."""

import ast
import inspect
import pathlib
import typing

import pytest

import roundup
from roundup import _roundup

PACKAGE = pathlib.Path(roundup.__file__).parent
STUB = PACKAGE / "_roundup.pyi"


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


def stub_literal(name, path=STUB):
    """The strings of the stub's `name = Literal[...]`, in their order."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [name]:
            value = node.value
            assert isinstance(value, ast.Subscript) and getattr(value.value, "id", None) == "Literal", ast.dump(value)
            items = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
            return [ast.literal_eval(item) for item in items]
    raise AssertionError(f"{path.name} has no {name} = Literal[...]")


def same_names(stubbed, runtime, what):
    """Equal sets, or a message naming what each side lacks."""
    missing = [n for n in runtime if n not in stubbed]
    extra = [n for n in stubbed if n not in runtime]
    assert not missing and not extra, (
        f"{what}: add to the stub's Literal: {missing}; not at run time, remove: {extra}"
    )


def test_the_stub_names_every_public_method_of_every_class():
    classes, functions = stub_classes(STUB)
    for name, cls in inspect.getmembers(_roundup, inspect.isclass):
        if issubclass(cls, Exception):
            assert name in classes
            continue
        public = {m for m in dir(cls) if not m.startswith("_")} | (
            {m for m in ("__enter__", "__exit__", "__len__", "__iter__", "__next__") if hasattr(cls, m)}
        )
        constructors = {"__new__", "__init__"}
        assert public <= classes[name] | constructors, f"{name}: not in the stub: {public - classes[name]}"
        stubbed = classes[name] - constructors
        assert stubbed <= public, f"{name}: in the stub only: {stubbed - public}"
    module_functions = {n for n, f in inspect.getmembers(_roundup) if callable(f) and not inspect.isclass(f)}
    assert functions == module_functions


def test_the_adapters_stub_names_every_input_format():
    tree = ast.parse((PACKAGE / "adapters.pyi").read_text())
    stubbed = [
        node.target.id
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and getattr(node.annotation, "id", None) == "_Format"
    ]
    same_names(stubbed, [name.replace("-", "_") for name in roundup.adapters.FORMATS], "adapters.pyi")


def test_the_input_format_literal_names_every_input_format():
    # Typed as from_=, Adapter(format) and the adapters' names.
    same_names(stub_literal("_InputFormat"), roundup.adapters.FORMATS, "_InputFormat in _roundup.pyi")


def test_the_output_format_literal_names_every_output_format():
    # Typed as emit=.
    same_names(stub_literal("_OutputFormat"), roundup.encoders.FORMATS, "_OutputFormat in _roundup.pyi")


def test_the_history_format_literal_names_every_history_format():
    # Typed as export(to=): the output formats that write a history.
    same_names(stub_literal("_HistoryFormat"), roundup.encoders.HISTORIES, "_HistoryFormat in _roundup.pyi")
    assert set(roundup.encoders.HISTORIES) <= set(roundup.encoders.FORMATS)


def test_the_literals_list_no_name_twice():
    for name in ("_InputFormat", "_OutputFormat", "_HistoryFormat", "_Status", "_Reason"):
        names = stub_literal(name)
        assert len(names) == len(set(names)), f"{name}: {names}"


@pytest.mark.parametrize(
    "literal, call",
    [
        ("_Status", lambda b, v: b.tool_update("t1", "", status=v)),
        ("_Reason", lambda b, v: b.finish(v)),
    ],
)
def test_the_status_and_reason_literals_are_what_the_module_accepts(literal, call):
    names = stub_literal(literal)
    for value in names:
        builder = roundup.RoundBuilder()
        builder.tool_call("t1", "read")
        call(builder, value)
    # The error for any other name lists the names allowed.
    with pytest.raises(ValueError) as error:
        call(roundup.RoundBuilder(), "nonsense")
    allowed = str(error.value).split(" is not one of ", 1)[1]
    assert [ast.literal_eval(n.strip()) for n in allowed.split(",")] == names


def test_the_package_is_marked_typed():
    assert (PACKAGE / "py.typed").exists()


def test_every_module_of_the_package_has_its_types():
    # A .py without its .pyi is checked as written: it must then be annotated.
    for module in (roundup, roundup.adapters, roundup.encoders):
        assert pathlib.Path(module.__file__).with_suffix(".pyi").exists(), module.__name__


# Code using the package: what must type-check under --strict, and the
# lines (marked `# wrong`) that must not.
USAGE = '''
from typing import Any, Dict, Iterator, List, Optional

import roundup
from roundup import adapters, encoders


def rounds(path: str) -> List[Dict[str, Any]]:
    return [r for r in roundup.replay(path, from_="acp") if r["type"] == "round"]


def agui(lines: List[str]) -> Iterator[str]:
    for event in roundup.replay(lines, emit="agui", sse=True):
        yield str(event)


def every_history(path: str) -> int:
    n = 0
    for to in encoders.HISTORIES:
        n += len(list(roundup.export(path, to=to)))
    return n


def every_adapter(event: Dict[str, Any]) -> int:
    return sum(len(roundup.Adapter(name).translate(event)) for name in adapters.FORMATS)


def live(events: List[bytes]) -> Optional[int]:
    seen: List[Dict[str, Any]] = []
    with roundup.Router(from_="openai-chat", on_record=seen.append, max_sessions=8) as router:
        for event in events:
            router.feed(event)
    replayer = roundup.Replayer(emit="openai-responses")
    replayer.feed(b"")
    builder = roundup.RoundBuilder("s1", on_ui=lambda event: event.get("event") != "done")
    builder.tool_update("t1", "", status="completed")
    builder.finish("canceled")
    return len(seen) + builder.run + len(adapters.acp.translate("{}")) + len(router)


roundup.replay("a.jsonl", emit="record")  # wrong
roundup.replay("a.jsonl", from_="openai")  # wrong
roundup.export("a.jsonl", to="agui")  # wrong
roundup.Adapter("claude_code")  # wrong
roundup.RoundBuilder().finish("done")  # wrong
roundup.RoundBuilder().tool_update("t1", "", status="running")  # wrong
roundup.Router(evict_dir=3)  # wrong
roundup.RoundBuilder().restore("not bytes")  # wrong
class Mine(roundup.RoundBuilder): ...  # wrong
'''


def test_code_using_the_package_type_checks_strictly_and_wrong_names_do_not(tmp_path):
    api = pytest.importorskip("mypy.api")
    source = tmp_path / "usage.py"
    source.write_text(USAGE)
    out, err, status = api.run(
        ["--strict", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), str(source)]
    )
    flagged = {int(line.split(":")[1]) for line in out.splitlines() if ": error:" in line}
    wrong = {i for i, line in enumerate(USAGE.splitlines(), 1) if line.endswith("# wrong")}
    assert status == 1 and flagged == wrong, out + err
