/**
 * What every bus's journal shares, written once around the bus's own {@link JournalLog} (as
 * `guardClosed` is for the lifecycle), so that a bus's journal file deals with its log alone.
 *
 * {@link checkedJournal}: the checks of a journal call, made alike for every bus. A transport
 * applies it once, inside its lifecycle guard:
 * `lifecycle.guard('journal', checkedJournal(busJournal, 'nats transport'))`.
 * 1. Every call's run id is checked (assertRunId): it becomes a subject token, a key or a stream
 *    name, and a '.', '*' or '>' in it would reach other runs' records.
 * 2. An append's `expectedLastPosition` is a position (a whole number, 0 or more) or absent;
 *    anything else is refused with a ConfigError before the bus is asked.
 * 3. A read whose `uptoPosition` is at or below its `afterPosition` finds nothing, without asking
 *    the bus.
 * A call refused here rejects; it never throws synchronously.
 *
 * {@link journalOnContext}: the journal of a bus written against its connection's context (NATS,
 * Redis), each call handed the context, as `shelfOnContext` (dead-letter-queue.ts) does for dead
 * letters.
 */
import type { JournalAppend, JournalLog, JournalRecord } from './contracts/transport.js';
import { ConfigError } from '../shared/errors.js';
import { assertRunId } from '../shared/ids.js';

/**
 * `journal` with the checks above applied to each call; its flags read through unchanged. `owner`
 * names the transport in refusals (`redis transport`).
 */
export function checkedJournal(journal: JournalLog, owner: string): JournalLog {
  return {
    supportsOptimisticAppend: journal.supportsOptimisticAppend,
    ...(journal.scansSharedLog !== undefined && { scansSharedLog: journal.scansSharedLog }),
    purgeMode: journal.purgeMode,
    async append(append: JournalAppend): Promise<number> {
      assertRunId(append.runId);
      checkExpectedPosition(append, owner);
      return journal.append(append);
    },
    async read(runId: string, afterPosition: number, uptoPosition?: number): Promise<JournalRecord[]> {
      assertRunId(runId);
      if (uptoPosition !== undefined && uptoPosition <= afterPosition) return [];
      return journal.read(runId, afterPosition, uptoPosition);
    },
    async purge(runId: string): Promise<void> {
      assertRunId(runId);
      return journal.purge(runId);
    },
  };
}

function checkExpectedPosition(
  { runId, expectedLastPosition: expected }: JournalAppend,
  owner: string,
): void {
  if (expected === undefined || (Number.isSafeInteger(expected) && expected >= 0)) return;
  const wanted = 'give a whole number of at least 0, or none';
  throw new ConfigError(
    `${owner}: append to run ${runId} expects last position ${String(expected)}; ${wanted}`,
    {
      component: owner,
      option: 'expectedLastPosition',
      value: String(expected),
      expected: wanted,
    },
  );
}

/** A bus's journal written against its context `C`: the calls of {@link JournalLog}, each with it. */
export interface ContextJournal<C> {
  readonly supportsOptimisticAppend: boolean;
  readonly scansSharedLog?: boolean;
  readonly purgeMode: 'deletes' | 'retention';
  append(context: C, append: JournalAppend): Promise<number>;
  read(context: C, runId: string, afterPosition: number, uptoPosition?: number): Promise<JournalRecord[]>;
  purge(context: C, runId: string): Promise<void>;
}

/**
 * The {@link JournalLog} of a {@link ContextJournal}: every call asks `context` for the context
 * under its operation (`journal.append`, `journal.read`, `journal.purge`). Behind the lifecycle
 * guard that is its `connected`: the guard made the closed check, and nothing is awaited between.
 * What `context` throws is the call's rejection.
 */
export function journalOnContext<C>(
  context: (operation: string) => C,
  journal: ContextJournal<C>,
): JournalLog {
  return {
    supportsOptimisticAppend: journal.supportsOptimisticAppend,
    ...(journal.scansSharedLog !== undefined && { scansSharedLog: journal.scansSharedLog }),
    purgeMode: journal.purgeMode,
    append: async (append) => journal.append(context('journal.append'), append),
    read: async (runId, afterPosition, uptoPosition) =>
      journal.read(context('journal.read'), runId, afterPosition, uptoPosition),
    purge: async (runId) => journal.purge(context('journal.purge'), runId),
  };
}
