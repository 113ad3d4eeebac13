"""The Python API: sessions, callbacks across threads, exceptions in
callbacks, checkpoints, routers, adapters, and the errors bad input gets."""

import json
import sys
import threading

import pytest

import roundup


def test_a_round_closes_at_new_text_and_a_late_result_is_stitched():
    records = []
    with roundup.RoundBuilder("s1", on_record=records.append) as session:
        session.message("Let me look.")
        session.tool_call("t1", "bash")
        session.args_delta("t1", '{"cmd":')
        session.args_delta("t1", '"ls"}')
        session.message("Meanwhile...")
        session.tool_result("t1", "a.txt")
    kinds = [r["type"] for r in records]
    assert kinds == ["round", "stitch", "round", "summary"]
    first = records[0]
    assert first["session"] == "s1"
    assert first["tool_calls"][0]["arguments"] == '{"cmd":"ls"}'
    assert first["tool_calls"][0]["result"]["status"] == "placeholder"
    assert records[1]["result"] == {"status": "completed", "content": "a.txt"}
    assert records[3]["stitches"] == 1
    # The builder's own copy carries the stitched result.
    assert session.rounds[0]["tool_calls"][0]["result"]["content"] == "a.txt"


def test_leaving_the_block_with_an_exception_cancels_the_run():
    records = []
    with pytest.raises(KeyError):
        with roundup.RoundBuilder(on_record=records.append) as session:
            session.tool_call("t1", "bash")
            raise KeyError("stop")
    call = records[0]["tool_calls"][0]
    assert call["result"] == {"status": "placeholder", "reason": "canceled"}


def test_the_open_round_and_partial_arguments_are_readable_while_it_streams():
    session = roundup.RoundBuilder()
    assert session.open_round() is None
    session.thought("hmm")
    session.tool_call("t1", "edit")
    session.args_delta("t1", '{"path": "a.rs", "text": "fn ma')
    open_round = session.open_round()
    assert open_round["thought"] == "hmm"
    assert open_round["tool_calls"][0]["arguments"] == '{"path": "a.rs", "text": "fn ma'
    assert session.run == 0 and not session.finished


def test_ui_events_are_dicts_and_false_stops_them():
    events = []

    def ui(event):
        events.append(event)
        return len(events) < 3 and None

    session = roundup.RoundBuilder("s", on_ui=ui)
    for text in ["a", "b", "c", "d"]:
        session.message(text)
    assert [e["event"] for e in events] == ["run_start", "message_start", "message_delta"]
    assert events[2] == {"event": "message_delta", "text": "a", "session": "s"}


def test_a_callback_that_raises_surfaces_from_the_call_and_loses_nothing(monkeypatch):
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    seen = []

    def sink(record):
        seen.append(record["type"])
        raise ValueError(f"cannot persist {record['type']}")

    session = roundup.RoundBuilder(on_record=sink)
    session.message("one")
    session.tool_call("t1", "x")
    with pytest.raises(ValueError, match="cannot persist round"):
        session.message("two")  # closes round 0: the sink raises
    # The call was applied: round 1 is open with "two".
    assert session.open_round()["message"] == "two"
    with pytest.raises(ValueError, match="cannot persist"):
        session.finish()  # round 1, then the summary: two exceptions
    assert seen == ["round", "round", "summary"]
    assert len(unraisable) == 1 and "summary" in str(unraisable[0].exc_value)
    assert len(session.rounds) == 2


