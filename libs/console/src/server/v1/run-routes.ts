/**
 * The HTTP API's routes (`/v1/…`): start a run, describe it, wait for its result, signal it, send
 * it an update and wait for the answer, cancel it, ask its queries, and list runs by the store's filters. Each route is named by its OpenAPI path
 * template (`/v1/runs/{runId}`), so the document (openapi.ts) and this table can be compared
 * entry by entry (openapi.spec.ts).
 *
 * What every handler may count on (http-api.ts does it first): the request was admitted, a write
 * is not refused by read-only mode, a body is JSON within the size bound, path captures are
 * percent-decoded. What every handler does: answers in the API's shapes (views.ts), and throws
 * ApiError or the client's errors for the caller's mistakes (api-errors.ts maps them).
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import {
  isFinishedRun,
  TimeoutError,
  UpdateFailedError,
  UpdateTimeoutError,
  WorkflowFailedError,
  type Client,
} from '@baton/client';
import { CancelledError, RunStateError, toMs } from '@baton/core';
import { runQueryOf } from '../api-runs.js';
import { API_CODES, ApiError } from './api-errors.js';
import { startRun, type StartRequest, type WorkflowCatalog } from './start-run.js';
import type { WebhookCatalog } from './webhook-catalog.js';
import { errorView, runSummary, runView } from './views.js';

/** What a handler gets. */
export interface ApiCall {
  client: Client;
  /** The path's captures by their template names (`runId`, `name`), percent-decoded. */
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** The body parsed as JSON; undefined when the request has none. */
  body: unknown;
  headers: IncomingHttpHeaders;
  /** Aborted when the caller hangs up or the server closes (a long poll stops waiting). */
  signal: AbortSignal;
  workflows: WorkflowCatalog;
  /** The webhooks declared in the loaded modules (webhook-routes.ts). */
  webhooks: WebhookCatalog;
  /** The body's exact bytes, for a route that verifies its sender itself (the body is not parsed). */
  rawBody?: Buffer;
  /** The clock signatures are checked against. */
  now: () => number;
  /** The longest `wait` a result request is held for; a longer one is cut to it. */
  maxWaitMs: number;
  /** How often a stream of events gets a keep-alive comment (stream-routes.ts). */
  streamHeartbeatMs?: number;
}

/** What a handler answers: a status, a JSON body, and headers; or an answer it writes itself. */
export interface ApiAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /**
   * Writes the answer itself, after the handler's checks passed (a run stream's events,
   * stream-routes.ts); `failure` is the error body for a failure once the answer began.
   * Resolves once the answer has ended.
   */
  stream?: (res: ServerResponse, failure: (err: unknown) => unknown) => Promise<void>;
}

export interface ApiRoute {
  method: 'GET' | 'POST';
  /** The OpenAPI path template; `{name}` matches one path segment. */
  path: string;
  /** Changes something: refused in read-only mode, logged. */
  write: boolean;
  /**
   * Admits its callers itself (a webhook's signature): the server's admission, the JSON body rule
   * and the API-wide signature are skipped, and the handler gets the body's bytes (`rawBody`).
   */
  verifiesItself?: true;
  handle: (call: ApiCall) => Promise<ApiAnswer>;
}

/** The filters (RunFilter's names), order, limit and cursor `GET /v1/runs` takes. */
export const LIST_PARAMETERS = [
  'status',
  'workflow',
  'version',
  'runIdPrefix',
  'idempotencyKeyPrefix',
  'worker',
  'createdAfter',
  'createdBefore',
  'updatedAfter',
  'updatedBefore',
  'order',
  'limit',
  'cursor',
  // Search attributes: `attr=<expression>`, repeatable, and `attr.<name>[:<type>]=<value>`
  // (api-runs.ts, attributeExpressionsOf; docs/search-attributes.md).
  'attr',
] as const;

const START_FIELDS = ['workflow', 'version', 'input', 'idempotencyKey', 'allowUnregistered'];
const UPDATE_FIELDS = ['args', 'updateId', 'timeoutMs'];
/** How long an update is waited for when the body says nothing (cut, as any, to the longest wait). */
export const DEFAULT_UPDATE_WAIT_MS = 30_000;

