/**
 * Reading a run's streams (docs/streams.md): `client.stream(runId, name, { from })` follows the
 * stream as the run writes it, and `client.streamNames(runId)` lists them.
 *
 * A reader applies core's rules (runtime/run-stream-records.ts, `StreamFold`): each sequence number
 * once, a fenced writer's late records ignored, nothing after a close. It reads at once while
 * records keep coming; while the stream is quiet it waits for the bus to tell of the next record
 * where the bus can (NATS: `waitForRecord`), else polls, backing off to `pollMs`, and it asks the
 * store whether the run has finished about once a second.
 *
 * It ends after the close item, when `signal` aborts, or once it has read the stream after seeing
 * the run finished (a run's worker makes its streams durable before it journals the end). A run
 * that continued as new without closing the stream is followed to its successor (at most
 * {@link MAX_CHAIN_RUNS} runs), whose items are numbered on after the last one: the chain reads as
 * one stream under the id the reader named.
 */
import { BatonError, ConfigError, RunStateError, type StreamItem } from '@baton/core';
import { notKnownError } from './run-lookup.js';
import {
  FINISHED_RUN_STATUSES,
  checkRunStreamName,
  type RunRecord,
  type RunStreamLog,
  type Store,
  type Transport,
} from '@baton/core/adapter';
import { CONTINUED_AS, isContinuedAsNew, StreamFold, type PayloadCodec } from '@baton/core/runtime';
import { setTimeout as sleep } from 'node:timers/promises';

/** Options of `client.stream`. */
export interface StreamReadOptions {
  /**
   * The first sequence number to yield: 1 (the default) reads the stream from its start; after a
   * disconnect, pass the last sequence number seen plus one. @defaultValue 1
   */
  from?: number;
  /** Aborting ends the iteration (without an error). */
  signal?: AbortSignal;
  /** The longest pause between two reads of a quiet stream. @defaultValue 250 */
  pollMs?: number;
}

/** How often a quiet reader asks the store whether the run finished. */
const STATUS_EVERY_MS = 1_000;
/** The runs of a chain a reader follows at most (as updates and signals along a chain do). */
const MAX_CHAIN_RUNS = 100;
/** The first pause of a quiet reader; doubled up to `pollMs`. */
const FIRST_PAUSE_MS = 10;

export interface StreamDeps {
  transport: Transport;
  store: Store;
  codec: PayloadCodec;
  /** How long a run the store does not know yet is waited for (the client's `unknownRunMs`). */
  unknownRunMs: number;
  connect(): Promise<void>;
}

function streamLog(transport: Transport): RunStreamLog {
  const log = transport.runStreams;
  if (log === undefined) {
    throw new BatonError(
      'BATON_UNSUPPORTED',
      `the ${transport.name} transport has no run streams; use NATS, Kafka, the Redis bus or memory`,
    );
  }
  return log;
}

/**
 * The run's record. A run just started may not be in the store yet (a worker creates its record
 * when it takes the start message): asked again, backing off, for up to `unknownRunMs`; then
 * NotFoundError naming why it may be unknown (run-lookup.ts).
 */
async function runOf(deps: StreamDeps, runId: string, signal?: AbortSignal) {
  const deadline = Date.now() + deps.unknownRunMs;
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(250, pause * 2)) {
    const run = await deps.store.runs.get(runId);
    if (run !== undefined) return run;
    if (Date.now() >= deadline || signal?.aborted === true) {
      throw await notKnownError(deps.store, deps.transport, runId, 'client.stream: ');
    }
    await sleep(pause, undefined, signal ? { signal } : undefined).catch(() => undefined);
  }
}

/** The names of the run's streams, in the order they were first written. */
export async function streamNames(deps: StreamDeps, runId: string): Promise<string[]> {
  await deps.connect();
  const log = streamLog(deps.transport);
  const run = await runOf(deps, runId);
  return log.names(runId, { sinceMs: run.createdAt });
}

