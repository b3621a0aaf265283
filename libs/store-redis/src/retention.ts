/**
 * RetentionStore on Redis (`store.retention`): the finished index (a ZSET by finish time, kept by the finish (op_finish_run in lua/prelude.lua) and
 * reopen-run.lua) and the atomic delete of a finished run with its large payloads (delete-run.lua).
 *
 * Runs finished before the index existed are not in it, so retention never lists them;
 * retention.delete still deletes them when asked by id.
 */
import { refuseDelete, type OperationsOf, type RetentionStore, type RunTombstone } from '@baton/core/adapter';
import { str, type StoreContext } from './context.js';

async function expired(ctx: StoreContext, olderThanMs: number, limit: number): Promise<string[]> {
  if (limit <= 0) return [];
  const reply = (await ctx.run('expired-runs', [ctx.keys.finished], [olderThanMs, limit])) as unknown[];
  return reply.map(str);
}

async function deleteRun(ctx: StoreContext, runId: string): Promise<boolean> {
  const { keys } = ctx;
  const reply = (await ctx.run(
    'delete-run',
    [
      keys.lease(runId),
      keys.run(runId),
      keys.cancel(runId),
      keys.checkpoints(runId),
      keys.checkpointSummaries(runId),
      keys.inbox(runId),
      keys.signalNames(runId),
      keys.held,
      keys.timers,
      keys.finished,
      keys.payloads(runId),
      keys.pointers(runId),
    ],
    [keys.prefix, runId],
  )) as [number, unknown?];
  if (reply[0] === -1) throw refuseDelete(runId, str(reply[1]));
  return reply[0] === 1;
}

async function deleteExpired(
  ctx: StoreContext,
  olderThanMs: number,
  limit: number,
  tombstoneMs: number,
): Promise<string[]> {
  if (limit <= 0) return [];
  const { keys } = ctx;
  const reply = (await ctx.run(
    'delete-expired-runs',
    [keys.finished, keys.held, keys.timers],
    [keys.prefix, olderThanMs, limit, Math.max(1, tombstoneMs)],
  )) as unknown[];
  return reply.map(str);
}

async function tombstone(ctx: StoreContext, runId: string): Promise<RunTombstone | undefined> {
  const deletedAt = await ctx.redis.get(ctx.keys.tombstone(runId));
  return deletedAt === null ? undefined : { runId, deletedAt: Number(deletedAt) };
}

/** `store.retention` on the connection. */
export const retention: OperationsOf<StoreContext, RetentionStore> = {
  expired,
  delete: deleteRun,
  deleteExpired,
  tombstone,
};
