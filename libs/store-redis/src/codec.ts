/**
 * How values are stored: JSON strings that Lua never decodes (its cjson rounds numbers), so what
 * a caller stores is exactly what the next caller reads. Encoding on the way in and decoding on
 * the way out also means no caller ever holds a reference into the store.
 */
import type { Checkpoint, InboxSignal, RunRecord, RunStatus } from '@baton/core/adapter';
import { summarizeCheckpoint } from '@baton/core/adapter';
import { redisCommandFailed } from './errors.js';
import { readStoredAttribute } from './attributes.js';

/** JSON never produces an empty string, so it stands for `undefined`. */
const UNDEFINED = '';

export function encodeValue(value: unknown): string {
  return value === undefined ? UNDEFINED : JSON.stringify(value);
}

export function decodeValue(text: string): unknown {
  return text === UNDEFINED ? undefined : JSON.parse(text);
}

/** A checkpoint as stored, with the summary checkpoints.list returns (size: encoded bytes). */
export function encodeCheckpoint(checkpoint: Checkpoint): { json: string; summaryJson: string } {
  const json = JSON.stringify(checkpoint);
  const summary = summarizeCheckpoint(checkpoint, Buffer.byteLength(json, 'utf8'));
  return { json, summaryJson: JSON.stringify(summary) };
}

/** The part of an inbox entry TypeScript writes; Lua prefixes it with the arrival time. */
export function encodeInboxEntry(signal: Omit<InboxSignal, 'receivedAt'>): string {
  return JSON.stringify({ signalId: signal.signalId, name: signal.name, payload: signal.payload });
}

export function decodeInboxEntry(stored: string): InboxSignal {
  const bar = stored.indexOf('|');
  const entry = JSON.parse(stored.slice(bar + 1)) as Omit<InboxSignal, 'receivedAt'>;
  return {
    signalId: entry.signalId,
    name: entry.name,
    payload: entry.payload,
    receivedAt: Number(stored.slice(0, bar)),
  };
}

/** A run record from its hash, given as HGETALL returns it (an object, or a flat pair list). */
export function decodeRunRecord(hash: Record<string, string> | readonly unknown[]): RunRecord {
  const fields = Array.isArray(hash) ? pairsToObject(hash) : (hash as Record<string, string>);
  const field = (name: string): string => {
    const value = fields[name];
    if (value === undefined) throw redisCommandFailed(`run record without '${name}': ${fields.runId}`);
    return value;
  };
  const record: RunRecord = {
    runId: field('runId'),
    workflow: field('workflow'),
    version: Number(field('version')),
    input: decodeValue(field('input')),
    idempotencyKey: fields.idempotencyKey ?? null,
    status: field('status') as RunStatus,
    createdAt: Number(field('createdAt')),
    updatedAt: Number(field('updatedAt')),
    attempts: Number(field('attempts')),
  };
  if (fields.traceparent !== undefined) record.traceparent = fields.traceparent;
  if (fields.forkedFrom !== undefined)
    record.forkedFrom = JSON.parse(fields.forkedFrom) as RunRecord['forkedFrom'];
  if (fields.result !== undefined) record.result = decodeValue(fields.result);
  if (fields.error !== undefined) record.error = JSON.parse(fields.error) as RunRecord['error'];
  if (fields.continuedAs !== undefined) record.continuedAs = fields.continuedAs;
  // Search attributes: 'attr:<name>' fields (attributes.ts), named by the 'attrs' field.
  if (fields.attrs !== undefined) {
    const attributes: NonNullable<RunRecord['attributes']> = {};
    for (const name of fields.attrs.split(',')) {
      const stored = name === '' ? undefined : fields[`attr:${name}`];
      const attribute = stored === undefined ? undefined : readStoredAttribute(stored);
      if (attribute !== undefined) attributes[name] = attribute;
    }
    if (Object.keys(attributes).length > 0) record.attributes = attributes;
  }
  return record;
}

function pairsToObject(pairs: readonly unknown[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) out[String(pairs[i])] = String(pairs[i + 1]);
  return out;
}
