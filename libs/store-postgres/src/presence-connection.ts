/**
 * One worker's presence: a dedicated connection (outside the pool) that holds a session-level
 * advisory lock for as long as the worker process lives. When the process dies, the server ends
 * the session and releases the lock with it; any store then sees the worker as dead.
 *
 * Invariants:
 * 1. The lock is taken once per session (pg_try_advisory_lock): a session never stacks it, so
 *    ending the session always releases it.
 * 2. After the connection is lost (network blip, server restart, pg_terminate_backend), the
 *    worker counts as dead until a new session holds the lock again; reconnecting runs forever
 *    with capped backoff until close(). Runs a reaper handed on meanwhile stay handed on: the
 *    worker's renewals fail under the fence, and it stops them.
 * 3. Holding the lock comes before writing the worker row, so a reaper that re-checks the lock
 *    before deleting a row never deletes the row of a worker that is back.
 * 4. Nothing here throws into the event loop: every client has an 'error' listener from its
 *    creation, and reconnect failures only schedule the next attempt.
 * 5. With a `channel`, every session LISTENs on it before it counts as holding, and the watchers
 *    are called for each notification on it and once per session that starts holding (a change
 *    published while no session listened would otherwise go unnoticed). A watcher that throws is
 *    ignored.
 * 6. With a `cancelsChannel`, every session LISTENs on it too, and the cancel watchers are called
 *    with the run id of each notification that names this worker as the run's owner (payload
 *    json [owner, runId], migration 022). A malformed payload or a watcher that throws is ignored.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { ClientConfig } from 'pg';
import { BatonError } from '@baton/core';
import type { BackendError } from '@baton/core/adapter';
import { pgError } from './errors.js';
import { inSchema } from './sql.js';

/** First retry after a lost connection; doubles per failed attempt up to the maximum. */
const RECONNECT_INITIAL_MS = 100;
const RECONNECT_MAX_MS = 2_000;

/** Lets the server notice a vanished worker host in about 25 s instead of the OS default (2 h). */
const KEEPALIVE_SQL =
  'SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3';

/**
 * Takes the lock and (re-)inserts the worker row in one statement. The row is written only when
 * the lock was granted (invariant 3).
 */
const HOLD_SQL = `
WITH lock AS (
  SELECT pg_try_advisory_lock($2::integer, $3::integer) AS locked
), registered AS (
  INSERT INTO {{schema}}.workers (worker_id, k1, k2, registered_at)
  SELECT $1, $2, $3, {{schema}}.now_ms() FROM lock WHERE lock.locked
  ON CONFLICT (worker_id) DO NOTHING
  RETURNING worker_id
)
SELECT locked FROM lock`;

export interface PresenceConnectionOptions {
  workerId: string;
  keys: readonly [number, number];
  quotedSchema: string;
  /** Connection settings (application_name included). */
  config: ClientConfig;
  /** How long the first registration may wait for a lock held by another session. */
  lockWaitMs: number;
  /** A notification channel the session listens on (invariant 5): an unquoted lower-case name. */
  channel?: string;
  /** The schema's cancels channel (invariant 6): an unquoted lower-case name. */
  cancelsChannel?: string;
}

/** A worker's presence session; see the module comment. */
export class PresenceConnection {
  private client: pg.Client | undefined;
  private closed = false;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The attempt in progress, so close() can wait for it instead of racing it. */
  private attempt: Promise<boolean> | undefined;
  private readonly holdSql: string;
  private readonly watchers = new Set<() => void>();
  private readonly cancelWatchers = new Set<(runId: string) => void>();

  constructor(private readonly options: PresenceConnectionOptions) {
    this.holdSql = inSchema(HOLD_SQL, options.quotedSchema);
    for (const channel of [options.channel, options.cancelsChannel]) {
      if (channel !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(channel))
        throw new Error(`presence channel '${channel}' is not a plain lower-case name`);
    }
  }

  /** Calls `watcher` with the run id of each cancel accepted for a run this worker holds (invariant 6). */
  watchCancels(watcher: (runId: string) => void): () => void {
    this.cancelWatchers.add(watcher);
    return () => this.cancelWatchers.delete(watcher);
  }

  private notifyCancel(payload: string | undefined): void {
    let runId: unknown;
    try {
      const [owner, id] = JSON.parse(payload ?? '') as unknown[];
      if (owner !== this.options.workerId) return;
      runId = id;
    } catch {
      return; // Invariant 6: not ours to read.
    }
    if (typeof runId !== 'string') return;
    for (const watcher of [...this.cancelWatchers]) {
      try {
        watcher(runId);
      } catch {
        // Invariant 6: a watcher's failure is its own.
      }
    }
  }

