/**
 * The header's search box: one text, tried in turn as a run id (exact), an idempotency key (the
 * runs whose key is exactly it, of any workflow: a key is unique per workflow only), and a search
 * attribute filter (`customerId=42`, the CLI's `--attr` syntax). The answer says where to go, or
 * everything that was tried when nothing matched, so the page can say it.
 */
import { NotFoundError } from '@baton/core';
import { parseAttributeFilter, type ListedRun } from '@baton/client';
import { HttpError, type Route } from './http-kit.js';

/** How many runs sharing one idempotency key (one per workflow) the answer lists at most. */
const KEY_MATCHES = 20;

export type SearchAnswer =
  | { found: 'run'; runId: string }
  | { found: 'key'; runs: Array<Pick<ListedRun, 'runId' | 'workflow' | 'version' | 'status'>> }
  | { found: 'attribute'; expression: string }
  | { found: 'nothing'; tried: string[] };

async function runExists(client: Parameters<Route['handle']>[0]['client'], runId: string): Promise<boolean> {
  try {
    await client.describe(runId);
    return true;
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}

export const SEARCH_ROUTES: Route[] = [
  {
    method: 'GET',
    path: /^\/api\/search$/,
    handle: async ({ client, query }): Promise<SearchAnswer> => {
      const text = (query.get('q') ?? '').trim();
      if (text === '')
        throw new HttpError(400, 'search for a run id, an idempotency key or an attribute filter (?q=...)');
      const tried: string[] = [];
      if (await runExists(client, text)) return { found: 'run', runId: text };
      tried.push(`no run has the id '${text}'`);
      const page = await client.runs.list({ idempotencyKeyPrefix: text, limit: 100 });
      const runs = page.runs
        .filter((r) => r.idempotencyKey === text)
        .slice(0, KEY_MATCHES)
        .map(({ runId, workflow, version, status }) => ({ runId, workflow, version, status }));
      if (runs.length > 0) return { found: 'key', runs };
      tried.push(`no run has the idempotency key '${text}'`);
      try {
        parseAttributeFilter([text]);
        return { found: 'attribute', expression: text };
      } catch (err) {
        tried.push(`it is not an attribute filter (${(err as Error).message})`);
      }
      return { found: 'nothing', tried };
    },
  },
];
