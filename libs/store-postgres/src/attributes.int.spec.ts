/**
 * Search attributes on Postgres beyond the shared conformance section: a range wider than
 * RANGE_SORT_LIMIT (queries.ts, invariant 4), which walks its attribute in the listing's order
 * instead of reading and sorting the range, pages through the same runs in the same order as a
 * narrow range's sort does, in both orders and with another attribute test; and the same pages
 * after the statements were prepared for good (a generic plan from the sixth call on).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunQuery, Store } from '@baton/core/adapter';
import { RANGE_SORT_LIMIT } from './queries.js';
import { TestSchemas, admin } from './test-support.spec-helper.js';

const schemas = new TestSchemas();
let store: Store;
let schema: string;
/** Every seeded run: its id, creation time and number attribute, in the listing's newest-first order. */
let seeded: { run_id: string; created_at: number; n: number; even: boolean }[];

const RUNS = RANGE_SORT_LIMIT + 1_500;

beforeAll(async () => {
  store = schemas.store();
  await store.connect();
  schema = (store as unknown as { options: { schema: string } }).options.schema;
  const s = `"${schema}"`;
  // Runs with `n` (a number, 0..RUNS-1) and `even` (a keyword), written as set_run_attributes
  // writes them; creation times repeat every 7 runs, so ties are broken by run id.
  await admin(`
INSERT INTO ${s}.runs (run_id, workflow, version, input, idempotency_key, status, created_at, updated_at, attempts, attributes)
SELECT 'r-' || lpad(g::text, 5, '0'), 'wide', 1, 'null'::json, NULL, 'completed', 1000 + g / 7, 1000 + g / 7, 1,
  jsonb_build_object('n', jsonb_build_object('type', 'number', 'value', g),
                     'even', jsonb_build_object('type', 'keyword', 'value', CASE WHEN g % 2 = 0 THEN 'yes' ELSE 'no' END))
FROM generate_series(0, ${RUNS - 1}) g`);
  await admin(`
INSERT INTO ${s}.run_attributes (run_id, name, type, keyword, num, created_at, workflow, status)
SELECT r.run_id, a.key, a.value ->> 'type',
       CASE WHEN a.value ->> 'type' = 'keyword' THEN a.value ->> 'value' END,
       CASE WHEN a.value ->> 'type' = 'number' THEN (a.value ->> 'value')::double precision END,
       r.created_at, r.workflow, r.status
FROM ${s}.runs r, jsonb_each(r.attributes) a`);
  await admin(`ANALYZE ${s}.run_attributes`);
  seeded = (
    await admin<{ run_id: string; created_at: number; n: string }>(
      `SELECT run_id, created_at, (attributes -> 'n' ->> 'value') AS n FROM ${s}.runs
       ORDER BY created_at DESC, run_id COLLATE "C" DESC`,
    )
  ).map((r) => ({ ...r, created_at: Number(r.created_at), n: Number(r.n), even: Number(r.n) % 2 === 0 }));
}, 120_000);

afterAll(async () => {
  await store?.close();
  await schemas.dropAll();
});

/** Every page of `query`, `limit` runs a page (bounded). */
async function pages(query: RunQuery): Promise<string[][]> {
  const out: string[][] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 400; i++) {
    const page = await store.runs.list({ ...query, ...(cursor !== undefined && { cursor }) });
    out.push(page.runs.map((r) => r.runId));
    if (page.cursor === undefined) return out;
    cursor = page.cursor;
  }
  throw new Error('no last page');
}

describe('search attribute ranges on postgres', () => {
  it(
    'walks a range wider than the sort limit in order, in pages, as a narrow range is sorted',
    { timeout: 120_000 },
    async () => {
      const wide = { gte: 1_000, lt: RUNS } as const; // wider than RANGE_SORT_LIMIT
      expect(RUNS - 1_000).toBeGreaterThan(RANGE_SORT_LIMIT);
      const expected = seeded.filter((r) => r.n >= wide.gte && r.n < wide.lt).map((r) => r.run_id);
      // The first pages, newest first, then oldest first across the end.
      const first = (await store.runs.list({ attributes: { n: wide }, limit: 200 })).runs.map((r) => r.runId);
      expect(first).toEqual(expected.slice(0, 200));
      const oldest = await store.runs.list({ attributes: { n: wide }, limit: 300, order: 'oldest' });
      expect(oldest.runs.map((r) => r.runId)).toEqual([...expected].reverse().slice(0, 300));
      // With another attribute test, page after page to the end.
      const evens = await pages({ attributes: { n: { gt: 999 }, even: 'yes' }, limit: 1_000 });
      expect(evens.flat()).toEqual(seeded.filter((r) => r.n > 999 && r.even).map((r) => r.run_id));
      // A narrow range, read and sorted: the same order.
      const narrow = await pages({ attributes: { n: { gte: 100, lte: 140 } }, limit: 7 });
      expect(narrow.flat()).toEqual(seeded.filter((r) => r.n >= 100 && r.n <= 140).map((r) => r.run_id));
    },
  );

  it(
    'answers the same once its statements are prepared for good (generic plans)',
    { timeout: 60_000 },
    async () => {
      const queries: RunQuery[] = [
        { attributes: { n: { gte: 10, lt: 20 } }, limit: 5 },
        { attributes: { n: { gte: 10 } }, limit: 5 },
        { attributes: { even: 'no', n: { lt: 4_000 } }, limit: 5 },
      ];
      for (const query of queries) {
        const answers = [];
        for (let i = 0; i < 8; i++) answers.push((await store.runs.list(query)).runs.map((r) => r.runId));
        for (const answer of answers) expect(answer).toEqual(answers[0]);
      }
    },
  );
});
