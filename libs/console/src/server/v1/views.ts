/**
 * What the HTTP API shows of a run: named fields, as the OpenAPI document (openapi.ts) states
 * them, copied one by one from the client's records, so a field added to a store record does not
 * appear in the API (or change its shape) without a change here and in the document.
 *
 * Times are milliseconds since the epoch on the store's clock, as everywhere in Baton (the list
 * filters take the same). A listing shows no input, result or error: they may be large, and the
 * store keeps them sealed when payload protection is on (describe opens them with this server's
 * keys).
 */
import type { SerializedError } from '@baton/core';
import type { ListedRun, RunAttribute, RunDescription } from '@baton/client';

/** An error as the API shows it: no stack, no cause chain. */
export interface ErrorView {
  name: string;
  message: string;
  code?: string;
}

export function errorView(error: Pick<SerializedError, 'name' | 'message' | 'code'>): ErrorView {
  return { name: error.name, message: error.message, ...(error.code !== undefined && { code: error.code }) };
}

/** A run in a listing. */
export interface RunSummaryView {
  runId: string;
  workflow: string;
  version: number;
  status: string;
  idempotencyKey: string | null;
  createdAt: number;
  updatedAt: number;
  attempts: number;
  /** The run's search attributes by name, each `{ type, value }` (a time in ms); absent when none. */
  attributes?: Record<string, RunAttribute>;
  /** The worker holding the run's lease now, else null. */
  owner: string | null;
}

/** The fields a listed run and a described one share, picked so nothing else leaks into a view. */
function runFields(run: ListedRun | RunDescription): Omit<RunSummaryView, 'owner'> {
  return {
    runId: run.runId,
    workflow: run.workflow,
    version: run.version,
    status: run.status,
    idempotencyKey: run.idempotencyKey,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    attempts: run.attempts,
    ...(run.attributes !== undefined && { attributes: attributeViews(run.attributes) }),
  };
}

/** Each attribute copied field by field (type and value), as every view is. */
function attributeViews(attributes: Record<string, RunAttribute>): Record<string, RunAttribute> {
  return Object.fromEntries(
    Object.entries(attributes).map(([name, { type, value }]) => [name, { type, value } as RunAttribute]),
  );
}

export function runSummary(run: ListedRun): RunSummaryView {
  return { ...runFields(run), owner: run.owner };
}

/** A run described: the summary's fields with its input, outcome, lineage and lease. */
export interface RunView extends Omit<RunSummaryView, 'owner'> {
  input: unknown;
  result?: unknown;
  error?: ErrorView;
  parent?: { runId: string; seq: number };
  forkedFrom?: { runId: string; checkpoint?: number; journalPosition?: number };
  lease: {
    state: string;
    epoch: number;
    owner: string | null;
    expiresAt: number | null;
    cancelRequested: boolean;
    pauseRequested: boolean;
  } | null;
}

export function runView(run: RunDescription): RunView {
  const { lease } = run;
  return {
    ...runFields(run),
    input: run.input,
    ...(run.result !== undefined && { result: run.result }),
    ...(run.error !== undefined && { error: errorView(run.error) }),
    ...(run.parent !== undefined && { parent: run.parent }),
    ...(run.forkedFrom !== undefined && { forkedFrom: run.forkedFrom }),
    lease:
      lease === undefined
        ? null
        : {
            state: lease.state,
            epoch: lease.epoch,
            owner: lease.owner,
            expiresAt: lease.expiresAt,
            cancelRequested: lease.cancelRequested,
            pauseRequested: lease.pauseRequested === true,
          },
  };
}
