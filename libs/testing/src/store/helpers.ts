/**
 * Builders the store suite sections share: claimed runs, suspended runs, checkpoints.
 */
import { expect } from 'vitest';
import type { Checkpoint, Store } from '@baton/core/adapter';
import { uniqueId } from '../conformance-helpers.js';

/** Lease TTL for tests that wait for expiry: short, yet far above a real store's round trip. */
export const SHORT_TTL_MS = 200;
/** Long enough after {@link SHORT_TTL_MS} that the lease has surely expired on the store's clock. */
export const EXPIRY_WAIT_MS = 350;
/** Lease TTL for leases a test needs alive throughout. */
export const LONG_TTL_MS = 30_000;

/** Acquires `runId` for `owner`, asserting success, and returns the epoch. */
export async function acquireOk(
  store: Store,
  runId: string,
  owner: string,
  ttlMs = LONG_TTL_MS,
): Promise<number> {
  const result = await store.leases.acquire(runId, owner, ttlMs);
  expect(result).toMatchObject({ ok: true });
  if (!result.ok) throw new Error(`could not acquire ${runId}: ${result.reason}`);
  return result.epoch;
}

/** Creates a run in the index with a fresh id (and the given idempotency key). */
export async function createTestRun(store: Store, label = 'run', idempotencyKey: string | null = null) {
  const runId = uniqueId(label);
  const { run } = await store.runs.create({
    runId,
    workflow: 'conformance',
    version: 1,
    input: { label, nested: { list: [1, 2, 3] } },
    idempotencyKey,
  });
  return run;
}

/** What {@link suspendedRun} set up. */
export interface SuspendedRun {
  runId: string;
  epoch: number;
}

/** A run created, claimed, and suspended waiting for `signals` and/or a timer at `wakeAt`. */
export async function suspendedRun(
  store: Store,
  options: { wakeAt?: number | null; signals?: string[]; label?: string } = {},
): Promise<SuspendedRun> {
  const { runId } = await createTestRun(store, options.label ?? 'suspended');
  const epoch = await acquireOk(store, runId, 'worker-a');
  const result = await store.leases.suspend({
    runId,
    epoch,
    wakeAt: options.wakeAt ?? null,
    signals: options.signals ?? [],
    consumedSignalIds: [],
  });
  expect(result).toEqual({ ok: true });
  return { runId, epoch };
}

/** A checkpoint of `runId` written under `epoch`, numbered `seq`. */
export function checkpointOf(runId: string, epoch: number, seq: number, overrides: Partial<Checkpoint> = {}) {
  const checkpoint: Checkpoint = {
    runId,
    seq,
    epoch,
    journalPosition: seq * 10,
    entries: [{ type: 'LeaseAcquired', epoch, at: 1_700_000_000_000 + seq, workerId: `worker-${epoch}` }],
    status: 'running',
    schemaVersion: 1,
    createdAt: 1_700_000_000_000 + seq,
    ...overrides,
  };
  return checkpoint;
}

/** The shape a FencedWriteError must have, whichever copy of `@baton/core` raised it. */
export const FENCED = { name: 'FencedWriteError', code: 'BATON_FENCED_WRITE' } as const;
