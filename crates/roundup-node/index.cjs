// roundup for Node.js: agent streams into rounds. The classes here wrap the
// native addon (roundup.node, built from the Rust crate by
// scripts/build.cjs); every rule runs in Rust. Records and events are
// plain objects, equal to JSON.parse of the lines the `roundup` command
// line writes. The types are in index.d.ts; the guide is docs/node.md.
"use strict";

const native = require("./roundup.node");

/** An error of roundup: bad input, an unknown name, a checkpoint it cannot
 * read. `code` says which (see index.d.ts). */
class RoundupError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.name = "RoundupError";
    this.code = code;
  }
}

/** The native addon's error as a RoundupError: its message starts with the
 * code in brackets; any other (an argument of the wrong type) is a
 * BAD_ARGUMENT. */
function wrap(error) {
  if (error instanceof RoundupError || !(error instanceof Error)) return error;
  const m = /^\[([A-Z_]+)\] ([\s\S]*)$/.exec(error.message);
  return m ? new RoundupError(m[1], m[2]) : new RoundupError("BAD_ARGUMENT", error.message, { cause: error });
}

function text(value, what) {
  if (typeof value !== "string") throw new RoundupError("BAD_ARGUMENT", `${what} must be a string, not ${describe(value)}`);
  return value;
}

function optionalText(value, what) {
  return value === undefined || value === null ? null : text(value, what);
}

/** A JSON value given as text, or a value to write as JSON. */
function json(value, what) {
  if (typeof value === "string") return value;
  if (value === undefined) throw new RoundupError("BAD_ARGUMENT", `${what} is missing`);
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw new RoundupError("BAD_ARGUMENT", `${what} cannot be written as JSON: ${error.message}`, { cause: error });
  }
}

function describe(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
}

function callback(fn, what) {
  if (fn === undefined || fn === null) return null;
  if (typeof fn !== "function") throw new RoundupError("BAD_ARGUMENT", `${what} must be a function, not ${describe(fn)}`);
  return fn;
}

/**
 * Hands what roundup delivered during a call to the callbacks, in order.
 * A callback that throws does not stop the others: its error is thrown
 * from the call that delivered it, once everything is delivered (roundup
 * has applied the call by then). A later error of the same call is
 * reported as a process warning. A UI handler that throws or returns
 * `false` gets no more events. A callback that calls back into the same
 * builder or router has that call's output delivered after the current
 * one's, in order.
 */
class Delivery {
  constructor(stopUi, onRecord, onUi) {
    this.stopNative = stopUi;
    this.onRecord = onRecord;
    this.onUi = onUi;
    this.uiStopped = false;
    this.busy = false;
    this.queue = [];
  }

  deliver(out) {
    if (out === null || out === undefined) return;
    const items = JSON.parse(out);
    if (this.busy) {
      this.queue.push(items);
      return;
    }
    this.busy = true;
    let first;
    try {
      for (let batch = items; batch !== undefined; batch = this.queue.shift()) {
        for (let i = 0; i < batch.length; i += 2) {
          const value = batch[i + 1];
          if (batch[i] === 0) {
            try {
              this.onRecord(value);
            } catch (error) {
              first = this.keep(first, error);
            }
          } else if (!this.uiStopped) {
            try {
              if (this.onUi(value) === false) this.stopUi();
            } catch (error) {
              this.stopUi();
              first = this.keep(first, error);
            }
          }
        }
      }
    } finally {
      this.busy = false;
    }
    if (first !== undefined) throw first.error;
  }

  keep(first, error) {
    if (first === undefined) return { error };
    process.emitWarning(error instanceof Error ? error : new Error(String(error)), {
      type: "RoundupCallbackError",
      detail: "a second callback threw during one call; the first error is thrown from the call",
    });
    return first;
  }

  stopUi() {
    this.uiStopped = true;
    this.stopNative();
  }
}

const ROUTED = Symbol("roundup.routed");
const REASONS = "the finish reason";

