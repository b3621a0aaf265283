/**
 * A run as the store's run index keeps it. Its own module so that the run index (run-index.ts),
 * the run queries (run-queries.ts) and retention (retention.ts) can name it without importing each
 * other.
 */
import type { RunAttributes } from '../../shared/attributes.js';
import type { SerializedError } from '../../shared/errors.js';

/**
 * Every status a run record has (docs/operations.md): `pending` until a worker claims it, `running`
 * while a worker holds it, `suspended` while it waits (a timer, a signal, a slot), `paused` by an
 * operator, and one of the three finished ones. The one list the worker, the client, the CLI, the
 * bench and the test kit read.
 */
export const RUN_STATUSES = [
  'pending',
  'running',
  'suspended',
  'paused',
  'completed',
  'failed',
  'cancelled',
] as const;

export type RunStatus = (typeof RUN_STATUSES)[number];

/** The statuses of a finished run: it runs no more, and only such a run may be deleted by retention. */
export const FINISHED_RUN_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

/** The statuses of a run not finished yet: it still needs a worker with its workflow version. */
export const UNFINISHED_RUN_STATUSES: readonly RunStatus[] = ['pending', 'running', 'suspended', 'paused'];

/** True for a finished run's status (completed, failed or cancelled); false for any other value. */
export function isFinishedRun(status: string | undefined): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

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
  /** The search attributes the run set (`ctx.setAttributes`), when it set any. */
  attributes?: RunAttributes;
  /**
   * The successor's run id, once the run has begun to continue as new (`runs.continueAs`, before
   * its end is recorded): from then on the run keeps no signal, update request or promise
   * completion, and the answers to them name this successor (docs/continue-as-new.md).
   */
  continuedAs?: string;
}
