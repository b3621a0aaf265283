/**
 * JournalIndex on Postgres (`store.journalIndex`; group commit across runs, contracts/group-journal.ts), over the tables
 * of migration 016: `journal_runs` (one row per run: its pointer count, or that it is journaled on
 * its own), `journal_pointers` (pointer n of a run, at position GROUP_POSITION_BASE + n) and
 * `group_logs` (each log's newest accepted record).
 *
 * Invariants:
 * 1. A pointer is written only while its transaction holds the run's `journal_runs` row (it
 *    updated it, or inserted it): two appends of one run are ordered by that row's lock, so each
 *    pointer count is given once, and a writer whose expected count is not the last is refused.
 * 2. append_pointers() takes runs in run id order, so concurrent calls never deadlock on runs.
 * 3. Deleting a run's pointers deletes its `journal_runs` row first, waiting for an append in
 *    flight, and then its pointers in a later statement (a later snapshot), so no pointer of an
 *    append that held the row outlives the delete. The retention batch skips a run whose row an
 *    append holds instead of waiting.
 * 4. `group_logs` takes the greatest record of every accepted pointer in the same transaction.
 *
 * Positions travel as offsets from the base (small integers), never as the 2^50-sized position,
 * as on Redis.
 */
import {
  GROUP_POSITION_BASE,
  isGroupPosition,
  type GroupLogUse,
  type JournalIndex,
  type JournalPointer,
  type OperationsOf,
  type PointerAppend,
  type PointerAppendResult,
  type RunPointers,
} from '@baton/core/adapter';
import type { Db } from './db.js';

/**
 * append_pointers()'s expected count for an append: NULL for a fence marker, 0 for an empty
 * journal, the count for a pointer position, -1 (never a count) for a position of the run's own journal.
 */
function expectedCount(expected: number | undefined): number | null {
  if (expected === undefined) return null;
  if (expected === 0) return 0;
  return isGroupPosition(expected) ? expected - GROUP_POSITION_BASE : -1;
}

const APPEND_SQL =
  'SELECT {{schema}}.append_pointers($1::text[], $2::bigint[], $3::text[], $4::bigint[]) AS results';

async function appendPointers(db: Db, appends: readonly PointerAppend[]): Promise<PointerAppendResult[]> {
  if (appends.length === 0) return [];
  const [row] = await db.query<{ results: string[] }>(APPEND_SQL, [
    appends.map((a) => a.runId),
    appends.map((a) => expectedCount(a.expectedLastPosition)),
    appends.map((a) => a.log),
    appends.map((a) => a.record),
  ]);
  const results = row?.results ?? [];
  if (results.length !== appends.length) {
    throw new Error(`append_pointers answered ${results.length} results for ${appends.length} appends`);
  }
  return results.map((reply): PointerAppendResult => {
    if (reply === 'n') return { status: 'not-grouped' };
    const count = Number(reply.slice(1));
    return reply.startsWith('a')
      ? { status: 'appended', position: GROUP_POSITION_BASE + count }
      : { status: 'conflict', lastPosition: GROUP_POSITION_BASE + count };
  });
}

const MARK_OWN_SQL = 'SELECT {{schema}}.mark_own_journal($1) AS answer';

async function markOwnJournal(db: Db, runId: string): Promise<'own' | 'grouped'> {
  const [row] = await db.query<{ answer: 'own' | 'grouped' }>(MARK_OWN_SQL, [runId]);
  return row?.answer ?? 'own';
}

// One statement, so whether the run is grouped and its pointers come from one snapshot. A run the
// index does not know gives no row; a run of its own one row with no pointer.
const READ_SQL = `
SELECT j.own_journal, p.n, p.log, p.record
FROM {{schema}}.journal_runs j
LEFT JOIN {{schema}}.journal_pointers p
  ON p.run_id = j.run_id AND NOT j.own_journal AND p.n > $2 AND ($3::bigint IS NULL OR p.n <= $3)
WHERE j.run_id = $1
ORDER BY p.n`;

async function readPointers(
  db: Db,
  runId: string,
  afterPosition: number,
  uptoPosition?: number,
): Promise<RunPointers> {
  const after = Math.max(0, afterPosition - GROUP_POSITION_BASE);
  const upto = uptoPosition === undefined ? null : uptoPosition - GROUP_POSITION_BASE;
  const rows = await db.query<{
    own_journal: boolean;
    n: number | null;
    log: string | null;
    record: number | null;
  }>(READ_SQL, [runId, after, upto]);
  if (rows.length === 0 || rows[0]!.own_journal) return { grouped: false, pointers: [] };
  return {
    grouped: true,
    pointers: rows
      .filter((r) => r.n !== null)
      .map((r): JournalPointer => ({ position: GROUP_POSITION_BASE + r.n!, log: r.log!, record: r.record! })),
  };
}

const DELETE_SQL = 'SELECT {{schema}}.delete_journal_pointers($1)';

async function deletePointers(db: Db, runId: string): Promise<void> {
  await db.query(DELETE_SQL, [runId]);
}

// One index probe of journal_pointers (log, record) per known log.
const USE_SQL = `
SELECT g.log, g.newest_recorded,
       (SELECT min(p.record) FROM {{schema}}.journal_pointers p WHERE p.log = g.log) AS oldest_needed
FROM {{schema}}.group_logs g
ORDER BY g.log`;

async function groupLogUse(db: Db): Promise<GroupLogUse[]> {
  const rows = await db.query<{ log: string; newest_recorded: number; oldest_needed: number | null }>(
    USE_SQL,
  );
  return rows.map(({ log, newest_recorded: newestRecorded, oldest_needed: oldestNeeded }) =>
    oldestNeeded === null ? { log, newestRecorded } : { log, oldestNeeded, newestRecorded },
  );
}

const FORGET_SQL = 'SELECT {{schema}}.forget_group_log($1, $2) AS forgotten';

async function forgetGroupLog(db: Db, log: string, newestRecorded: number): Promise<boolean> {
  const [row] = await db.query<{ forgotten: boolean }>(FORGET_SQL, [log, newestRecorded]);
  return row?.forgotten === true;
}

/** `store.journalIndex`'s operations over the pool (whether it groups by default is the store's). */
export const journalIndex: OperationsOf<Db, JournalIndex> = {
  appendPointers,
  markOwnJournal,
  readPointers,
  deletePointers,
  groupLogUse,
  forgetGroupLog,
};