function badRequest(message: string): ApiError {
  return new ApiError(API_CODES.badRequest, message);
}

/** The body as a JSON object with only `allowed` fields, or 400 naming what is wrong. */
function objectBody(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('the request body must be a JSON object');
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((f) => !allowed.includes(f));
  if (unknown.length > 0) {
    throw badRequest(
      `the body has unknown field(s) ${unknown.map((f) => `'${f}'`).join(', ')}; ` +
        `the fields are ${allowed.map((f) => `'${f}'`).join(', ')}`,
    );
  }
  return fields;
}

/** A header's single value, or undefined. */
function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** `POST /v1/runs`'s body, checked for fields and types (the values themselves: start-run.ts). */
export function startRequestOf(body: unknown, headers: IncomingHttpHeaders): StartRequest {
  const fields = objectBody(body, START_FIELDS);
  const { workflow, version, idempotencyKey, allowUnregistered } = fields;
  if (typeof workflow !== 'string' || workflow === '')
    throw badRequest("'workflow' is required: the workflow's name, a string");
  if (version !== undefined && (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1))
    throw badRequest(`'version' must be a whole number ≥ 1, got ${JSON.stringify(version)}`);
  if (idempotencyKey !== undefined && typeof idempotencyKey !== 'string')
    throw badRequest(`'idempotencyKey' must be a string, got ${JSON.stringify(idempotencyKey)}`);
  if (allowUnregistered !== undefined && typeof allowUnregistered !== 'boolean')
    throw badRequest(`'allowUnregistered' must be true or false`);
  const headerKey = headerValue(headers, 'idempotency-key');
  if (headerKey !== undefined && idempotencyKey !== undefined && headerKey !== idempotencyKey)
    throw badRequest("the Idempotency-Key header and the body's 'idempotencyKey' differ: send one");
  const key = idempotencyKey ?? headerKey;
  return {
    workflow,
    ...(version !== undefined && { version }),
    ...('input' in fields && { input: fields['input'] }),
    ...(key !== undefined && { idempotencyKey: key }),
    ...(allowUnregistered !== undefined && { allowUnregistered }),
  };
}

/** `?wait=30s` as ms, cut to `maxWaitMs`; 0 when absent (answer at once). */
export function waitOf(query: URLSearchParams, maxWaitMs: number): number {
  const text = query.get('wait');
  if (text === null || text === '') return 0;
  let ms: number;
  try {
    ms = toMs(text, "'wait'");
  } catch {
    throw badRequest(`'wait' must be a duration with its unit, e.g. 500ms, 30s or 1m; got '${text}'`);
  }
  return Math.min(ms, maxWaitMs);
}

/** `GET /v1/runs`'s query: the store's filter names; an unknown parameter is a 400, not ignored. */
function listQueryOf(query: URLSearchParams): ReturnType<typeof runQueryOf> {
  for (const name of query.keys()) {
    if (!(LIST_PARAMETERS as readonly string[]).includes(name) && !name.startsWith('attr.'))
      throw badRequest(`unknown query parameter '${name}'; the parameters are ${LIST_PARAMETERS.join(', ')}`);
  }
  return runQueryOf(query);
}

/**
 * The run, which must not have finished: a signal to a finished run would be dropped, a cancel
 * would change nothing, so both are a 409 naming its status. NotFoundError (404) for a run the
 * store does not know. With `followsContinuation`, a run that continued as new passes: a signal or
 * a cancel to it goes on to its successor (docs/continue-as-new.md).
 */
async function unfinishedRun(
  client: Client,
  runId: string,
  action: string,
  followsContinuation = false,
): Promise<void> {
  const run = await client.describe(runId);
  if (followsContinuation && run.continuedAs !== undefined) return;
  if (isFinishedRun(run.status))
    throw new RunStateError(runId, run.status, `run ${runId} is ${run.status}: ${action}`);
}

