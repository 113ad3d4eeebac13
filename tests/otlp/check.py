"""Checks roundup's OpenTelemetry traces, for every conformance vector and
every fixture.

    roundup replay --emit otlp|otlp-content FILE

gives one OTLP/JSON `ExportTraceServiceRequest` per finished run. Every
line of both formats is parsed with the official protobuf definitions
(the `opentelemetry-proto` package, exact version in requirements.txt),
strictly: an unknown field, a wrong type or an id of the wrong length
fails.

The same traces as `roundup export --to otlp --endpoint URL` sends them
(OTLP/HTTP, protobuf) are received by a small local server and parsed:
each must be the message its JSON line is.

With PHOENIX_URL set (scripts/phoenix.sh start prints it), every input is
then exported to that real backend with `roundup export --to otlp
--otlp-content --endpoint PHOENIX_URL`, and read back through its query API
(`GET /v1/projects/default/spans?trace_id=...`), and compared with the
rounds that `--emit records` gives for the same input; with JAEGER_URL set
(scripts/jaeger.sh start prints it), the same with Jaeger (sent to
JAEGER_OTLP, default http://127.0.0.1:4318, read back with
`GET /api/traces/{id}`). The comparison: one trace per run,
one chat span per round with its text and usage, one tool span per call
with its name, arguments and result, an error status exactly on the
placeholders, each span under its parent. Exporting an input again leaves
Phoenix with the same spans (the ids are the run's, not the export's;
Jaeger's in-memory store keeps a span sent twice twice, so this is checked
on Phoenix).
With SCREENSHOT set too, the backend's own trace view of one fixture is
taken with headless Chromium into that file, after checking that the page
shows that trace's spans.

usage: ROUNDUP_BIN=target/debug/roundup [PHOENIX_URL=http://127.0.0.1:6006]
       [SCREENSHOT=docs/otlp-phoenix.png] [JAEGER_URL=http://127.0.0.1:16686]
       python tests/otlp/check.py [FILE...]
"""

import base64
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from inputs import all_inputs, as_input  # noqa: E402  (tests/inputs.py)

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("ROUNDUP_BIN", str(ROOT / "target" / "debug" / "roundup"))
PHOENIX = os.environ.get("PHOENIX_URL", "").rstrip("/")
JAEGER = os.environ.get("JAEGER_URL", "").rstrip("/")
JAEGER_OTLP = os.environ.get("JAEGER_OTLP", "http://127.0.0.1:4318")
SCREENSHOT = os.environ.get("SCREENSHOT", "")
# The fixture whose trace the screenshot shows: a real agent's run with
# text, tool calls and results, and timings.
SCREENSHOT_INPUT = ROOT / "tests" / "fixtures" / "claude-transcript" / "spotter-tool_heavy-2.1.38.jsonl"
SCRATCH = Path(tempfile.mkdtemp(prefix="roundup-otlp-"))
IDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


def replay(path, fmt):
    out = subprocess.run([BIN, "replay", "-q", "--emit", fmt, str(path)], capture_output=True, check=True)
    return [json.loads(line) for line in out.stdout.decode().splitlines() if line.strip()]


