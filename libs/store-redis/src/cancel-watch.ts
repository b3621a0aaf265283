/**
 * LeaseStore.watchCancels on Redis: request-cancel.lua PUBLISHes an accepted cancel's run id on
 * the owner's channel `<prefix>cancels:<workerId>`; this module SUBSCRIBEs to the channels of the
 * workers that watch, on one connection of its own per store (a subscribed connection can run
 * nothing else), opened at the first watch.
 *
 * Invariants:
 * 1. Best effort, never in the way: a failure to connect or subscribe (a user without the pub/sub
 *    grant, a Redis that is down) is swallowed, since the lease renewal reports the cancel flag
 *    anyway; the channel is subscribed again on every reconnect (ioredis re-subscribes).
 * 2. After close() no connection is opened and none stays open.
 * 3. A listener is called for messages on its own worker's channel only; one that throws is
 *    ignored.
 */
import type { KeyLayout } from './keys.js';
import { createConnection, type StoreConnection } from './connection.js';
import type { ResolvedRedisStoreOptions } from './options.js';

/** The channel an accepted cancel of a run `workerId` holds is published on (request-cancel.lua). */
export function cancelsChannel(keys: KeyLayout, workerId: string): string {
  return `${keys.prefix}cancels:${workerId}`;
}

export class CancelWatch {
  private readonly listeners = new Map<string, Set<(runId: string) => void>>();
  private connection: Promise<StoreConnection | undefined> | undefined;
  private closed = false;

  constructor(
    private readonly options: ResolvedRedisStoreOptions,
    private readonly keys: KeyLayout,
  ) {}

  watch(workerId: string, listener: (runId: string) => void): () => void {
    const channel = cancelsChannel(this.keys, workerId);
    let listeners = this.listeners.get(channel);
    if (listeners === undefined) {
      this.listeners.set(channel, (listeners = new Set()));
      void this.subscribe(channel);
    }
    const own = (runId: string): void => listener(runId);
    listeners.add(own);
    return () => {
      listeners.delete(own);
      if (listeners.size > 0 || this.listeners.get(channel) !== listeners) return;
      this.listeners.delete(channel);
      void this.connection?.then((c) => c?.redis.unsubscribe(channel)).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    const connection = await this.connection?.catch(() => undefined);
    await connection?.close();
  }

  private async subscribe(channel: string): Promise<void> {
    try {
      const connection = await this.open();
      if (connection !== undefined && this.listeners.has(channel)) await connection.redis.subscribe(channel);
    } catch {
      // Invariant 1: the renewal reports the flag.
    }
  }

  /** The subscriber connection, opened once (invariant 2: none after close). */
  private open(): Promise<StoreConnection | undefined> {
    this.connection ??= (async () => {
      if (this.closed) return undefined;
      const connection = createConnection(this.options);
      connection.redis.on('message', (channel: string, runId: string) => {
        for (const listener of [...(this.listeners.get(channel) ?? [])]) {
          try {
            listener(runId);
          } catch {
            // A listener's failure is its own: the others still hear, and the connection goes on.
          }
        }
      });
      try {
        await connection.open();
      } catch (err) {
        this.connection = undefined; // the next watch tries again
        throw err;
      }
      if (this.closed) {
        await connection.close();
        return undefined;
      }
      return connection;
    })();
    return this.connection;
  }
}
