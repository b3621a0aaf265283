/**
 * Bulk actions on the runs page's current filter: the count first (a dry run, what the
 * confirmation quotes), then the action started as a job (bulk-jobs.ts) whose progress the page
 * polls. Built on client.bulk, which walks the runs with the store's cursor and refuses, with the
 * reason, each run in a state the action does not take.
 */
import { BULK_RUN_ACTION_NAMES, type BulkRunActionName, type RunFilter } from '@baton/client';
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

export const BULK_ROUTES: Route[] = [
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