def test_callbacks_from_two_threads_see_every_record_in_order():
    records = []
    lock = threading.Lock()

    def sink(record):
        with lock:
            records.append(record)

    router = roundup.Router(on_record=sink)

    def agent(name):
        session = router.session(name)
        for i in range(200):
            session.message(f"{name} {i}")
            session.tool_call(f"{name}-{i}", "x")
            session.tool_result(f"{name}-{i}", str(i))
        session.finish()

    threads = [threading.Thread(target=agent, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name in ("a", "b"):
        rounds = [r for r in records if r["type"] == "round" and r["session"] == name]
        assert [r["index"] for r in rounds] == list(range(200))
        assert [r["tool_calls"][0]["result"]["content"] for r in rounds] == [str(i) for i in range(200)]
        assert [r for r in records if r["type"] == "summary" and r["session"] == name][0]["rounds"] == 200


def test_one_builder_fed_from_two_threads_with_a_sink_does_not_deadlock():
    records = []
    session = roundup.RoundBuilder(on_record=records.append, on_ui=lambda e: None)

    def feed(prefix):
        for i in range(500):
            session.message(prefix)
            session.tool_call(f"{prefix}{i}", "x")

    threads = [threading.Thread(target=feed, args=(p,)) for p in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive()
    session.finish()
    assert sum(len(r["tool_calls"]) for r in records if r["type"] == "round") == 1000


def test_a_callback_calling_back_into_its_router_is_an_error_not_a_deadlock():
    router = None
    errors = []

    def sink(record):
        try:
            router.session("other").message("x")
        except RuntimeError as error:
            errors.append(str(error))

    router = roundup.Router(on_record=sink)
    router.session("s").message("hi")
    router.finish_all()
    assert errors and "called back into the same Router" in errors[0]


def test_a_checkpoint_restored_elsewhere_continues_the_run():
    first = roundup.RoundBuilder("s1")
    first.message("Looking")
    first.tool_call("t1", "bash")
    first.args_delta("t1", '{"cmd":"l')
    saved = first.checkpoint()
    assert isinstance(saved, bytes) and json.loads(saved)["version"] >= 1

    records = []
    second = roundup.RoundBuilder(on_record=records.append)
    second.restore(saved)
    assert second.session == "s1" or second.session is None
    second.args_delta("t1", 's"}')
    second.tool_result("t1", "a.txt")
    second.finish()
    call = records[0]["tool_calls"][0]
    assert (records[0]["message"], call["arguments"], call["result"]["content"]) == ("Looking", '{"cmd":"ls"}', "a.txt")
    assert records[0]["session"] == "s1"


@pytest.mark.parametrize(
    "data, message",
    [
        (b"not json", "corrupt"),
        (b'{"version": 999}', "version 999"),
        (b"", "corrupt"),
    ],
)
def test_a_bad_checkpoint_is_a_clear_error_and_changes_nothing(data, message):
    session = roundup.RoundBuilder()
    session.message("kept")
    with pytest.raises(roundup.CheckpointError, match=message):
        session.restore(data)
    assert session.open_round()["message"] == "kept"
    assert issubclass(roundup.CheckpointError, ValueError)


def test_a_router_evicts_idle_sessions_to_a_directory_and_restores_them(tmp_path):
    records = []
    router = roundup.Router(on_record=records.append, max_sessions=4, evict_dir=tmp_path)
    for i in range(50):
        router.session(f"s{i}").message(f"hello {i}")
    assert router.open_sessions <= 4 and len(router) == 50
    assert any(tmp_path.iterdir())
    router.session("s0").message(", again")
    assert router.finish_all() == 50
    rounds = {r["session"]: r["message"] for r in records if r["type"] == "round"}
    assert rounds["s0"] == "hello 0, again" and rounds["s49"] == "hello 49"


def test_a_session_context_closes_only_that_session():
    records = []
    with roundup.Router(on_record=records.append) as router:
        with router.session("a") as a:
            a.message("done")
        assert [r["session"] for r in records if r["type"] == "summary"] == ["a"]
        router.session("b").message("still open")
    assert [r["session"] for r in records if r["type"] == "summary"] == ["a", "b"]


def test_adapters_translate_events_into_ops_objects():
    acp = roundup.adapters.acp.Adapter()
    update = {"sessionId": "s1", "update": {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "ls", "status": "pending"}}
    assert acp.translate(update) == [{"op": "tool_call", "id": "t", "title": "ls", "session": "s1"}]
    # The same event as its JSON text.
    assert roundup.adapters.acp.translate(json.dumps(update)) == acp.translate(update)
    uagent = roundup.adapters.uagent.translate({"type": "text_delta", "text": "Hi", "at": "1970-01-01T00:00:02Z", "v": 1})
    assert uagent == [{"op": "message", "text": "Hi", "at_ms": 2000}]
    assert set(roundup.adapters.FORMATS) >= {"acp", "openai-chat", "claude-code"}
    assert roundup.adapters.openai_chat.name == "openai-chat"


def test_a_router_fed_a_protocol_makes_rounds():
    records = []
    router = roundup.Router(from_="acp", on_record=records.append)
    for text in ["Hel", "lo"]:
        router.feed({"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}})
    with pytest.raises(roundup.BadEventError, match="acp event"):
        router.feed("{not json")
    router.finish_all()
    assert [r["message"] for r in records if r["type"] == "round"] == ["Hello"]


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda s: s.tool_update("t", "x", "done"), ValueError, "'pending', 'in_progress'"),
        (lambda s: s.finish("done"), ValueError, "'completed', 'failed', 'canceled', 'interrupted'"),
        (lambda s: s.anomaly("weird", "x"), ValueError, "anomaly kind"),
        (lambda s: s.call({"op": "message"}), ValueError, "missing field `text`"),
        (lambda s: s.call({"op": "message", "text": {1, 2}}), TypeError, r'event\["text"\]: a set cannot be written as JSON'),
        (lambda s: s.tool_meta("t", {1: "x"}), TypeError, "a key is not a str"),
        (lambda s: s.token_usage(-1), OverflowError, "negative"),
        (lambda s: s.message(b"bytes"), TypeError, "argument 'text': 'bytes' object cannot be cast as 'str'"),
    ],
)
def test_bad_input_gets_a_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call(roundup.RoundBuilder())


def test_unknown_formats_are_named_with_the_known_ones():
    with pytest.raises(ValueError, match="is not an input format: ops, acp"):
        roundup.Router(from_="acpx")
    with pytest.raises(ValueError, match="is not an output format: records, ui"):
        roundup.replay([], emit="html")
    with pytest.raises(ValueError, match="not a history format"):
        roundup.export([], to="records")


def test_replay_streams_lazily_from_an_iterable():
    pulled = []

    def lines():
        for i in range(3):
            pulled.append(i)
            yield {"op": "message", "text": f"m{i}", "session": f"s{i}"}
            yield {"op": "finish", "reason": "canceled", "session": f"s{i}"}

    records = roundup.replay(lines())
    first = next(records)
    assert first["message"] == "m0" and pulled == [0]
    rest = list(records)
    assert [r["type"] for r in rest] == ["summary", "round", "summary", "round", "summary"]
    assert records.stats["sessions"] == 3


def test_bad_lines_are_reported_in_the_output_not_dropped():
    out = list(roundup.replay(['{"op":"message","text":"a"}', "not json", '{"op":"message"}']))
    bad = [r for r in out if r["type"] == "anomaly"]
    assert [b["detail"].split(":")[0] for b in bad] == ["line 2", "line 3"]


def test_export_writes_each_run_as_the_providers_history():
    ops = [
        {"op": "message", "text": "Checking."},
        {"op": "tool_call", "id": "t1", "title": "bash"},
        {"op": "args_snapshot", "id": "t1", "args": '{"cmd":"ls"}'},
        {"op": "tool_update", "id": "t1", "content": "a.txt", "status": "completed"},
        {"op": "finish", "reason": "interrupted"},
    ]
    [export] = list(roundup.export(iter(ops), to="openai-chat"))
    history = export["messages"]
    assert export["run"] == 0
    assert history[0]["role"] == "assistant" and history[0]["tool_calls"][0]["id"] == "t1"
    assert history[1] == {"role": "tool", "tool_call_id": "t1", "content": "a.txt"}


def test_replay_writes_each_run_as_opentelemetry_traces():
    ops = [
        {"op": "message", "text": "Checking.", "session": "s1", "at_ms": 1000},
        {"op": "tool_call", "id": "t1", "title": "ls", "name": "Bash", "session": "s1", "at_ms": 1100},
        {"op": "finish", "reason": "canceled", "session": "s1", "at_ms": 1500},
    ]
    [request] = list(roundup.replay(iter(ops), emit="otlp"))
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [s["name"] for s in spans] == ["invoke_agent", "chat", "execute_tool Bash"]
    assert spans[2]["parentSpanId"] == spans[1]["spanId"] and spans[1]["parentSpanId"] == spans[0]["spanId"]
    assert spans[2]["status"] == {"message": "no result: canceled", "code": 2}
    assert (spans[0]["startTimeUnixNano"], spans[0]["endTimeUnixNano"]) == ("1000000000", "1500000000")
    assert "Checking." not in json.dumps(request)
    [with_content] = list(roundup.replay(iter(ops), emit="otlp-content"))
    assert "Checking." in json.dumps(with_content)


def test_a_closed_replayer_reads_nothing_more():
    replayer = roundup.Replayer()
    replayer.feed('{"op":"message","text":"Hi"}\n')
    closed = replayer.close()
    assert [line["type"] for line in closed] == ["round", "summary"]
    assert replayer.close() == [], "a second close finishes nothing more"
    with pytest.raises(ValueError, match="feed after close"):
        replayer.feed('{"op":"message","text":"again"}\n')
    with pytest.raises(ValueError, match="feed_event after close"):
        replayer.feed_event({"op": "message", "text": "again"})


def test_the_namespace_holds_only_what_the_package_offers():
    public = {name for name in vars(roundup) if not name.startswith("_")}
    offered = set(roundup.__all__) - {"__version__"}
    assert public == offered, public ^ offered


def test_text_given_for_a_path_is_a_clear_error():
    text = '{"op":"message","text":"Hi"}\n{"op":"message","text":"there"}\n'
    with pytest.raises(ValueError, match="splitlines"):
        roundup.replay(text)
    rounds = [r for r in roundup.replay(text.splitlines()) if r["type"] == "round"]
    assert rounds[0]["message"] == "Hithere"


def test_a_ui_handler_that_raises_is_detached_after_raising_once():
    seen, records = [], []

    def broken(event):
        seen.append(event["event"])
        raise RuntimeError("the view is gone")

    session = roundup.RoundBuilder(on_record=records.append, on_ui=broken)
    with pytest.raises(RuntimeError, match="the view is gone"):
        session.message("Hi")
    session.message(" there")  # no exception: the handler is detached
    session.finish("completed")
    assert seen == ["run_start"], seen
    assert [r["type"] for r in records] == ["round", "summary"]
    assert records[0]["message"] == "Hi there"
