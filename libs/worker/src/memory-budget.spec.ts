/**
 * The memory budget's arithmetic: admission against the projected live heap, the hold-back and
 * its resume mark, what full-GC readings teach it, and the default budget. The claim loop's use of
 * it on a real bus and store is tests/system/src/memory-budget.serial.int.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@baton/core';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { workerInstruments } from '@baton/telemetry';
import { silentLogger } from './logger.js';
import {
  defaultMemoryBudgetBytes,
  MemoryBudget,
  PRIOR_BYTES_PER_RUN,
  type LiveHeapSource,
} from './memory-budget.js';
import { resolveWorkerOptions } from './options.js';

const MIB = 1024 * 1024;
const IDLE = 50 * MIB;
const RUN = PRIOR_BYTES_PER_RUN;

function budget(budgetRuns: number, resumeRuns: number): { budget: MemoryBudget; read(bytes: number): void } {
  let listener: ((bytes: number) => void) | undefined;
  const liveHeap: LiveHeapSource = {
    watch(onReading) {
      listener = onReading;
      return () => (listener = undefined);
    },
  };
  const b = new MemoryBudget(
    {
      budgetBytes: IDLE + budgetRuns * RUN,
      resumeBytes: IDLE + resumeRuns * RUN,
      heapUsed: () => IDLE,
      liveHeap,
    },
    silentLogger,
    workerInstruments(),
  );
  b.start();
  return { budget: b, read: (bytes) => listener?.(bytes) };
}

describe('MemoryBudget', () => {
  it('admits what fits, holds back once nothing more fits, and resumes at the resume mark', () => {
    const { budget: b } = budget(10, 4);
    expect(b.admit(0)).toBe(10);
    expect(b.admit(6)).toBe(4);
    expect(b.holding).toBe(false);
    expect(b.admit(10)).toBe(0);
    expect(b.holding).toBe(true);
    expect(b.admit(5)).toBe(0); // above the resume mark: still held
    expect(b.admit(4)).toBe(6); // at the mark: claims again, as many as fit
    expect(b.holding).toBe(false);
    expect(b.timesHeldBack).toBe(1);
  });

  it('learns the bytes per run from full-GC readings with enough runs in flight', () => {
    const { budget: b, read } = budget(100, 50);
    b.admit(40);
    read(IDLE + 40 * 2 * RUN); // runs hold twice the prior
    expect(b.bytesPerRun).toBeCloseTo(RUN * 1.3, 0);
    b.admit(2);
    read(IDLE + 2 * 100 * RUN); // too few runs to tell: no sample
    expect(b.bytesPerRun).toBeCloseTo(RUN * 1.3, 0);
  });

  it('is off at 0: admits without limit and never reads the heap', () => {
    let reads = 0;
    const b = new MemoryBudget(
      { budgetBytes: 0, resumeBytes: 0, heapUsed: () => reads++, liveHeap: { watch: () => () => undefined } },
      silentLogger,
      workerInstruments(),
    );
    b.start();
    expect(b.admit(1_000_000)).toBe(Infinity);
    expect(reads).toBe(0);
  });

  it('defaults to a quarter of the container limit or of the heap limit, whichever is smaller', () => {
    expect(defaultMemoryBudgetBytes(512 * MIB, 4096 * MIB)).toBe(128 * MIB);
    expect(defaultMemoryBudgetBytes(undefined, 4096 * MIB)).toBe(1024 * MIB);
    expect(defaultMemoryBudgetBytes(2 ** 64 - 1, 4096 * MIB)).toBe(1024 * MIB);
    expect(defaultMemoryBudgetBytes(0, 256 * MIB)).toBe(64 * MIB);
  });

  it('refuses a resume mark at or above the budget, and a negative budget', () => {
    const base = { transport: memoryTransport(), store: memoryStore(), workflows: [] };
    const wf = { name: 'w', version: 1, run: async () => undefined } as never;
    const resolve = (extra: object) => resolveWorkerOptions({ ...base, workflows: [wf], ...extra });
    expect(() => resolve({ memoryBudgetBytes: 64 * MIB, memoryResumeBytes: 64 * MIB })).toThrow(ConfigError);
    expect(() => resolve({ memoryBudgetBytes: -1 })).toThrow(/memoryBudgetBytes/);
    expect(resolve({ memoryBudgetBytes: 64 * MIB }).memoryBudget.resumeBytes).toBe(
      Math.floor(64 * MIB * 0.8),
    );
  });
});
