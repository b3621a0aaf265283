/**
 * Search attributes in SQL (`store.attributes`; contracts/attributes.ts in @baton/core): one call
 * of set_run_attributes() (migration 026) per change, fenced by the lease's epoch, which keeps the
 * record's `attributes`, the `run_attributes` rows the filters use (queries.ts) and, through their
 * triggers, the counts per keyword and boolean value; a count reads those counts.
 *
 * Invariants:
 * 1. A change is one statement: record, rows and counts commit together, or not at all.
 * 2. A count never counts runs: it sums the shards of run_attribute_counts for one value.
 */
import {
  FencedWriteError,
  type AttributeChanges,
  type OperationsOf,
  type RunAttributeStore,
  type RunCounts,
} from '@baton/core/adapter';
import type { Db } from './db.js';
import { countsOf, type CountRow } from './queries.js';

/** A keyword or boolean value, whose runs the store counts as they change. */
type CountedAttribute = Parameters<RunAttributeStore['count']>[1];

async function set(db: Db, runId: string, epoch: number, changes: AttributeChanges): Promise<void> {
  const [row] = await db.query<{ outcome: string }>(
    'SELECT {{schema}}.set_run_attributes($1, $2, $3::jsonb) AS outcome',
    [runId, epoch, JSON.stringify(changes)],
  );
  if (row?.outcome !== 'ok') throw new FencedWriteError(runId, epoch, 'attributes.set');
}

const COUNT_SQL = `
SELECT c.workflow, c.status, sum(c.count)::bigint AS count
FROM {{schema}}.run_attribute_counts c
WHERE c.name = $1 AND c.type = $2 AND c.keyword = $3
GROUP BY c.workflow, c.status
HAVING sum(c.count) > 0`;

async function count(db: Db, name: string, attribute: CountedAttribute): Promise<RunCounts> {
  return countsOf(await db.query<CountRow>(COUNT_SQL, [name, attribute.type, String(attribute.value)]));
}

/** `store.attributes` over the pool. */
export const attributes: OperationsOf<Db, RunAttributeStore> = { set, count };