/** The statuses `client.result` ends with, as the result route answers them. */
async function resultAnswer(call: ApiCall): Promise<ApiAnswer> {
  const runId = call.params['runId']!;
  const waitMs = waitOf(call.query, call.maxWaitMs);
  try {
    // An unknown run is waited for as long as the wait too (its start may still be queued).
    const result = await call.client.result(runId, {
      timeoutMs: waitMs,
      unknownRunMs: waitMs,
      signal: call.signal,
    });
    return { status: 200, body: { runId, status: 'completed', result: result ?? null } };
  } catch (err) {
    if (err instanceof WorkflowFailedError)
      return { status: 200, body: { runId, status: 'failed', error: errorView(err.failure) } };
    if (err instanceof CancelledError)
      return { status: 200, body: { runId, status: 'cancelled', error: errorView(err) } };
    if (!(err instanceof TimeoutError)) throw err;
  }
  // Not finished within the wait: its status now (NotFoundError, a 404, if it is still unknown).
  // A run that continued as new reads `completed` while its successor runs: the chain is running.
  const { status } = await call.client.describe(runId);
  return { status: 202, body: { runId, status: isFinishedRun(status) ? 'running' : status } };
}

/** `POST /v1/runs/{runId}/updates/{name}`'s body: the arguments, the update id and the wait. */
function updateRequestOf(
  body: unknown,
  headers: IncomingHttpHeaders,
  maxWaitMs: number,
): { args: unknown; updateId: string; timeoutMs: number } {
  const fields = objectBody(body, UPDATE_FIELDS);
  const { updateId, timeoutMs } = fields;
  if (updateId !== undefined && typeof updateId !== 'string')
    throw badRequest(`'updateId' must be a string, got ${JSON.stringify(updateId)}`);
  const headerId = headerValue(headers, 'idempotency-key');
  if (headerId !== undefined && updateId !== undefined && headerId !== updateId)
    throw badRequest("the Idempotency-Key header and the body's 'updateId' differ: send one");
  const id = updateId ?? headerId ?? randomUUID();
  // eslint-disable-next-line no-control-regex -- the point: refuse them
  if (id.length === 0 || id.length > 256 || /[\u0000-\u001f\u007f]/.test(id))
    throw badRequest(
      "the update id ('updateId' or Idempotency-Key) must be 1-256 characters, none a control character",
    );
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== 'number' || !Number.isSafeInteger(timeoutMs) || timeoutMs < 0)
  )
    throw badRequest(`'timeoutMs' must be a whole number of ms ≥ 0, got ${JSON.stringify(timeoutMs)}`);
  return {
    args: fields['args'] ?? null,
    updateId: id,
    timeoutMs: Math.min(timeoutMs ?? DEFAULT_UPDATE_WAIT_MS, maxWaitMs),
  };
}

/**
 * Sends an update and answers its outcome: 200 with the handler's result (or, `status: failed`,
 * what it threw), 202 when the wait ran out (the update stays with the run: repeat with the same
 * `updateId` for its answer). Refusals are the client's errors: 404 (an unknown run or update
 * name), 409 (a finished run), 422 (rejected by a schema or validator).
 */
async function updateAnswer(call: ApiCall): Promise<ApiAnswer> {
  const runId = call.params['runId']!;
  const name = call.params['name']!;
  const { args, updateId, timeoutMs } = updateRequestOf(call.body, call.headers, call.maxWaitMs);
  try {
    const result = await call.client.update(runId, name, args, { updateId, timeoutMs, signal: call.signal });
    return { status: 200, body: { runId, updateId, status: 'completed', result: result ?? null } };
  } catch (err) {
    if (err instanceof UpdateFailedError)
      return { status: 200, body: { runId, updateId, status: 'failed', error: errorView(err.failure) } };
    if (err instanceof UpdateTimeoutError)
      return { status: 202, body: { runId, updateId, status: 'pending' } };
    throw err;
  }
}

/** The default wait for a query's answer, when the body names none. */
const QUERY_TIMEOUT_MS = 10_000;

