/**
 * The size of one run's history as its journal writer appends to it, against the worker's limits
 * (core's author/history-info.ts): the effective entries and their encoded bytes, counted where
 * the writer already has both (the entries it pushes, each record's `plain.byteLength`), so
 * counting costs one addition and two comparisons per record.
 *
 * The bytes of the history a session starts from (a checkpoint and the journal after it) are
 * encoded once when the session is built, in one pass: no per-step cost, and none for a fresh run.
 *
 * Invariants:
 * 1. The soft limit is reported at most once per writer; the session's {@link HistoryWarnings}
 *    make it once per run per worker.
 * 2. Once the hard limit is reached, `exceeded` holds the error and keeps it: the writer refuses
 *    every later entry but the run's end (journal-writer.ts, invariant 6).
 */
import { HistoryLimitError, type HistoryInfo, type HistoryLimits } from '@baton/core/runtime';

/** What the writer tells the session when the history reaches its soft limit. */
export type SoftLimitReport = (info: HistoryInfo, limits: HistoryLimits) => void;

export class HistoryBounds {
  /** The history's encoded bytes so far. */
  bytes: number;
  /** Set once the hard limit is reached (invariant 2). */
  exceeded: HistoryLimitError | undefined;
  /** The next entry count and byte size at which something happens (soft, then hard limit). */
  private nextEntries: number;
  private nextBytes: number;
  private warned = false;

  constructor(
    private readonly runId: string,
    private readonly limits: HistoryLimits,
    length: number,
    bytes: number,
    private readonly onSoftLimit: SoftLimitReport | undefined,
  ) {
    this.bytes = bytes;
    this.nextEntries = 0;
    this.nextBytes = 0;
    this.check(length);
  }

  /** After a record of `recordBytes` landed, leaving `length` effective entries. */
  appended(length: number, recordBytes: number): void {
    this.bytes += recordBytes;
    if (length >= this.nextEntries || this.bytes >= this.nextBytes) this.check(length);
  }

  /** The history now, for `ctx.historyInfo()`. */
  info(length: number): HistoryInfo {
    return { length, bytes: this.bytes, suggested: pastSoftLimit(length, this.bytes, this.limits) };
  }

  /** Reports what was crossed and moves the thresholds on. */
  private check(length: number): void {
    const { limits } = this;
    if (!this.warned && pastSoftLimit(length, this.bytes, limits)) {
      this.warned = true;
      this.onSoftLimit?.(this.info(length), limits);
    }
    if (this.exceeded === undefined) {
      const which = hardLimitReached(length, this.bytes, limits);
      if (which !== undefined)
        this.exceeded = new HistoryLimitError(
          this.runId,
          which,
          length,
          this.bytes,
          which === 'entries' ? limits.maxEntries : limits.maxBytes,
        );
    }
    // The nearest limit not yet reached (0 is off, so never); past the hard limit, none is left.
    const done = this.exceeded !== undefined;
    const soft = (limit: number): number => (this.warned ? Infinity : threshold(limit));
    this.nextEntries = done ? Infinity : Math.min(soft(limits.softEntries), threshold(limits.maxEntries));
    this.nextBytes = done ? Infinity : Math.min(soft(limits.softBytes), threshold(limits.maxBytes));
  }
}

/** True when a history of `length` entries and `bytes` bytes reached a soft limit of `limits`. */
function pastSoftLimit(length: number, bytes: number, limits: HistoryLimits): boolean {
  return (
    (limits.softEntries > 0 && length >= limits.softEntries) ||
    (limits.softBytes > 0 && bytes >= limits.softBytes)
  );
}

/** Which hard limit a history of `length` entries and `bytes` bytes reached, if any. */
function hardLimitReached(
  length: number,
  bytes: number,
  limits: HistoryLimits,
): 'entries' | 'bytes' | undefined {
  if (limits.maxEntries > 0 && length >= limits.maxEntries) return 'entries';
  if (limits.maxBytes > 0 && bytes >= limits.maxBytes) return 'bytes';
  return undefined;
}

function threshold(limit: number): number {
  return limit > 0 ? limit : Infinity;
}

/**
 * Which runs this worker has warned about (invariant 1): one warning per run per worker, however
 * often the run is resumed here. Bounded: past `max` runs it forgets them all and starts again (a
 * run may then be warned about once more).
 */
export class HistoryWarnings {
  private readonly warned = new Set<string>();

  constructor(private readonly max = 10_000) {}

  /** True the first time for `runId`. */
  first(runId: string): boolean {
    if (this.warned.has(runId)) return false;
    if (this.warned.size >= this.max) this.warned.clear();
    this.warned.add(runId);
    return true;
  }
}
