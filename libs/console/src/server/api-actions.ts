/**
 * The actions: every route here changes a run or a dead letter, so each is marked `action` and
 * the server refuses it in read-only mode and without a valid CSRF token before it gets here.
 * Each answers with what happened, in the client's words, for the page to show.
 */
import { bodyObject, HttpError, optionalString, type Route } from './http-kit.js';

const RUN = '\\/api\\/runs\\/([^/]+)';

function route(name: string, handle: Route['handle']): Route {
  return { method: 'POST', path: new RegExp(`^${RUN}\\/${name}$`), action: true, handle };
}

function forkPoint(
  body: Record<string, unknown>,
): { fromCheckpoint: number } | { fromJournalPosition: number } {
  const { fromCheckpoint, fromJournalPosition } = body;
  if ((fromCheckpoint === undefined) === (fromJournalPosition === undefined))
    throw new HttpError(400, 'a fork needs exactly one of fromCheckpoint and fromJournalPosition');
  const point = fromCheckpoint ?? fromJournalPosition;
  if (typeof point !== 'number' || !Number.isSafeInteger(point) || point < 0)
    throw new HttpError(400, 'the fork point must be a whole number ≥ 0');
  return fromCheckpoint !== undefined ? { fromCheckpoint: point } : { fromJournalPosition: point };
}

export const ACTION_ROUTES: Route[] = [
  route('cancel', async ({ client, params, body }) => {
    const reason = optionalString(bodyObject(body), 'reason') ?? 'cancelled from the console';
    await client.cancel(params[0]!, reason);
    return { done: `cancel requested: the run stops at its next step and ends cancelled` };
  }),
  route('signal', async ({ client, params, body }) => {
    const fields = bodyObject(body);
    const name = optionalString(fields, 'name');
    if (name === undefined) throw new HttpError(400, "a signal needs a 'name'");
    await client.signal(params[0]!, name, fields['payload']);
    return { done: `signal '${name}' sent` };
  }),
  route('pause', async ({ client, params, body }) => {
    const state = await client.runs.pause(params[0]!, optionalString(bodyObject(body), 'reason'));
    return { done: state === 'paused' ? 'paused' : 'pause requested: the run pauses at its next step' };
  }),
  route('resume', async ({ client, params }) => {
    const resumed = await client.runs.resume(params[0]!);
    return { done: resumed ? 'resumed' : 'nothing to resume: the run was not paused' };
  }),
  route('retry', async ({ client, params }) => {
    await client.timeTravel.retry(params[0]!);
    return { done: 'retried: the run resumes from its last checkpoint' };
  }),
  route('fork', async ({ client, params, body }) => {
    const fork = await client.timeTravel.fork(params[0]!, forkPoint(bodyObject(body)));
    return { done: `forked as run ${fork.runId}`, runId: fork.runId };
  }),
  route('delete', async ({ client, params }) => {
    await client.runs.delete(params[0]!);
    return { done: 'deleted' };
  }),
  {
    method: 'POST',
    path: /^\/api\/dead-letters\/([^/]+)\/redrive$/,
    action: true,
    handle: async ({ client, params }) => {
      const result = await client.deadLetters.redrive(params[0]!);
      return { done: `redriven: ${result.bytes} bytes back on the run queue` };
    },
  },
  {
    method: 'POST',
    path: /^\/api\/dead-letters\/purge$/,
    action: true,
    handle: async ({ client, body }) => {
      const fields = bodyObject(body);
      const ids = fields['ids'];
      if (fields['all'] === true) return { done: `purged ${await client.deadLetters.purge({ all: true })}` };
      if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string'))
        throw new HttpError(400, "a purge needs 'ids' (a list of letter ids) or 'all': true");
      return { done: `purged ${await client.deadLetters.purge({ ids: ids as string[] })}` };
    },
  },
];
