/**
 * The fleet as an operator sees it (`client.fleet`): the live workers, read from the store's
 * fleet reports; the workers that left lately, with where the runs they held are now; the run queue's backlog, read from the bus; and what a rollout asks of it: per
 * workflow version the work that still needs it (versions.ts), and whether new workflow code can
 * resume the runs in flight (replay-check.ts). One typed API for the CLI (`baton workers`,
 * `baton backlog`, `baton versions`, `baton replay-check`), the console and applications.
 */
import { ConfigError } from '@baton/core';
import {
  type BacklogDetail,
  type DepartedWorker,
  type ReportedWorker,
  type RunStatus,
  type Store,
  type Transport,
} from '@baton/core/adapter';
import type { ClaimCheck, PayloadProtection } from '@baton/core/runtime';
import { replayCheck, type ReplayCheckOptions, type ReplayCheckReport } from './replay-check.js';
import { TimeoutError } from './result-errors.js';
import { VersionDrains, type VersionDrain, type VersionsListing, type VersionsOptions } from './versions.js';

/** A live worker: its latest report, and whether its presence connection is up. */
export interface FleetWorker extends ReportedWorker {
  /**
   * On a store with presence (Redis, Postgres): true while the worker's presence connection is
   * connected, false when it dropped (the worker died, or is reconnecting) though its report has
   * not expired yet. Absent on a store without presence (in-memory).
   */
  connected?: boolean;
}

/** One run a departed worker held, and where it is now (read when listed). */
export interface HeldRun {
  runId: string;
  /** Its status now; `unknown` when the store has no record of it any more (retention deleted it). */
  status: RunStatus | 'unknown';
  /**
   * The worker whose lease it runs under now, when a worker holds it: another worker that took it
   * over, or still the departed one while its lease has not lapsed yet. Null otherwise (waiting
   * for a worker, suspended, paused, finished).
   */
  owner: string | null;
}

/** A worker that left, as {@link FleetApi.departed} lists it. */
export interface DepartedFleetWorker extends DepartedWorker {
  /** The runs it held when it ended (its `runs`, at most 100), each with where it is now. */
  heldRuns: HeldRun[];
}

/** How many runs {@link FleetApi.departed} reads at once. */
const HELD_RUN_READS = 16;

/** The run queue's backlog, part by part, and the bus it was read from. */
export interface FleetBacklog extends BacklogDetail {
  /** The transport's name: `nats`, `kafka`, `memory`. */
  transport: string;
}

/** Options of {@link FleetApi.backlog}. */
export interface BacklogOptions {
  /** How long the bus may take to answer (ms). @defaultValue 5000 */
  timeoutMs?: number;
}

const DEFAULT_BACKLOG_TIMEOUT_MS = 5_000;

export class FleetApi {
  private readonly drains: VersionDrains;

  constructor(
    private readonly store: (method: string) => Store,
    private readonly transport: Transport,
    private readonly connect: () => Promise<void>,
    /** The workers' payload protection and large payloads, for reading runs as they do. */
    private readonly protection: PayloadProtection,
    private readonly claimCheck: ClaimCheck | undefined,
  ) {
    this.drains = new VersionDrains(store, transport, () => this.store('fleet.versions').fleet.list());
  }

  /**
   * Per workflow version (every version a live worker registers, an unfinished run needs or a
   * dead-lettered start names): its unfinished runs by status, its dead-lettered starts, the live
   * workers that can take it (and those draining), and whether it is `drained` (nothing needs it:
   * its code may go) or `stranded` (work needs it and no live worker that is not draining has it).
   * `drained` is exact; counts are lower bounds when `complete` is false (a walk hit its limit).
   * ConfigError when the client has no store.
   */
  async versions(options: VersionsOptions = {}): Promise<VersionsListing> {
    await this.connect();
    return this.drains.list(options);
  }

  /**
   * Whether one version is drained: no unfinished run of it and no dead-lettered start of it
   * (exact; a start still on the bus has no record yet, so move producers off the version first).
   * The deploy-pipeline gate behind `baton versions --drained <workflow>@<version>`.
   */
  async drained(
    workflow: string,
    version: number,
    options: Pick<VersionsOptions, 'deadLetterLimit'> = {},
  ): Promise<VersionDrain> {
    await this.connect();
    return this.drains.drained(workflow, version, options);
  }

