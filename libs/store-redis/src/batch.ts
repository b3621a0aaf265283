/**
 * The store's work per run, amortised across runs: the operations a worker calls once per run or
 * per flush (claim-new-run, finish-run, close-cancels, append-pointers) are gathered from every
 * run of the process and sent as one batch.lua call, so Redis runs one script, parses one command
 * and writes one reply for many of them, as group commit already does for the pointers.
 *
 * When a call goes is core's CallBatcher (@baton/core/adapter). Each operation still answers on its own:
 * its own reply, or its own error (batch.lua runs each in a pcall), and every operation of a batch
 * whose call failed as a whole (the connection dropped, the server refused the script) gets that
 * call's error, as its own script's call would have. Nothing is retried here.
 */
import { CallBatcher } from '@baton/core/adapter';
import type { ScriptRunner } from './scripts.js';

/** The operations batch.lua runs (its FORMS table; the prelude's op_* functions). */
export type BatchedOperation = 'claim-new-run' | 'finish-run' | 'close-cancels' | 'append-pointers';

/**
 * Runs one batchable operation, gathered with others into one call: its arguments as batch.lua
 * lists them per operation (no keys: the script builds them from the prefix and the run's id).
 */
export type BatchedRunner = (name: BatchedOperation, args: readonly (string | number)[]) => Promise<unknown>;

interface Pending {
  readonly name: BatchedOperation;
  readonly args: readonly (string | number)[];
  readonly resolve: (reply: unknown) => void;
  readonly reject: (err: unknown) => void;
}

/** At most this many operations per call: a bound on one script's run time on the server. */
export const MAX_BATCH_OPERATIONS = 256;
/** Calls in flight at once; more operations wait for one to answer, gathering meanwhile. */
const MAX_IN_FLIGHT = 2;

/** An error a single operation of a batch answered (what ioredis throws for an error reply). */
class BatchedReplyError extends Error {
  override readonly name = 'ReplyError';
}

/** `prefix`: the store's key prefix, from which batch.lua builds every key. */
export function batchingRunner(run: ScriptRunner, prefix: string): BatchedRunner {
  const send = async (batch: Pending[]): Promise<void> => {
    const args: (string | number)[] = [prefix, batch.length];
    for (const op of batch) args.push(op.name, op.args.length);
    for (const op of batch) for (const arg of op.args) args.push(arg);
    let replies: unknown[];
    try {
      replies = (await run('batch', [], args)) as unknown[];
    } catch (err) {
      for (const op of batch) op.reject(err);
      return;
    }
    // An operation that failed answers an error reply in its place, which ioredis hands over as a
    // ReplyError: that operation alone is rejected with it.
    for (let i = 0; i < batch.length; i++) {
      const op = batch[i]!;
      if (i >= replies.length) op.reject(new BatchedReplyError(`batch.lua answered no reply for ${op.name}`));
      else if (replies[i] instanceof Error) op.reject(replies[i]);
      else op.resolve(replies[i]);
    }
  };
  const batcher = new CallBatcher<Pending>({
    maxBatch: MAX_BATCH_OPERATIONS,
    maxInFlight: MAX_IN_FLIGHT,
    send,
  });
  return (name, args) => new Promise((resolve, reject) => batcher.add({ name, args, resolve, reject }));
}
