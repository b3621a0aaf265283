/**
 * The HTTP API's durable promise routes (docs/promises.md): an outside system completes a promise
 * a workflow made (`ctx.promise`) by its token, `POST /v1/promises/{token}/resolve` with the value
 * as the body (none is null, so a webhook's event can be posted as it is) or `…/reject` with
 * `{ "message", "name"?, "code"? }`. Both answer 200 `{ "status": "resolved" | "rejected" }`, a
 * repeat of the same completion included (client.promises, invariant 3).
 *
 * Invariants:
 * 1. An unknown token and a string that is no token are the same 404: the answer says nothing of
 *    other runs. A different completion of a completed promise, one after its timeout and one
 *    after its run finished are a 409; a value its schema refuses a 422 with `issues`.
 * 2. A token is a secret: the API's request log shows a promise path with its token cut
 *    ({@link loggedPath}).
 */
import { API_CODES, ApiError } from './api-errors.js';
import type { ApiRoute } from './run-routes.js';

/** The path of the completion routes, up to the token. */
const PROMISES_PREFIX = '/v1/promises/';

/** `pathname` as the request log shows it: a promise's token cut to its first characters (invariant 2). */
export function loggedPath(pathname: string): string {
  if (!pathname.startsWith(PROMISES_PREFIX)) return pathname;
  return pathname.replace(/^(\/v1\/promises\/)([^/]{0,6})[^/]*/, '$1$2…');
}

function badRequest(message: string): ApiError {
  return new ApiError(API_CODES.badRequest, message);
}

const REJECT_FIELDS = ['message', 'name', 'code'];

/** `…/reject`'s body: `{ message, name?, code? }`, or 400 naming what is wrong. */
function rejectionOf(body: unknown): { message: string; name?: string; code?: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('the body must be a JSON object: { "message": "why", "name"?: …, "code"?: … }');
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((f) => !REJECT_FIELDS.includes(f));
  if (unknown.length > 0)
    throw badRequest(
      `the body has unknown field(s) ${unknown.map((f) => `'${f}'`).join(', ')}; the fields are 'message', 'name', 'code'`,
    );
  const { message, name, code } = fields;
  if (typeof message !== 'string' || message === '')
    throw badRequest("'message' is required: why the promise is rejected, a non-empty string");
  if (name !== undefined && typeof name !== 'string') throw badRequest("'name' must be a string");
  if (code !== undefined && typeof code !== 'string') throw badRequest("'code' must be a string");
  return { message, ...(name !== undefined && { name }), ...(code !== undefined && { code }) };
}

export const PROMISE_ROUTES: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/v1/promises/{token}/resolve',
    write: true,
    handle: async ({ client, params, body }) => {
      const { state } = await client.promises.resolve(params['token']!, body ?? null);
      return { status: 200, body: { status: state } };
    },
  },
  {
    method: 'POST',
    path: '/v1/promises/{token}/reject',
    write: true,
    handle: async ({ client, params, body }) => {
      const { state } = await client.promises.reject(params['token']!, rejectionOf(body));
      return { status: 200, body: { status: state } };
    },
  },
];
