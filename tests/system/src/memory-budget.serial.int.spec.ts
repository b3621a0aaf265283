/**
 * The memory budget on a real bus and store (NATS + Redis, in process): while the runs in flight
 * fill the budget the worker claims no new run, the rest wait on the bus, and it claims again once
 * runs end; a budget below one run's need still runs every run, one at a time; and every run
 * completes exactly once either way.
 *
 * The heap the budget sees is driven by the test (`heapUsed`, `liveHeap`): the idle heap is a fixed
 * reading and each run is projected at PRIOR_BYTES_PER_RUN until a live reading says otherwise, so
 * the budget admits an exact number of runs. The claims, the messages left on the bus and the runs'
 * execution are all real.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow } from '@baton/core';
import { PRIOR_BYTES_PER_RUN, Worker, type LiveHeapSource, type Logger } from '@baton/worker';
import { IN_PROCESS_PAIRS, inProcessNamespace } from './in-process.spec-helper.js';

const MIB = 1024 * 1024;
/** The idle heap the test's worker reads. */
const IDLE_HEAP = 64 * MIB;

/** Every execution of the activity by run, and a gate per run the test opens. */
const executions = new Map<string, number>();
const gates = new Map<string, () => void>();
const running = new Set<string>();
let maxRunning = 0;

const held = defineActivity({
  name: 'memory_budget_held',
  run: async (n: number, io) => {
    executions.set(io.runId, (executions.get(io.runId) ?? 0) + 1);
    running.add(io.runId);
    maxRunning = Math.max(maxRunning, running.size);
    await new Promise<void>((resolve) => gates.set(io.runId, resolve));
    running.delete(io.runId);
    return n * 2;
  },
});

const heldWorkflow = defineWorkflow({
  name: 'memory_budget_held',
  version: 1,
  run: async (ctx, n: number) => (await ctx.run(held, n)) + 1,
});

