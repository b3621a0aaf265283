/**
 * The run page's API: the run with its lease, its step timeline with each step's result, error
 * and idempotency key, and its queries (the names it registers, and one's answer: GETs, since a
 * query changes nothing, so read-only consoles ask them too). The journal is read once per request (client.history) and the
 * timeline built from it with the client's own buildTimeline, so the CLI and the console show
 * the same steps.
 *
 * Protected data: the client decodes journals and checkpoints with the keyring the console was
 * given (BATON_ENCRYPTION_KEYS, BATON_SIGNING_KEYS). Without the key, reading fails with
 * MissingKeyError (or CheckpointIntegrityError for bytes that do not verify); the page then says
 * "protected" with the reason instead of showing bytes.
 */
import { buildTimeline, type PositionedEntry, CheckpointIntegrityError } from '@baton/client';
import type { BatonError } from '@baton/core';
import { HttpError, type Route } from './http-kit.js';

/** What one activity step ended with, by seq: the latest outcome in the journal wins, as on replay. */
export interface StepOutcome {
  seq: number;
  result?: unknown;
  error?: { name: string; message: string };
}

/** The recorded outcome of each activity step, from the decoded journal. */
export function stepOutcomes(history: PositionedEntry[]): Record<number, StepOutcome> {
  const outcomes: Record<number, StepOutcome> = {};
  for (const { entry } of history) {
    if (entry.type === 'ActivityCompleted') outcomes[entry.seq] = { seq: entry.seq, result: entry.result };
    else if (entry.type === 'ActivityFailed')
      outcomes[entry.seq] = {
        seq: entry.seq,
        error: { name: entry.error.name, message: entry.error.message },
      };
  }
  return outcomes;
}

/**
 * True for the errors that mean "this data is protected and we cannot open it": a missing key
 * (MissingKeyError) or bytes that do not verify (CheckpointIntegrityError, its base class).
 */
function isProtectedDataError(err: unknown): err is BatonError {
  return err instanceof CheckpointIntegrityError;
}

export const RUN_ROUTES: Route[] = [
  {
    method: 'GET',
    path: /^\/api\/runs\/([^/]+)$/,
    handle: ({ client, params }) => client.describe(params[0]!),
  },
  {
    method: 'GET',
    path: /^\/api\/runs\/([^/]+)\/timeline$/,
    handle: async ({ client, params }) => {
      const runId = params[0]!;
      try {
        const checkpoints = await client.timeTravel.checkpoints(runId);
        const history = await client.history(runId);
        return {
          timeline: buildTimeline(runId, history, checkpoints),
          outcomes: stepOutcomes(history),
          checkpoints,
        };
      } catch (err) {
        if (isProtectedDataError(err)) return { protected: err.message };
        throw err;
      }
    },
  },
  {
    method: 'GET',
    path: /^\/api\/runs\/([^/]+)\/queries$/,
    handle: async ({ client, params }) => ({ names: await client.queryNames(params[0]!) }),
  },
  {
    method: 'GET',
    path: /^\/api\/runs\/([^/]+)\/queries\/([^/]+)$/,
    handle: async ({ client, params, query }) => {
      const text = query.get('args');
      let args: unknown;
      try {
        args = text === null || text === '' ? undefined : (JSON.parse(text) as unknown);
      } catch (err) {
        throw new HttpError(400, `the query's args are not JSON: ${(err as Error).message}`);
      }
      return { result: (await client.query(params[0]!, params[1]!, args)) ?? null };
    },
  },
];
