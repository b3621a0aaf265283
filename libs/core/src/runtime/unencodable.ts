/**
 * Why a value has no JSON form, worked out only after JSON.stringify refused it. The hot path
 * encodes once and never walks a value; this walk runs on the error path alone, to name where the
 * problem sits and what it is (`a BigInt at $.amount`, `a circular reference at $.customer.self`,
 * `toJSON threw at $.when: ...`) and which entry or message held it.
 *
 * The walk follows JSON.stringify's order (toJSON first, then array items by index, then own
 * enumerable string keys), so it names the problem stringify met first. It keeps its own stack
 * instead of recursing: a value nested too deeply for stringify must not overflow the walk too.
 */
import { UnencodableValueError } from '../author/errors.js';
import type { JournalEntry } from '../shared/journal.js';
import type { RunMessage } from './messages.js';

/** Paths longer than this are cut: the message must stay readable whatever the value's depth. */
const MAX_PATH_CHARS = 200;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

type Frame =
  | { kind: 'visit'; holder: unknown; key: string; path: string; read: boolean; value?: unknown }
  | { kind: 'leave'; obj: object };

/**
 * The first thing in `value` that JSON.stringify cannot encode, with its path (`$` is the value
 * itself), or undefined when the walk finds nothing (stringify then failed for a reason the walk
 * does not model, such as a value nested too deeply).
 */
export function findUnencodable(value: unknown): string | undefined {
  const ancestors = new Map<object, string>();
  const stack: Frame[] = [{ kind: 'visit', holder: undefined, key: '', path: '$', read: false, value }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    if (frame.kind === 'leave') {
      ancestors.delete(frame.obj);
      continue;
    }
    const { path } = frame;
    let current: unknown;
    if (frame.read) {
      try {
        current = (frame.holder as Record<string, unknown>)[frame.key];
      } catch (err) {
        return `reading ${cut(path)} threw ${describe(err)}`;
      }
    } else current = frame.value;
    if ((typeof current === 'object' && current !== null) || typeof current === 'bigint') {
      let toJSON: unknown;
      try {
        toJSON = (current as { toJSON?: unknown }).toJSON;
      } catch (err) {
        return `reading toJSON at ${cut(path)} threw ${describe(err)}`;
      }
      if (typeof toJSON === 'function') {
        try {
          current = (toJSON as (key: string) => unknown).call(current, frame.key);
        } catch (err) {
          return `toJSON threw at ${cut(path)}: ${describe(err)}`;
        }
      }
    }
    if (typeof current === 'bigint') return `a BigInt at ${cut(path)}`;
    if (typeof current !== 'object' || current === null) continue;
    if (Object.prototype.toString.call(current) === '[object BigInt]') return `a BigInt at ${cut(path)}`;
    const seenAt = ancestors.get(current);
    if (seenAt !== undefined) return `a circular reference at ${cut(path)} (back to ${cut(seenAt)})`;
    ancestors.set(current, path);
    stack.push({ kind: 'leave', obj: current });
    let keys: string[];
    try {
      keys = Array.isArray(current)
        ? Array.from({ length: current.length }, (_, i) => String(i))
        : Object.keys(current);
    } catch (err) {
      return `listing the members of ${cut(path)} threw ${describe(err)}`;
    }
    const isArray = Array.isArray(current);
    // Pushed last to first, so they are visited first to last, as stringify does.
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      stack.push({ kind: 'visit', holder: current, key, path: childPath(path, key, isArray), read: true });
    }
  }
  return undefined;
}

/** The error for `value` (named by `what`) that JSON.stringify refused with `cause`. */
export function unencodableValue(what: string, value: unknown, cause: unknown): UnencodableValueError {
  return new UnencodableValueError(what, findUnencodable(value) ?? stringifyFailure(cause), { cause });
}

/** The error for a batch of journal entries that JSON.stringify refused, naming the entry at fault. */
export function unencodableEntries(entries: readonly JournalEntry[], cause: unknown): UnencodableValueError {
  for (const entry of entries) {
    const { what, value } = carriedValue(entry);
    const problem = findUnencodable(value);
    if (problem !== undefined) return new UnencodableValueError(what, problem, { cause });
  }
  const what =
    entries.length === 1 ? carriedValue(entries[0]!).what : `journal record of ${entries.length} entries`;
  return new UnencodableValueError(what, stringifyFailure(cause), { cause });
}

/** The error for a run message that JSON.stringify refused, naming the input or payload. */
export function unencodableMessage(message: RunMessage, cause: unknown): UnencodableValueError {
  switch (message.kind) {
    case 'start':
      return unencodableValue(
        `input of run ${message.runId} (workflow ${message.workflow}@${message.version})`,
        message.input,
        cause,
      );
    case 'signal':
      return unencodableValue(
        `payload of signal '${message.name}' to run ${message.runId}`,
        message.payload,
        cause,
      );
    default:
      return unencodableValue(`${message.kind} message of run ${message.runId}`, message, cause);
  }
}

/** The value an entry carries for the workflow, and how errors name it. */
function carriedValue(entry: JournalEntry): { what: string; value: unknown } {
  switch (entry.type) {
    case 'ActivityCompleted':
      return {
        what: `${entry.reconciled === true ? 'reconciled ' : ''}result of activity ${entry.name} (step #${entry.seq})`,
        value: entry.result,
      };
    case 'RunCompleted':
      return { what: 'result of the workflow', value: entry.result };
    case 'SignalReceived':
      return { what: `payload of signal '${entry.name}' (step #${entry.seq})`, value: entry.payload };
    case 'ValueRecorded':
      return { what: `recorded ${entry.name} value (step #${entry.seq})`, value: entry.value };
    case 'UpdateAccepted':
      return { what: `arguments of update '${entry.name}' (id ${entry.updateId})`, value: entry.args };
    case 'UpdateCompleted':
      return { what: `result of update '${entry.name}' (id ${entry.updateId})`, value: entry.result };
    case 'PromiseCompleted':
      return { what: `value of durable promise (step #${entry.seq})`, value: entry.value };
    case 'AttributesSet':
      return { what: `search attributes (step #${entry.seq})`, value: entry.attributes };
    default:
      return { what: `${entry.type} journal entry`, value: entry };
  }
}

function childPath(path: string, key: string, index: boolean): string {
  if (path.length > MAX_PATH_CHARS) return path;
  if (index) return `${path}[${key}]`;
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function cut(path: string): string {
  return path.length > MAX_PATH_CHARS ? `${path.slice(0, MAX_PATH_CHARS)}…` : path;
}

function stringifyFailure(cause: unknown): string {
  return cause instanceof RangeError
    ? `it is nested too deeply for JSON (${describe(cause)})`
    : `JSON.stringify threw ${describe(cause)}`;
}

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  try {
    return String(err);
  } catch {
    return 'a value that cannot be shown';
  }
}
