/**
 * The HTTP API's errors: one JSON shape, `{ "error": { "code": "BATON_…", "message": "…" } }`
 * (plus `issues` and `field` for an input that fails its schema), and one table from an error's
 * code to its HTTP status.
 *
 * Invariants:
 * 1. A caller's mistake is a 4xx: every code the API or the client raises for one is in
 *    {@link STATUS_OF_CODE}; only an error whose code is not there (a bug, a backend failure the
 *    table does not know) reaches the catch-all 500.
 * 2. A store or bus that does not answer is a 503 with `Retry-After`, never a 500: the caller
 *    may try again.
 * 3. Every message is redacted before it leaves the server (the console's redact: URL
 *    passwords, the access token, the webhook secrets).
 */
import { BatonError, InvalidInputError } from '@baton/core';
import { QueryFailedError, UnknownQueryError } from '@baton/client';
import { StoreTimeoutError } from '../bounded-store.js';
import { HttpError } from '../http-error.js';

/** The API's own codes (the client's errors bring theirs: BATON_NOT_FOUND, BATON_RUN_STATE, …). */
export const API_CODES = {
  badRequest: 'BATON_BAD_REQUEST',
  unauthorized: 'BATON_UNAUTHORIZED',
  badSignature: 'BATON_BAD_SIGNATURE',
  forbidden: 'BATON_FORBIDDEN',
  readOnly: 'BATON_READ_ONLY',
  noRoute: 'BATON_NO_ROUTE',
  methodNotAllowed: 'BATON_METHOD_NOT_ALLOWED',
  tooLarge: 'BATON_TOO_LARGE',
  unsupportedMediaType: 'BATON_UNSUPPORTED_MEDIA_TYPE',
  unknownWorkflow: 'BATON_UNKNOWN_WORKFLOW',
  noWebhook: 'BATON_NO_WEBHOOK',
  webhookRefused: 'BATON_WEBHOOK_REFUSED',
  webhookRouteFailed: 'BATON_WEBHOOK_ROUTE_FAILED',
  signInLimited: 'BATON_CONSOLE_SIGN_IN_LIMITED',
  unavailable: 'BATON_UNAVAILABLE',
  internal: 'BATON_INTERNAL',
} as const;

/**
 * The status of every code that is the caller's mistake or a passing outage, the API's and the
 * client's alike. A code not listed here is a 500 (the catch-all), so a new caller-mistake code
 * belongs here, with a spec showing it is not a 500.
 */
export const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  [API_CODES.badRequest]: 400,
  // The client's ConfigError for what the caller sent: a malformed cursor, an invalid filter.
  BATON_CONFIG: 400,
  [API_CODES.unauthorized]: 401,
  [API_CODES.badSignature]: 401,
  [API_CODES.forbidden]: 403,
  [API_CODES.readOnly]: 403,
  BATON_NOT_FOUND: 404,
  // A run without a handler of the query's name (the body lists those it registers).
  BATON_UNKNOWN_QUERY: 404,
  [API_CODES.noRoute]: 404,
  // A webhook name no module given to the server declares (docs/webhooks.md).
  [API_CODES.noWebhook]: 404,
  // A run the retention sweep deleted: as unknown as any other to the caller; the code says why.
  BATON_RUN_DELETED: 404,
  // An update name the run's workflow has no handler for (docs/updates.md).
  BATON_UPDATE_UNKNOWN: 404,
  [API_CODES.methodNotAllowed]: 405,
  BATON_RUN_STATE: 409,
  [API_CODES.tooLarge]: 413,
  [API_CODES.unsupportedMediaType]: 415,
  BATON_INVALID_INPUT: 422,
  BATON_UNENCODABLE: 422,
  // The run's query handler failed (threw, or called a ctx method): the body carries its error.
  BATON_QUERY_FAILED: 422,
  [API_CODES.unknownWorkflow]: 422,
  // A webhook's route turned the delivery down ({ refuse: reason }).
  [API_CODES.webhookRefused]: 422,
  // An update its schema or a validator refused before anything was journaled.
  BATON_UPDATE_REJECTED: 422,
  [API_CODES.signInLimited]: 429,
  [API_CODES.unavailable]: 503,
  BATON_STORE_TIMEOUT: 503,
  BATON_RETRIES_EXHAUSTED: 503,
  // No worker answered a query in time (none registers the run's workflow version, or all busy).
  BATON_QUERY_TIMEOUT: 504,
  // A webhook's route threw or returned no action it knows: the server's code to fix, so a 500
  // the sender retries (after the fix, the delivery is taken; its id absorbs the repeats).
  [API_CODES.webhookRouteFailed]: 500,
};

