// The declarations of index.d.ts, read as data: each interface and type
// alias, so that the tests can hold the records and events roundup writes
// against them key by key. It reads the small subset of TypeScript that
// index.d.ts uses for its JSON types (interfaces, unions, literals,
// arrays, inline object types, index signatures).

import { readFileSync } from "node:fs";

/** Splits `text` at `sep` where no bracket, brace, paren or backtick is open. */
function splitTop(text, sep) {
  const out = [];
  let depth = 0;
  let tick = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "`") tick = !tick;
    else if (!tick && "{[(".includes(c)) depth += 1;
    else if (!tick && "}])".includes(c)) depth -= 1;
    else if (!tick && depth === 0 && c === sep) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.map((s) => s.trim()).filter((s) => s !== "");
}

function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

/** An object type's members: `{ key: { optional, type } }` and the value
 * type of its index signature, if any. */
function members(body) {
  const fields = new Map();
  let index = null;
  for (const member of splitTop(stripComments(body), ";")) {
    const sig = /^\[\w+: string\]: ([\s\S]+)$/.exec(member);
    if (sig) {
      index = sig[1].trim();
      continue;
    }
    const m = /^(\w+|"[^"]+")(\?)?: ([\s\S]+)$/.exec(member);
    // A method or a readonly property: not a JSON type's member.
    if (!m) return { fields, index, unreadable: member };
    fields.set(m[1].replace(/^"|"$/g, ""), { optional: m[2] === "?", type: m[3].trim() });
  }
  return { fields, index };
}

/** The named JSON types of a declaration file. */
export function declarations(path) {
  const text = stripComments(readFileSync(path, "utf8"));
  const types = new Map();
  for (const m of text.matchAll(/export interface (\w+) \{([\s\S]*?)\n\}/g)) types.set(m[1], { object: members(m[2]), name: m[1] });
  for (const m of text.matchAll(/export type (\w+)(?:<[^>]*>)? =([\s\S]*?);\n/g)) types.set(m[1], { alias: m[2].trim(), name: m[1] });
  return types;
}

/**
 * Holds JSON values against the declarations: `check(value, "Round")`
 * returns what does not fit (or null), and marks the keys it saw, so that
 * `unseen()` lists the declared keys that no value had.
 */
export class Checker {
  constructor(types) {
    this.types = types;
    this.seen = new Set();
  }

  check(value, type, path = "$") {
    return this.#check(value, type.trim(), path, true);
  }

  /** Every declared key of these object types (and of the inline object
   * types of these aliases), as `Type.key`, that no value had. */
  unseen(names) {
    const out = [];
    for (const name of names) {
      const declared = this.types.get(name);
      if (declared === undefined) throw new Error(`no type ${name}`);
      const objects = declared.object ? [[name, declared.object]] : this.#inline(name, declared.alias);
      for (const [id, object] of objects) for (const key of object.fields.keys()) if (!this.seen.has(`${id}.${key}`)) out.push(`${id}.${key}`);
    }
    return out;
  }

  #inline(name, alias) {
    return splitTop(alias, "|").filter((t) => t.startsWith("{")).map((t) => [`${name}{${t}}`, members(t.slice(1, -1))]);
  }

  #check(value, type, path, mark) {
    const alternatives = splitTop(type, "|");
    if (alternatives.length > 1) {
      for (const alternative of alternatives) {
        if (this.#check(value, alternative, path, false) === null) return mark ? this.#check(value, alternative, path, true) : null;
      }
      return `${path}: ${JSON.stringify(value)?.slice(0, 200)} is none of ${type.slice(0, 200)}`;
    }
    if (type.startsWith("(") && type.endsWith(")")) return this.#check(value, type.slice(1, -1), path, mark);
    if (type.endsWith("[]")) {
      if (!Array.isArray(value)) return `${path}: not an array`;
      for (const [i, item] of value.entries()) {
        const error = this.#check(item, type.slice(0, -2), `${path}[${i}]`, mark);
        if (error) return error;
      }
      return null;
    }
    if (type === "unknown" || type === "any") return null;
    if (type === "string" || type === "number" || type === "boolean") return typeof value === type ? null : `${path}: ${JSON.stringify(value)} is not a ${type}`;
    if (type === "null") return value === null ? null : `${path}: not null`;
    if (type.startsWith('"')) return value === JSON.parse(type) ? null : `${path}: ${JSON.stringify(value)} is not ${type}`;
    if (type.startsWith("`")) {
      const pattern = new RegExp(`^${type.slice(1, -1).replace(/\$\{string\}/g, "(.*)")}$`);
      return typeof value === "string" && pattern.test(value) ? null : `${path}: ${JSON.stringify(value)} is not ${type}`;
    }
    if (type.startsWith("{")) return this.#object(value, members(type.slice(1, -1)), path, mark, null);
    const declared = this.types.get(type);
    if (declared === undefined) throw new Error(`index.d.ts: no type ${type}`);
    if (declared.object) return this.#object(value, declared.object, path, mark, type);
    // An alias: its inline object alternatives are identified for unseen().
    const alternatives2 = splitTop(declared.alias, "|");
    for (const alternative of alternatives2) {
      if (this.#check(value, alternative, path, false) === null) {
        if (mark && alternative.startsWith("{")) return this.#object(value, members(alternative.slice(1, -1)), path, true, `${type}{${alternative}}`);
        return mark ? this.#check(value, alternative, path, true) : null;
      }
    }
    return `${path}: ${JSON.stringify(value)?.slice(0, 200)} is not a ${type}`;
  }

  #object(value, object, path, mark, id) {
    if (object.unreadable) throw new Error(`index.d.ts: ${id} is not a JSON type (${object.unreadable})`);
    if (value === null || typeof value !== "object" || Array.isArray(value)) return `${path}: not an object`;
    for (const [key, field] of object.fields) {
      if (!(key in value)) {
        if (field.optional) continue;
        return `${path}: no ${key}`;
      }
      const error = this.#check(value[key], field.type, `${path}.${key}`, mark);
      if (error) return error;
      if (mark && id !== null) this.seen.add(`${id}.${key}`);
    }
    for (const key of Object.keys(value)) {
      if (object.fields.has(key)) continue;
      if (object.index === null) return `${path}: ${key} is not declared`;
      const error = this.#check(value[key], object.index, `${path}.${key}`, mark);
      if (error) return error;
    }
    return null;
  }
}
