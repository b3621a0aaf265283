/**
 * What the capability modules (leases, waits, runs, presence) share: the open connection, the key
 * layout and the script runner. Built once per connect().
 */
import type { Redis } from 'ioredis';
import type { KeyLayout } from './keys.js';
import { batchingRunner, type BatchedRunner } from './batch.js';
import { defineScripts, type ScriptRunner } from './scripts.js';

export interface StoreContext {
  readonly redis: Redis;
  readonly keys: KeyLayout;
  readonly run: ScriptRunner;
  /** The scripts a worker calls once per run or per flush, gathered across runs (batch.ts). */
  readonly batched: BatchedRunner;
}

/** The context of a connection: its scripts registered on it, and a batcher over them. */
export function storeContext(redis: Redis, keys: KeyLayout): StoreContext {
  const run = defineScripts(redis);
  return { redis, keys, run, batched: batchingRunner(run, keys.prefix) };
}

/** A reply element as a string (Lua strings arrive as strings, Lua numbers as numbers). */
export function str(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

/** The results of an ioredis pipeline, throwing the first command error. */
export function pipelineResults(results: [Error | null, unknown][] | null): unknown[] {
  if (results === null) throw new Error('pipeline was discarded');
  return results.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}
