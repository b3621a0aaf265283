/** A journal kept in an array, standing in for the worker in executor tests. */
import type { SuspendResult } from '../../adapter/contracts/leases.js';
import type { InboxSignal } from '../../adapter/contracts/waits.js';
import type { JournalEntry } from '../../shared/journal.js';
import type { ExecutionHost, ExecutionOutcome, ExecutorOptions } from './execution-host.js';
import { ReplayExecutor } from './replay-executor.js';

export interface TestHost extends ExecutionHost {
  journal: JournalEntry[];
  inbox: InboxSignal[];
  suspensions: Array<{ wakeAt: number | null; signals: string[] }>;
}

export function testHost(runId = 'run-1', epoch = 1): TestHost {
  const host: TestHost = {
    runId,
    journal: [],
    inbox: [],
    suspensions: [],
    async append(entries) {
      await Promise.resolve();
      host.journal.push(...entries.map((e) => ({ ...e, epoch, at: host.clock() }) as JournalEntry));
    },
    clock: () => Date.now(),
    readSignals: async () => host.inbox.map((s) => ({ ...s })),
    async suspend(request): Promise<SuspendResult> {
      host.suspensions.push({ wakeAt: request.wakeAt, signals: request.signals });
      return { ok: true };
    },
  };
  return host;
}

/** Runs a workflow on a fresh host whose history is `history`; returns outcome and new entries. */
export async function execute(
  workflow: ExecutorOptions['workflow'],
  input: unknown,
  history: JournalEntry[] = [],
  host: TestHost = testHost(),
): Promise<{ outcome: ExecutionOutcome; host: TestHost; journal: JournalEntry[] }> {
  const executor = new ReplayExecutor({ workflow, input, runId: host.runId, history, host });
  const outcome = await executor.run();
  return { outcome, host, journal: [...history, ...host.journal] };
}
