"""What the Python checks (tests/history, tests/otlp) read: every
conformance vector and every fixture of the repository, and a vector's ops
as the ops JSONL file `roundup replay` takes. Plain Python, no package of
its own: a check puts this folder on `sys.path`."""

import json
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = Path(tempfile.mkdtemp(prefix="roundup-inputs-"))


def inputs(directory):
    """The inputs under `directory`, in path order."""
    for path in sorted(directory.rglob("*")):
        # Notes, expected outputs and an origin's own recording file (whose
        # stream is a fixture beside it) are not inputs.
        skipped = path.name.endswith((".expected.jsonl", ".recording.json"))
        if path.is_file() and path.suffix not in (".md", ".txt") and not skipped:
            yield path


def all_inputs():
    """Every vector, then every fixture."""
    return [*inputs(ROOT / "tests" / "vectors"), *inputs(ROOT / "tests" / "fixtures")]


def as_input(path):
    """A conformance vector's ops as an ops JSONL file; any other input (a
    fixture's JSON array body included) as is."""
    if path.suffix != ".json" or ROOT / "tests" / "vectors" not in path.resolve().parents:
        return path
    vector = json.loads(path.read_text())
    ops = SCRATCH / f"{vector['name']}.ops.jsonl"
    ops.write_text("".join(json.dumps(op) + "\n" for op in vector["ops"]))
    return ops
