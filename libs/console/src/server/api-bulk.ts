/**
 * Bulk actions on the runs page's current filter: the count first (a dry run, what the
 * confirmation quotes), then the action started as a job (bulk-jobs.ts) whose progress the page
 * polls. Built on client.bulk, which walks the runs with the store's cursor and refuses, with the
 * reason, each run in a state the action does not take. Dead letters the same way: how many a
 * redrive would take (all, or one code's), then client.bulk.redriveDeadLetters as a job.
 */
import {
  BULK_RUN_ACTION_NAMES,
  type BulkRunActionName,
  type Client,
  type DeadLetterFilter,
  type RunFilter,
  decodeDeadLetter,
} from '@baton/client';
import { runQueryOf } from './api-runs.js';
import { bodyObject, HttpError, type Route } from './http-kit.js';

function actionOf(text: string | null | undefined): BulkRunActionName {
  if (!BULK_RUN_ACTION_NAMES.includes(text as BulkRunActionName))
    throw new HttpError(
      400,
      `'action' must be one of ${BULK_RUN_ACTION_NAMES.join(', ')}, got '${text ?? ''}'`,
    );
  return text as BulkRunActionName;
}

/** The runs page's filter, without what only a listing takes (order, page size, cursor). */
function filterOf(params: URLSearchParams): RunFilter {
  const { order: _order, limit: _limit, cursor: _cursor, ...filter } = runQueryOf(params);
  return filter;
}

/** A dead-letter code as the page sends it: absent or empty for every letter. */
function deadLetterFilterOf(code: unknown): DeadLetterFilter {
  if (code === undefined || code === null || code === '') return {};
  if (typeof code !== 'string' || code.length > 200)
    throw new HttpError(
      400,
      `'code' must be a dead-letter code (e.g. unknown-workflow), got ${JSON.stringify(code)}`,
    );
  return { code };
}

/** What a bulk redrive of `filter` would do now: letters it takes, those it refuses, and every code's count. */
async function countDeadLetters(
  client: Client,
  filter: DeadLetterFilter,
): Promise<{ count: number; unreadable: number; codes: Record<string, number> }> {
  let count = 0;
  let unreadable = 0;
  const codes: Record<string, number> = {};
  let cursor: string | undefined;
  do {
    const page = await client.deadLetters.list({ limit: 200, ...(cursor !== undefined && { cursor }) });
    for (const letter of page.letters) {
      codes[letter.code] = (codes[letter.code] ?? 0) + 1;
      if (filter.code !== undefined && letter.code !== filter.code) continue;
      // client.bulk.redriveDeadLetters refuses a letter whose message does not decode.
      if (decodeDeadLetter(letter).readable) count += 1;
      else unreadable += 1;
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  return { count, unreadable, codes };
}

export const BULK_ROUTES: Route[] = [
  {
    method: 'GET',
    path: /^\/api\/bulk\/dead-letters\/count$/,
    handle: async ({ client, query }) => {
      const filter = deadLetterFilterOf(query.get('code'));
      return { ...filter, ...(await countDeadLetters(client, filter)) };
    },
  },
  {
    method: 'POST',
    path: /^\/api\/bulk\/dead-letters\/redrive$/,
    action: true,
    handle: async ({ client, body, bulk, redact }) =>
      bulk.startRedrive(client, deadLetterFilterOf(bodyObject(body)['code']), redact),
  },
  {
    method: 'GET',
    path: /^\/api\/bulk\/count$/,
    handle: async ({ client, query }) => {
      const action = actionOf(query.get('action'));
      return { action, count: await client.bulk.count(filterOf(query), action) };
    },
  },
  {
    method: 'POST',
    path: /^\/api\/bulk\/run$/,
    action: true,
    handle: async ({ client, body, bulk, redact }) => {
      const fields = bodyObject(body);
      const action = actionOf(typeof fields['action'] === 'string' ? fields['action'] : undefined);
      const filterText = typeof fields['filter'] === 'string' ? fields['filter'] : '';
      const filter = filterOf(new URLSearchParams(filterText));
      // Checked before the job starts, so an invalid filter is a 400 here and nothing is done.
      await client.runs.list({ ...filter, limit: 1 });
      return bulk.start(client, action, filter, redact);
    },
  },
  {
    method: 'GET',
    path: /^\/api\/bulk\/jobs\/([^/]+)$/,
    handle: async ({ params, bulk }) => bulk.get(params[0]!),
  },
];
