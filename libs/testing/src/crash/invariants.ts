/**
 * The crash suite's invariants, checked from the outside: the store's run records, the journal on
 * the bus, and the ledger the activities wrote. Each check returns the violations it found (empty
 * when the invariant held), so a failing test names every offending run, not just the first.
 */
import type { Store, Transport } from '@baton/core/adapter';
import {
  decodeJournalRecord,
  filterFencedEntries,
  IDENTITY_PAYLOAD_CODEC,
  idempotencyKeyOf,
  type JournalEntry,
  type PayloadCodec,
  type PositionedEntry,
} from '@baton/core/runtime';
import { expectedOutput, stepValue, type ChainInput } from './crash-workflow.js';
import type { EffectRow, ExecutionRow } from './ledger.js';

export interface StartedRun {
  runId: string;
  input: ChainInput;
}

/**
 * A run's whole journal as the bus holds it, zombie writes included. `codec` decodes protected
 * records; the crash suite runs without protection, so the identity codec reads them unchanged.
 */
export async function readJournal(
  transport: Transport,
  runId: string,
  codec: PayloadCodec = IDENTITY_PAYLOAD_CODEC,
): Promise<PositionedEntry[]> {
  const records = await transport.journal.read(runId, 0);
  return records.flatMap((r) =>
    decodeJournalRecord(r.data, runId, codec, r.position).map((entry) => ({ position: r.position, entry })),
  );
}

/**
 * `fn` over `items`, at most `limit` calls at once, the results in the items' order: the checks
 * read hundreds of runs' records one call each, and a call's round trip, not the work, is the cost.
 */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/** How many runs the checks read at once. */
export const READ_CONCURRENCY = 8;

/** Every run completed with the output its input dictates. */
export async function checkOutcomes(store: Store, runs: readonly StartedRun[]): Promise<string[]> {
  const perRun = await mapLimited(runs, READ_CONCURRENCY, async ({ runId, input }): Promise<string[]> => {
    const record = await store.runs.get(runId);
    if (record?.status !== 'completed') {
      return [`${runId}: status ${record?.status ?? 'unknown'} (${JSON.stringify(record?.error ?? null)})`];
    }
    if (record.result !== expectedOutput(input)) {
      return [`${runId}: result ${String(record.result)}, expected ${expectedOutput(input)}`];
    }
    return [];
  });
  return perRun.flat();
}

/** Exactly one effect per (run, step), each with the right value. */
export function checkEffects(runs: readonly StartedRun[], effects: readonly EffectRow[]): string[] {
  const violations: string[] = [];
  const byRunStep = groupBy(effects, (effect) => `${effect.runId}#${effect.step}`);
  for (const { runId, input } of runs) {
    let value = 0;
    for (let step = 0; step < input.steps; step++) {
      value = stepValue(value, step, input.seed);
      const found = byRunStep.get(`${runId}#${step}`) ?? [];
      if (found.length !== 1) violations.push(`${runId} step ${step}: ${found.length} effects`);
      else if (found[0]?.value !== value)
        violations.push(`${runId} step ${step}: value ${found[0]?.value}, expected ${value}`);
    }
  }
  return violations;
}

/**
 * No activity executed again after its completion was journaled: an execution of a step's
 * idempotency key that started after the effective ActivityCompleted entry's time is a violation.
 * (An activity in flight during a crash may run again; one that completed may not.)
 */
export function checkNoReexecution(
  journals: ReadonlyMap<string, PositionedEntry[]>,
  executions: readonly ExecutionRow[],
): string[] {
  const byKey = groupBy(executions, (e) => e.key);
  const violations: string[] = [];
  for (const [runId, journal] of journals) {
    for (const { position, entry } of filterFencedEntries(journal, 0)) {
      if (entry.type !== 'ActivityCompleted') continue;
      const key = idempotencyKeyOf(runId, entry.seq);
      for (const execution of byKey.get(key) ?? []) {
        if (execution.startedAt > entry.at) {
          // Everything needed to tell a zombie's late start from a resume that missed the entry:
          // who wrote the completion, where, and every owner's fence marker.
          violations.push(
            `${key}: executed by pid ${execution.pid} at ${execution.startedAt} (finished ${execution.finishedAt ?? 'never'}), ` +
              `after its completion was journaled at ${entry.at} (epoch ${entry.epoch}, position ${position}); ` +
              `fence markers: ${describeMarkers(journal)}; executions of the key: ${describeExecutions(byKey.get(key)!)}`,
          );
        }
      }
    }
  }
  return violations;
}

