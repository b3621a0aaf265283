/**
 * The store's work per run, amortised across runs: the operations a worker calls once per run or
 * per flush (claim-new-run, finish-run, close-cancels, append-pointers) are gathered from every
 * run of the process and sent as one batch.lua call, so Redis runs one script, parses one command
 * and writes one reply for many of them, as group commit already does for the pointers.
 *
 * The first operation after a quiet spell waits only for the end of the current turn of the event
 * loop (setImmediate), so it goes with whatever the same turn produced; while a batch is in flight
 * the next one gathers, and goes as soon as it answers. Each operation still answers on its own:
 * its own reply, or its own error (batch.lua runs each in a pcall), and every operation of a batch
 * whose call failed as a whole (the connection dropped, the server refused the script) gets that
 * call's error, as its own script's call would have. Nothing is retried here.
 */
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
  let queue: Pending[] = [];
  let inFlight = 0;
  let scheduled = false;

  const send = (batch: Pending[]): void => {
    inFlight++;
    const header: (string | number)[] = [prefix, batch.length];
    const args: (string | number)[] = [];
    for (const op of batch) {
      header.push(op.name, op.args.length);
      for (const arg of op.args) args.push(arg);
    }
    run('batch', [], header.concat(args))
      .then(
        (replies) => {
          const list = replies as [number, unknown][];
          batch.forEach((op, i) => {
            const reply = list[i];
            if (reply === undefined)
              op.reject(new BatchedReplyError(`batch.lua answered no reply for ${op.name}`));
            else if (reply[0] === 1) op.resolve(reply[1]);
            else op.reject(new BatchedReplyError(String(reply[1])));
          });
        },
        (err: unknown) => {
          for (const op of batch) op.reject(err);
        },
      )
      .finally(() => {
        inFlight--;
        flush();
      });
  };

  const flush = (): void => {
    while (queue.length > 0 && inFlight < MAX_IN_FLIGHT) {
      const batch = queue.length <= MAX_BATCH_OPERATIONS ? queue : queue.slice(0, MAX_BATCH_OPERATIONS);
      queue = batch === queue ? [] : queue.slice(MAX_BATCH_OPERATIONS);
      send(batch);
    }
  };

  return (name, args) =>
    new Promise((resolve, reject) => {
      queue.push({ name, args, resolve, reject });
      if (!scheduled && inFlight < MAX_IN_FLIGHT) {
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          flush();
        });
      }
    });
}