/** `POST /v1/runs/{runId}/queries/{name}`: the handler's answer, or the client's query errors. */
async function queryAnswer({ client, params, body, maxWaitMs }: ApiCall): Promise<ApiAnswer> {
  const runId = params['runId']!;
  const name = params['name']!;
  const fields = objectBody(body, ['args', 'timeoutMs']);
  const { timeoutMs } = fields;
  if (
    timeoutMs !== undefined &&
    !(typeof timeoutMs === 'number' && Number.isInteger(timeoutMs) && timeoutMs >= 1)
  )
    throw badRequest(`'timeoutMs' must be a whole number of ms ≥ 1, got ${JSON.stringify(timeoutMs)}`);
  const wait = Math.min(timeoutMs ?? QUERY_TIMEOUT_MS, maxWaitMs);
  const result = await client.query(runId, name, fields['args'], { timeoutMs: wait });
  return { status: 200, body: { result: result ?? null } };
}

export const RUN_ROUTES: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/v1/runs',
    write: true,
    handle: async ({ client, body, headers, workflows }) => {
      const outcome = await startRun(client, workflows, startRequestOf(body, headers));
      return { status: outcome.created ? 201 : 200, body: { runId: outcome.runId } };
    },
  },
  {
    method: 'GET',
    path: '/v1/runs',
    write: false,
    handle: async ({ client, query }) => {
      const page = await client.runs.list(listQueryOf(query));
      return {
        status: 200,
        body: { runs: page.runs.map(runSummary), ...(page.cursor !== undefined && { cursor: page.cursor }) },
      };
    },
  },
  {
    method: 'GET',
    path: '/v1/runs/{runId}',
    write: false,
    handle: async ({ client, params }) => ({
      status: 200,
      body: runView(await client.describe(params['runId']!)),
    }),
  },
  {
    method: 'GET',
    path: '/v1/runs/{runId}/result',
    write: false,
    handle: resultAnswer,
  },
  {
    method: 'POST',
    path: '/v1/runs/{runId}/signals/{name}',
    write: true,
    handle: async ({ client, params, body, headers }) => {
      const runId = params['runId']!;
      const name = params['name']!;
      const signalId = headerValue(headers, 'idempotency-key');
      if (signalId !== undefined && !/^[\x21-\x7e]{1,200}$/.test(signalId))
        throw badRequest('the Idempotency-Key header must be 1-200 printable characters without spaces');
      await unfinishedRun(client, runId, `a signal to it would be dropped, so '${name}' was not sent`, true);
      // The body is the payload as it is (a webhook's event); none is null.
      await client.signal(runId, name, body ?? null, signalId === undefined ? {} : { signalId });
      return { status: 202, body: { runId, signal: name } };
    },
  },
  {
    method: 'GET',
    path: '/v1/runs/{runId}/queries',
    write: false,
    handle: async ({ client, params }) => ({
      status: 200,
      body: { names: await client.queryNames(params['runId']!, { timeoutMs: QUERY_TIMEOUT_MS }) },
    }),
  },
  {
    method: 'POST',
    path: '/v1/runs/{runId}/queries/{name}',
    // A query changes nothing: allowed in read-only mode.
    write: false,
    handle: queryAnswer,
  },
  {
    method: 'POST',
    path: '/v1/runs/{runId}/updates/{name}',
    write: true,
    handle: updateAnswer,
  },
  {
    method: 'POST',
    path: '/v1/runs/{runId}/cancel',
    write: true,
    handle: async ({ client, params, body }) => {
      const runId = params['runId']!;
      const { reason } = objectBody(body, ['reason']);
      if (reason !== undefined && typeof reason !== 'string') throw badRequest("'reason' must be a string");
      // A run that continued as new passes: client.cancel goes on to the chain's current run.
      await unfinishedRun(client, runId, 'it cannot be cancelled', true);
      await client.cancel(runId, reason ?? 'cancelled over the HTTP API');
      return { status: 202, body: { runId, status: 'cancel-requested' } };
    },
  },
];