/** A logger that keeps every line's level and message. */
function capturingLogger(lines: { level: string; msg: string }[]): Logger {
  const at =
    (level: string) =>
    (_fields: object, msg?: string): void => {
      lines.push({ level, msg: msg ?? '' });
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Live-heap readings the test hands the worker when it likes. */
function testLiveHeap(): LiveHeapSource & { read(bytes: number): void } {
  let listener: ((bytes: number) => void) | undefined;
  return {
    watch(onReading) {
      listener = onReading;
      return () => (listener = undefined);
    },
    read(bytes) {
      listener?.(bytes);
    },
  };
}

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Opens the gates of the runs waiting in the activity now; returns how many. */
function openGates(count = Infinity): number {
  let opened = 0;
  for (const runId of [...running]) {
    if (opened >= count) break;
    const open = gates.get(runId);
    if (open === undefined) continue;
    gates.delete(runId);
    open();
    opened++;
  }
  return opened;
}

const pair = IN_PROCESS_PAIRS.find((p) => p.name === 'nats+redis')!;

describe(`memory budget on ${pair.name}`, () => {
  const ns = inProcessNamespace(pair.factory, 'membudget');

  function reset(): void {
    executions.clear();
    gates.clear();
    running.clear();
    maxRunning = 0;
  }

  async function startWorker(
    budgetRuns: number,
    resumeRuns: number,
    lines: { level: string; msg: string }[],
  ) {
    const liveHeap = testLiveHeap();
    const worker = new Worker({
      transport: ns.transport,
      store: ns.store,
      workflows: [heldWorkflow],
      concurrency: 100,
      leaseMs: 3_000,
      fetchWaitMs: 100,
      memoryBudgetBytes: Math.floor(IDLE_HEAP + budgetRuns * PRIOR_BYTES_PER_RUN),
      memoryResumeBytes: Math.floor(IDLE_HEAP + resumeRuns * PRIOR_BYTES_PER_RUN),
      heapUsed: () => IDLE_HEAP,
      liveHeap,
      logger: capturingLogger(lines),
    });
    ns.workers.push(worker);
    await worker.start();
    return { worker, liveHeap };
  }

  it(
    'holds back claims while the runs in flight fill the budget, claims again as they end, and completes every run once',
    { timeout: 60_000 },
    async () => {
      reset();
      const lines: { level: string; msg: string }[] = [];
      // Room for 3 runs; claims resume with at most 1 in flight.
      const { worker } = await startWorker(3.5, 1.5, lines);
      const handles = await Promise.all(
        Array.from({ length: 8 }, (_, i) => ns.client.start(heldWorkflow, i)),
      );

      await until('3 runs in their activity', () => running.size === 3);
      expect(worker.health().memoryHoldingBack).toBe(true);
      // The others stay on the bus however many fetch periods pass while the 3 hold the budget.
      await sleep(1_000);
      expect(running.size).toBe(3);
      expect(worker.ownedRuns).toHaveLength(3);
      expect(executions.size).toBe(3);
      expect(
        lines.some((l) => l.level === 'info' && l.msg.startsWith('memory budget: runs in flight fill')),
      ).toBe(true);

      // One run ending leaves 2 in flight, above the resume mark: still nothing new.
      expect(openGates(1)).toBe(1);
      await until('the first released run to finish', () => worker.ownedRuns.length === 2);
      await sleep(500);
      expect(executions.size).toBe(3);
      expect(worker.health().memoryHoldingBack).toBe(true);

      // Another ending leaves 1: at the resume mark, so the worker claims again, up to the budget.
      expect(openGates(1)).toBe(1);
      await until('claims to resume', () => executions.size > 3);
      await until('3 runs in flight again', () => running.size === 3);

      // Let everything through as it comes.
      await until('every run claimed and released', () => {
        openGates();
        return executions.size === 8 && running.size === 0 && worker.ownedRuns.length === 0;
      });
      const results = await Promise.all(handles.map((h) => h.result({ timeoutMs: 30_000 })));
      expect(results).toEqual(Array.from({ length: 8 }, (_, i) => i * 2 + 1));
      expect([...executions.values()]).toEqual(Array(8).fill(1));
      expect(maxRunning).toBe(3);
      expect(worker.health().memoryHoldingBack).toBe(false);
    },
  );

  it(
    'a budget below one run still runs every run, one at a time, each once',
    { timeout: 60_000 },
    async () => {
      reset();
      const lines: { level: string; msg: string }[] = [];
      // The idle heap alone is above this budget: no run fits, so the worker takes one at a time.
      await startWorker(-0.5, -0.75, lines);
      const handles = await Promise.all(
        Array.from({ length: 4 }, (_, i) => ns.client.start(heldWorkflow, 10 + i)),
      );
      await until('every run done', () => {
        openGates();
        return executions.size === 4 && running.size === 0;
      });
      const results = await Promise.all(handles.map((h) => h.result({ timeoutMs: 30_000 })));
      expect(results).toEqual([21, 23, 25, 27]);
      expect([...executions.values()]).toEqual([1, 1, 1, 1]);
      expect(maxRunning).toBe(1);
    },
  );

  it(
    'a live-heap reading that shows runs holding more than assumed admits fewer',
    { timeout: 60_000 },
    async () => {
      reset();
      const lines: { level: string; msg: string }[] = [];
      // Room for 40 runs at the assumed size.
      const { worker, liveHeap } = await startWorker(40.5, 20, lines);
      const handles = await Promise.all(
        Array.from({ length: 60 }, (_, i) => ns.client.start(heldWorkflow, i)),
      );
      await until('40 runs in their activity', () => running.size === 40);
      await sleep(500);
      expect(running.size).toBe(40);
      // A full GC reads 4x what was assumed per run: the estimate rises (to 1.9x with the sample's
      // weight of 0.3), so at most 21 runs fit in the same budget afterwards.
      liveHeap.read(IDLE_HEAP + 40 * 4 * PRIOR_BYTES_PER_RUN);
      const before = new Set(executions.keys());
      let maxNew = 0;
      await until('every run done', () => {
        maxNew = Math.max(maxNew, [...running].filter((id) => !before.has(id)).length);
        openGates();
        return executions.size === 60 && running.size === 0 && worker.ownedRuns.length === 0;
      });
      expect(maxNew).toBeGreaterThan(0);
      expect(maxNew).toBeLessThanOrEqual(21);
      const results = await Promise.all(handles.map((h) => h.result({ timeoutMs: 30_000 })));
      expect(results).toEqual(Array.from({ length: 60 }, (_, i) => i * 2 + 1));
      expect([...executions.values()]).toEqual(Array(60).fill(1));
      expect(maxRunning).toBe(40);
    },
  );
});