/** A journal's LeaseAcquired markers, as `epoch@position by worker at time` (for violation messages). */
function describeMarkers(journal: readonly PositionedEntry[]): string {
  const markers = journal.flatMap(({ position, entry }) =>
    entry.type === 'LeaseAcquired' ? [`${entry.epoch}@${position} by ${entry.workerId} at ${entry.at}`] : [],
  );
  return markers.length === 0 ? 'none' : markers.join(', ');
}

function describeExecutions(executions: readonly ExecutionRow[]): string {
  return executions.map((e) => `pid ${e.pid} ${e.startedAt}..${e.finishedAt ?? 'never'}`).join(', ');
}

/** The entries a stale epoch wrote after a newer LeaseAcquired marker, as violations. */
function staleAfterFence(runId: string, entries: readonly PositionedEntry[]): string[] {
  const violations: string[] = [];
  let fence = 0;
  for (const { position, entry } of entries) {
    if (entry.type === 'LeaseAcquired') fence = Math.max(fence, entry.epoch);
    else if (entry.epoch < fence)
      violations.push(
        `${runId}@${position}: ${describeEntry(entry)} under epoch ${entry.epoch} after fence ${fence}`,
      );
  }
  return violations;
}

/**
 * Fencing held. On a bus that enforces the expected last position (`busEnforces`), no entry
 * written under an epoch appears after a LeaseAcquired marker of a newer epoch: a zombie's late
 * append is refused. On one that cannot (Kafka), such an append may land, and must be ignored by
 * replay: the run's final checkpoint, the history it completed with, holds no such entry. Either
 * way, checkpoints never go back to an older epoch.
 */
export async function checkFencing(
  store: Store,
  journals: ReadonlyMap<string, PositionedEntry[]>,
  options: { busEnforces: boolean },
): Promise<string[]> {
  const perRun = await mapLimited([...journals], READ_CONCURRENCY, async ([runId, journal]) => {
    const violations: string[] = [];
    if (options.busEnforces) {
      violations.push(...staleAfterFence(runId, journal));
    } else {
      const final = await store.checkpoints.load(runId);
      if (!final) violations.push(`${runId}: no checkpoint to check the effective history against`);
      else
        violations.push(
          ...staleAfterFence(
            runId,
            final.entries.map((entry, i) => ({ position: i + 1, entry })),
          ).map((v) => `checkpointed history ${v}`),
        );
    }
    const checkpoints = await store.checkpoints.list(runId);
    for (let i = 1; i < checkpoints.length; i++) {
      const [before, after] = [checkpoints[i - 1], checkpoints[i]];
      if (before && after && after.epoch < before.epoch) {
        violations.push(
          `${runId}: checkpoint ${after.seq} under epoch ${after.epoch} after epoch ${before.epoch}`,
        );
      }
    }
    return violations;
  });
  return perRun.flat();
}

function describeEntry(entry: JournalEntry): string {
  return 'seq' in entry ? `${entry.type}#${entry.seq}` : entry.type;
}

/**
 * For each signal sent at `at` to process `pid`: each run that process was executing and that
 * went on elsewhere, and how long until its next activity started on another process.
 */
export function resumeLatencies(
  interruptions: ReadonlyArray<{ pid: number; at: number }>,
  executions: readonly ExecutionRow[],
): number[] {
  const latencies: number[] = [];
  const byRun = groupBy(executions, (e) => e.runId);
  for (const { pid, at } of interruptions) {
    for (const ofRun of byRun.values()) {
      const lastBefore = ofRun.filter((e) => e.startedAt <= at).at(-1);
      const next = ofRun.find((e) => e.pid !== pid && e.startedAt >= at);
      // Only runs this process held at that moment; one it had finished has no next execution.
      if (next && lastBefore?.pid === pid) latencies.push(next.startedAt - at);
    }
  }
  return latencies.sort((a, b) => a - b);
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
