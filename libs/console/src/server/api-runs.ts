/**
 * The runs page's API: one page of runs for a filter kept in the page's URL (each suspended or
 * paused run with what it waits for), and the counts by status of the runs that filter matches. The query string uses the store's own filter names (RunFilter), so the URL a person
 * shares is the query the store answers; search attributes (docs/search-attributes.md) are
 * `attr=<expression>` (repeatable) or `attr.<name>[:<type>]=<value>`, read by the client's
 * parseAttributeFilter, the CLI's `--attr` syntax.
 */
import {
  parseAttributeFilter,
  RUN_STATUSES,
  type AttributeCondition,
  type Client,
  type RunQuery,
  type RunStatus,
} from '@baton/client';
import { HttpError, type Route } from './http-kit.js';

const TIME_FIELDS = ['createdAfter', 'createdBefore', 'updatedAfter', 'updatedBefore'] as const;
const TEXT_FIELDS = ['workflow', 'runIdPrefix', 'idempotencyKeyPrefix', 'worker', 'cursor'] as const;

function wholeNumber(field: string, text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new HttpError(400, `'${field}' must be a whole number, got '${text}'`);
  return n;
}

/**
 * The search attribute expressions of a query string: each `attr=<expression>`, and each
 * `attr.<name>[:<type>]=<value>` as `<name>[:<type>]=<value>`, or, when the value starts with an
 * operator (`>=`, `>`, `<=`, `<`, `=`), as `<name>[:<type>]<value>` (`attr.total=>=100`).
 */
export function attributeExpressionsOf(params: URLSearchParams): string[] {
  const expressions: string[] = [];
  for (const [key, value] of params) {
    if (key === 'attr') expressions.push(value);
    else if (key.startsWith('attr.')) {
      const name = key.slice('attr.'.length);
      expressions.push(/^(>=|<=|>|<|=)/.test(value) ? `${name}${value}` : `${name}=${value}`);
    }
  }
  return expressions;
}

/** The query string's search attribute filter, or undefined; 400 naming an expression that does not read. */
export function attributesOf(params: URLSearchParams): Record<string, AttributeCondition> | undefined {
  const expressions = attributeExpressionsOf(params);
  if (expressions.length === 0) return undefined;
  try {
    return parseAttributeFilter(expressions);
  } catch (err) {
    throw new HttpError(400, (err as Error).message);
  }
}

/** Turns the page's query string into a RunQuery; 400 names a field that is not valid. */
export function runQueryOf(params: URLSearchParams): RunQuery {
  const query: RunQuery = {};
  const status = params.get('status');
  if (status) {
    const list = status.split(',').filter((s) => s !== '');
    for (const s of list) {
      if (!RUN_STATUSES.includes(s as RunStatus))
        throw new HttpError(400, `'status' ${s} is not a run status (${RUN_STATUSES.join(', ')})`);
    }
    query.status = list as RunStatus[];
  }
  for (const field of TEXT_FIELDS) {
    const value = params.get(field);
    if (value) query[field] = value;
  }
  const version = params.get('version');
  if (version) query.version = wholeNumber('version', version);
  for (const field of TIME_FIELDS) {
    const value = params.get(field);
    if (!value) continue;
    // Milliseconds, or a date the page's date inputs produce.
    const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
    if (!Number.isFinite(ms))
      throw new HttpError(400, `'${field}' must be a time (ms or ISO date), got '${value}'`);
    query[field] = ms;
  }
  const order = params.get('order');
  if (order) {
    if (order !== 'newest' && order !== 'oldest')
      throw new HttpError(400, `'order' must be newest or oldest`);
    query.order = order;
  }
  const limit = params.get('limit');
  if (limit) query.limit = wholeNumber('limit', limit);
  const attributes = attributesOf(params);
  if (attributes !== undefined) query.attributes = attributes;
  return query;
}

/** The most runs the counts walk for a filter the store keeps no counts of (then marked `capped`). */
export const COUNT_WALK_LIMIT = 5_000;

/** The query-string keys that are no filter: paging, order, the page's columns, and status (the counts are by status). */
const NOT_FILTERS = new Set(['status', 'cursor', 'limit', 'order', 'cols']);

/** What the counts cover, so the page can say it. */
export type CountScope = 'all' | 'workflow' | 'attribute' | 'filter';

/**
 * The counts by status of the runs the page's filters match (all statuses: the status filter
 * picks among them). From the store's kept counts when the filter is none, one workflow, or one
 * keyword or boolean attribute; otherwise by walking the matching runs, at most
 * {@link COUNT_WALK_LIMIT} of them (`capped` then says the counts are of the first ones).
 */
async function filteredCounts(client: Client, params: URLSearchParams): Promise<object> {
  const keys = [...new Set([...params.keys()].filter((k) => !NOT_FILTERS.has(k) && params.get(k) !== ''))];
  if (keys.length === 0) return { ...(await client.runs.count()), scope: 'all' satisfies CountScope };
  const workflow = params.get('workflow');
  if (keys.length === 1 && keys[0] === 'workflow' && workflow) {
    const counts = await client.runs.count();
    const byStatus = Object.fromEntries(RUN_STATUSES.map((s) => [s, counts.byWorkflow[workflow]?.[s] ?? 0]));
    const total = Object.values(byStatus).reduce((a, b) => a + b, 0);
    return { total, byStatus, byWorkflow: { [workflow]: byStatus }, scope: 'workflow' satisfies CountScope };
  }
  const attributes = attributesOf(params);
  const expressions = attributeExpressionsOf(params);
  if (
    attributes !== undefined &&
    expressions.length === 1 &&
    keys.every((k) => k === 'attr' || k.startsWith('attr.'))
  ) {
    try {
      return { ...(await client.runs.count({ attributes })), attribute: expressions[0], scope: 'attribute' };
    } catch (err) {
      if ((err as { code?: string }).code !== 'BATON_CONFIG') throw err;
    }
  }
  const filter = runQueryOf(params);
  delete filter.status;
  delete filter.cursor;
  delete filter.limit;
  const byStatus = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
  let total = 0;
  let capped = false;
  for await (const run of client.runs.all({ ...filter, limit: 500 })) {
    if (total === COUNT_WALK_LIMIT) {
      capped = true;
      break;
    }
    byStatus[run.status]++;
    total++;
  }
  return {
    total,
    byStatus,
    byWorkflow: {},
    scope: 'filter' satisfies CountScope,
    ...(capped && { capped: true }),
  };
}

export const RUNS_ROUTES: Route[] = [
  {
    method: 'GET',
    path: /^\/api\/runs$/,
    // A suspended or paused run on the page carries what it waits for (client.runs.waits: one
    // store read each, for this page's runs only).
    handle: async ({ client, query }) => {
      const page = await client.runs.list(runQueryOf(query));
      const runs = await Promise.all(
        page.runs.map(async (run) =>
          run.status === 'suspended' || run.status === 'paused'
            ? { ...run, waits: await client.runs.waits(run.runId) }
            : run,
        ),
      );
      return { ...page, runs };
    },
  },
  {
    method: 'GET',
    path: /^\/api\/run-counts$/,
    handle: ({ client, query }) => filteredCounts(client, query),
  },
];