/** One session's aggregation: feed it the calls of the stream, get rounds. */
class RoundBuilder {
  #native;
  #delivery;

  constructor(options = {}) {
    if (options === null || typeof options !== "object") throw new RoundupError("BAD_ARGUMENT", `options must be an object, not ${describe(options)}`);
    if (options[ROUTED]) {
      this.#native = options[ROUTED].native;
      this.#delivery = options[ROUTED].delivery;
      return;
    }
    const session = optionalText(options.session, "session");
    const onRecord = callback(options.onRecord, "onRecord");
    const onUi = callback(options.onUi, "onUi");
    this.#native = native.sessionNew(session, onRecord !== null, onUi !== null, options.retainRounds !== false);
    const own = this.#native;
    this.#delivery = new Delivery(() => native.sessionStopUi(own), onRecord, onUi);
  }

  #run(out) {
    this.#delivery.deliver(out);
  }

  /** The session's name; null for the session without one. */
  get session() {
    return native.sessionSession(this.#native) ?? null;
  }

  message(text_) {
    this.#run(call(() => native.sessionMessage(this.#native, text(text_, "text"))));
  }

  thought(text_) {
    this.#run(call(() => native.sessionThought(this.#native, text(text_, "text"))));
  }

  toolCall(id, title, name) {
    this.#run(call(() => native.sessionToolCall(this.#native, text(id, "id"), optionalText(title, "title"), optionalText(name, "name"))));
  }

  toolUpdate(id, content, status = "in_progress") {
    this.#run(call(() => native.sessionToolUpdate(this.#native, text(id, "id"), text(content, "content"), text(status, "status"))));
  }

  argsDelta(id, delta) {
    this.#run(call(() => native.sessionArgsDelta(this.#native, text(id, "id"), text(delta, "delta"))));
  }

  argsSnapshot(id, args) {
    this.#run(call(() => native.sessionArgsSnapshot(this.#native, text(id, "id"), json(args, "args"))));
  }

  toolResult(id, content, options) {
    this.#run(call(() => native.sessionToolResult(this.#native, text(id, "id"), text(content, "content"), options?.failed === true)));
  }

  toolOutput(id, content, options) {
    this.#run(call(() => native.sessionToolOutput(this.#native, text(id, "id"), text(content, "content"), options?.replace === true)));
  }

  tokenUsage(total) {
    if (typeof total !== "number") throw new RoundupError("BAD_ARGUMENT", `total must be a number, not ${describe(total)}`);
    this.#run(call(() => native.sessionTokenUsage(this.#native, total)));
  }

  start() {
    this.#run(call(() => native.sessionStart(this.#native)));
  }

  finish(reason = "interrupted") {
    this.#run(call(() => native.sessionFinish(this.#native, text(reason, REASONS))));
  }

  toolMeta(id, meta) {
    this.#run(call(() => native.sessionToolMeta(this.#native, text(id, "id"), json(meta, "meta"))));
  }

  runMeta(meta) {
    this.#run(call(() => native.sessionRunMeta(this.#native, json(meta, "meta"))));
  }

  roundMeta(meta) {
    this.#run(call(() => native.sessionRoundMeta(this.#native, json(meta, "meta"))));
  }

  anomaly(kind, detail, id) {
    this.#run(call(() => native.sessionAnomaly(this.#native, text(kind, "kind"), text(detail, "detail"), optionalText(id, "id"))));
  }

  /** One call as its ops object (`{ op: "message", text: "Hi" }`, the
   * contract's §3); a `session` key in it is ignored here. */
  call(op) {
    this.#run(call(() => native.sessionCall(this.#native, json(op, "op"))));
  }

  /** Finishes the open run, if one is open (a session of a router is
   * closed: finished and forgotten). */
  close(reason = "interrupted") {
    this.#run(call(() => native.sessionFinishIfRunning(this.#native, text(reason, REASONS))));
  }

  /** The rounds closed so far (with `retainRounds`), as round records. */
  get rounds() {
    return JSON.parse(call(() => native.sessionRounds(this.#native)));
  }

  /** The round being built, as a reconnecting UI draws it; null when no
   * round is open. */
  openRound() {
    const out = call(() => native.sessionOpenRound(this.#native));
    return out === null ? null : JSON.parse(out);
  }

  /** The current run's summary record. */
  summary() {
    return JSON.parse(call(() => native.sessionSummary(this.#native)));
  }

  /** The run being built or last finished, counted from 0. */
  get run() {
    return call(() => native.sessionRun(this.#native));
  }

  /** Whether the current run has finished. */
  get finished() {
    return call(() => native.sessionFinished(this.#native));
  }

  /** The session's state as bytes: what `restore` takes, in this process
   * or another. Retained rounds go in only with `{ history: true }`. */
  checkpoint(options) {
    return call(() => native.sessionCheckpoint(this.#native, options?.history === true));
  }

  /** Continues from a checkpoint's bytes; throws a RoundupError with code
   * BAD_CHECKPOINT (and changes nothing) when they are not a checkpoint
   * this build reads. */
  restore(checkpoint) {
    if (!(checkpoint instanceof Uint8Array)) throw new RoundupError("BAD_ARGUMENT", `a checkpoint is a Uint8Array, not ${describe(checkpoint)}`);
    call(() => native.sessionRestore(this.#native, checkpoint));
  }
}

/** Runs a native call, its error as a RoundupError. */
function call(f) {
  try {
    return f();
  } catch (error) {
    throw wrap(error);
  }
}

/** Many sessions, one builder each, made on first sight. */
class Router {
  #native;
  #delivery;

  constructor(options = {}) {
    if (options === null || typeof options !== "object") throw new RoundupError("BAD_ARGUMENT", `options must be an object, not ${describe(options)}`);
    const onRecord = callback(options.onRecord, "onRecord");
    const onUi = callback(options.onUi, "onUi");
    this.#native = call(() => native.routerNew({
      from: optionalText(options.from, "from") ?? undefined,
      records: onRecord !== null,
      ui: onUi !== null,
      retainRounds: options.retainRounds === true,
      maxSessions: count(options.maxSessions, "maxSessions"),
      evictDir: optionalText(options.evictDir, "evictDir") ?? undefined,
    }));
    const router = this.#native;
    this.#delivery = new Delivery(() => native.routerStopUi(router), onRecord, onUi);
  }

  /** The input format `feed` reads, if one was given. */
  get from() {
    return native.routerFrom(this.#native) ?? null;
  }

  /** The session of that name (null or absent: the session without a
   * name), made on its first call. */
  session(name = null) {
    const session = call(() => native.routerSession(this.#native, optionalText(name, "name")));
    return new RoundBuilder({ [ROUTED]: { native: session, delivery: this.#delivery } });
  }

  /** One call as its ops object; its `session` key addresses it. */
  call(op) {
    this.#delivery.deliver(call(() => native.routerCall(this.#native, json(op, "op"))));
  }

  /** One event of the router's input format: a parsed event (an object),
   * or its JSON text (a string or bytes). An event that cannot be read
   * throws a RoundupError with code BAD_EVENT and changes nothing. */
  feed(event) {
    let out;
    try {
      if (event instanceof Uint8Array) out = native.routerFeed(this.#native, event);
      else if (event instanceof ArrayBuffer) out = native.routerFeed(this.#native, new Uint8Array(event));
      else out = native.routerFeedText(this.#native, json(event, "event"));
    } catch (error) {
      this.#delivery.deliver(native.routerTake(this.#native));
      throw wrap(error);
    }
    this.#delivery.deliver(out);
  }

  /** Closes a session: its open run finishes and the session is forgotten. */
  close(name, reason = "interrupted") {
    this.#delivery.deliver(call(() => native.routerClose(this.#native, optionalText(name, "name"), text(reason, REASONS))));
  }

  /** End of the stream: the adapter hands over what it still holds, then
   * every session's open run finishes, in order of first appearance.
   * Returns how many sessions there were. */
  finishAll(reason = "interrupted") {
    const sessions = call(() => native.routerFinishAll(this.#native, text(reason, REASONS)));
    this.#delivery.deliver(native.routerTake(this.#native));
    return sessions;
  }

  /** Sessions seen and not closed (open or evicted). */
  get size() {
    return native.routerSessions(this.#native);
  }

  /** Sessions held in memory (the others are evicted as checkpoints). */
  get openSessions() {
    return native.routerOpenSessions(this.#native);
  }
}

function count(value, what) {
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || value < 1 || value > 0xffffffff) throw new RoundupError("BAD_ARGUMENT", `${what} must be a whole number from 1, not ${value}`);
  return value;
}

function replayOptions(options) {
  if (options === null || typeof options !== "object") throw new RoundupError("BAD_ARGUMENT", `options must be an object, not ${describe(options)}`);
  return {
    from: optionalText(options.from, "from") ?? undefined,
    emit: optionalText(options.emit, "emit") ?? undefined,
    sse: options.sse === true,
    maxSessions: count(options.maxSessions, "maxSessions"),
    evictDir: optionalText(options.evictDir, "evictDir") ?? undefined,
  };
}

/** The output values in `out`: each JSON line parsed, or each SSE event's
 * text. */
function values(out, sse, into) {
  if (out === "") return into;
  if (sse) {
    let at = 0;
    while (at < out.length) {
      const end = out.indexOf("\n\n", at);
      const next = end < 0 ? out.length : end + 2;
      into.push(out.slice(at, next));
      at = next;
    }
    return into;
  }
  // JSON text holds no raw line break: the lines, joined by commas, are
  // the elements of one array, parsed at once.
  const body = out.endsWith("\n") ? out.slice(0, -1) : out;
  const parsed = JSON.parse(`[${body.replaceAll("\n", ",")}]`);
  for (const value of parsed) into.push(value);
  return into;
}

/** A replay driven by its caller: feed it input, take its output. The
 * output is the command line's (`roundup replay`), value for value,
 * however the input is cut. */
class Replayer {
  #native;
  #sse;

  constructor(options = {}) {
    const o = replayOptions(options);
    this.#native = call(() => new native.NativeReplayer(o));
    this.#sse = o.sse;
  }

  /** A piece of input (bytes or text, lines cut anywhere); returns the
   * output it completed. */
  feed(chunk) {
    const out = call(() => {
      if (typeof chunk === "string") return this.#native.feedText(chunk);
      if (chunk instanceof Uint8Array) return this.#native.feed(chunk);
      if (chunk instanceof ArrayBuffer) return this.#native.feed(new Uint8Array(chunk));
      throw new RoundupError("BAD_ARGUMENT", `feed takes a string or bytes, not ${describe(chunk)}; a parsed event goes to feedEvent`);
    });
    return values(out, this.#sse, []);
  }

  /** One whole event (a parsed object, or the JSON text of one); returns
   * the output it completed. */
  feedEvent(event) {
    return values(call(() => this.#native.feedPayload(json(event, "event"))), this.#sse, []);
  }

  /** The input ended: every open run finishes; returns the rest of the
   * output. A second end returns nothing more. */
  end() {
    const out = values(call(() => this.#native.endInput()), this.#sse, []);
    for (let more = call(() => this.#native.finishNext()); more !== null; more = call(() => this.#native.finishNext())) values(more, this.#sse, out);
    return out;
  }

  /** The input ended: the rest of the output, one session at a time. */
  *endIncrementally() {
    yield* values(call(() => this.#native.endInput()), this.#sse, []);
    for (let more = call(() => this.#native.finishNext()); more !== null; more = call(() => this.#native.finishNext())) yield* values(more, this.#sse, []);
  }

  /** What was read so far: lines, badLines, payloads, bytes, sessions
   * (counted at the end), format. */
  get stats() {
    return this.#native.stats();
  }
}

/** The pieces of `input`: a string or bytes whole, or what an async or sync
 * iterable, a web ReadableStream or a Node stream gives. */
async function* pieces(input) {
  if (typeof input === "string" || input instanceof Uint8Array || input instanceof ArrayBuffer) {
    yield input;
    return;
  }
  if (input !== null && typeof input === "object") {
    if (typeof input[Symbol.asyncIterator] === "function") {
      yield* input;
      return;
    }
    if (typeof input.getReader === "function") {
      const reader = input.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          yield value;
        }
      } finally {
        reader.releaseLock();
      }
    }
    if (typeof input[Symbol.iterator] === "function") {
      yield* input;
      return;
    }
  }
  throw new RoundupError("BAD_ARGUMENT", `replay reads a string, bytes, an iterable, a ReadableStream or a Node stream, not ${describe(input)}`);
}

/** Feeds one piece: text or bytes as they come, any other value as one
 * parsed event. */
function feedPiece(replayer, piece) {
  if (typeof piece === "string" || piece instanceof Uint8Array || piece instanceof ArrayBuffer) return replayer.feed(piece);
  return replayer.feedEvent(piece);
}

/** Replays `input` (a recorded or live stream of any input format), giving
 * the output values of `emit` (records by default) as they complete. */
function replay(input, options = {}) {
  const replayer = new Replayer(options);
  async function* run() {
    for await (const piece of pieces(input)) yield* feedPiece(replayer, piece);
    yield* replayer.endIncrementally();
  }
  const iterator = run();
  Object.defineProperty(iterator, "stats", { get: () => replayer.stats });
  return iterator;
}

/** `replay` of a whole input at hand (a string or bytes), at once. */
function replaySync(input, options = {}) {
  const replayer = new Replayer(options);
  const out = feedPiece(replayer, input);
  for (const value of replayer.end()) out.push(value);
  return out;
}

/** `replay` as a TransformStream, for `pipeThrough`: bytes or text in, the
 * output values out. */
function replayStream(options = {}) {
  const replayer = new Replayer(options);
  return new TransformStream({
    transform(piece, controller) {
      for (const value of feedPiece(replayer, piece)) controller.enqueue(value);
    },
    flush(controller) {
      for (const value of replayer.endIncrementally()) controller.enqueue(value);
    },
  });
}

/** The translator of one stream of a protocol: its events in, the calls
 * they mean out, as ops objects (`{ op: "message", text: "Hi", session:
 * "s1" }`, the contract's §3) that any builder or router takes. */
class Adapter {
  #native;

  constructor(format) {
    this.#native = call(() => native.adapterNew(text(format, "format")));
  }

  /** The format's name. */
  get format() {
    return native.adapterFormat(this.#native);
  }

  /** The calls one event means (a parsed event, its JSON text or bytes).
   * An event that cannot be read throws BAD_EVENT; one that reads but
   * means nothing roundup knows comes back as an `anomaly` call. */
  translate(event) {
    return JSON.parse(
      call(() => {
        if (event instanceof Uint8Array) return native.adapterTranslate(this.#native, event);
        if (event instanceof ArrayBuffer) return native.adapterTranslate(this.#native, new Uint8Array(event));
        return native.adapterTranslateText(this.#native, json(event, "event"));
      }),
    );
  }

  /** The stream ended: the calls for what the adapter still holds. */
  end() {
    return JSON.parse(call(() => native.adapterEnd(this.#native)));
  }
}

/** The input formats: name and description, in detection order. */
function inputFormats() {
  return native.inputFormats();
}

/** The output formats: name and description; the first is the default. */
function outputFormats() {
  return native.outputFormats();
}

module.exports = {
  Adapter,
  RoundBuilder,
  Router,
  Replayer,
  RoundupError,
  replay,
  replaySync,
  replayStream,
  inputFormats,
  outputFormats,
  version: native.version(),
};
// `import roundup from "roundup"` compiled to CommonJS reads `.default`.
Object.defineProperty(module.exports, "default", { value: module.exports, enumerable: false });
