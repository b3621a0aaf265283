/**
 * What every bus's journal shares, written once, so that a bus's journal file deals with its log
 * alone: the checks of a journal call, made alike for every bus, in one wrapper a transport
 * applies once, inside its lifecycle guard.
 * - {@link journalOnContext}: the journal of a bus written against its connection's context (NATS,
 *   Redis), each call checked and then handed the context, as `shelfOnContext`
 *   (dead-letter-queue.ts) does for dead letters:
 *   `lifecycle.guard('journal', journalOnContext(connected, natsJournal, 'nats transport'))`.
 * - {@link checkedJournal}: the same checks around a bus's own {@link JournalLog} (Kafka, memory):
 *   `lifecycle.guard('journal', checkedJournal(kafkaJournal(…), 'kafka transport'))`.
 * Either way a call is one async frame on top of the bus's own (every step journals: this is the
 * system's hottest path).
 *
 * The checks:
 * 1. Every call's run id is checked (assertRunId): it becomes a subject token, a key or a stream
 *    name, and a '.', '*' or '>' in it would reach other runs' records.
 * 2. An append's `expectedLastPosition` is a position (a whole number, 0 or more) or absent;
 *    anything else is refused with a ConfigError before the bus is asked.
 * 3. A read whose `uptoPosition` is at or below its `afterPosition` finds nothing, without asking
 *    the bus.
 * A call refused here rejects; it never throws synchronously, and it never asks for the bus's
 * context either.
 */
import type { JournalAppend, JournalLog, JournalRecord } from './contracts/transport.js';
import { ConfigError } from '../shared/errors.js';
import { assertRunId } from '../shared/ids.js';

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
 * The {@link JournalLog} of a {@link ContextJournal}: every call is checked (the module's checks,
 * `owner` naming the transport in refusals: `nats transport`), then asks `context` for the context
 * under its operation (`journal.append`, `journal.read`, `journal.purge`) and hands it to the bus.
 * One async frame per call: the checks, the context and the bus's call all happen in it. Behind the
 * lifecycle guard `context` is its `connected`: the guard made the closed check, and nothing is
 * awaited between. What `context` throws is the call's rejection; a call refused by the checks, or
 * a read with an empty range, never asks for it.
 */
export function journalOnContext<C>(
  context: (operation: string) => C,
  journal: ContextJournal<C>,
  owner: string,
): JournalLog {
  return {
    ...flagsOf(journal),
    async append(append: JournalAppend): Promise<number> {
      assertRunId(append.runId);
      checkExpectedPosition(append, owner);
      return journal.append(context('journal.append'), append);
    },
    async read(runId: string, afterPosition: number, uptoPosition?: number): Promise<JournalRecord[]> {
      assertRunId(runId);
      if (uptoPosition !== undefined && uptoPosition <= afterPosition) return [];
      return journal.read(context('journal.read'), runId, afterPosition, uptoPosition);
    },
    async purge(runId: string): Promise<void> {
      assertRunId(runId);
      return journal.purge(context('journal.purge'), runId);
    },
  };
}

/**
 * `journal` (a bus's own {@link JournalLog}: Kafka's, memory's) with the module's checks applied to
 * each call; its flags read through unchanged. `owner` names the transport in refusals
 * (`kafka transport`). It is {@link journalOnContext} with the journal as the context: still one
 * async frame per call.
 */
export function checkedJournal(journal: JournalLog, owner: string): JournalLog {
  return journalOnContext(
    () => journal,
    {
      ...flagsOf(journal),
      append: (bus, append) => bus.append(append),
      read: (bus, runId, afterPosition, uptoPosition) => bus.read(runId, afterPosition, uptoPosition),
      purge: (bus, runId) => bus.purge(runId),
    },
    owner,
  );
}

/** What a journal says of itself, as against what it does. */
type JournalFlags = Pick<JournalLog, 'supportsOptimisticAppend' | 'scansSharedLog' | 'purgeMode'>;

/** A journal's flags, `scansSharedLog` only when it says. */
function flagsOf(journal: JournalFlags): JournalFlags {
  return {
    supportsOptimisticAppend: journal.supportsOptimisticAppend,
    ...(journal.scansSharedLog !== undefined && { scansSharedLog: journal.scansSharedLog }),
    purgeMode: journal.purgeMode,
  };
}

/** Refuses an expected last position that is no position (check 2), naming `owner`. */
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
