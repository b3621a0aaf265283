/**
 * Drain visibility (`client.fleet.versions()`, `client.fleet.drained()`): per workflow version,
 * the work that still needs it and the live workers that can take it, so an operator (or a deploy
 * pipeline) knows when an old version's code may be removed (docs/versioning.md, "When is a
 * version drained?").
 *
 * What "needs a version": a run of it that has not finished (pending, running, suspended or
 * paused, as the store lists it), or a start of it that was dead-lettered (it needs the version
 * once redriven). A start still travelling on the bus has no record yet and cannot be counted:
 * move the producers off a version before asking whether it drained.
 *
 * Invariants:
 * 1. `drained` is exact for every version reported: it rests on a query for one unfinished run of
 *    that version (the store's own index), never on a count cut short. Counts may be lower bounds
 *    when a walk stopped at its limit; the answer then says `complete: false`.
 * 2. The work is bounded: the unfinished runs walked (`scanLimit`) and the dead letters read
 *    (`deadLetterLimit`) are capped; a dead-letter queue longer than the cap makes `drained()`
 *    refuse to answer (an error) rather than guess.
 */
import { ConfigError } from '@baton/core';
import {
  UNFINISHED_RUN_STATUSES,
  type ReportedWorker,
  type RunStatus,
  type Store,
  type Transport,
} from '@baton/core/adapter';
import { decodeDeadLetter } from './dead-letter-message.js';

/** The statuses of a run that still needs its workflow version (one list, in core's run-record.ts). */
export { UNFINISHED_RUN_STATUSES };

const PAGE = 1_000;
const DEFAULT_SCAN_LIMIT = 100_000;
const DEFAULT_DEAD_LETTER_LIMIT = 10_000;

/** One workflow version: the work that needs it and who can take it. */
export interface VersionDrain {
  workflow: string;
  version: number;
  /** Unfinished runs of this version, by status (a lower bound when the listing is not complete). */
  unfinished: { total: number; byStatus: Partial<Record<RunStatus, number>> };
  /** Dead-lettered starts of this version, waiting for a redrive. */
  deadLetteredStarts: number;
  /** Live workers that register this version and are not draining, by id. */
  workers: string[];
  /** Live workers that register it and are draining (they take nothing new). */
  drainingWorkers: string[];
  /** No unfinished run and no dead-lettered start needs this version: its code may be removed. */
  drained: boolean;
  /** Work needs this version and no live worker that is not draining registers it. */
  stranded: boolean;
}

export interface VersionsListing {
  /** By workflow name, then version ascending: every version a live worker registers or work needs. */
  versions: VersionDrain[];
  /** False when a walk stopped at its limit: the counts are then lower bounds (`drained` stays exact). */
  complete: boolean;
}

export interface VersionsOptions {
  /** Only this workflow's versions. */
  workflow?: string;
  /** Unfinished runs walked at most, to count them per version. @defaultValue 100000 */
  scanLimit?: number;
  /** Dead letters read at most. @defaultValue 10000 */
  deadLetterLimit?: number;
}

type Key = `${string}@${number}`;
const keyOf = (workflow: string, version: number): Key => `${workflow}@${version}`;

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1)
    throw new ConfigError(`client.fleet.versions(): ${name} is ${String(value)}; give a whole number ≥ 1`);
  return value;
}

function blank(workflow: string, version: number): VersionDrain {
  return {
    workflow,
    version,
    unfinished: { total: 0, byStatus: {} },
    deadLetteredStarts: 0,
    workers: [],
    drainingWorkers: [],
    drained: true,
    stranded: false,
  };
}

export class VersionDrains {
  constructor(
    private readonly store: (method: string) => Store,
    private readonly transport: Transport,
    private readonly workers: () => Promise<ReportedWorker[]>,
  ) {}

  /** Every version a live worker registers or unfinished work needs, with its drain state. */
  async list(options: VersionsOptions = {}): Promise<VersionsListing> {
    const scanLimit = positive('scanLimit', options.scanLimit, DEFAULT_SCAN_LIMIT);
    const letterLimit = positive('deadLetterLimit', options.deadLetterLimit, DEFAULT_DEAD_LETTER_LIMIT);
    const store = this.store('fleet.versions');
    const byKey = new Map<Key, VersionDrain>();
    const entry = (workflow: string, version: number): VersionDrain => {
      const key = keyOf(workflow, version);
      let found = byKey.get(key);
      if (found === undefined) byKey.set(key, (found = blank(workflow, version)));
      return found;
    };
    const wanted = (workflow: string): boolean =>
      options.workflow === undefined || options.workflow === workflow;

    const [workers, walked, letters] = await Promise.all([
      this.workers(),
      this.walkUnfinished(store, options.workflow, scanLimit),
      this.deadLetteredStarts(letterLimit),
    ]);
    for (const worker of workers) {
      for (const wf of worker.workflows) {
        if (!wanted(wf.name)) continue;
        for (const version of wf.versions) {
          const e = entry(wf.name, version);
          (worker.draining ? e.drainingWorkers : e.workers).push(worker.workerId);
        }
      }
    }
    for (const run of walked.runs) {
      const e = entry(run.workflow, run.version);
      e.unfinished.total++;
      e.unfinished.byStatus[run.status] = (e.unfinished.byStatus[run.status] ?? 0) + 1;
    }
    for (const [key, count] of letters.counts) {
      const at = key.lastIndexOf('@');
      const workflow = key.slice(0, at);
      if (wanted(workflow)) entry(workflow, Number(key.slice(at + 1))).deadLetteredStarts = count;
    }
    // Exact where the walk was cut short: one indexed query per version the walk saw none of.
    await Promise.all(
      [...byKey.values()].map(async (e) => {
        if (e.unfinished.total === 0 && !walked.complete && (await this.anyUnfinished(store, e)))
          e.unfinished.total = 1;
        e.drained = e.unfinished.total === 0 && e.deadLetteredStarts === 0;
        e.stranded = !e.drained && e.workers.length === 0;
      }),
    );
    const versions = [...byKey.values()].sort((a, b) =>
      a.workflow === b.workflow ? a.version - b.version : a.workflow < b.workflow ? -1 : 1,
    );
    return { versions, complete: walked.complete && letters.complete };
  }

