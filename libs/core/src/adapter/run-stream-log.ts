/**
 * A bus's run streams (contracts/run-streams.ts) written once over that bus's own per-run journal
 * log, so every bus gets them from the log it already has: a (run, stream) is the journal log of
 * the key `<runId>.s.<stream>`, and the run's index of stream names the log of `<runId>.s`. A run
 * id never holds a '.', so no such key is ever a run's own journal, and a run's journal read (its
 * exact key) never sees them: on NATS they are subjects `<prefix>.journal.<runId>.s.<stream>` of
 * the journal stream, on the Redis bus streams `<prefix>:journal:<runId>.s.<stream>`, on Kafka
 * records of the journal topic keyed so.
 *
 * The journal given is the bus's own, unchecked (its keys here are not run ids): this module
 * checks the run id and the stream name of every call instead.
 */
import type { RunStreamAppend, RunStreamLog, RunStreamReadOptions } from './contracts/run-streams.js';
import { checkRunStreamName } from './contracts/run-streams.js';
import type { JournalLog, JournalRecord } from './contracts/transport.js';
import type { ContextJournal } from './journal-log.js';
import { assertRunId } from '../shared/ids.js';

/** Where a read from position 0 of `key` may start instead, given the run's start time (Kafka). */
export type StreamStartHint = (key: string, sinceMs: number) => Promise<number>;

/** A bus's {@link RunStreamLog.waitForRecord}, by log key (NATS). */
export type StreamRecordWait = (
  key: string,
  afterPosition: number,
  options: { timeoutMs: number; signal?: AbortSignal },
) => Promise<void>;

/** The log key of a run's stream. */
export function runStreamKey(runId: string, stream: string): string {
  return `${runId}.s.${stream}`;
}

/** The log key of a run's index of stream names. */
export function runStreamIndexKey(runId: string): string {
  return `${runId}.s`;
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/**
 * The run streams of a bus's journal written against its context (NATS, the Redis bus): each call
 * asks `context` for the context under its operation (`runStreams.append`, …), as
 * `journalOnContext` does for the journal, without its run-id check (the keys here are not run ids;
 * {@link runStreamsOverJournal} checks the run id and the stream name instead).
 */
export function runStreamsOnContext<C>(
  context: (operation: string) => C,
  journal: ContextJournal<C>,
  startHint?: StreamStartHint,
  wait?: StreamRecordWait,
): RunStreamLog {
  return runStreamsOverJournal(
    {
      supportsOptimisticAppend: journal.supportsOptimisticAppend,
      purgeMode: journal.purgeMode,
      append: (append) => journal.append(context('runStreams.append'), append),
      read: (key, afterPosition, uptoPosition) =>
        journal.read(context('runStreams.read'), key, afterPosition, uptoPosition),
      purge: (key) => journal.purge(context('runStreams.purge'), key),
    },
    startHint,
    wait,
  );
}

/**
 * The {@link RunStreamLog} of `journal` (a bus's own journal log, unchecked). `startHint`, when
 * given, moves a read from position 0 to the position it answers for the run's start time.
 */
export function runStreamsOverJournal(
  journal: JournalLog,
  startHint?: StreamStartHint,
  wait?: StreamRecordWait,
): RunStreamLog {
  const readKey = async (
    key: string,
    afterPosition: number,
    options: RunStreamReadOptions | undefined,
  ): Promise<JournalRecord[]> => {
    let after = afterPosition;
    if (after === 0 && startHint !== undefined && options?.sinceMs !== undefined) {
      after = await startHint(key, options.sinceMs);
    }
    const records = await journal.read(key, after);
    return options?.limit === undefined ? records : records.slice(0, options.limit);
  };
  const names = async (runId: string, options?: Pick<RunStreamReadOptions, 'sinceMs'>): Promise<string[]> => {
    assertRunId(runId);
    const records = await readKey(runStreamIndexKey(runId), 0, options);
    return [...new Set(records.map((r) => fromUtf8.decode(r.data)))];
  };
  return {
    supportsOptimisticAppend: journal.supportsOptimisticAppend,
    purgeMode: journal.purgeMode,
    async append({ runId, stream, data, expectedLastPosition }: RunStreamAppend): Promise<number> {
      assertRunId(runId);
      checkRunStreamName(stream);
      return journal.append({
        runId: runStreamKey(runId, stream),
        data,
        ...(expectedLastPosition !== undefined && { expectedLastPosition }),
      });
    },
    async read(runId, stream, afterPosition, options) {
      assertRunId(runId);
      checkRunStreamName(stream);
      return readKey(runStreamKey(runId, stream), afterPosition, options);
    },
    async register(runId, stream, options) {
      checkRunStreamName(stream);
      if ((await names(runId, options)).includes(stream)) return;
      // Two writers registering at once may both append: names() keeps the first of each.
      await journal.append({ runId: runStreamIndexKey(runId), data: utf8.encode(stream) });
    },
    names,
    ...(wait !== undefined && {
      async waitForRecord(runId, stream, afterPosition, options) {
        assertRunId(runId);
        checkRunStreamName(stream);
        return wait(runStreamKey(runId, stream), afterPosition, options);
      },
    }),
    async purge(runId, options) {
      assertRunId(runId);
      // A shared log keeps every record until its own retention: nothing to find and delete.
      if (journal.purgeMode === 'retention') return;
      for (const stream of await names(runId, options)) await journal.purge(runStreamKey(runId, stream));
      await journal.purge(runStreamIndexKey(runId));
    },
  };
}
