/**
 * `POST /v1/webhooks/{name}`: a delivery from an outside sender, to a webhook declared in code
 * (`defineWebhook`, @baton/client/webhooks; docs/webhooks.md). The webhook's own `verify` admits
 * the delivery (no token: a sender signs instead), its `route` turns it into one action, and the
 * action is carried out with the client: start a run, signal one, resolve or reject a durable
 * promise, or nothing.
 *
 * Invariants:
 * 1. Nothing runs for a delivery its webhook did not verify: an unknown name is a 404 before the
 *    body is looked at, a refused signature a 401 with the verifier's reason, and read-only mode a
 *    403 for every delivery.
 * 2. A delivery's id comes from what its signature covers unless the definition says otherwise:
 *    the id a layout signs (Standard Webhooks' `webhook-id`), else `sha256:<hex of the body>`. A
 *    header the signature does not cover (GitHub's `X-GitHub-Delivery`) could be changed by
 *    whoever replays a captured request, so it is not the default.
 * 3. Duplicates of one delivery make one effect, through the idempotency each action already
 *    has: a start's key is `webhook:<name>:<id>` (unless the route gives one), a signal's id is
 *    the same (the run receives it once), a promise completes once (the same completion again is
 *    a no-op). Each repeat answers 2xx, so a sender stops retrying.
 * 4. A delivery that names a finished run in a signal answers 200 `dropped`: it is a repeat or a
 *    late event, and a sender must not retry it for days. An unknown run is a 404. A run that
 *    continued as new is no finished run here: its signal goes on to the successor.
 * 5. What the route throws is the server's bug, a 500 with the webhook named and the error logged;
 *    a route that means to turn a delivery down returns `{ refuse: reason }` (422).
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isFinishedRun } from '@baton/client';
import type { WebhookAction, WebhookDefinition, WebhookRequest } from '@baton/client/webhooks';
import { API_CODES, ApiError } from './api-errors.js';
import type { ApiAnswer, ApiCall, ApiRoute } from './run-routes.js';
import { startRun } from './start-run.js';

/** Header names lower-cased (node:http's already are), a repeated header's first value. */
function flatHeaders(headers: IncomingHttpHeaders): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers))
    flat[name.toLowerCase()] = Array.isArray(value) ? value[0] : value;
  return flat;
}

/** The body as JSON, or a 400 naming the webhook and the parse error. */
function jsonOf(webhook: string, body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (err) {
    throw new ApiError(
      API_CODES.badRequest,
      `webhook '${webhook}': the body is not JSON (${(err as Error).message})`,
    );
  }
}

/** The delivery's id (invariant 2), checked to be a short printable string. */
function deliveryIdOf(
  definition: WebhookDefinition,
  headers: Record<string, string | undefined>,
  body: Buffer,
  signedId: string | undefined,
): string {
  let id: unknown;
  try {
    id = definition.deliveryId?.({ headers, body, json: () => jsonOf(definition.name, body) });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(
      API_CODES.badRequest,
      `webhook '${definition.name}': its deliveryId could not read the delivery: ${(err as Error).message}`,
    );
  }
  if (id === undefined || id === null || id === '')
    return signedId ?? `sha256:${createHash('sha256').update(body).digest('hex')}`;
  if (typeof id !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(id))
    throw new ApiError(
      API_CODES.badRequest,
      `webhook '${definition.name}': the delivery id ${JSON.stringify(id)} is not 1-200 printable characters without spaces`,
    );
  return id;
}

/** `webhook:<name>:<id>`: the idempotency key of a start and the id of a signal (invariant 3). */
function dedupeKey(webhook: string, deliveryId: string): string {
  return `webhook:${webhook}:${deliveryId}`;
}

/** The route's answer, or a 500 that names the webhook (invariant 5). */
async function routed(
  definition: WebhookDefinition,
  req: WebhookRequest,
): Promise<WebhookAction | undefined> {
  try {
    return await definition.route(req);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(
      API_CODES.webhookRouteFailed,
      `webhook '${definition.name}': its route threw ${(err as Error).name ?? 'an error'}: ${(err as Error).message}`,
    );
  }
}

const ACTIONS = ['start', 'signal', 'resolve', 'reject', 'ignore', 'refuse'] as const;