/** Follows the stream `name` of run `runId`; see the module's comment. */
export async function* readStream<T>(
  deps: StreamDeps,
  runId: string,
  name: string,
  options: StreamReadOptions = {},
): AsyncGenerator<StreamItem<T>, void, undefined> {
  checkRunStreamName(name);
  const from = options.from ?? 1;
  if (!Number.isSafeInteger(from) || from < 1) {
    throw new ConfigError(`client.stream: from must be a whole number of at least 1, got ${String(from)}`);
  }
  const pollMs = options.pollMs ?? 250;
  if (!(pollMs > 0)) throw new ConfigError(`client.stream: pollMs must be above 0, got ${String(pollMs)}`);
  const { signal } = options;
  await deps.connect();
  const log = streamLog(deps.transport);
  // A chain (ctx.continueAsNew): each run's stream in turn, numbered on from the run named.
  let current = runId;
  let offset = 0;
  for (let hops = 0; hops < MAX_CHAIN_RUNS; hops++) {
    const run = await runOf(deps, current, signal);
    const part = readRunPart<T>(deps, log, run, name, offset, from, pollMs, signal);
    let step = await part.next();
    while (step.done !== true) {
      yield step.value;
      step = await part.next();
    }
    const end = step.value;
    if (end.closed || end.successor === undefined) return;
    offset += end.lastSeq;
    current = end.successor;
  }
  throw new RunStateError(
    runId,
    'completed',
    `client.stream: run ${runId}'s chain continued as new more than ${MAX_CHAIN_RUNS} times; ` +
      'read the stream from a later run of the chain',
  );
}

/** How one run's part of a chain's stream ended. */
interface PartEnd {
  closed: boolean;
  /** The run's last sequence number (its own numbering). */
  lastSeq: number;
  /** The run it continued as, when it did and its stream was not closed. */
  successor?: string;
}

/** The run that `run` continued as (its record's mark, or its result's), if it did. */
function successorOf(run: RunRecord): string | undefined {
  return isContinuedAsNew(run.result) ? run.result[CONTINUED_AS].runId : undefined;
}

/** One run's stream, its items numbered after `offset`, those from `from` on yielded. */
async function* readRunPart<T>(
  deps: StreamDeps,
  log: RunStreamLog,
  run: RunRecord,
  name: string,
  offset: number,
  from: number,
  pollMs: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<StreamItem<T>, PartEnd, undefined> {
  const { runId } = run;
  const fold = new StreamFold(deps.codec, runId, name);
  const sinceMs = run.createdAt;
  let last: RunRecord | undefined = run;
  let finished = FINISHED_RUN_STATUSES.includes(run.status);
  let lastStatusAt = Date.now();
  let pause = FIRST_PAUSE_MS;
  while (signal?.aborted !== true) {
    // Read once more after the run was seen finished: its streams were durable before its end.
    const readAfterEnd = finished;
    const records = await log.read(runId, name, fold.lastPosition, { sinceMs });
    for (const item of fold.applyAll(records)) {
      const seq = offset + item.seq;
      if (seq >= from) yield (offset === 0 ? item : { ...item, seq }) as StreamItem<T>;
      if (item.kind === 'close') return { closed: true, lastSeq: fold.lastSeq };
    }
    if (records.length > 0) {
      pause = FIRST_PAUSE_MS;
      continue;
    }
    if (readAfterEnd) {
      const successor = last === undefined ? undefined : successorOf(last);
      return { closed: false, lastSeq: fold.lastSeq, ...(successor !== undefined && { successor }) };
    }
    if (Date.now() - lastStatusAt >= STATUS_EVERY_MS) {
      lastStatusAt = Date.now();
      last = await deps.store.runs.get(runId);
      // A run deleted meanwhile has finished too: what its streams hold is all there is.
      finished = last === undefined || FINISHED_RUN_STATUSES.includes(last.status);
      if (finished) continue;
    }
    if (log.waitForRecord !== undefined) {
      // The bus tells of the next record: wait for it, up to the next look at the run's status.
      await log.waitForRecord(runId, name, fold.lastPosition, {
        timeoutMs: STATUS_EVERY_MS,
        ...(signal && { signal }),
      });
      continue;
    }
    try {
      await sleep(pause, undefined, signal ? { signal } : undefined);
    } catch {
      break; // aborted
    }
    pause = Math.min(pollMs, pause * 2);
  }
  return { closed: true, lastSeq: fold.lastSeq }; // aborted: nothing follows
}
