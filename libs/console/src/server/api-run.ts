/**
 * The run page's API: the run with its lease, its step timeline with each step's result, error
 * and idempotency key (its updates, durable promises and attribute changes among them), its
 * queries (the names it registers, and one's answer: GETs, since a query changes nothing, so
 * read-only consoles ask them too), and its pending durable promises. The journal is read once per
 * request (client.history) and the timeline built from it with the client's own buildTimeline, so
 * the CLI and the console show the same steps.
 *
 * A durable promise's token is a secret (docs/promises.md): whoever has it may complete the
 * promise, which is an action. So the timeline and the list of pending promises hold only its
 * first characters, and the whole token is sent only by a POST marked `action` (refused by a
 * read-only console, CSRF-checked, and logged with who asked, as every action is): the page's
 * "reveal token" button.
 *
 * The timeline's answer also says how large the run's history is against the soft limit
 * (docs/continue-as-new.md, "Bounded histories"): counted from the journal the request read
 * anyway, so it costs the workers nothing; the page flags a run at 80% of the limit or past it.
 * The limit is the console's BATON_HISTORY_SOFT_ENTRIES and BATON_HISTORY_SOFT_BYTES (set them
 * as the workers have them), else the workers' defaults.
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

/** A run's history against the soft limit, for the run page's flag. */
export interface HistorySize {
  entries: number;
  bytes: number;
  softEntries: number;
  softBytes: number;
  /** The larger share of a soft limit reached, in percent (0 with both limits off). */
  percent: number;
}

/** The workers' default soft limits (core's DEFAULT_HISTORY_LIMITS; the console reads no runtime door). */
const DEFAULT_SOFT = { entries: 10_000, bytes: 10 * 1024 * 1024 };

/** A soft limit from the console's environment: a whole number, else the default. */
function softLimit(value: string | undefined, fallback: number): number {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : fallback;
}

/** How large `history` is against the soft limit (see the module's comment). */
export function historySize(history: PositionedEntry[], env = process.env): HistorySize {
  const softEntries = softLimit(env['BATON_HISTORY_SOFT_ENTRIES'], DEFAULT_SOFT.entries);
  const softBytes = softLimit(env['BATON_HISTORY_SOFT_BYTES'], DEFAULT_SOFT.bytes);
  const entries = history.length;
  const bytes = Buffer.byteLength(JSON.stringify(history.map((p) => p.entry)));
  const share = (n: number, limit: number): number => (limit > 0 ? (100 * n) / limit : 0);
  const percent = Math.floor(Math.max(share(entries, softEntries), share(bytes, softBytes)));
  return { entries, bytes, softEntries, softBytes, percent };
}

/**
 * True for the errors that mean "this data is protected and we cannot open it": a missing key
 * (MissingKeyError) or bytes that do not verify (CheckpointIntegrityError, its base class).
 */
function isProtectedDataError(err: unknown): err is BatonError {
  return err instanceof CheckpointIntegrityError;
}

/** A pending durable promise as the page lists it: everything but the token (see the module's comment). */
export interface PendingPromiseRow {
  seq: number;
  /** The token's first six characters and `…`, as the timeline shows it. */
  tokenHint: string;
  createdAt: number;
  timeoutAt: number | null;
  /** True when completing it checks the value against a JSON Schema. */
  hasSchema: boolean;
}

/** The step number of a promise in a path, or 400. */
function stepOf(text: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new HttpError(400, `'${text}' is not a step number`);
  return Number(text);
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
          historySize: historySize(history),
        };
      } catch (err) {
        if (isProtectedDataError(err)) return { protected: err.message };
        throw err;
      }
    },
  },
  {
    method: 'GET',
    path: /^\/api\/runs\/([^/]+)\/promises$/,
    handle: async ({ client, params }) => {
      const pending = await client.promises.pending(params[0]!);
      return {
        promises: pending.map((p): PendingPromiseRow => ({
          seq: p.seq,
          tokenHint: `${p.token.slice(0, 6)}…`,
          createdAt: p.createdAt,
          timeoutAt: p.timeoutAt,
          hasSchema: p.schema !== undefined,
        })),
      };
    },
  },
  {
    // The whole token of a pending promise: an action (see the module's comment).
    method: 'POST',
    path: /^\/api\/runs\/([^/]+)\/promises\/([^/]+)\/token$/,
    action: true,
    handle: async ({ client, params }) => {
      const seq = stepOf(params[1]!);
      const found = (await client.promises.pending(params[0]!)).find((p) => p.seq === seq);
      if (found === undefined)
        throw new HttpError(
          404,
          `run ${params[0]!} has no pending durable promise at step #${seq}: it was completed, timed out, or never made`,
        );
      return { seq, token: found.token };
    },
  },
  {
    // The run's streams by name; the live view of one is run-stream-events.ts's (Server-Sent Events).
    method: 'GET',
    path: /^\/api\/runs\/([^/]+)\/streams$/,
    handle: async ({ client, params }) => {
      // An unknown run is a 404 at once (client.streamNames would wait for a run just started).
      await client.describe(params[0]!);
      return { streams: await client.streamNames(params[0]!) };
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
