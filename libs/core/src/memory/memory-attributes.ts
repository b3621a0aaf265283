/**
 * The in-process store's {@link RunAttributeStore} (`store.attributes`): a run's search
 * attributes on its record, fenced by the lease's epoch. The run queries test them as they test
 * every other field (memory-queries.ts), and a count walks the runs: this store is for the demo
 * and unit tests, where scanning is always current and cannot drift.
 */
import type { CountedAttribute, RunAttributeStore } from '../adapter/contracts/attributes.js';
import type { RunCounts } from '../adapter/contracts/run-queries.js';
import { RUN_STATUSES, type RunStatus } from '../adapter/contracts/run-record.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import { mergeAttributes, type AttributeChanges } from '../shared/attributes.js';
import { assertFence, type MemoryState } from './memory-state.js';

function set(state: MemoryState, runId: string, epoch: number, changes: AttributeChanges): void {
  assertFence(state, runId, epoch, 'attributes.set');
  const run = state.runs.get(runId);
  if (run === undefined) return;
  const merged = mergeAttributes(run.attributes, structuredClone(changes));
  if (Object.keys(merged).length === 0) delete run.attributes;
  else run.attributes = merged;
}

function count(state: MemoryState, name: string, attribute: CountedAttribute): RunCounts {
  const byStatus = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
  const byWorkflow: RunCounts['byWorkflow'] = {};
  let total = 0;
  for (const run of state.runs.values()) {
    const held = run.attributes?.[name];
    if (held?.type !== attribute.type || held.value !== attribute.value) continue;
    total += 1;
    byStatus[run.status] += 1;
    const counts = (byWorkflow[run.workflow] ??= {});
    counts[run.status] = (counts[run.status] ?? 0) + 1;
  }
  return { total, byStatus, byWorkflow };
}

/** `store.attributes` over the state. */
export const attributes: OperationsOf<MemoryState, RunAttributeStore> = { set, count };
