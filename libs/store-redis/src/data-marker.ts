/**
 * Finds out that Redis lost the store's data. A Redis without persistence (or with only periodic
 * snapshots) that restarts comes back empty, or with an old snapshot, and answers as if nothing
 * happened: every run it held is simply unknown. So the store writes a marker, a random value,
 * once per data set (`P data-marker`, check-data-marker.lua), and checks it at connect and after
 * every reconnect:
 *
 * 1. Same marker: the data is there. A failover to a replica changes the server's run_id but keeps
 *    the marker (the replica holds the data), so it is not a loss.
 * 2. No marker (this check writes a new one), or a marker this store has not seen (another client
 *    found it gone first and wrote a new one): the data this store knew is gone. Listeners hear it
 *    once per loss, with the server's run_id before and after.
 *
 * A loss while this store was never connected (all workers restarted with Redis) has nobody who
 * remembers the old marker, and goes unnoticed: docs/operations.md says to give Redis persistence.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { RecordedDataLoss, StoreDataLoss } from '@baton/core/adapter';
import { str, type StoreContext } from './context.js';

/** How often a check after a reconnect is tried before waiting for the next reconnect. */
const CHECK_ATTEMPTS = 3;
const CHECK_DELAY_MS = 250;

interface Seen {
  marker: string;
  /** The server's run_id when the marker was read. */
  instance: string;
}

export class DataMarker {
  private seen: Seen | undefined;
  private readonly listeners: Array<(loss: StoreDataLoss) => void> = [];

  onLoss(listener: (loss: StoreDataLoss) => void): void {
    this.listeners.push(listener);
  }

  /** Reads the marker (writing one when there is none) and reports a loss when it changed. */
  async check(ctx: StoreContext): Promise<void> {
    const key = ctx.keys.dataMarker;
    const reply = (await ctx.run('check-data-marker', [key], [randomUUID()])) as unknown[];
    const now: Seen = { marker: str(reply[0]), instance: str(reply[2]) };
    const wrote = Number(reply[1]) === 1;
    const before = this.seen;
    this.seen = now;
    if (before === undefined || before.marker === now.marker) return;
    const what = wrote
      ? `its marker key ${key} is gone`
      : `its marker key ${key} was replaced (another client found it gone first)`;
    const server =
      before.instance === now.instance
        ? `the server did not restart (run_id ${now.instance}): the keys were deleted (FLUSHALL, FLUSHDB or DEL)`
        : `the server restarted or failed over without the data (run_id ${before.instance} -> ${now.instance})`;
    const loss: StoreDataLoss = { store: 'redis', reason: `${what}; ${server}` };
    // Kept for clients that were not connected (Store.lastDataLoss): every finder records it (the
    // first one to write a new marker may have had nothing to compare with), a later finder's time
    // a little after the first's. Best effort: the listeners hear of the loss either way.
    const recorded: RecordedDataLoss = { ...loss, at: Date.now() };
    await ctx.redis.set(ctx.keys.dataLost, JSON.stringify(recorded)).catch(() => undefined);
    for (const listener of this.listeners) {
      try {
        listener(loss);
      } catch {
        // A listener's failure is its own; the others still hear of the loss.
      }
    }
  }

  /** The last loss recorded in the store (Store.lastDataLoss); undefined when none, or unreadable. */
  async last(ctx: StoreContext): Promise<RecordedDataLoss | undefined> {
    const raw = await ctx.redis.get(ctx.keys.dataLost);
    if (raw === null) return undefined;
    try {
      const parsed = JSON.parse(raw) as Partial<RecordedDataLoss>;
      if (typeof parsed.at !== 'number' || typeof parsed.reason !== 'string') return undefined;
      return { store: 'redis', reason: parsed.reason, at: parsed.at };
    } catch {
      return undefined; // Not ours to read: as if none was recorded.
    }
  }

  /**
   * Checks after a reconnect, a few times if the connection drops again meanwhile; the next
   * reconnect checks anew. Never rejects: nobody waits for it.
   */
  async recheck(ctx: StoreContext, active: () => boolean): Promise<void> {
    for (let attempt = 1; attempt <= CHECK_ATTEMPTS && active(); attempt++) {
      try {
        await this.check(ctx);
        return;
      } catch {
        await sleep(CHECK_DELAY_MS, undefined, { ref: false });
      }
    }
  }
}
