/**
 * The checks of a journal call that every bus makes alike, written once around the bus's own
 * {@link JournalLog} (as `guardClosed` is for the lifecycle), so that a bus's journal file deals
 * with its log alone. A transport applies it once, inside its lifecycle guard:
 * `lifecycle.guard('journal', checkedJournal(busJournal, 'nats transport'))`.
 *
 * 1. Every call's run id is checked (assertRunId): it becomes a subject token, a key or a stream
 *    name, and a '.', '*' or '>' in it would reach other runs' records.
 * 2. An append's `expectedLastPosition` is a position (a whole number, 0 or more) or absent;
 *    anything else is refused with a ConfigError before the bus is asked.
 * 3. A read whose `uptoPosition` is at or below its `afterPosition` finds nothing, without asking
 *    the bus.
 * A call refused here rejects; it never throws synchronously.
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
