/**
 * Updates on Redis (`store.updates`, contracts/updates.ts in @baton/core): per run, a hash of the
 * pending requests and a list of their ids in arrival order, and a hash of the settled outcomes
 * (keys.ts: `upd:`, `upd-order:`, `upd-kept:`), deleted with the run (prelude.lua's drop_run).
 * Every change is one script call (request-update.lua, settle-update.lua); values are JSON Lua
 * never decodes, each prefixed by the server's time.
 */
import {
  FencedWriteError,
  type KeptUpdate,
  type OperationsOf,
  type UpdateOutcome,
  type UpdateRequest,
  type UpdateRequestResult,
  type UpdateStore,
} from '@baton/core/adapter';
import { pipelineResults, str, type StoreContext } from './context.js';

/** A stored '<time>|<json>' as its time and parsed JSON. */
function timed<T>(stored: string): { at: number; value: T } {
  const bar = stored.indexOf('|');
  return { at: Number(stored.slice(0, bar)), value: JSON.parse(stored.slice(bar + 1)) as T };
}

function keptUpdate(updateId: string, stored: string): KeptUpdate {
  const { at, value } = timed<{ name: string; outcome: UpdateOutcome }>(stored);
  return { updateId, name: value.name, outcome: value.outcome, settledAt: at };
}

async function request(
  ctx: StoreContext,
  runId: string,
  asked: Omit<UpdateRequest, 'requestedAt'>,
): Promise<UpdateRequestResult> {
  const { keys } = ctx;
  const reply = (await ctx.run(
    'request-update',
    [
      keys.lease(runId),
      keys.run(runId),
      keys.updatesPending(runId),
      keys.updatesOrder(runId),
      keys.updatesKept(runId),
      keys.held,
      keys.timers,
    ],
    [keys.prefix, runId, asked.updateId, JSON.stringify({ name: asked.name, args: asked.args })],
  )) as [number, number, number, string?, string?];
  if (reply[4] !== undefined) {
    return {
      found: true,
      wake: false,
      continuedAs: str(reply[4]),
      ...(reply[2] === 1 && { finished: true }),
    };
  }
  if (reply[3] !== undefined) {
    return { found: true, wake: false, kept: keptUpdate(asked.updateId, str(reply[3])) };
  }
  if (reply[2] === 1) return { found: true, wake: false, finished: true };
  return { found: reply[0] === 1, wake: reply[1] === 1 };
}

async function pending(ctx: StoreContext, runId: string): Promise<UpdateRequest[]> {
  const { keys } = ctx;
  const reply = (await ctx.run(
    'pending-updates',
    [keys.updatesPending(runId), keys.updatesOrder(runId)],
    [],
  )) as unknown[];
  const requests: UpdateRequest[] = [];
  for (let i = 0; i + 1 < reply.length; i += 2) {
    const { at, value } = timed<{ name: string; args: unknown }>(str(reply[i + 1]));
    requests.push({ updateId: str(reply[i]), name: value.name, args: value.args, requestedAt: at });
  }
  return requests;
}

async function waiting(ctx: StoreContext, runIds: readonly string[]): Promise<string[]> {
  const ids = [...new Set(runIds)];
  if (ids.length === 0) return [];
  const pipeline = ctx.redis.pipeline();
  for (const runId of ids) pipeline.exists(ctx.keys.updatesPending(runId));
  const found = pipelineResults(await pipeline.exec());
  return ids.filter((_, i) => Number(found[i]) > 0);
}

async function settle(
  ctx: StoreContext,
  runId: string,
  epoch: number,
  settlement: Omit<KeptUpdate, 'settledAt'>,
): Promise<KeptUpdate> {
  const { keys } = ctx;
  const reply = (await ctx.run(
    'settle-update',
    [keys.lease(runId), keys.updatesPending(runId), keys.updatesOrder(runId), keys.updatesKept(runId)],
    [
      String(epoch),
      settlement.updateId,
      JSON.stringify({ name: settlement.name, outcome: settlement.outcome }),
    ],
  )) as [string, string?];
  if (reply[0] !== 'ok') throw new FencedWriteError(runId, epoch, `updates.settle(${settlement.updateId})`);
  return keptUpdate(settlement.updateId, str(reply[1]));
}

async function outcome(ctx: StoreContext, runId: string, updateId: string): Promise<KeptUpdate | undefined> {
  const stored = await ctx.redis.hget(ctx.keys.updatesKept(runId), updateId);
  return stored === null ? undefined : keptUpdate(updateId, stored);
}

/** `store.updates` on the connection. */
export const updates: OperationsOf<StoreContext, UpdateStore> = {
  request,
  pending,
  waiting,
  settle,
  outcome,
};
