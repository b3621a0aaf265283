/**
 * The BullMQ baseline's worker process: one BullMQ Worker running the step-job processor, alone
 * in its process so the bench can read its CPU time from /proc exactly as it reads Baton's worker
 * processes'. Started by bullmq.ts (node on the built JavaScript, or tsx on this source, as the
 * Baton workers are), configured by environment:
 *
 * - BATON_BENCH_BULLMQ_REDIS_URL, BATON_BENCH_BULLMQ_PREFIX: the queue's Redis and key prefix
 * - BATON_BENCH_BULLMQ_CONCURRENCY: jobs the Worker processes at once
 *
 * It talks to the bench over the IPC channel, and only outside the measured window: `ready` once
 * the Worker is connected; `{ type: 'steps' }` is answered with the steps executed so far;
 * `{ type: 'close' }` (or the bench going away) closes the Worker and ends the process. Job
 * completions reach the bench through BullMQ's own event stream, which the Worker writes anyway.
 */
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { processStepJob, QUEUE_NAME, type ChainData } from './bullmq-steps.js';

export type ToWorker = { type: 'steps' } | { type: 'close' };
export type FromWorker = { type: 'ready' } | { type: 'steps'; steps: number };

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

function send(message: FromWorker): void {
  process.send?.(message);
}

async function main(): Promise<void> {
  if (process.send === undefined) throw new Error('started without an IPC channel: bullmq.ts starts this');
  const redisUrl = required('BATON_BENCH_BULLMQ_REDIS_URL');
  const prefix = required('BATON_BENCH_BULLMQ_PREFIX');
  const concurrency = Number(required('BATON_BENCH_BULLMQ_CONCURRENCY'));
  // BullMQ's blocking commands need maxRetriesPerRequest null.
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  let steps = 0;
  const worker = new Worker<ChainData, number>(QUEUE_NAME, (job) => processStepJob(job, () => void steps++), {
    connection,
    prefix,
    concurrency,
  });
  // The bench sees failed jobs in the event stream and stalls by the lack of completions.
  worker.on('error', (err) => process.stderr.write(`bullmq worker: ${err.message}\n`));

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await worker.close().catch(() => undefined);
      await connection.quit().catch(() => undefined);
      process.exit(0);
    })());
  process.on('message', (message: ToWorker) => {
    if (message.type === 'steps') send({ type: 'steps', steps });
    else if (message.type === 'close') void close();
  });
  // The bench exited (or was killed): nothing is left to work for.
  process.on('disconnect', () => void close());

  await worker.waitUntilReady();
  send({ type: 'ready' });
}

main().catch((err: unknown) => {
  process.stderr.write(`bullmq worker failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
