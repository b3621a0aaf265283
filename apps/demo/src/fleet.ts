/**
 * A fleet of workers in one process, each of which can be "crashed".
 *
 * Every worker gets its own severable wrappers around the shared transport and store, and its
 * own {@link NetworkLink} to the external systems. Crashing a worker severs all three at once:
 * from then on nothing it does reaches the bus, the store or the outside world, as if the pod had
 * been SIGKILLed. It is never stopped, so it hands nothing off: its leases must expire and the
 * other workers' reapers must find them.
 */
import type { Store, Transport } from '@baton/core/adapter';
import { severableStore, severableTransport, type Severable } from '@baton/testing/severable';
import { Worker } from '@baton/worker';
import type { ExternalSystems } from './fake-systems.js';
import { createLoanWorkflow } from './loan-workflow.js';
import { NetworkLink, type RequestLog } from './network.js';
import type { FleetStats } from './stats.js';

/** How the fleet is built. */
export interface FleetOptions {
  transport: Transport;
  store: Store;
  systems: ExternalSystems;
  stats: FleetStats;
  size: number;
  concurrency: number;
  leaseMs: number;
  /** Shared by every worker's link: when each request left, per idempotency key. */
  requestLog: RequestLog;
}

/** One worker and the cables a crash cuts. */
export interface FleetMember {
  readonly id: string;
  readonly worker: Worker;
  readonly transport: Severable<Transport>;
  readonly store: Severable<Store>;
  readonly link: NetworkLink;
  /** The runs it owned when it was crashed; undefined while it lives. */
  ownedAtCrash: string[] | undefined;
}

/** The workers of one demo run. */
export class Fleet {
  readonly members: FleetMember[];

  constructor(options: FleetOptions) {
    this.members = Array.from({ length: options.size }, (_, i) => {
      const id = `worker-${i + 1}`;
      const transport = severableTransport(options.transport);
      const store = severableStore(options.store);
      const link = new NetworkLink(options.requestLog);
      options.stats.register(id);
      const worker = new Worker({
        transport: transport.adapter,
        store: store.adapter,
        workflows: [createLoanWorkflow(options.systems, link)],
        concurrency: options.concurrency,
        leaseMs: options.leaseMs,
        // Short fetches so a graceful stop at the end does not wait a full second per worker.
        fetchWaitMs: 250,
        workerId: id,
        logger: options.stats.logger(id),
        onEvent: options.stats.observer(id),
      });
      return { id, worker, transport, store, link, ownedAtCrash: undefined };
    });
  }

  async start(): Promise<void> {
    await Promise.all(this.members.map((m) => m.worker.start()));
  }

  /** Members still alive. */
  get live(): FleetMember[] {
    return this.members.filter((m) => m.ownedAtCrash === undefined);
  }

  /** The crashed member, if any. */
  get crashed(): FleetMember | undefined {
    return this.members.find((m) => m.ownedAtCrash !== undefined);
  }

  /** Crashes a member abruptly: no stop(), no hand-off. Returns the runs it owned. */
  crash(member: FleetMember): string[] {
    // Read before severing: afterwards the worker is frozen and its view no longer changes.
    const owned = member.worker.ownedRuns;
    member.transport.sever();
    member.store.sever();
    member.link.sever();
    member.ownedAtCrash = owned;
    return owned;
  }

  /** Gracefully stops every live member; the crashed one is left hanging, like a dead pod. */
  async stopLive(): Promise<void> {
    await Promise.all(this.live.map((m) => m.worker.stop()));
  }
}
