/**
 * Reading a checkpoint back from a store's bytes. Every store keeps checkpoints as data it did not
 * write itself a moment ago: a disk fault, a restore from an old backup or an operator's hand edit
 * can leave a record that is not JSON, or JSON of the wrong shape. A bare `JSON.parse` then throws
 * a SyntaxError (or, worse, hands the replay an `entries` that is not a list), which the worker
 * cannot tell from a store outage and retries forever. These readers turn both into
 * CheckpointUnreadableError, naming the run and the checkpoint, so the worker can resume from an
 * older checkpoint or fail the run once.
 *
 * Only the shape is checked here. Whether the contents are true (signature, hash chain, sealed
 * entries) is openCheckpoint's job, after this.
 */
import type { Checkpoint, CheckpointSummary } from './contracts/checkpoints.js';
import { CheckpointUnreadableError } from './errors.js';

const STATUSES: ReadonlySet<string> = new Set(['running', 'suspended', 'completed', 'failed', 'cancelled']);

/** Parses a stored checkpoint's JSON text; CheckpointUnreadableError when it is not a checkpoint. */
export function parseStoredCheckpoint(text: string, runId: string, seq?: number): Checkpoint {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CheckpointUnreadableError(
      runId,
      seq,
      `its stored record is not JSON (${(err as Error).message})`,
      {
        cause: err,
      },
    );
  }
  return checkStoredCheckpoint(value, runId, seq);
}

/**
 * Checks that `value` has a checkpoint's shape and returns it as one. `seq` is what the store knows
 * of the record's sequence number apart from its body (a summary, a column), for the error.
 */
export function checkStoredCheckpoint(value: unknown, runId: string, seq?: number): Checkpoint {
  const record = value as Record<string, unknown>;
  const named = typeof record?.seq === 'number' && Number.isInteger(record.seq) ? record.seq : seq;
  const fail = (detail: string): never => {
    throw new CheckpointUnreadableError(runId, named, detail);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail(`its stored record is ${describe(value)}, not a checkpoint object`);
  if (typeof record.runId !== 'string') fail(`its runId is ${describe(record.runId)}, not a string`);
  for (const field of ['seq', 'epoch', 'journalPosition', 'schemaVersion'] as const) {
    const n = record[field];
    if (!(typeof n === 'number' && Number.isInteger(n) && n >= 0))
      fail(`its ${field} is ${describe(n)}, not a whole number`);
  }
  if (!(typeof record.createdAt === 'number' && Number.isFinite(record.createdAt)))
    fail(`its createdAt is ${describe(record.createdAt)}, not a time`);
  if (typeof record.status !== 'string' || !STATUSES.has(record.status))
    fail(`its status is ${describe(record.status)}, not one of ${[...STATUSES].join(', ')}`);
  if (!Array.isArray(record.entries)) fail(`its entries field is ${describe(record.entries)}, not a list`);
  (record.entries as unknown[]).forEach((entry, i) => {
    const e = entry as Record<string, unknown>;
    if (
      typeof entry !== 'object' ||
      entry === null ||
      typeof e.type !== 'string' ||
      typeof e.epoch !== 'number'
    )
      fail(`its entry #${i} is ${describe(entry)}, not a journal entry (an object with a type and an epoch)`);
  });
  return value as Checkpoint;
}

/** Parses one stored summary (what checkpoints.list returns); `index` is its place in the list. */
export function parseStoredSummary(text: string, runId: string, index: number): CheckpointSummary {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CheckpointUnreadableError(
      runId,
      undefined,
      `the summary of its checkpoint #${index + 1} in the list is not JSON (${(err as Error).message})`,
      { cause: err },
    );
  }
  const s = value as Record<string, unknown>;
  for (const field of ['seq', 'epoch', 'journalPosition', 'schemaVersion', 'createdAt', 'size'] as const) {
    if (typeof s?.[field] !== 'number')
      throw new CheckpointUnreadableError(
        runId,
        typeof s?.seq === 'number' ? s.seq : undefined,
        `the summary of its checkpoint #${index + 1} in the list has ${field} ${describe(s?.[field])}, not a number`,
      );
  }
  return value as CheckpointSummary;
}

/** A short description of a value for an error message (never the whole value: it may be large). */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return value.length > 40 ? 'a long string' : JSON.stringify(value);
  if (typeof value === 'object') return 'an object';
  return typeof value === 'undefined' ? 'missing' : `${typeof value} ${String(value)}`;
}
