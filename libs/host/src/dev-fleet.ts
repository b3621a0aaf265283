/**
 * The fleet of `baton dev`: a few workers in this process running the workflows under
 * development, on the embedded bus and store (nothing to install, nothing kept after the process
 * ends) or, when BATON_TRANSPORT_URL and BATON_STORE_URL are set, on those servers.
 *
 * `reload(workflows)` replaces the workers with ones running the new definitions: the old ones
 * stop gracefully (each run they held is handed back at its next step), then the new ones start
 * and resume those runs on the new code, as a rollout's new pods would.
 *
 * Invariants:
 * 1. One generation of workers at a time: the old one has stopped before the new one starts, so
 *    no run is ever executed by the old code after a reload returned.
 * 2. The adapters outlive reloads (runs, journals, timers and schedules are kept across them);
 *    `close()` stops the workers, then closes the adapters, once.
 * 3. On real servers every worker has its own bus and store connections, as separate processes
 *    would (a partitioned bus shares its partitions among workers by their presence); the client's
 *    are separate too. Embedded, all share the one in-process pair, which is what it is for.
 */
import { randomBytes } from 'node:crypto';
import type { AnyWorkflowDefinition } from '@baton/core';
import type { Store, Transport } from '@baton/core/adapter';
// The embedded pair, for `baton dev` without servers (eslint.config.js allows this file alone).
import { memoryStore, memoryTransport } from '@baton/core/memory';
import type { PayloadProtection } from '@baton/core/runtime';
import { Worker, type Logger, type WorkerEvent, type RunEventContext } from '@baton/worker';
import { loadAdapterCode } from './adapters.js';
import { ENV, readConfig, type WorkerAppConfig } from './config.js';
import { operatorAdapters, type OperatorAdapters } from './operator-config.js';
import { registrationFor } from './registry.js';

type Env = Record<string, string | undefined>;

/** How {@link DevFleet.start} builds the fleet. */
export interface DevFleetOptions {
  workflows: readonly AnyWorkflowDefinition[];
  /** Workers in this process. @defaultValue 2 */
  workers?: number;
  /**
   * The BATON_* variables: with BATON_TRANSPORT_URL and BATON_STORE_URL both set the fleet runs on
   * those servers (with the rest of the worker's variables); with neither, on the embedded pair.
   * @defaultValue process.env
   */
  env?: Env;
  /** Where the workers log. @defaultValue nothing */
  logger?: Logger;
  /** Every worker's events (a run completed, failed…), with the worker's id. */
  onEvent?: (event: WorkerEvent, run: RunEventContext | undefined, workerId: string) => void;
}

/** The adapters a client of the dev fleet uses, and what they are (for the console's header). */
export interface DevAdapters {
  transport: Transport;
  store: Store;
  payloadProtection?: PayloadProtection;
  largePayloads?: OperatorAdapters['largePayloads'];
  /** `memory` when embedded, else the bus's kind (`nats`, `kafka`, `redis`). */
  transportKind: string;
  /** `memory` when embedded, else the store's kind (`redis`, `postgres`). */
  storeKind: string;
  embedded: boolean;
}

/** Short fetch waits: a reload's graceful stop should take a fraction of a second, not seconds. */
const DEV_FETCH_WAIT_MS = 200;

export class DevFleet {
  private generation: Worker[] = [];
  private currentWorkflows: readonly AnyWorkflowDefinition[];
  private closing: Promise<void> | undefined;
  /** One id part per process, so two `baton dev` on one real fleet never share a worker id. */
  private readonly idPart = randomBytes(3).toString('hex');
  private reloads = 0;

  private constructor(
    private readonly options: Required<Pick<DevFleetOptions, 'workers'>> & DevFleetOptions,
    /** The client's adapters (shared with the workers when embedded). */
    readonly adapters: DevAdapters,
    /** Builds one worker's adapters (the shared pair when embedded). */
    private readonly workerAdapters: () => { transport: Transport; store: Store; close(): Promise<void> },
    private readonly extraClosers: (() => Promise<void>)[],
    private readonly config: WorkerAppConfig | undefined,
  ) {
    this.currentWorkflows = options.workflows;
  }

