/**
 * The worker's memory budget for in-flight runs: the claim loop admits a new run only while the
 * live heap projected for the runs in flight leaves room for it within the budget; from the moment
 * not one more fits it fetches nothing and turns down the runs the maintenance scans found, until
 * runs ending bring the projection back to the resume mark.
 *
 * Why a projection, not the heap: between full GCs the used heap is mostly garbage (V8 lets the old
 * generation fill up to its limit before it collects: a fanout bench run showed 50 MiB live against
 * 180 MiB used), and a run allocates most of its state some time after its claim (a fan-out run
 * once its first step is durable), so a heap reading says too much and too late. The projection is
 * the idle worker's live heap plus an estimated size per in-flight run, both measured on the live
 * heap right after full GCs (`gcLiveHeap`), and counts a claim the moment it is made.
 *
 * Invariants:
 * 1. The budget only ever delays claims: a run already claimed is never paused, aborted or handed
 *    off for it, and a message not fetched stays on the bus for this or another worker. Nothing is
 *    lost or done twice.
 * 2. It never stalls a worker: with no run in flight the claim loop takes one run whatever the
 *    projection (ClaimLoop), so a budget below one run's need still lets runs proceed, one at a time.
 * 3. Hysteresis: holding back starts when not one more run fits and ends at or below the resume
 *    mark, so claims come in batches rather than one per run that ends.
 * 4. Holding back is seen: `baton_memory_hold_backs_total` counts its starts, `baton_memory_holding`
 *    is 1 while it lasts, `health().memoryHoldingBack` says so, and a log line (info at most once
 *    per 10 s, debug otherwise) gives the projection, the last live reading and the runs in flight.
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { WorkerInstruments } from '@baton/telemetry';
import type { Logger } from './logger.js';

/** The default heap reading: V8's used heap, garbage not yet collected included. No syscall. */
export function v8HeapUsed(): number {
  return getHeapStatistics().used_heap_size;
}

/** Share of the memory limit the default budget takes (the rest: new space, code, buffers, GC headroom). */
export const DEFAULT_BUDGET_SHARE = 0.25;
/** The default resume mark, as a share of the budget. */
export const DEFAULT_RESUME_SHARE = 0.8;

/**
 * The default budget: a quarter of the smaller of the container's memory limit (cgroup, when there
 * is one) and V8's heap limit. In the Helm chart's 512 MiB container that is 128 MiB of heap; on a
 * machine without a limit, a quarter of V8's heap limit (itself derived from physical memory).
 */
export function defaultMemoryBudgetBytes(
  constrained: number | undefined = process.constrainedMemory?.(),
  heapLimit: number = getHeapStatistics().heap_size_limit,
): number {
  // No limit reads as 0, undefined or a huge number (2^64 - 1) depending on the platform.
  const limit =
    constrained !== undefined && constrained > 0 && constrained < Number.MAX_SAFE_INTEGER
      ? Math.min(constrained, heapLimit)
      : heapLimit;
  return Math.floor(limit * DEFAULT_BUDGET_SHARE);
}

export interface MemoryBudgetSettings {
  /** Heap bytes above which no new run is claimed; 0 turns the budget off. */
  budgetBytes: number;
  /** Claims resume once the heap is at or below this (below `budgetBytes`). */
  resumeBytes: number;
  /** The used heap now (read at start, as the idle heap, and at each full GC). */
  heapUsed: () => number;
  /** Where live-heap readings come from: V8's full GCs by default. */
  liveHeap: LiveHeapSource;
}

const MIB = 1024 * 1024;
const mib = (bytes: number): number => Math.round(bytes / MIB);

/** Bytes per run assumed before any is measured: a fan-out run of 50 steps holds about 100 KiB. */
export const PRIOR_BYTES_PER_RUN = 256 * 1024;
/** Runs in flight needed at a full GC before its reading is taken as a sample of the bytes per run. */
const MIN_SAMPLE_RUNS = 4;
/** Weight of a new sample in the bytes-per-run estimate. */
const SAMPLE_WEIGHT = 0.3;
/** At most one info line about holding back per this many ms; the others go at debug level. */
const LOG_EVERY_MS = 10_000;

/** Where the live heap is read: after each full (mark-compact) GC, when only live objects remain. */
export interface LiveHeapSource {
  /** Calls `onReading(bytes)` with the heap used right after each full GC; returns a stop function. */
  watch(onReading: (bytes: number) => void): () => void;
}

/**
 * Live-heap readings from V8's GC notifications: a `gc` performance entry of a major (mark-compact)
 * collection is delivered right after it, when the used heap is about the live heap (plus what was
 * allocated since, little).
 */
export function gcLiveHeap(heapUsed: () => number): LiveHeapSource {
  return {
    watch(onReading) {
      const observer = new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
          const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
          if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
            onReading(heapUsed());
            return;
          }
        }
      });
      observer.observe({ entryTypes: ['gc'] });
      return () => observer.disconnect();
    },
  };
}

