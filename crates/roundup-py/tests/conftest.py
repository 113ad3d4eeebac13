"""Shared helpers: the repository's vectors and fixtures, and the command
line whose output the Python API must equal."""

import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
VECTORS = sorted((REPO / "tests" / "vectors").glob("*.json"))
FIXTURES = sorted(
    path
    for path in (REPO / "tests" / "fixtures").rglob("*")
    if path.suffix in (".jsonl", ".ndjson", ".sse")
)
# Vectors not passed yet (tests/pending-vectors.txt, which the Rust suite
# reads too): each must still fail, so the list can only shrink.
PENDING = {
    line.strip()
    for line in (REPO / "tests" / "pending-vectors.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#")
}


def roundup_bin() -> str:
    """The `roundup` binary: $ROUNDUP_BIN, or built by cargo here."""
    binary = os.environ.get("ROUNDUP_BIN")
    if binary:
        return binary
    subprocess.run(["cargo", "build", "--quiet", "--bin", "roundup"], cwd=REPO, check=True)
    return str(REPO / "target" / "debug" / "roundup")


@pytest.fixture(scope="session")
def cli():
    binary = roundup_bin()

    def run(args, stdin=None):
        """The values the CLI prints: parsed JSON lines, or SSE text."""
        done = subprocess.run([binary, *args], input=stdin, capture_output=True, check=True)
        text = done.stdout.decode()
        if "--sse" in args:
            return [event for event in text.split("\n\n") if event]
        return [json.loads(line) for line in text.splitlines() if line]

    return run


def vector(path):
    return json.loads(path.read_text())


def ops_jsonl(ops) -> bytes:
    # Compact, as the package writes an event it is given as a dict: an
    # unknown op's anomaly keeps the line as it came, byte for byte.
    return "".join(json.dumps(op, separators=(",", ":"), ensure_ascii=False) + "\n" for op in ops).encode()


def subset(expected, actual, where="") -> None:
    """`expected` is contained in `actual` (SPEC §5's comparison)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: {actual!r} is not an object"
        for key, value in expected.items():
            assert key in actual, f"{where}.{key} missing in {actual!r}"
            subset(value, actual[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{where}: {actual!r} vs {expected!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            subset(e, a, f"{where}[{i}]")
    else:
        assert expected == actual, f"{where}: {actual!r} != {expected!r}"
