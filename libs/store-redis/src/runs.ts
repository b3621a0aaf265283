/**
 * RunIndex on Redis (`store.runs`, with the queries of queries.ts): run records with idempotency
 * keys, the atomic finish and the redrive of a failed run. Writes are one script call each (one
 * round trip); reads are one command.
 */
import {
  type Checkpoint,
  type CreatedAndLeased,
  type NewRunToLease,
  type NewRun,
  type OperationsOf,
  type ReopenResult,
  type RunIndex,
  type RunStatus,
  type RunOutcome,
  type RunRecord,
  FencedWriteError,
} from '@baton/core/adapter';
import { decodeRunRecord, decodeValue, encodeCheckpoint, encodeValue } from './codec.js';
import type { StoreContext } from './context.js';
import { acquireReply } from './leases.js';

/**
 * The keys of reopen-run.lua, which moves a finished run back out of its outcome: its
 * lease and record, the held and timer indexes, its checkpoints, and the finished-runs index.
 */
function outcomeKeys(keys: StoreContext['keys'], runId: string): string[] {
  return [
    keys.lease(runId),
    keys.run(runId),
    keys.held,
    keys.timers,
    keys.checkpoints(runId),
    keys.checkpointSummaries(runId),
    keys.finished,
  ];
}

/**
 * The arguments that describe a new run, as create_run in the prelude takes them after the prefix:
 * whether it has an idempotency key, its id, workflow, version, input (`inputJson`, encoded), key
 * and traceparent.
 */
function newRunFields(run: NewRunToLease, inputJson: string): Array<string | number> {
  const key = run.idempotencyKey;
  return [
    key === null ? '0' : '1',
    run.runId,
    run.workflow,
    run.version,
    inputJson,
    key ?? '',
    run.traceparent ?? '',
  ];
}

async function create(ctx: StoreContext, run: NewRun): Promise<{ created: boolean; run: RunRecord }> {
  const { keys } = ctx;
  const scriptKeys = [keys.run(run.runId), keys.checkpoints(run.runId), keys.checkpointSummaries(run.runId)];
  if (run.idempotencyKey !== null) scriptKeys.push(keys.idempotency(run.idempotencyKey));
  const seed = run.checkpoint === undefined ? undefined : encodeCheckpoint(run.checkpoint);
  const reply = (await ctx.run('create-run', scriptKeys, [
    keys.prefix,
    ...newRunFields(run, encodeValue(run.input)),
    seed?.json ?? '',
    seed?.summaryJson ?? '',
    run.forkedFrom === undefined ? '' : JSON.stringify(run.forkedFrom),
  ])) as [number, unknown[]];
  return { created: reply[0] === 1, run: decodeRunRecord(reply[1]) };
}

/** runs.create and, when it created the run, leases.acquire: one operation of batch.lua (op_claim_new_run in lua/prelude.lua). */
async function createAndLease(
  ctx: StoreContext,
  run: NewRunToLease,
  owner: string,
  ttlMs: number,
): Promise<CreatedAndLeased> {
  // batch.lua's claim-new-run: the new run's fields, then the lease's owner and ttl.
  const inputJson = encodeValue(run.input);
  const reply = (await ctx.batched('claim-new-run', [...newRunFields(run, inputJson), owner, ttlMs])) as [
    number,
    unknown,
    unknown[]?,
  ];
  // 2: created 'running' under lease epoch 1, at the server's time it answers; the record is what
  // was sent, so it is not sent back (decoded from the same JSON, so the caller gets its own copy of
  // the input, as from a record read back).
  if (reply[0] === 2) {
    const createdAt = Number(reply[1]);
    const record: RunRecord = {
      runId: run.runId,
      workflow: run.workflow,
      version: run.version,
      input: decodeValue(inputJson),
      idempotencyKey: run.idempotencyKey,
      status: 'running',
      createdAt,
      updatedAt: createdAt,
      attempts: 1,
    };
    if (run.traceparent) record.traceparent = run.traceparent;
    return { created: true, run: record, lease: { ok: true, epoch: 1, cancelRequested: false } };
  }
  const record = decodeRunRecord(reply[1] as unknown[]);
  if (reply[0] !== 1) return { created: false, run: record };
  return { created: true, run: record, lease: acquireReply(reply[2] ?? []) };
}

async function get(ctx: StoreContext, runId: string): Promise<RunRecord | undefined> {
  const hash = await ctx.redis.hgetall(ctx.keys.run(runId));
  return Object.keys(hash).length === 0 ? undefined : decodeRunRecord(hash);
}

async function finish(
  ctx: StoreContext,
  runId: string,
  epoch: number,
  outcome: RunOutcome,
  checkpoint?: Checkpoint,
): Promise<void> {
  const encoded = checkpoint === undefined ? undefined : encodeCheckpoint(checkpoint);
  const [field, value] =
    outcome.status === 'completed'
      ? ['result', encodeValue(outcome.result)]
      : ['error', JSON.stringify(outcome.error)];
  const reply = await ctx.batched('finish-run', [
    runId,
    epoch,
    outcome.status,
    field,
    value,
    encoded?.json ?? '',
    encoded?.summaryJson ?? '',
  ]);
  if (reply !== 'ok') throw new FencedWriteError(runId, epoch, 'runs.finish');
}

async function reopen(ctx: StoreContext, runId: string, checkpoint: Checkpoint): Promise<ReopenResult> {
  const { keys } = ctx;
  const { json, summaryJson } = encodeCheckpoint(checkpoint);
  const reply = (await ctx.run('reopen-run', outcomeKeys(keys, runId), [
    keys.prefix,
    runId,
    checkpoint.epoch,
    json,
    summaryJson,
  ])) as [number, string?];
  if (reply[0] === 1) return { reopened: true };
  const status = reply[1];
  return { reopened: false, status: status ? (status as RunStatus) : undefined };
}

async function continueAs(
  ctx: StoreContext,
  runId: string,
  epoch: number,
  successorRunId: string,
): Promise<void> {
  const { keys } = ctx;
  const reply = await ctx.run('continue-run', [keys.lease(runId), keys.run(runId)], [epoch, successorRunId]);
  if (reply !== 'ok') throw new FencedWriteError(runId, epoch, 'runs.continueAs');
}

/** `store.runs` on the connection, but its queries (queries.ts). */
export const runIndex: OperationsOf<StoreContext, RunIndex> = {
  create,
  createAndLease,
  get,
  finish,
  continueAs,
  reopen,
};
