/**
 * What every store does the same way with a run query, done once by `checkedStore`
 * (checked-store.ts) before the store adapter is asked: check it (one ConfigError naming the
 * field), read its cursor back, and issue the next page's. A cursor is the position of the last
 * run on a page (createdAt, run id) with a fingerprint of the filter and order it was issued for,
 * base64url encoded; a store never trusts one it cannot read back, or one issued for another query.
 */
import { createHash } from 'node:crypto';
import { ConfigError } from '../shared/errors.js';
import { checkAttributeFilter } from './attribute-check.js';
import {
  DEFAULT_RUN_PAGE,
  MAX_RUN_PAGE,
  type CheckedRunQuery,
  type RunFilter,
  type RunPosition,
  type RunQuery,
} from './contracts/run-queries.js';
import { RUN_STATUSES, type RunStatus } from './contracts/run-record.js';

function fail(field: string, problem: string): never {
  throw new ConfigError(`run query: ${field} ${problem}`);
}

function checkRange(name: string, from: number | undefined, to: number | undefined): void {
  for (const [field, value] of [
    [`${name}After`, from],
    [`${name}Before`, to],
  ] as const) {
    if (value !== undefined && !Number.isFinite(value)) fail(field, `is ${String(value)}; give a time in ms`);
  }
  if (from !== undefined && to !== undefined && !(from < to))
    fail(`${name}After`, `(${from}) must be before ${name}Before (${to})`);
}

/** Checks a query; ConfigError naming the field when it is invalid. */
export function checkRunQuery(query: RunQuery = {}): CheckedRunQuery {
  const { order = 'newest', limit = DEFAULT_RUN_PAGE, cursor, ...filter } = query;
  if (order !== 'newest' && order !== 'oldest') fail('order', `is '${String(order)}'; use newest or oldest`);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_RUN_PAGE)
    fail('limit', `is ${String(limit)}; give a whole number from 1 to ${MAX_RUN_PAGE}`);
  let statuses: Set<RunStatus> | undefined;
  if (filter.status !== undefined) {
    const given = typeof filter.status === 'string' ? [filter.status] : [...filter.status];
    if (given.length === 0) fail('status', 'is empty; give at least one status or leave it out');
    for (const status of given)
      if (!RUN_STATUSES.includes(status))
        fail('status', `'${String(status)}' is not a run status (${RUN_STATUSES.join(', ')})`);
    statuses = new Set(given);
  }
  if (filter.version !== undefined && (!Number.isInteger(filter.version) || filter.version < 1))
    fail('version', `is ${String(filter.version)}; give a whole number of at least 1`);
  checkRange('created', filter.createdAfter, filter.createdBefore);
  checkRange('updated', filter.updatedAfter, filter.updatedBefore);
  for (const field of ['workflow', 'runIdPrefix', 'idempotencyKeyPrefix', 'worker'] as const) {
    const value = filter[field];
    if (value !== undefined && (typeof value !== 'string' || value.length === 0))
      fail(field, 'is empty; give a value or leave it out');
  }
  // Search attributes (attribute-check.ts): tests sorted by name, in one normal form.
  const attributes = checkAttributeFilter(filter.attributes);
  const normalized: RunFilter = {
    ...filter,
    ...(statuses && { status: [...statuses].sort() }),
    attributes: attributes?.normal,
  };
  const after = cursor === undefined ? undefined : readRunCursor(cursor, normalized, order);
  return {
    filter: normalized,
    statuses,
    order,
    limit,
    after,
    ...(attributes && { attributes: attributes.tests }),
  };
}

/** The fingerprint of a filter and order: a cursor is good only for the query it came from. */
function fingerprint(filter: RunFilter, order: string): string {
  const fields = Object.entries(filter)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => a.localeCompare(b));
  return createHash('sha256')
    .update(JSON.stringify([order, fields]))
    .digest('base64url')
    .slice(0, 16);
}

/** The cursor after `last` for the checked query's filter and order. */
export function issueRunCursor(last: RunPosition, query: CheckedRunQuery): string {
  const body = JSON.stringify({
    c: last.createdAt,
    r: last.runId,
    f: fingerprint(query.filter, query.order),
  });
  return Buffer.from(body, 'utf8').toString('base64url');
}

function readRunCursor(cursor: string, filter: RunFilter, order: string): RunPosition {
  const malformed = (why: string): never =>
    fail('cursor', `is malformed (${why}); start the listing again without a cursor`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return malformed('not a cursor this store issued');
  }
  const { c, r, f } = (parsed ?? {}) as { c?: unknown; r?: unknown; f?: unknown };
  if (typeof c !== 'number' || !Number.isFinite(c) || typeof r !== 'string' || typeof f !== 'string')
    return malformed('not a cursor this store issued');
  if (f !== fingerprint(filter, order)) return malformed('it was issued for another filter or order');
  return { createdAt: c, runId: r };
}

/** Whether `position` comes after `after` in the listing's order (strictly). */
export function isAfter(position: RunPosition, after: RunPosition, order: 'newest' | 'oldest'): boolean {
  const byTime = position.createdAt - after.createdAt;
  const compared =
    byTime !== 0 ? byTime : position.runId < after.runId ? -1 : position.runId > after.runId ? 1 : 0;
  return order === 'oldest' ? compared > 0 : compared < 0;
}