  /**
   * Whether `workflow@version` is drained: no unfinished run of it in the store and no
   * dead-lettered start of it. Exact; reads every dead letter (up to `deadLetterLimit`, past which
   * it throws rather than guess).
   */
  async drained(
    workflow: string,
    version: number,
    options: Pick<VersionsOptions, 'deadLetterLimit'> = {},
  ): Promise<VersionDrain> {
    if (typeof workflow !== 'string' || workflow === '' || !Number.isInteger(version) || version < 1)
      throw new ConfigError(
        `client.fleet.drained(${String(workflow)}, ${String(version)}): give a workflow name and a version ≥ 1`,
      );
    const letterLimit = positive('deadLetterLimit', options.deadLetterLimit, DEFAULT_DEAD_LETTER_LIMIT);
    const store = this.store('fleet.drained');
    const [workers, page, letters] = await Promise.all([
      this.workers(),
      store.runs.list({ workflow, version, status: UNFINISHED_RUN_STATUSES, limit: PAGE, order: 'oldest' }),
      this.deadLetteredStarts(letterLimit),
    ]);
    if (!letters.complete)
      throw new ConfigError(
        `client.fleet.drained(${workflow}@${version}): the dead-letter queue holds more than ` +
          `${letterLimit} letters, so whether a start of this version waits there is unknown; ` +
          'redrive or purge dead letters, or pass a larger deadLetterLimit',
      );
    const e = blank(workflow, version);
    for (const w of workers) {
      if (!w.workflows.some((wf) => wf.name === workflow && wf.versions.includes(version))) continue;
      (w.draining ? e.drainingWorkers : e.workers).push(w.workerId);
    }
    for (const run of page.runs) {
      e.unfinished.byStatus[run.status] = (e.unfinished.byStatus[run.status] ?? 0) + 1;
    }
    // A first page only: past it the count is a lower bound, which is all a yes/no gate needs.
    e.unfinished.total = page.runs.length;
    e.deadLetteredStarts = letters.counts.get(keyOf(workflow, version)) ?? 0;
    e.drained = e.unfinished.total === 0 && e.deadLetteredStarts === 0;
    e.stranded = !e.drained && e.workers.length === 0;
    return e;
  }

  private async anyUnfinished(store: Store, e: VersionDrain): Promise<boolean> {
    const page = await store.runs.list({
      workflow: e.workflow,
      version: e.version,
      status: UNFINISHED_RUN_STATUSES,
      limit: 1,
    });
    return page.runs.length > 0;
  }

  /** Unfinished runs, oldest first, up to `limit`. */
  private async walkUnfinished(
    store: Store,
    workflow: string | undefined,
    limit: number,
  ): Promise<{ runs: Array<{ workflow: string; version: number; status: RunStatus }>; complete: boolean }> {
    const runs: Array<{ workflow: string; version: number; status: RunStatus }> = [];
    let cursor: string | undefined;
    do {
      const page = await store.runs.list({
        status: UNFINISHED_RUN_STATUSES,
        order: 'oldest',
        limit: Math.min(PAGE, limit - runs.length),
        ...(workflow !== undefined && { workflow }),
        ...(cursor !== undefined && { cursor }),
      });
      for (const r of page.runs) runs.push({ workflow: r.workflow, version: r.version, status: r.status });
      cursor = page.cursor;
    } while (cursor !== undefined && runs.length < limit);
    return { runs, complete: cursor === undefined };
  }

  /** Dead-lettered start messages per `workflow@version`, reading at most `limit` letters. */
  private async deadLetteredStarts(
    limit: number,
  ): Promise<{ counts: Map<string, number>; complete: boolean }> {
    const counts = new Map<string, number>();
    let read = 0;
    let cursor: string | undefined;
    do {
      const page = await this.transport.deadLetters.page({
        limit: Math.min(PAGE, limit - read),
        ...(cursor !== undefined && { cursor }),
      });
      read += page.letters.length;
      for (const letter of page.letters) {
        const decoded = decodeDeadLetter(letter);
        if (!decoded.readable || decoded.message.kind !== 'start') continue;
        const key = keyOf(decoded.message.workflow, decoded.message.version);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      cursor = page.cursor;
    } while (cursor !== undefined && read < limit);
    return { counts, complete: cursor === undefined };
  }
}