  /** Calls `watcher` on every notification on the channel, and when a session starts holding. */
  watch(watcher: () => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  private notify(): void {
    for (const watcher of [...this.watchers]) {
      try {
        watcher();
      } catch {
        // Invariant 5: a watcher's failure is its own.
      }
    }
  }

  /** True while a session of this connection holds the lock. */
  get holding(): boolean {
    return this.client !== undefined;
  }

  /**
   * Connects and takes the lock. Connection failures reject at once; a lock held by another
   * session (a second worker with this id, or a dead session the server has not noticed yet) is
   * waited for up to `lockWaitMs`.
   */
  async open(): Promise<void> {
    const deadline = Date.now() + this.options.lockWaitMs;
    for (let tries = 0; ; tries++) {
      if (await this.track(this.hold())) return;
      if (this.closed) throw new PresenceClosedError(this.options.workerId);
      if (Date.now() >= deadline) {
        throw presenceConflict(this.options.workerId, this.options.lockWaitMs);
      }
      await sleep(backoff(tries));
    }
  }

  /**
   * Stops reconnecting, waits for an attempt in progress, runs `beforeRelease` with the live
   * session (if any), then ends the session, which releases the lock.
   */
  async close(beforeRelease?: (client: pg.Client | undefined) => Promise<void>): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.attempt?.catch(() => false);
    const client = this.client;
    this.client = undefined;
    try {
      await beforeRelease?.(client);
    } finally {
      await client?.end().catch(() => undefined);
    }
  }

  /** One attempt: a new session that takes the lock. False when another session holds it. */
  private async hold(): Promise<boolean> {
    const client = new pg.Client(this.options.config);
    // Registered before connecting: an 'error' without a listener would crash the process.
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(KEEPALIVE_SQL);
      const [workerId, [k1, k2]] = [this.options.workerId, this.options.keys];
      const { rows } = await client.query<{ locked: boolean }>(this.holdSql, [workerId, k1, k2]);
      if (rows[0]?.locked !== true || this.closed) {
        await client.end().catch(() => undefined);
        return false;
      }
      const { channel, cancelsChannel } = this.options;
      if (channel !== undefined || cancelsChannel !== undefined) {
        client.on('notification', (message) => {
          if (this.client !== client) return;
          if (message.channel === channel) this.notify();
          else if (message.channel === cancelsChannel) this.notifyCancel(message.payload);
        });
      }
      if (channel !== undefined) await client.query(`LISTEN ${channel}`);
      if (cancelsChannel !== undefined) await client.query(`LISTEN ${cancelsChannel}`);
      this.client = client;
      this.failures = 0;
      if (channel !== undefined) this.notify();
      return true;
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
  }

  private track(attempt: Promise<boolean>): Promise<boolean> {
    this.attempt = attempt;
    return attempt;
  }

  /** The session ended or failed: forget it and, unless closing, start over. */
  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reconnect(), backoff(this.failures));
    // Presence alone must not keep a process alive that has nothing else to do.
    this.timer.unref();
  }

  private async reconnect(): Promise<void> {
    if (this.closed) return;
    const held = await this.track(this.hold()).catch(() => false);
    if (held || this.closed) return;
    this.failures += 1;
    this.scheduleReconnect();
  }
}

function backoff(failures: number): number {
  const base = Math.min(RECONNECT_MAX_MS, RECONNECT_INITIAL_MS * 2 ** Math.min(failures, 10));
  // Jitter spreads the reconnects of a fleet that lost its server at the same moment.
  return Math.round(base / 2 + Math.random() * (base / 2));
}

/**
 * Another live session holds this worker id's presence lock. Retryable: the server drops a dead
 * session's lock. Named as its class was (PresenceConflictError).
 */
export function presenceConflict(workerId: string, waitedMs: number): BackendError {
  return pgError(
    'presenceConflict',
    `postgres store: worker id '${workerId}' is registered by another live connection (waited ${waitedMs} ms ` +
      `for its presence lock). Give every worker process its own id, or wait until the server drops the old ` +
      `connection`,
    { retryable: true, name: 'PresenceConflictError' },
  );
}

/** The store was closed while the registration was being made (not the server's failure). */
class PresenceClosedError extends BatonError {
  constructor(workerId: string) {
    super('BATON_CLOSED', `postgres store: closed while registering worker '${workerId}'`);
  }
}
