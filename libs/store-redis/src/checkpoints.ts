/**
 * CheckpointStore on Redis (`store.checkpoints`): fenced checkpoints with history, in two lists
 * per run that run parallel (the bodies, and their summaries). A write is one script call (one
 * round trip), fenced by the lease's epoch; reads are one command, two for a given seq.
 */
import { CheckpointUnreadableError } from '@baton/core';
import {
  parseStoredCheckpoint,
  parseStoredSummary,
  type Checkpoint,
  type CheckpointStore,
  type CheckpointSummary,
  FencedWriteError,
  type OperationsOf,
} from '@baton/core/adapter';
import { encodeCheckpoint } from './codec.js';
import type { StoreContext } from './context.js';

async function write(ctx: StoreContext, checkpoint: Checkpoint): Promise<void> {
  const { keys } = ctx;
  const { runId, epoch } = checkpoint;
  const { json, summaryJson } = encodeCheckpoint(checkpoint);
  const reply = await ctx.run(
    'write-checkpoint',
    [keys.lease(runId), keys.checkpoints(runId), keys.checkpointSummaries(runId)],
    [epoch, json, summaryJson],
  );
  if (reply !== 'ok') throw new FencedWriteError(runId, epoch, 'checkpoints.write');
}

async function load(ctx: StoreContext, runId: string, seq?: number): Promise<Checkpoint | undefined> {
  let index = -1;
  if (seq !== undefined) {
    // The summaries list runs parallel to the checkpoints list: find the index there, read one body.
    const summaries = (await list(ctx, runId)).map((s) => s.seq);
    index = summaries.lastIndexOf(seq);
    if (index < 0) return undefined;
  }
  const json = await ctx.redis.lindex(ctx.keys.checkpoints(runId), index);
  if (json === null) return undefined;
  // A damaged body (not JSON, or not a checkpoint) raises CheckpointUnreadableError naming its
  // seq; the newest one's seq comes from its summary, read only then.
  try {
    return parseStoredCheckpoint(json, runId, seq);
  } catch (err) {
    if (!(err instanceof CheckpointUnreadableError) || err.seq !== undefined) throw err;
    const summary = await ctx.redis.lindex(ctx.keys.checkpointSummaries(runId), -1).catch(() => null);
    return parseStoredCheckpoint(json, runId, summarySeq(summary));
  }
}

async function list(ctx: StoreContext, runId: string): Promise<CheckpointSummary[]> {
  const summaries = await ctx.redis.lrange(ctx.keys.checkpointSummaries(runId), 0, -1);
  return summaries.map((json, i) => parseStoredSummary(json, runId, i));
}

/** The seq of a stored summary, or undefined when it cannot be read either. */
function summarySeq(json: string | null): number | undefined {
  try {
    const seq = (JSON.parse(json ?? 'null') as { seq?: unknown } | null)?.seq;
    return typeof seq === 'number' ? seq : undefined;
  } catch {
    return undefined;
  }
}

/** `store.checkpoints` on the connection. */
export const checkpoints: OperationsOf<StoreContext, CheckpointStore> = { write, load, list };
