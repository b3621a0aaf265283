/**
 * The fleet as an operator sees it (`client.fleet`): the live workers, read from the store's
 * fleet reports, and the run queue's backlog, read from the bus. One typed API for the CLI
 * (`baton workers`, `baton backlog`), the console and applications.
 */
import { ConfigError, TimeoutError } from '@baton/core';
import {
  hasPresence,
  type BacklogDetail,
  type ReportedWorker,
  type Store,
  type Transport,
} from '@baton/core/adapter';

/** A live worker: its latest report, and whether its presence connection is up. */
export interface FleetWorker extends ReportedWorker {
  /**
   * On a store with presence (Redis, Postgres): true while the worker's presence connection is
   * connected, false when it dropped (the worker died, or is reconnecting) though its report has
   * not expired yet. Absent on a store without presence (in-memory).
   */
  connected?: boolean;
}

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
  constructor(
    private readonly store: (method: string) => Store,
    private readonly transport: Transport,
    private readonly connect: () => Promise<void>,
  ) {}

  /**
   * The workers whose reports have not expired, by worker id: where each runs, its Baton version,
   * the workflow versions it registers (name → versions, exactly), when it started, its last lease
   * renewal, the runs it holds, its concurrency and whether it is draining. A worker reports every
   * heartbeat; a killed one drops out once its report expires (a few heartbeats, at least one
   * lease). ConfigError when the client has no store.
   */
  async workers(): Promise<FleetWorker[]> {
    const store = this.store('fleet.workers');
    if (!hasPresence(store)) return store.listWorkers();
    const [workers, live] = await Promise.all([store.listWorkers(), store.liveWorkers()]);
    const connected = new Set(live);
    return workers.map((worker) => ({ ...worker, connected: connected.has(worker.workerId) }));
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
    if (transport.backlogDetail === undefined) {
      throw new ConfigError(
        `client.fleet.backlog(): the ${transport.name} transport cannot count its backlog ` +
          '(it has no backlogDetail); the NATS, Kafka and memory transports can',
      );
    }
    await this.connect();
    const detail = await transport.backlogDetail(timeoutMs);
    if (detail === undefined) {
      throw new TimeoutError(
        `client.fleet.backlog(): the ${transport.name} transport gave no backlog within ${timeoutMs} ms ` +
          '(the server did not answer, or the transport is closed); try again, or with a longer timeoutMs',
      );
    }
    return { transport: transport.name, ...detail };
  }
}