def with_base64_ids(value):
    """OTLP/JSON writes ids as hex, where protobuf's JSON mapping of `bytes`
    is base64: the one difference between the two (the OTLP specification
    says so). Each hex id is checked and turned into base64 for the parser."""
    if isinstance(value, list):
        return [with_base64_ids(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, v in value.items():
        if key in IDS:
            raw = bytes.fromhex(v)
            if len(raw) != IDS[key] or v != v.lower() or raw == bytes(len(raw)):
                raise ValueError(f"{key} {v!r} is not {IDS[key]} bytes of lowercase hex, not all zero")
            out[key] = base64.b64encode(raw).decode()
        else:
            out[key] = with_base64_ids(v)
    return out


def parse(line):
    """A line as the protobuf message, parsed strictly."""
    return json_format.Parse(json.dumps(with_base64_ids(line)), ExportTraceServiceRequest(), ignore_unknown_fields=False)


def validate(line):
    request = parse(line)
    spans = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    written = line["resourceSpans"][0]["scopeSpans"][0]["spans"]
    if len(spans) != len(written):
        raise ValueError(f"{len(written)} spans written, {len(spans)} parsed")
    for span, raw in zip(spans, written):
        if span.end_time_unix_nano < span.start_time_unix_nano:
            raise ValueError(f"span {raw['name']} ends before it starts")
        if len(span.attributes) != len(raw["attributes"]):
            raise ValueError(f"span {raw['name']}: attributes lost in parsing")
        if span.kind not in (1, 3):
            raise ValueError(f"span {raw['name']}: kind {span.kind}")
    return request


def expected_runs(path):
    """The records' runs, stitches applied: {(session, run): [round, ...]}."""
    runs = {}
    for record in replay(path, "records"):
        key = (record.get("session"), record["run"])
        if record["type"] == "round":
            runs.setdefault(key, []).append(record)
        elif record["type"] == "stitch":
            round_ = next(r for r in runs[key] if r["index"] == record["round"])
            call = next(
                c
                for c in round_["tool_calls"]
                if c["id"] == record["id"] and c["result"].get("reason") == "superseded"
            )
            call["result"] = record["result"]
    return runs


def attrs(span):
    return {a["key"]: a["value"] for a in span["attributes"]}


def plain(value):
    """An OTLP/JSON attribute value as the backend gives it back."""
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        return [plain(v) for v in value["arrayValue"].get("values", [])]
    raise ValueError(f"an attribute value of an unknown type: {value}")


def export(path, endpoint):
    """`roundup export --to otlp --otlp-content --endpoint`: the traces sent
    by roundup's own OTLP/HTTP client."""
    out = subprocess.run(
        [BIN, "export", "-q", "--to", "otlp", "--otlp-content", "--endpoint", endpoint, str(path)],
        capture_output=True,
    )
    if out.returncode != 0 or out.stdout:
        raise ValueError(f"export exited {out.returncode}: {out.stderr.decode()[:300]} {out.stdout[:100]!r}")


class Receiver(http.server.BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that keeps what it is sent."""

    received = []

    def do_POST(self):  # noqa: N802 - the standard library's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Receiver.received.append((self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def sent_as_protobuf(path, lines, receiver_url):
    """What roundup sends for an input is, message for message, its JSON
    lines."""
    Receiver.received.clear()
    export(path, receiver_url)
    if len(Receiver.received) != len(lines):
        raise ValueError(f"{len(Receiver.received)} requests sent for {len(lines)} runs")
    for (where, content_type, body), line in zip(Receiver.received, lines):
        if where != "/v1/traces" or content_type != "application/x-protobuf":
            raise ValueError(f"sent to {where} as {content_type}")
        if ExportTraceServiceRequest.FromString(body) != parse(line):
            raise ValueError("a request sent is not the message of its JSON line")


def stored_phoenix(trace_id):
    """The spans Phoenix holds for a trace, by span id."""
    spans, cursor = {}, None
    while True:
        query = [("trace_id", trace_id), ("limit", "1000")] + ([("cursor", cursor)] if cursor else [])
        url = f"{PHOENIX}/v1/projects/default/spans?{urllib.parse.urlencode(query)}"
        with urllib.request.urlopen(url, timeout=30) as response:
            page = json.load(response)
        for span in page["data"]:
            if span["context"]["span_id"] in spans:
                raise ValueError(f"span {span['context']['span_id']} is held twice")
            spans[span["context"]["span_id"]] = span
        cursor = page.get("next_cursor")
        if not cursor:
            return spans


def stored_jaeger(trace_id):
    """The spans Jaeger holds for a trace, by span id, in the shape Phoenix
    gives them: the OpenInference kind, the OTLP status (Jaeger keeps it as
    the tags `otel.status_code` and `otel.status_description`), the
    attributes (tags) by key."""
    try:
        with urllib.request.urlopen(f"{JAEGER}/api/traces/{trace_id}", timeout=30) as response:
            data = json.load(response)["data"]
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return {}
        raise
    spans = {}
    for trace in data:
        for span in trace["spans"]:
            tags = {tag["key"]: tag["value"] for tag in span["tags"]}
            parents = [r["spanID"] for r in span.get("references", []) if r["refType"] == "CHILD_OF"]
            if span["spanID"] in spans:
                raise ValueError(f"span {span['spanID']} is held twice")
            spans[span["spanID"]] = {
                "name": span["operationName"],
                "parent_id": parents[0] if parents else None,
                "span_kind": tags.get("openinference.span.kind"),
                "status_code": tags.get("otel.status_code", "UNSET"),
                "status_message": tags.get("otel.status_description", ""),
                "attributes": tags,
            }
    return spans


def wait_for(stored, trace_id, count, deadline):
    """A backend writes what it receives in batches: asks until the trace
    has all its spans (or the time is up)."""
    while True:
        spans = stored(trace_id)
        if len(spans) >= count or time.monotonic() > deadline:
            return spans
        time.sleep(0.2)


def compare(line, runs, spans):
    """A trace read back from the backend against the run's rounds."""
    written = line["resourceSpans"][0]["scopeSpans"][0]["spans"]
    root = written[0]
    key = (plain(attrs(root)["session.id"]) if "session.id" in attrs(root) else None, plain(attrs(root)["roundup.run"]))
    rounds = runs.get(key, [])
    calls = sum(len(r["tool_calls"]) for r in rounds)
    if len(spans) != 1 + len(rounds) + calls:
        raise ValueError(f"run {key}: {len(spans)} spans stored, {1 + len(rounds) + calls} expected")
    back_root = spans[root["spanId"]]
    if back_root["parent_id"] is not None or back_root["name"] != "invoke_agent" or back_root["span_kind"] != "AGENT":
        raise ValueError(f"run {key}: the root is {back_root['name']} ({back_root['span_kind']}) under {back_root['parent_id']}")
    roots = [s for s in spans.values() if s["parent_id"] is None]
    if len(roots) != 1:
        raise ValueError(f"run {key}: {len(roots)} root spans")
    got = back_root["attributes"]
    if got.get("session.id") != key[0] or got.get("roundup.run") != key[1]:
        raise ValueError(f"run {key}: stored as session {got.get('session.id')!r} run {got.get('roundup.run')!r}")
    failed = plain(attrs(root)["roundup.finish_reason"]) == "failed"
    if (back_root["status_code"] == "ERROR") != failed:
        raise ValueError(f"run {key}: status {back_root['status_code']}, the run {'failed' if failed else 'did not fail'}")
    by_parent = {}
    for span in written[1:]:
        by_parent.setdefault(span["parentSpanId"], []).append(span)
    chats = by_parent.get(root["spanId"], [])
    if len(chats) != len(rounds):
        raise ValueError(f"run {key}: {len(chats)} chat spans for {len(rounds)} rounds")
    for chat, round_ in zip(chats, rounds):
        back = spans[chat["spanId"]]
        where = f"run {key} round {round_['index']}"
        if back["parent_id"] != root["spanId"] or back["span_kind"] != "LLM" or not back["name"].startswith("chat"):
            raise ValueError(f"{where}: {back['name']} ({back['span_kind']}) under {back['parent_id']}")
        got = back["attributes"]
        if got.get("roundup.round.index") != round_["index"]:
            raise ValueError(f"{where}: index {got.get('roundup.round.index')}")
        if round_["message"] and got.get("output.value") != round_["message"]:
            raise ValueError(f"{where}: text {got.get('output.value')!r}, not {round_['message'][:80]!r}")
        if back["status_code"] != "UNSET":
            raise ValueError(f"{where}: status {back['status_code']}")
        sent = attrs(chat)
        usage = [k for k in sent if k.startswith(("gen_ai.usage.", "llm.token_count.", "llm.model_name"))]
        for k in usage:
            if got.get(k) != plain(sent[k]):
                raise ValueError(f"{where}: {k} is {got.get(k)!r}, {plain(sent[k])!r} was sent")
        tools = by_parent.get(chat["spanId"], [])
        if len(tools) != len(round_["tool_calls"]):
            raise ValueError(f"{where}: {len(tools)} tool spans for {len(round_['tool_calls'])} calls")
        for tool, call in zip(tools, round_["tool_calls"]):
            back = spans[tool["spanId"]]
            where = f"run {key} round {round_['index']} call {call['id']}"
            got = back["attributes"]
            name = call.get("name") or call["title"]
            if back["parent_id"] != chat["spanId"] or back["span_kind"] != "TOOL":
                raise ValueError(f"{where}: {back['span_kind']} under {back['parent_id']}")
            if name and (back["name"] != f"execute_tool {name}" or got.get("gen_ai.tool.name") != name):
                raise ValueError(f"{where}: named {back['name']!r} / {got.get('gen_ai.tool.name')!r}, not {name!r}")
            if got.get("gen_ai.tool.call.id", "") != call["id"]:
                raise ValueError(f"{where}: call id {got.get('gen_ai.tool.call.id')!r}")
            if got.get("gen_ai.tool.call.arguments", "") != call["arguments"]:
                raise ValueError(f"{where}: arguments {got.get('gen_ai.tool.call.arguments')!r}, not {call['arguments']!r}")
            result = call["result"]
            if result["status"] == "placeholder":
                message = f"no result: {result['reason']}"
                if back["status_code"] != "ERROR" or back["status_message"] != message:
                    raise ValueError(f"{where}: a placeholder stored as {back['status_code']} {back['status_message']!r}")
                if "gen_ai.tool.call.result" in got:
                    raise ValueError(f"{where}: a placeholder with a result")
            else:
                if back["status_code"] != "UNSET":
                    raise ValueError(f"{where}: a real result stored as {back['status_code']} {back['status_message']!r}")
                if got.get("gen_ai.tool.call.result", "") != result["content"]:
                    raise ValueError(f"{where}: result {got.get('gen_ai.tool.call.result')!r}, not {result['content'][:80]!r}")
                if got.get("roundup.tool.result.status") != result["status"]:
                    raise ValueError(f"{where}: status {got.get('roundup.tool.result.status')!r}")
    return key


def screenshot(trace_id, names):
    """The backend's own view of one trace, as a person opens it: the page
    must show that trace's spans (their names in its text), then a picture
    of it is kept."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise ValueError("no chromium to take the screenshot with")
    with urllib.request.urlopen(f"{PHOENIX}/v1/projects", timeout=30) as response:
        project = next(p for p in json.load(response)["data"] if p["name"] == "default")
    url = f"{PHOENIX}/projects/{project['id']}/traces/{trace_id}"
    flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1600,1000",
             "--virtual-time-budget=15000", f"--user-data-dir={SCRATCH / 'chromium'}"]
    dom = subprocess.run([*flags, "--dump-dom", url], capture_output=True, timeout=120).stdout.decode(errors="replace")
    missing = [n for n in names if n not in dom]
    if missing:
        raise ValueError(f"the trace view at {url} does not show {missing}")
    subprocess.run([*flags, f"--screenshot={SCREENSHOT}", url], capture_output=True, timeout=120, check=True)
    if not Path(SCREENSHOT).is_file() or Path(SCREENSHOT).stat().st_size < 10_000:
        raise ValueError(f"no picture of the trace view at {SCREENSHOT}")
    return url


def check_backend(label, endpoint, stored, exported, holds_once):
    """Every input sent to a backend by `roundup export --endpoint`, each
    trace read back and compared with its rounds; then that the comparison
    does catch a difference; with `holds_once` (a backend that keeps a span
    by its id: Phoenix; Jaeger's in-memory store keeps a span sent twice
    twice), that an input exported again leaves each span held once.
    Returns (passed, failed)."""
    passed = failed = 0
    started = time.monotonic()
    for name, source, lines, _ in exported:
        try:
            export(source, endpoint)
        except Exception as error:  # noqa: BLE001 - every failure is reported, then counted
            failed += 1
            print(f"FAIL {label} {name}: {str(error)[:600]}")
    count = sum(len(lines) for _, _, lines, _ in exported)
    print(f"{label}: {count} traces sent by roundup export --endpoint in {time.monotonic() - started:.1f}s")
    deadline = time.monotonic() + 120
    traces = 0
    for name, _, lines, runs in exported:
        try:
            for line in lines:
                trace_id = line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
                count = len(line["resourceSpans"][0]["scopeSpans"][0]["spans"])
                compare(line, runs, wait_for(stored, trace_id, count, deadline))
                traces += 1
            passed += 1
        except Exception as error:  # noqa: BLE001
            failed += 1
            print(f"FAIL {label} {name}: {str(error)[:600]}")
    print(f"{label}: {traces} traces read back and compared with the rounds in {time.monotonic() - started:.1f}s")
    # The comparison can fail: a call's arguments changed, a real result
    # taken for a placeholder, are each caught.
    name, _, lines, runs = next(e for e in exported if any(r["tool_calls"] for rs in e[3].values() for r in rs))
    for change, what in [
        (lambda call: call.update(arguments=call["arguments"] + " "), "other arguments"),
        (lambda call: call.update(result={"status": "placeholder", "reason": "canceled"}), "a placeholder"),
    ]:
        changed = json.loads(json.dumps({json.dumps(k): v for k, v in runs.items()}))
        changed = {tuple(json.loads(k)): v for k, v in changed.items()}
        change(next(c for rs in changed.values() for r in rs for c in r["tool_calls"]))
        try:
            for line in lines:
                spans = line["resourceSpans"][0]["scopeSpans"][0]["spans"]
                compare(line, changed, stored(spans[0]["traceId"]))
            failed += 1
            print(f"FAIL {label} {name}: {what} was not caught")
        except ValueError:
            passed += 1
    if not holds_once:
        return passed, failed
    # Exported again: the same ids, so the backend holds each span once.
    name, source, lines, _ = next((e for e in exported if e[0] == SCREENSHOT_INPUT.relative_to(ROOT)), exported[-1])
    traces = [line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] for line in lines]
    try:
        counts = [len(stored(t)) for t in traces]
        if replay(source, "otlp-content") != lines:
            raise ValueError("a second export is not the same")
        export(source, endpoint)
        time.sleep(2)
        recounts = [len(stored(t)) for t in traces]
        if recounts != counts:
            raise ValueError(f"exported twice, the backend holds {recounts} spans, not {counts}")
        passed += 1
        print(f"{label}: {name} exported twice, each of its {sum(counts)} spans held once")
    except Exception as error:  # noqa: BLE001
        failed += 1
        print(f"FAIL {label} {name}: {str(error)[:600]}")
    return passed, failed


def main():
    files = [Path(f) for f in sys.argv[1:]] or all_inputs()
    passed = failed = 0
    exported = []  # (name, source, lines, runs) of every input, for the backend
    lines_checked = sent = 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    receiver_url = f"http://127.0.0.1:{server.server_address[1]}"
    for path in files:
        name = path.relative_to(ROOT) if path.is_absolute() else path
        try:
            source = as_input(path)
            bare = replay(source, "otlp")
            full = replay(source, "otlp-content")
            if len(bare) != len(full):
                raise ValueError(f"{len(bare)} traces without content, {len(full)} with")
            for line in bare + full:
                validate(line)
            lines_checked += len(bare) + len(full)
            sent_as_protobuf(source, full, receiver_url)
            sent += len(full)
            exported.append((name, source, full, expected_runs(source) if PHOENIX or JAEGER else {}))
            passed += 1
        except Exception as error:  # noqa: BLE001 - every failure is reported, then counted
            failed += 1
            print(f"FAIL {name}: {str(error)[:600]}")
    server.shutdown()
    print(f"protobuf: {lines_checked} lines of {len(exported)} inputs parsed by opentelemetry-proto")
    print(f"protobuf: {sent} requests sent by roundup export --endpoint, each the message of its line")
    # The validation can fail: a field of another name, an id cut short.
    sample = json.loads(json.dumps(next(lines for _, _, lines, _ in exported if lines)[0]))
    for broken, what in [
        (json.loads(json.dumps(sample).replace('"spanId"', '"spanID"')), "a misnamed field"),
        (json.loads(json.dumps(sample).replace('"traceId": "', '"traceId": "00', 1)), "a trace id of 17 bytes"),
        (json.loads(json.dumps(sample).replace('"startTimeUnixNano": "', '"startTimeUnixNano": "x', 1)), "a time that is no integer"),
    ]:
        try:
            validate(broken)
            failed += 1
            print(f"FAIL validation: {what} was accepted")
        except Exception:  # noqa: BLE001 - the rejection is the point
            passed += 1
    for label, endpoint, stored, url, holds_once in [
        ("phoenix", PHOENIX, stored_phoenix, PHOENIX, True),
        ("jaeger", JAEGER_OTLP, stored_jaeger, JAEGER, False),
    ]:
        if url:
            ok, bad = check_backend(label, endpoint, stored, exported, holds_once)
            passed, failed = passed + ok, failed + bad
    if not PHOENIX:
        print(f"{passed} passed, {failed} failed")
        return 0 if failed == 0 else 1

    if SCREENSHOT:
        try:
            lines = replay(as_input(SCREENSHOT_INPUT), "otlp-content")
            spans = lines[0]["resourceSpans"][0]["scopeSpans"][0]["spans"]
            names = sorted({s["name"] for s in spans})
            url = screenshot(spans[0]["traceId"], names)
            passed += 1
            print(f"screenshot: {url} shows {names}, kept in {SCREENSHOT}")
        except Exception as error:  # noqa: BLE001
            failed += 1
            print(f"FAIL screenshot: {str(error)[:600]}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