/**
 * The budget's model: the live heap is the idle worker's heap (`baseline`) plus `bytesPerRun` per
 * run in flight. Both are measured at full GCs (the only moment the used heap is the live heap: in
 * between it holds garbage that the next GC frees, which would read as memory held by runs), and
 * the projection for the runs in flight now is what claims are admitted against, so a burst of
 * claims is counted before the runs have allocated their state.
 */
export class MemoryBudget {
  private holdingValue = false;
  private heldSince = 0;
  private holdBacks = 0;
  private lastInfoAt = -Infinity;
  /** The idle worker's live heap: the reading at start, lowered by any full GC with few runs in flight. */
  private baseline: number | undefined;
  /** Estimated live heap bytes one in-flight run holds. */
  private perRun = PRIOR_BYTES_PER_RUN;
  private lastLive: number | undefined;
  private stopWatching: (() => void) | undefined;
  /** Runs in flight now, kept by the claim loop's calls, for the GC readings. */
  private runsInFlight = 0;

  constructor(
    private readonly settings: MemoryBudgetSettings,
    private readonly logger: Logger,
    private readonly instruments: WorkerInstruments,
  ) {}

  /** Starts reading the live heap (a no-op with the budget off). */
  start(): void {
    if (this.settings.budgetBytes === 0 || this.stopWatching) return;
    this.baseline = this.settings.heapUsed();
    this.stopWatching = this.settings.liveHeap.watch((bytes) => this.onLiveReading(bytes));
  }

  /** Stops reading and ends a hold-back, so the gauge does not stay at 1. */
  stop(): void {
    this.stopWatching?.();
    this.stopWatching = undefined;
    if (!this.holdingValue) return;
    this.holdingValue = false;
    this.instruments.memoryHolding.add(-1);
  }

  /** Whether claims are held back now (as of the last `admit`). */
  get holding(): boolean {
    return this.holdingValue;
  }

  /** How many times holding back has started since the worker was built. */
  get timesHeldBack(): number {
    return this.holdBacks;
  }

  /** The current estimate of live heap bytes per in-flight run. */
  get bytesPerRun(): number {
    return this.perRun;
  }

  /** The live heap projected for `runsInFlight` runs. */
  projected(runsInFlight: number): number {
    return (this.baseline ?? this.settings.heapUsed()) + this.perRun * runsInFlight;
  }

  /**
   * How many more runs may be claimed now, with `runsInFlight` running: as many as fit between the
   * projected live heap and the budget; 0 from the moment not one more fits until the projection
   * is back at or below the resume mark (runs ending bring it down). `Infinity` when the budget
   * is off. The caller still claims one run when none is in flight (invariant 2).
   */
  admit(runsInFlight: number): number {
    this.runsInFlight = runsInFlight;
    const { budgetBytes, resumeBytes } = this.settings;
    if (budgetBytes === 0) return Infinity;
    const projected = this.projected(runsInFlight);
    // Held back from the moment not one more run fits, until runs ending bring it to the resume mark.
    if (!this.holdingValue && projected + this.perRun > budgetBytes) this.hold(projected, runsInFlight);
    else if (this.holdingValue && projected <= resumeBytes) this.resume(projected, runsInFlight);
    if (this.holdingValue) return 0;
    return Math.max(0, Math.floor((budgetBytes - projected) / this.perRun));
  }

  private hold(projected: number, runsInFlight: number): void {
    const { budgetBytes, resumeBytes } = this.settings;
    this.holdingValue = true;
    this.heldSince = Date.now();
    this.holdBacks++;
    this.instruments.memoryHoldBacks.add(1);
    this.instruments.memoryHolding.add(1);
    const info = this.heldSince - this.lastInfoAt >= LOG_EVERY_MS;
    if (info) this.lastInfoAt = this.heldSince;
    this.logger[info ? 'info' : 'debug'](
      {
        projectedMiB: mib(projected),
        liveHeapMiB: this.lastLive === undefined ? null : mib(this.lastLive),
        budgetMiB: mib(budgetBytes),
        resumeMiB: mib(resumeBytes),
        runsInFlight,
        bytesPerRun: Math.round(this.perRun),
        timesHeldBack: this.holdBacks,
      },
      'memory budget: runs in flight fill the budget; claiming no new runs until some end',
    );
  }

  private resume(projected: number, runsInFlight: number): void {
    this.holdingValue = false;
    this.instruments.memoryHolding.add(-1);
    this.logger.debug(
      { projectedMiB: mib(projected), runsInFlight, heldMs: Date.now() - this.heldSince },
      'memory budget: claiming again',
    );
  }

  /** A full GC's reading: the live heap with the runs in flight now. */
  private onLiveReading(live: number): void {
    this.lastLive = live;
    const runs = this.runsInFlight;
    if (this.baseline === undefined || live < this.baseline) {
      this.baseline = live;
      return;
    }
    if (runs < MIN_SAMPLE_RUNS) {
      // Few runs: the reading is mostly the idle heap; let the baseline follow it (slowly upward).
      if (runs === 0) this.baseline += (live - this.baseline) * SAMPLE_WEIGHT;
      return;
    }
    const sample = Math.max(1024, (live - this.baseline) / runs);
    this.perRun += (sample - this.perRun) * SAMPLE_WEIGHT;
  }
}
