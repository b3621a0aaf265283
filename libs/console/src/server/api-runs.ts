/**
 * The runs page's API: one page of runs for a filter kept in the page's URL, and the counts by
 * status. The query string uses the store's own filter names (RunFilter), so the URL a person
 * shares is the query the store answers; search attributes (docs/search-attributes.md) are
 * `attr=<expression>` (repeatable) or `attr.<name>[:<type>]=<value>`, read by the client's
 * parseAttributeFilter, the CLI's `--attr` syntax.
 */
import {
  parseAttributeFilter,
  RUN_STATUSES,
  type AttributeCondition,
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

export const RUNS_ROUTES: Route[] = [
  {
    method: 'GET',
    path: /^\/api\/runs$/,
    handle: ({ client, query }) => client.runs.list(runQueryOf(query)),
  },
  {
    method: 'GET',
    path: /^\/api\/run-counts$/,
    // The counts of one keyword or boolean attribute's value when the filter names exactly that
    // (`attribute` says which); the whole store's otherwise.
    handle: async ({ client, query }) => {
      const attributes = attributesOf(query);
      const expressions = attributeExpressionsOf(query);
      if (attributes !== undefined && expressions.length === 1) {
        try {
          return { ...(await client.runs.count({ attributes })), attribute: expressions[0] };
        } catch (err) {
          if ((err as { code?: string }).code !== 'BATON_CONFIG') throw err;
        }
      }
      return client.runs.count();
    },
  },
];
