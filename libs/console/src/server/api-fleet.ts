/**
 * The dead letters and workers pages' read API: dead letters a page at a time and one decoded,
 * the live workers, the workers that left lately (how each ended, where its runs went), the run
 * queue's backlog, and the workers' throughput and failures per minute
 * over the last hour (scraped from their /metrics: metrics-history.ts).
 */
import { HttpError, type Route } from './http-kit.js';

function pageLimit(text: string | null): number | undefined {
  if (!text) return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new HttpError(400, `'limit' must be a whole number ≥ 1`);
  return n;
}

export const FLEET_ROUTES: Route[] = [
  {
    method: 'GET',
    path: /^\/api\/dead-letters$/,
    handle: async ({ client, query }) => {
      const cursor = query.get('cursor');
      const limit = pageLimit(query.get('limit'));
      const page = await client.deadLetters.list({
        ...(cursor && { cursor }),
        ...(limit !== undefined && { limit }),
      });
      // A letter's bytes stay on the server (they may not even be text); the page opens one to decode it.
      return {
        letters: page.letters.map(({ data, ...letter }) => ({ ...letter, bytes: data.byteLength })),
        ...(page.cursor !== undefined && { cursor: page.cursor }),
      };
    },
  },
  {
    method: 'GET',
    path: /^\/api\/dead-letters\/([^/]+)$/,
    handle: async ({ client, params }) => {
      const shown = await client.deadLetters.show(params[0]!);
      // The raw bytes stay on the server: the page gets the decoded message, or why it is not one.
      const { data, ...rest } = shown;
      return { ...rest, bytes: data.byteLength };
    },
  },
  {
    method: 'GET',
    path: /^\/api\/workers$/,
    handle: ({ client }) => client.fleet.workers(),
  },
  {
    method: 'GET',
    path: /^\/api\/workers\/departed$/,
    handle: ({ client }) => client.fleet.departed(),
  },
  {
    method: 'GET',
    path: /^\/api\/backlog$/,
    handle: ({ client }) => client.fleet.backlog(),
  },
  {
    method: 'GET',
    path: /^\/api\/metrics$/,
    handle: ({ metrics }) => Promise.resolve(metrics.snapshot()),
  },
];
