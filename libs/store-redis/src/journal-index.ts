/**
 * JournalIndex on Redis (`store.journalIndex`; group commit across runs, contracts/group-journal.ts): one list per run,
 * `<prefix>jptr:<runId>`, whose element i is the pointer at position GROUP_POSITION_BASE + i + 1
 * (`<record>:<log>`), or the single element `!own` for a run journaled on its own. Appends for
 * many runs are one operation of batch.lua (op_append_pointers in lua/prelude.lua), so one round trip records a whole group record's
 * pointers, each run decided on its own; delete-run.lua and delete-expired-runs.lua drop the list
 * with the run. Retention: `<prefix>glogs` (log -> newest recorded record) and one ZSET per log,
 * `<prefix>glog:<log>` (run -> the lowest record its pointers name there), kept by the same scripts
 * (lua/prelude.lua), so the oldest record a kept run needs is one ZRANGEBYSCORE away.
 *
 * Positions travel as offsets from the base (small integers), never as the 2^50-sized position:
 * Lua numbers are doubles and replies are integers, so nothing here depends on their precision.
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
import type { StoreContext } from './context.js';

/** The `expected` value of an append (op_append_pointers in lua/prelude.lua). */
function expectedArgument(expected: number | undefined): string {
  if (expected === undefined) return '';
  if (expected === 0) return '0';
  return isGroupPosition(expected) ? String(expected - GROUP_POSITION_BASE) : 'x';
}

async function appendPointers(
  ctx: StoreContext,
  appends: readonly PointerAppend[],
): Promise<PointerAppendResult[]> {
  if (appends.length === 0) return [];
  // batch.lua's append-pointers: the record and its log once, then three values per append. A
  // flush's pointers all name one record; appends naming several go as one operation per stretch
  // of the same record, in order (so two appends of one run still apply in order).
  const operations: Promise<unknown>[] = [];
  let args: (string | number)[] = [];
  appends.forEach(({ runId, expectedLastPosition, expectedLastPointer: last, log, record }, i) => {
    const previous = appends[i - 1];
    if (previous === undefined || previous.log !== log || previous.record !== record) {
      if (args.length > 0) operations.push(ctx.batched('append-pointers', args));
      args = [log, record];
    }
    // The hint goes as the element the run's list would end with (`<record>:<log>`).
    const hint =
      last !== undefined && isGroupPosition(expectedLastPosition ?? 0) ? `${last.record}:${last.log}` : '';
    args.push(runId, expectedArgument(expectedLastPosition), hint);
  });
  operations.push(ctx.batched('append-pointers', args));
  // Each reply: the run's count once appended, minus its count on a conflict, 0 when not grouped.
  const replies = (await Promise.all(operations)).flat() as number[];
  return replies.map((reply): PointerAppendResult => {
    if (reply === 0) return { status: 'not-grouped' };
    return reply > 0
      ? { status: 'appended', position: GROUP_POSITION_BASE + reply }
      : { status: 'conflict', lastPosition: GROUP_POSITION_BASE - reply };
  });
}

async function markOwnJournal(ctx: StoreContext, runId: string): Promise<'own' | 'grouped'> {
  return (await ctx.run('mark-own-journal', [ctx.keys.pointers(runId)], [])) as 'own' | 'grouped';
}

async function readPointers(
  ctx: StoreContext,
  runId: string,
  afterPosition: number,
  uptoPosition?: number,
): Promise<RunPointers> {
  const from = Math.max(0, afterPosition - GROUP_POSITION_BASE);
  const to = uptoPosition === undefined ? -1 : uptoPosition - GROUP_POSITION_BASE - 1;
  if (to !== -1 && to < from) {
    // An empty range still says whether the run is grouped.
    const [grouped] = (await ctx.run('read-pointers', [ctx.keys.pointers(runId)], [1, 0])) as [number];
    return { grouped: grouped === 1, pointers: [] };
  }
  const [grouped, ...pointers] = (await ctx.run('read-pointers', [ctx.keys.pointers(runId)], [from, to])) as [
    number,
    ...string[],
  ];
  return {
    grouped: grouped === 1,
    pointers: pointers.map((pointer, i): JournalPointer => {
      const colon = pointer.indexOf(':');
      return {
        position: GROUP_POSITION_BASE + from + i + 1,
        record: Number(pointer.slice(0, colon)),
        log: pointer.slice(colon + 1),
      };
    }),
  };
}

async function deletePointers(ctx: StoreContext, runId: string): Promise<void> {
  await ctx.run('delete-pointers', [ctx.keys.pointers(runId)], [ctx.keys.prefix, runId]);
}

async function groupLogUse(ctx: StoreContext): Promise<GroupLogUse[]> {
  const flat = (await ctx.run('group-log-use', [ctx.keys.groupLogs], [ctx.keys.prefix])) as string[];
  const uses: GroupLogUse[] = [];
  for (let i = 0; i < flat.length; i += 3) {
    const [log, newest, oldest] = [flat[i]!, flat[i + 1]!, flat[i + 2]!];
    uses.push(
      oldest === ''
        ? { log, newestRecorded: Number(newest) }
        : { log, oldestNeeded: Number(oldest), newestRecorded: Number(newest) },
    );
  }
  return uses;
}

async function forgetGroupLog(ctx: StoreContext, log: string, newestRecorded: number): Promise<boolean> {
  const reply = await ctx.run(
    'forget-group-log',
    [ctx.keys.groupLogs, ctx.keys.groupLogUse(log)],
    [log, newestRecorded],
  );
  return Number(reply) === 1;
}

/** `store.journalIndex`'s operations on the connection (whether it groups by default is the store's). */
export const journalIndex: OperationsOf<StoreContext, JournalIndex> = {
  appendPointers,
  markOwnJournal,
  readPointers,
  deletePointers,
  groupLogUse,
  forgetGroupLog,
};
