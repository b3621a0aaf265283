/**
 * Which live workers register a workflow version, read from the fleet reports
 * ({@link FleetStore.list}), for routing a message this worker cannot use
 * (docs/versioning.md, "Rolling deploys"):
 *
 * - a version some other live, non-draining worker registers is put back for it quickly;
 * - a version none does is put back slowly, and a start message for it is dead-lettered only once
 *   no such worker has been seen for `missingVersionGraceMs` (as this worker saw the fleet).
 *
 * Invariants:
 * 1. One listing serves every question asked within {@link LISTING_TTL_MS}, and at most one listing
 *    is in flight: a burst of put-backs costs the store one read. A question that may end in a
 *    dead letter asks for a fresh listing: one issued after the question was asked (a read already
 *    in flight may have left before a worker that has just joined wrote its report, so it is
 *    waited out and one more read is issued, shared by every fresh question asked meanwhile), so
 *    a worker that has joined is never missed.
 * 2. A listing that fails answers `undefined` (not known), never "no worker has it": the grace then
 *    keeps running, so a store outage delays a dead letter at most by the grace, never forever.
 */
import type { FleetStore, ReportedWorker } from '@baton/core/adapter';
import type { Logger } from '../logger.js';

/** How long one listing answers for. */
export const LISTING_TTL_MS = 1_000;

export class VersionHolders {
  private listing: { at: number; workers: ReportedWorker[] | undefined } | undefined;
  private listingInFlight: Promise<ReportedWorker[] | undefined> | undefined;
  /** A fresh read waiting for the one in flight to settle, shared by the fresh questions meanwhile. */
  private nextRead: Promise<ReportedWorker[] | undefined> | undefined;
  /** Per `name@version` this worker lacks: since when no live worker was seen registering it. */
  private readonly missingSince = new Map<string, number>();
  private failing = false;

  constructor(
    private readonly store: FleetStore,
    private readonly selfId: string,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * True when another live worker that is not draining registers `name@version`; false when none
   * does; undefined when the fleet could not be read.
   */
  async someoneHas(name: string, version: number, fresh = false): Promise<boolean | undefined> {
    const workers = await this.workers(fresh);
    const key = `${name}@${version}`;
    if (workers === undefined) {
      if (!this.missingSince.has(key)) this.missingSince.set(key, this.now());
      return undefined;
    }
    const has = workers.some(
      (w) =>
        w.workerId !== this.selfId &&
        !w.draining &&
        w.workflows.some((wf) => wf.name === name && wf.versions.includes(version)),
    );
    if (has) this.missingSince.delete(key);
    else if (!this.missingSince.has(key)) this.missingSince.set(key, this.now());
    return has;
  }

  /** How long no live worker has been seen registering `name@version` (0 when one was, last time). */
  missingForMs(name: string, version: number): number {
    const since = this.missingSince.get(`${name}@${version}`);
    return since === undefined ? 0 : this.now() - since;
  }

  /**
   * The listing: the cached one while younger than {@link LISTING_TTL_MS} (sharing the read in
   * flight otherwise); when `fresh`, one whose read was issued after this call.
   */
  private workers(fresh: boolean): Promise<ReportedWorker[] | undefined> {
    if (fresh) {
      if (this.listingInFlight === undefined) return this.startRead();
      this.nextRead ??= this.listingInFlight.then(() => {
        this.nextRead = undefined;
        return this.startRead();
      });
      return this.nextRead;
    }
    const young = this.listing !== undefined && this.now() - this.listing.at < LISTING_TTL_MS;
    if (young) return Promise.resolve(this.listing!.workers);
    return this.listingInFlight ?? this.startRead();
  }

  private startRead(): Promise<ReportedWorker[] | undefined> {
    const reading = this.read().finally(() => {
      if (this.listingInFlight === reading) this.listingInFlight = undefined;
    });
    this.listingInFlight = reading;
    return reading;
  }

  private async read(): Promise<ReportedWorker[] | undefined> {
    let workers: ReportedWorker[] | undefined;
    try {
      workers = await this.store.list();
      if (this.failing) this.logger.info({}, 'fleet reports readable again for routing');
      this.failing = false;
    } catch (err) {
      if (!this.failing) {
        this.logger.warn(
          { err },
          'reading the fleet reports failed; runs of versions this worker lacks are put back slowly meanwhile',
        );
      }
      this.failing = true;
    }
    this.listing = { at: this.now(), workers };
    return workers;
  }
}
