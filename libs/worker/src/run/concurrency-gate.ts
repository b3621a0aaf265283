/**
 * Concurrency per key on the run's path (the store's side: @baton/core contracts/concurrency.ts).
 * A run of a workflow with `concurrency: { key, limit }` takes a slot of its key after its lease
 * and before any of its code runs; without one it parks (suspended, waiting for nothing) in the
 * key's line. It gives the slot up when it finishes, suspends or pauses, and keeps it across a
 * hand-off or a crash (the slot belongs to the run, so a resumed run finds it still its own).
 *
 * Invariants:
 * 1. No code of a run runs without its slot, except a run whose cancel is pending: it runs only to
 *    its first step, which ends it `cancelled`.
 * 2. A parked run is woken by whoever hands it a slot (a wake message, and a due timer in the
 *    store should that message be lost). A slot handed to it between its refusal and its
 *    suspension is found by asking once more after suspending: the run wakes itself.
 * 3. Giving a slot up never fails the run: a store error there is logged, and the slot is freed
 *    by the store once the run has finished (or at the run's next release).
 */
import { ConfigError, type AnyWorkflowDefinition } from '@baton/core';
import { MAX_CONCURRENCY_KEY_LENGTH, type RunQueue, type SlotRequest } from '@baton/core/adapter';
import { enqueueWake } from './run-messages.js';
import type { ResolvedWorkerOptions } from '../options.js';

type GateOptions = Pick<ResolvedWorkerOptions, 'store' | 'transport' | 'logger'>;

/** The slot a run of `workflow` needs, undefined for a workflow without a limit; throws ConfigError for a bad key. */
export function slotFor(
  workflow: AnyWorkflowDefinition,
  runId: string,
  input: unknown,
): SlotRequest | undefined {
  const concurrency = workflow.concurrency;
  if (concurrency === undefined) return undefined;
  let key: unknown;
  try {
    key = concurrency.key(input);
  } catch (err) {
    throw new ConfigError(
      `workflow ${workflow.name}@${workflow.version}: concurrency.key threw for run ${runId}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_CONCURRENCY_KEY_LENGTH) {
    throw new ConfigError(
      `workflow ${workflow.name}@${workflow.version}: concurrency.key returned ${JSON.stringify(key) ?? String(key)} ` +
        `for run ${runId}; it must return a string of 1-${MAX_CONCURRENCY_KEY_LENGTH} characters`,
    );
  }
  return { key, limit: concurrency.limit, runId };
}

/** Wakes runs the store handed a slot. */
export async function wakeSlotHolders(queue: RunQueue, runIds: readonly string[]): Promise<void> {
  await Promise.all(runIds.map((runId) => enqueueWake(queue, runId, 'slot')));
}

/** Asks for the run's slot; true when it holds one (invariant 1). */
export async function takeSlot(options: GateOptions, slot: SlotRequest): Promise<boolean> {
  const answer = await options.store.concurrency.acquire(slot);
  await wakeSlotHolders(options.transport.runQueue, answer.wake);
  return answer.acquired;
}

/**
 * After the run parked (suspended waiting for nothing): asks once more, and wakes the run itself
 * if a slot reached it meanwhile (invariant 2).
 */
export async function afterParking(options: GateOptions, slot: SlotRequest): Promise<void> {
  const answer = await options.store.concurrency.acquire(slot);
  await wakeSlotHolders(
    options.transport.runQueue,
    answer.acquired ? [...answer.wake, slot.runId] : answer.wake,
  );
  options.logger.info(
    { runId: slot.runId, key: slot.key, limit: slot.limit, slotReached: answer.acquired },
    'run waiting for a concurrency slot',
  );
}

/** Gives the run's slot up (or leaves the line) and wakes whoever gets it (invariant 3). */
export async function releaseSlot(options: GateOptions, slot: SlotRequest | undefined): Promise<void> {
  if (slot === undefined) return;
  try {
    await wakeSlotHolders(options.transport.runQueue, await options.store.concurrency.release(slot));
  } catch (err) {
    options.logger.warn(
      { err, runId: slot.runId, key: slot.key },
      'giving a concurrency slot up failed; the store frees it once the run has finished',
    );
  }
}
