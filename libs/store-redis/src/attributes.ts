/**
 * Search attributes on Redis (`store.attributes`; contracts/attributes.ts in @baton/core): a run's
 * attributes are fields of its record, and set-attributes.lua changes them with their indexes and
 * counts in one script (one round trip), fenced by the lease's epoch; the status-changing scripts
 * move the counts (lua/prelude.lua). A count reads the one hash of its value.
 *
 * A stored attribute is '<t>:<value>': `k` keyword, `b` boolean, `n` number, `t` time (ms); a
 * number is written as JavaScript writes it (`String(n)`, the shortest form that reads back as the
 * same double), so Lua never formats one and the index's score is the value exactly.
 */
import {
  FencedWriteError,
  RUN_STATUSES,
  type AttributeChanges,
  type OperationsOf,
  type RunAttribute,
  type RunAttributeStore,
  type RunCounts,
  type RunStatus,
} from '@baton/core/adapter';
import type { StoreContext } from './context.js';

/** A keyword or boolean value, whose runs the store counts as they change. */
type CountedAttribute = Parameters<RunAttributeStore['count']>[1];

/** The type letter of a stored attribute. */
export const TYPE_LETTER = { keyword: 'k', boolean: 'b', number: 'n', time: 't' } as const;

const TYPE_OF_LETTER: Record<string, RunAttribute['type']> = {
  k: 'keyword',
  b: 'boolean',
  n: 'number',
  t: 'time',
};

/** An attribute as the record's `attr:<name>` field holds it. */
export function storedAttribute(attribute: RunAttribute): string {
  return `${TYPE_LETTER[attribute.type]}:${String(attribute.value)}`;
}

/** A record field's attribute back; undefined for a form this code does not know. */
export function readStoredAttribute(stored: string): RunAttribute | undefined {
  const type = TYPE_OF_LETTER[stored.slice(0, 1)];
  const text = stored.slice(2);
  switch (type) {
    case 'keyword':
      return { type, value: text };
    case 'boolean':
      return { type, value: text === 'true' };
    case 'number':
    case 'time':
      return { type, value: Number(text) };
    default:
      return undefined;
  }
}

async function set(
  ctx: StoreContext,
  runId: string,
  epoch: number,
  changes: AttributeChanges,
): Promise<void> {
  const pairs = Object.entries(changes).flatMap(([name, attribute]) => [
    name,
    attribute === null ? '' : storedAttribute(attribute),
  ]);
  const reply = await ctx.run(
    'set-attributes',
    [ctx.keys.lease(runId), ctx.keys.run(runId)],
    [ctx.keys.prefix, epoch, runId, ...pairs],
  );
  if (reply !== 'ok') throw new FencedWriteError(runId, epoch, 'attributes.set');
}

async function count(ctx: StoreContext, name: string, attribute: CountedAttribute): Promise<RunCounts> {
  const fields = await ctx.redis.hgetall(
    `${ctx.keys.prefix}index:attrc:${name}:${storedAttribute(attribute)}`,
  );
  const byStatus = Object.fromEntries(RUN_STATUSES.map((status) => [status, 0])) as Record<RunStatus, number>;
  const byWorkflow: RunCounts['byWorkflow'] = {};
  let total = 0;
  for (const [field, value] of Object.entries(fields)) {
    // '<status>:<workflow>': a status has no ':', a workflow name may.
    const colon = field.indexOf(':');
    const status = field.slice(0, colon) as RunStatus;
    const n = Number(value);
    byStatus[status] += n;
    (byWorkflow[field.slice(colon + 1)] ??= {})[status] = n;
    total += n;
  }
  return { total, byStatus, byWorkflow };
}

/** `store.attributes` on the connection. */
export const attributes: OperationsOf<StoreContext, RunAttributeStore> = { set, count };
