/**
 * A run as the store's run index keeps it. Its own module so that both the Store contract
 * (store.ts) and the run queries (run-queries.ts) can name it without importing each other.
 */
import type { SerializedError } from '../errors.js';

export type RunStatus = 'pending' | 'running' | 'suspended' | 'paused' | 'completed' | 'failed' | 'cancelled';

/** Where a forked run came from: the original run and the fork point (one of the two). */
export interface RunLineage {
  runId: string;
  checkpoint?: number;
  journalPosition?: number;
}

export interface RunRecord {
  runId: string;
  workflow: string;
  version: number;
  input: unknown;
  idempotencyKey: string | null;
  status: RunStatus;
  createdAt: number;
  updatedAt: number;
  /** Set when status is `completed`. */
  result?: unknown;
  /** Set when status is `failed` (or the reason when `cancelled`). */
  error?: SerializedError;
  /** How many times the run was claimed (1 = never resumed). */
  attempts: number;
  /** W3C trace context of the producer that started the run, so every attempt joins its trace. */
  traceparent?: string;
  /** Set on a fork: the run and point it was forked from. */
  forkedFrom?: RunLineage;
}
