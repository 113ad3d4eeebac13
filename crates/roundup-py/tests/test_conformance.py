"""Every public vector and every fixture through the Python API gives the
command line's output, value for value."""

import json

import pytest

import roundup
from conftest import FIXTURES, PENDING, VECTORS, ops_jsonl, subset, vector

OUTPUTS = [
    "records",
    "ui",
    "agui",
    "agui-compact",
    "ai-sdk",
    "deepwork",
    "openai-chat",
    "openai-responses",
    "anthropic",
    "otlp",
    "otlp-content",
]


def test_the_vectors_and_fixtures_are_found():
    assert len(VECTORS) >= 32
    assert PENDING <= {path.stem for path in VECTORS}
    assert len(FIXTURES) >= 50
    assert set(roundup.encoders.FORMATS) == set(OUTPUTS)


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
@pytest.mark.parametrize("emit", OUTPUTS)
def test_vector_ops_through_replay_equal_the_cli(path, emit, cli, tmp_path):
    ops = vector(path)["ops"]
    file = tmp_path / "ops.jsonl"
    file.write_bytes(ops_jsonl(ops))
    expected = cli(["replay", "--from", "ops", "--emit", emit, str(file)])
    # Parsed events (dicts), one by one.
    assert list(roundup.replay(iter(ops), from_="ops", emit=emit)) == expected
    # The file itself.
    assert list(roundup.replay(file, emit=emit)) == expected


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, marks=pytest.mark.xfail(strict=True, reason="pending")) if p.stem in PENDING else p
        for p in VECTORS
    ],
    ids=lambda p: p.stem,
)
def test_vector_through_the_router_calls_meets_its_expectations(path):
    case = vector(path)
    records = []
    router = roundup.Router(on_record=records.append)
    for op in case["ops"]:
        router.call(op)
    router.finish_all()
    wanted = ("round", "stitch", "anomaly")
    timed = any("at_ms" in op for op in case["ops"])
    # The router's builders read the system clock: times are compared
    # through replay (above), which reads the ops' clock, as the CLI does.
    strip = (lambda value: _untimed(value)) if timed else (lambda value: value)
    actual = [strip(r) for r in records if r["type"] in wanted]
    expected = [strip(r) for r in case["expect"] if r["type"] in wanted]
    assert len(actual) == len(expected), actual
    for i, (e, a) in enumerate(zip(expected, actual)):
        subset(e, a, f"record[{i}]")


def _untimed(value):
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if not k.endswith("_at_ms") and k != "duration_ms"}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.parametrize("emit", ["records", "ui", "agui"])
def test_fixture_through_replay_equals_the_cli(path, emit, cli):
    expected = cli(["replay", "--emit", emit, str(path)])
    assert list(roundup.replay(str(path), emit=emit)) == expected
    # Line by line from an iterable (a live stream), as text.
    with open(path, encoding="utf-8") as lines:
        assert list(roundup.replay(lines, emit=emit)) == expected


@pytest.mark.parametrize("path", FIXTURES[::7], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_fed_in_pieces_to_a_replayer_equals_the_cli_sse(path, cli):
    expected = cli(["replay", "--emit", "agui", "--sse", str(path)])
    replayer = roundup.Replayer(emit="agui", sse=True)
    data = path.read_bytes()
    out = []
    for start in range(0, len(data), 97):
        out += replayer.feed(data[start : start + 97])
    out += replayer.close()
    assert "".join(out) == "".join(event + "\n\n" for event in expected)
    assert all(event.startswith("data: ") for event in out)


# SSE framing is the replayer's: an adapter reads payloads, one per line here.
@pytest.mark.parametrize("path", [p for p in FIXTURES if p.suffix != ".sse"], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_through_its_adapter_and_a_router_gives_the_cli_rounds(path, cli):
    """The adapter's calls, applied by a Router, make the CLI's rounds."""
    expected = cli(["replay", "--emit", "records", str(path)])
    replayed = roundup.replay(str(path))
    list(replayed)
    records = []
    router = roundup.Router(on_record=records.append, from_=replayed.stats["format"])
    bad = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                router.feed(line)
            except roundup.BadEventError:
                bad += 1
    assert bad == sum(1 for r in expected if r.get("kind") == "bad_line")
    router.finish_all()
    rounds = [_untimed(r) for r in records if r["type"] == "round"]
    assert rounds == [_untimed(r) for r in expected if r["type"] == "round"]