/** The code an HttpError (the console's route helpers) stands for, by its status. */
const CODE_OF_STATUS: Readonly<Record<number, string>> = {
  400: API_CODES.badRequest,
  401: API_CODES.unauthorized,
  403: API_CODES.forbidden,
  404: API_CODES.noRoute,
  413: API_CODES.tooLarge,
};

/** An error the API raises itself, with its code (its status comes from {@link STATUS_OF_CODE}). */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: string,
    message: string,
    /** More fields of the error object (`issues`, `allowed`). */
    readonly details: Record<string, unknown> = {},
    /** Headers of the answer (`Allow`, `Retry-After`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  get status(): number {
    return STATUS_OF_CODE[this.code] ?? 500;
  }
}

/** The JSON body of every error answer. */
export interface ApiErrorBody {
  error: { code: string; message: string; [detail: string]: unknown };
}

/** An error as the API answers it. */
export interface ApiErrorAnswer {
  status: number;
  body: ApiErrorBody;
  headers: Record<string, string>;
}

/** Seconds to wait before trying again, from a bound or a hint in ms (at least 1). */
function retryAfter(ms: number | undefined): string {
  return String(Math.max(1, Math.ceil((ms ?? 1000) / 1000)));
}

/**
 * What to answer for `err`: its status by its code, its message redacted. An error without a
 * known code is a 500 whose message is redacted too (a bug report, not a secret leak).
 */
export function errorAnswer(err: unknown, redact: (text: string) => string): ApiErrorAnswer {
  const message = redact(err instanceof Error ? err.message : String(err));
  const answer = (
    status: number,
    code: string,
    details: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ): ApiErrorAnswer => ({ status, body: { error: { code, message, ...details } }, headers });
  if (err instanceof ApiError) return answer(err.status, err.code, err.details, err.headers);
  if (err instanceof StoreTimeoutError)
    return answer(503, err.code, {}, { 'Retry-After': retryAfter(err.timeoutMs) });
  if (err instanceof HttpError) {
    const code = CODE_OF_STATUS[err.status] ?? API_CODES.badRequest;
    return answer(err.status, code);
  }
  if (err instanceof InvalidInputError) {
    return answer(422, err.code, {
      field: err.field,
      ...(err.issues.length > 0 && { issues: [...err.issues] }),
      ...(err.signal !== undefined && { signal: err.signal }),
    });
  }
  if (err instanceof UnknownQueryError) return answer(404, err.code, { registered: [...err.registered] });
  if (err instanceof QueryFailedError) {
    const { name, code } = err.failure;
    const failure = { name, message: redact(err.failure.message), ...(code !== undefined && { code }) };
    return answer(422, err.code, { failure });
  }
  if (err instanceof BatonError) {
    const status = STATUS_OF_CODE[err.code];
    if (status === 503) return answer(503, err.code, {}, { 'Retry-After': retryAfter(err.retryAfterMs) });
    if (status !== undefined) return answer(status, err.code);
    // A backend that is away (a bus or store restarting): the caller may try again.
    if (err.retryable) return answer(503, err.code, {}, { 'Retry-After': retryAfter(err.retryAfterMs) });
  }
  return answer(500, API_CODES.internal);
}