  /**
   * Builds the adapters and starts the first generation of workers. ConfigError (naming the
   * variable) for a bad or half-given BATON_TRANSPORT_URL / BATON_STORE_URL.
   */
  static async start(options: DevFleetOptions): Promise<DevFleet> {
    const env = options.env ?? process.env;
    const workers = options.workers ?? 2;
    if (!Number.isSafeInteger(workers) || workers < 1 || workers > 64)
      throw new RangeError(`a dev fleet has 1 to 64 workers, got ${workers}`);
    const transportUrl = env[ENV.transportUrl];
    const storeUrl = env[ENV.storeUrl];
    let fleet: DevFleet;
    if (transportUrl === undefined && storeUrl === undefined) {
      const transport = memoryTransport();
      const store = memoryStore();
      const shared = { transport, store, close: async () => undefined };
      fleet = new DevFleet(
        { ...options, workers },
        { transport, store, transportKind: 'memory', storeKind: 'memory', embedded: true },
        () => shared,
        [() => transport.close(), () => store.close()],
        undefined,
      );
    } else {
      // Both or neither: half a real fleet would put runs where the other half cannot see them.
      // readConfig names whichever is missing; the workflows come from the command line instead.
      const config = readConfig({ ...env, [ENV.workflows]: 'baton-dev' });
      await loadAdapterCode(config);
      const client = operatorAdapters(config);
      fleet = new DevFleet(
        { ...options, workers },
        {
          transport: client.transport,
          store: client.store,
          payloadProtection: client.payloadProtection,
          largePayloads: client.largePayloads,
          transportKind: registrationFor('transport', config.transportUrl)?.name ?? 'unknown',
          storeKind: registrationFor('store', config.storeUrl)?.name ?? 'unknown',
          embedded: false,
        },
        () => operatorAdapters(config),
        [() => client.close()],
        config,
      );
    }
    try {
      await fleet.adapters.transport.connect();
      await fleet.adapters.store.connect();
      await fleet.startGeneration();
    } catch (err) {
      await fleet.close();
      throw err;
    }
    return fleet;
  }

  /** The definitions the running workers have. */
  get workflows(): readonly AnyWorkflowDefinition[] {
    return this.currentWorkflows;
  }

  /** The running workers' ids. */
  get workerIds(): string[] {
    return this.generation.map((w) => w.workerId);
  }

  /** Stops the running workers (handing their runs back), then starts new ones on `workflows`. */
  async reload(workflows: readonly AnyWorkflowDefinition[]): Promise<void> {
    if (this.closing !== undefined) throw new Error('the dev fleet is closed');
    await this.stopGeneration();
    this.currentWorkflows = workflows;
    this.reloads++;
    await this.startGeneration();
  }

  /** Stops the workers, then closes every adapter. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.stopGeneration();
      await Promise.allSettled(this.extraClosers.map((close) => close()));
    })();
    return this.closing;
  }

  private async startGeneration(): Promise<void> {
    const workers: { worker: Worker; close(): Promise<void> }[] = [];
    for (let i = 1; i <= this.options.workers; i++) {
      const workerId = `dev-${this.idPart}-${this.reloads}-${i}`;
      const adapters = this.workerAdapters();
      const tuning = this.config === undefined ? {} : definedOnly(this.config.tuning);
      const worker = new Worker({
        ...tuning,
        transport: adapters.transport,
        store: adapters.store,
        workflows: [...this.currentWorkflows],
        workerId,
        fetchWaitMs: DEV_FETCH_WAIT_MS,
        ...(this.options.logger !== undefined && { logger: this.options.logger }),
        ...(this.options.onEvent !== undefined && {
          onEvent: (event: WorkerEvent, run?: RunEventContext) => this.options.onEvent!(event, run, workerId),
        }),
        ...(this.adapters.payloadProtection !== undefined && {
          payloadProtection: this.adapters.payloadProtection,
        }),
        ...(this.adapters.largePayloads !== undefined && { largePayloads: this.adapters.largePayloads }),
      });
      workers.push({ worker, close: () => adapters.close() });
    }
    this.closers = workers.map((w) => w.close);
    this.generation = workers.map((w) => w.worker);
    await Promise.all(this.generation.map((w) => w.start()));
  }

  /** Each worker's own adapters (real servers), closed once it stopped. */
  private closers: (() => Promise<void>)[] = [];

  private async stopGeneration(): Promise<void> {
    const workers = this.generation;
    const closers = this.closers;
    this.generation = [];
    this.closers = [];
    await Promise.allSettled(workers.map((w) => w.stop()));
    await Promise.allSettled(closers.map((close) => close()));
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