function routeBug(webhook: string, what: string): ApiError {
  return new ApiError(
    API_CODES.webhookRouteFailed,
    `webhook '${webhook}': its route returned ${what}; return one of { start }, { signal }, { resolve }, ` +
      '{ reject }, { ignore: reason }, { refuse: reason } or nothing',
  );
}

/** Carries out one action (invariants 3 and 4). */
async function perform(
  call: ApiCall,
  webhook: string,
  deliveryId: string,
  action: WebhookAction | undefined,
): Promise<ApiAnswer> {
  const base = { webhook, deliveryId };
  if (action === undefined || action === null) return { status: 200, body: { ...base, action: 'ignore' } };
  if (typeof action !== 'object') throw routeBug(webhook, JSON.stringify(action));
  const keys = Object.keys(action).filter((k) => (ACTIONS as readonly string[]).includes(k));
  if (keys.length !== 1)
    throw routeBug(webhook, `an object with ${keys.length === 0 ? 'no action' : keys.join(' and ')}`);
  const { client } = call;
  if ('ignore' in action)
    return { status: 200, body: { ...base, action: 'ignore', reason: String(action.ignore) } };
  if ('refuse' in action)
    throw new ApiError(
      API_CODES.webhookRefused,
      `webhook '${webhook}' refused the delivery: ${String(action.refuse)}`,
    );
  if ('start' in action) {
    const { workflow, version, input, idempotencyKey } = action.start;
    const name = typeof workflow === 'string' ? workflow : workflow?.name;
    const chosen = version ?? (typeof workflow === 'string' ? undefined : workflow?.version);
    if (typeof name !== 'string') throw routeBug(webhook, 'a start without a workflow');
    const outcome = await startRun(client, call.workflows, {
      workflow: name,
      ...(chosen !== undefined && { version: chosen }),
      ...(input !== undefined && { input }),
      idempotencyKey: idempotencyKey ?? dedupeKey(webhook, deliveryId),
    });
    return {
      status: outcome.created ? 201 : 200,
      body: { ...base, action: 'start', runId: outcome.runId, created: outcome.created },
    };
  }
  if ('signal' in action) {
    const { runId, name, payload } = action.signal;
    const signalName = typeof name === 'string' ? name : name?.name;
    if (typeof runId !== 'string' || typeof signalName !== 'string')
      throw routeBug(webhook, 'a signal without a runId and a name');
    const run = await client.describe(runId);
    if (isFinishedRun(run.status) && run.continuedAs === undefined)
      return {
        status: 200,
        body: { ...base, action: 'signal', runId, signal: signalName, dropped: `the run is ${run.status}` },
      };
    await client.signal(runId, signalName, payload ?? null, { signalId: dedupeKey(webhook, deliveryId) });
    return { status: 202, body: { ...base, action: 'signal', runId, signal: signalName } };
  }
  if ('resolve' in action) {
    const { state } = await client.promises.resolve(action.resolve.token, action.resolve.value ?? null);
    return { status: 200, body: { ...base, action: 'resolve', status: state } };
  }
  const { state } = await client.promises.reject(action.reject.token, action.reject.error);
  return { status: 200, body: { ...base, action: 'reject', status: state } };
}

/** The one webhook route; http-api.ts gives it the raw body and skips its admission (invariant 1). */
export const WEBHOOK_ROUTES: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/v1/webhooks/{name}',
    write: true,
    verifiesItself: true,
    handle: async (call) => {
      const definition = call.webhooks.get(call.params['name']!);
      const headers = flatHeaders(call.headers);
      const body = call.rawBody ?? Buffer.alloc(0);
      const check = await definition.verify({ headers, body }, call.now());
      if (!check.ok)
        throw new ApiError(
          API_CODES.badSignature,
          `webhook '${definition.name}' refused the delivery's signature: ${check.reason}`,
        );
      const deliveryId = deliveryIdOf(definition, headers, body, check.signedId);
      const request: WebhookRequest = {
        webhook: definition.name,
        headers,
        body,
        query: call.query,
        deliveryId,
        text: () => body.toString('utf8'),
        json: () => jsonOf(definition.name, body),
        form: () => new URLSearchParams(body.toString('utf8')),
      };
      return perform(call, definition.name, deliveryId, await routed(definition, request));
    },
  },
];