  /**
   * The workers whose reports have not expired, by worker id: where each runs, its Baton version,
   * the workflow versions it registers (name → versions, exactly), when it started, its last lease
   * renewal, the runs it holds, its concurrency and whether it is draining. A worker reports every
   * heartbeat; a killed one drops out once its report expires (a few heartbeats, at least one
   * lease). ConfigError when the client has no store.
   */
  async workers(): Promise<FleetWorker[]> {
    const store = this.store('fleet.workers');
    const { presence } = store;
    if (presence === undefined) return store.fleet.list();
    const [workers, live] = await Promise.all([store.fleet.list(), presence.live()]);
    const connected = new Set(live);
    return workers.map((worker) => ({ ...worker, connected: connected.has(worker.workerId) }));
  }

  /**
   * The workers that left within their retention (the worker's `departedRetentionMs`,
   * `BATON_DEPARTED_RETENTION_MS`, one hour by default), the latest to end first: their
   * last report, when they were last seen, how they ended (`handed-off`: it drained after SIGTERM
   * and said so; `expired`: its report ran out with no word, as a killed, frozen or cut-off
   * worker's does, a lease or a few heartbeats after it was last seen) and the runs they held then,
   * each with its status and owner now. A separate call from {@link workers}, not an option of it:
   * the answer has another shape (no liveness, but an end and the runs' whereabouts), and reading
   * where each run went costs a read per run that a caller who wants the live fleet should not pay.
   * ConfigError when the client has no store.
   */
  async departed(): Promise<DepartedFleetWorker[]> {
    const store = this.store('fleet.departed');
    await this.connect();
    const departed = await store.fleet.departed();
    const where = new Map<string, HeldRun>();
    const runIds = [...new Set(departed.flatMap((worker) => worker.runs ?? []))];
    for (let i = 0; i < runIds.length; i += HELD_RUN_READS) {
      await Promise.all(
        runIds.slice(i, i + HELD_RUN_READS).map(async (runId) => {
          const [run, lease] = await Promise.all([store.runs.get(runId), store.leases.get(runId)]);
          where.set(runId, {
            runId,
            status: run?.status ?? 'unknown',
            owner: lease?.state === 'held' ? lease.owner : null,
          });
        }),
      );
    }
    return departed.map((worker) => ({
      ...worker,
      heldRuns: (worker.runs ?? []).map((runId) => where.get(runId)!),
    }));
  }

  /**
   * The run queue's backlog as the bus counts it, part by part: on NATS the workers' consumer
   * (`pending`: not yet delivered; `ackPending`: delivered, not yet acked), on Kafka each partition
   * of the runs topic (`pending`: the workers' consumer-group lag there). ConfigError when the
   * transport cannot count its backlog; TimeoutError when the bus did not answer within
   * `timeoutMs`.
   */
  async backlog(options: BacklogOptions = {}): Promise<FleetBacklog> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_BACKLOG_TIMEOUT_MS;
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0))
      throw new ConfigError(
        `client.fleet.backlog(): timeoutMs is ${String(timeoutMs)}; give a number of ms above 0`,
      );
    const { transport } = this;
    if (transport.runQueue.backlogDetail === undefined) {
      throw new ConfigError(
        `client.fleet.backlog(): the ${transport.name} transport cannot count its backlog ` +
          '(it has no backlogDetail); the NATS, Kafka and memory transports can',
      );
    }
    await this.connect();
    const detail = await transport.runQueue.backlogDetail(timeoutMs);
    if (detail === undefined) {
      throw new TimeoutError(
        `client.fleet.backlog(): the ${transport.name} transport gave no backlog within ${timeoutMs} ms ` +
          '(the server did not answer, or the transport is closed); try again, or with a longer timeoutMs',
      );
    }
    return { transport: transport.name, ...detail };
  }

  /**
   * Replays the journals of the runs `options.filter` selects (by default every run in flight:
   * pending, running, suspended) against `options.workflows`, the NEW workflow code, and says per
   * run whether a worker on that code could resume it: `ok` (and where the replay ended),
   * `nondeterministic` (the step, what the journal recorded and what the code asked for; a worker
   * would fail the run with NonDeterminismError there), `failed` (the new code throws during the
   * replay), `skipped` (its workflow name@version is not in the new code) or `error` (its history
   * could not be read: unreadable checkpoint, missing key, failed read). Runs are read and
   * replayed as a worker resumes them, with this client's payload protection; nothing is written
   * anywhere and no activity code runs (docs/versioning.md, "Check before you roll out").
   * ConfigError for two different definitions of one name@version or a bad `maxRuns`.
   */
  async replayCheck(options: ReplayCheckOptions): Promise<ReplayCheckReport> {
    const store = this.store('fleet.replayCheck');
    await this.connect();
    return replayCheck(
      { store, transport: this.transport, protection: this.protection, claimCheck: this.claimCheck },
      options,
    );
  }
}
