/**
 * PresenceStore in SQL: which registered workers still hold their presence lock, and reaping the
 * held leases of those that do not.
 *
 * Invariants:
 * 1. A worker is alive exactly while its advisory lock (keys from {@link presenceLockKeys}) is
 *    granted to some session of this database; the `live_workers` view reads pg_locks for it.
 * 2. reap_dead_workers hands on only `held` leases owned by a registered dead worker, at most
 *    `limit` per call, locking them FOR UPDATE SKIP LOCKED like the expiry reaper, so two
 *    reapers never report the same run.
 * 3. A dead worker's row is deleted only once it owns no held lease and its lock is still not
 *    granted at that moment.
 * 4. For {@link PRESENCE_GRACE_AFTER_FAILOVER_MS} after the server's incarnation changed (a
 *    standby promoted, a restart: advisory locks survive neither), no lease is handed on for a
 *    missing presence lock: every worker's lock is missing until its session reconnects.
 * 5. The dead-worker scan reads pg_locks (every lock of the server, O(fleet)), so workers take it
 *    in turns ({@link takeScanTurn}, migration 015): one scan per period for the whole fleet, not
 *    one per worker, which would grow with the fleet's square. Asking for a turn another worker
 *    holds writes nothing.
 * 6. The live workers are listed by the holder of the membership turn only, and published in one
 *    row (migration 017); every other worker reads that row by its primary key, with the list
 *    itself only when its generation moved, and whether the turn is still held (scan_turns, also
 *    by primary key). Publishing an unchanged list writes nothing.
 * 7. A publish that moved the generation (as far as this store knows: its first publish counts as
 *    moved) is followed by a NOTIFY on the schema's membership channel
 *    ({@link membershipChannel}), which every presence session LISTENs on: readers read the row
 *    when told, and otherwise only now and then (PresenceStore.watchMembership).
 */
import { createHash } from 'node:crypto';
import type { OperationsOf, PresenceStore, PublishedMembership, ScanTurn } from '@baton/core/adapter';
import type { Db } from './db.js';
import { clientConfig } from './db.js';
import type { ResolvedPostgresStoreOptions } from './options.js';
import { PresenceConnection } from './presence-connection.js';
import { inSchema } from './sql.js';

/**
 * The notification channel of a schema's accepted cancels of held runs (migration 022): every
 * presence session listens, and each picks out the notifications that name its worker as owner.
 */
export function cancelsChannel(schema: string): string {
  return `baton_cancels_${createHash('sha256').update(schema).digest('hex').slice(0, 24)}`;
}

/** Prefix of the application_name of presence sessions (`baton-presence:<workerId>`). */
export const PRESENCE_APPLICATION_PREFIX = 'baton-presence:';

/**
 * The two int4 keys of a worker's session-level advisory lock, from a hash of (schema, worker
 * id), so the same id in two schemas never collides. Both are non-negative, so they read the same
 * in pg_locks (whose classid and objid are unsigned oids) as in pg_advisory_lock.
 */
export function presenceLockKeys(schema: string, workerId: string): [number, number] {
  const digest = createHash('sha256').update(`${schema}\u0000${workerId}`).digest();
  return [digest.readInt32BE(0) & 0x7fffffff, digest.readInt32BE(4) & 0x7fffffff];
}

/**
 * The notification channel of a schema's published member list (invariant 7): a plain
 * lower-case identifier whatever the schema's name (channels are cut at 63 bytes).
 */
export function membershipChannel(schema: string): string {
  return `baton_membership_${createHash('sha256').update(schema).digest('hex').slice(0, 24)}`;
}

const DELETE_WORKER_SQL = 'DELETE FROM {{schema}}.workers WHERE worker_id = $1';

const INSERT_WORKER_SQL = `
INSERT INTO {{schema}}.workers (worker_id, k1, k2, registered_at)
VALUES ($1, $2, $3, {{schema}}.now_ms())
ON CONFLICT (worker_id) DO NOTHING`;

/** The presence sessions of one store, by worker id. */
export class PresenceRegistry {
  private readonly connections = new Map<string, { connection: PresenceConnection; opened: Promise<void> }>();
  private readonly channel: string;
  /** The generation this store published last (invariant 7). */
  private published: number | undefined;

  constructor(
    private readonly db: Db,
    private readonly options: ResolvedPostgresStoreOptions,
  ) {
    this.channel = membershipChannel(options.schema);
  }

  /** Calls `listener` when the member list may have moved (invariant 7); see watchMembership. */
  watchMembership(workerId: string, listener: () => void): () => void {
    const entry = this.connections.get(workerId);
    if (entry === undefined) {
      throw new Error(`postgres store: watchMembership for '${workerId}', which is not registered here`);
    }
    return entry.connection.watch(listener);
  }

  /** Calls `listener` with each cancel accepted for a run `workerId` holds; see watchCancels. */
  watchCancels(workerId: string, listener: (runId: string) => void): () => void {
    const entry = this.connections.get(workerId);
    if (entry === undefined) {
      throw new Error(`postgres store: watchCancels for '${workerId}', which is not registered here`);
    }
    return entry.connection.watchCancels(listener);
  }

  /** Publishes the member list and tells the readers when its generation moved (invariant 7). */
  async publishMembership(db: Db, members: readonly string[]): Promise<number> {
    const generation = await publishMembership(db, members);
    if (generation !== this.published) {
      await db.query('SELECT pg_notify($1, $2)', [this.channel, String(generation)]);
      this.published = generation;
    }
    return generation;
  }

  async register(workerId: string): Promise<void> {
    const existing = this.connections.get(workerId);
    if (existing !== undefined) {
      await existing.opened;
      // Harmless repeat; it also puts back a row a reaper deleted during a reconnect.
      if (existing.connection.holding) {
        const [k1, k2] = presenceLockKeys(this.options.schema, workerId);
        await this.db.query(INSERT_WORKER_SQL, [workerId, k1, k2]);
      }
      return;
    }
    const connection = new PresenceConnection({
      workerId,
      keys: presenceLockKeys(this.options.schema, workerId),
      quotedSchema: this.options.quotedSchema,
      // application_name lets an operator (or a test) find the session; the server cuts it at 63 bytes.
      config: clientConfig(this.options, `${PRESENCE_APPLICATION_PREFIX}${workerId}`),
      lockWaitMs: this.options.connectTimeoutMs,
      channel: this.channel,
      cancelsChannel: cancelsChannel(this.options.schema),
    });
    const opened = connection.open();
    const entry = { connection, opened };
    this.connections.set(workerId, entry);
    try {
      await opened;
    } catch (err) {
      if (this.connections.get(workerId) === entry) this.connections.delete(workerId);
      await connection.close();
      throw err;
    }
  }

  /** Deletes the row (on the presence session while it still holds the lock), then ends it. */
  async unregister(workerId: string): Promise<void> {
    const entry = this.connections.get(workerId);
    this.connections.delete(workerId);
    if (entry === undefined) {
      await this.db.query(DELETE_WORKER_SQL, [workerId]);
      return;
    }
    await entry.opened.catch(() => undefined);
    const sql = inSchema(DELETE_WORKER_SQL, this.options.quotedSchema);
    await entry.connection.close(async (client) => {
      if (client !== undefined) await client.query(sql, [workerId]);
      else await this.db.query(DELETE_WORKER_SQL, [workerId]);
    });
  }

  /** Ends every presence session without deleting rows: to other stores, these workers died. */
  async closeAll(): Promise<void> {
    const entries = [...this.connections.values()];
    this.connections.clear();
    await Promise.allSettled(entries.map((e) => e.connection.close()));
  }
}

async function live(db: Db): Promise<string[]> {
  const rows = await db.query<{ worker_id: string }>(
    'SELECT worker_id FROM {{schema}}.live_workers ORDER BY worker_id',
  );
  return rows.map((r) => r.worker_id);
}

/**
 * How long after a failover or server restart (migration 014) no worker counts as dead by its
 * presence lock: the presence sessions reconnect within a few seconds (backoff capped at 2 s,
 * plus connecting). Meanwhile lease expiry still finds the workers that really died.
 */
export const PRESENCE_GRACE_AFTER_FAILOVER_MS = 10_000;

async function reapDead(db: Db, limit: number, reclaimAfterMs: number): Promise<string[]> {
  const rows = await db.query<{ run_id: string }>(
    // The grace check runs first (the reap's limit depends on it): in grace, the reap hands on
    // nothing (limit 0).
    `SELECT r AS run_id
       FROM {{schema}}.presence_in_grace($3) AS g(in_grace),
            LATERAL {{schema}}.reap_dead_workers(CASE WHEN g.in_grace THEN 0 ELSE $1 END, $2) AS r`,
    [Math.floor(limit), Math.ceil(reclaimAfterMs), PRESENCE_GRACE_AFTER_FAILOVER_MS],
  );
  return rows.map((r) => r.run_id);
}

/** The turn of a fleet-wide scan (invariant 5). */
async function takeScanTurn(db: Db, scan: string, workerId: string, turnMs: number): Promise<ScanTurn> {
  const rows = await db.query<{ held: boolean; workers: number }>(
    'SELECT held, workers FROM {{schema}}.take_scan_turn($1, $2, $3)',
    [scan, workerId, Math.max(1, Math.ceil(turnMs))],
  );
  return { held: rows[0]?.held === true, workers: Number(rows[0]?.workers ?? 0) };
}

/** Publishes the member list (invariant 6); returns its generation. */
async function publishMembership(db: Db, members: readonly string[]): Promise<number> {
  const rows = await db.query<{ generation: number }>(
    'SELECT {{schema}}.publish_membership($1::text[]) AS generation',
    [[...members]],
  );
  return Number(rows[0]?.generation);
}

/**
 * The published member list (invariant 6): two primary-key reads in one statement, the list
 * sent only when the reader's generation is not the published one.
 */
async function readMembership(db: Db, knownGeneration: number, turn: string): Promise<PublishedMembership> {
  const rows = await db.query<{ generation: number | null; members: string[] | null; turn_free: boolean }>(
    `SELECT m.generation,
            CASE WHEN m.generation IS DISTINCT FROM $1::bigint THEN m.members END AS members,
            NOT EXISTS (
              SELECT 1 FROM {{schema}}.scan_turns t WHERE t.scan = $2 AND t.until_ms > {{schema}}.now_ms()
            ) AS turn_free
       FROM (SELECT 1) AS one LEFT JOIN {{schema}}.membership m ON m.id = 1`,
    [Math.floor(knownGeneration), turn],
  );
  const row = rows[0];
  const generation = Number(row?.generation ?? 0);
  return {
    generation,
    ...(row?.members != null && generation !== knownGeneration && { members: row.members }),
    turnFree: row?.turn_free !== false,
  };
}

/**
 * `store.presence`'s operations over the pool, with this store's sessions: unregister ends the
 * worker's session, a publish that moved the list tells the readers (invariant 7). register (its
 * failures are connect failures) and watchMembership (a subscription) are the store's.
 */
export function presenceOperations(
  registry: PresenceRegistry,
): Omit<OperationsOf<Db, PresenceStore>, 'register'> {
  return {
    unregister: (_db, workerId) => registry.unregister(workerId),
    reapDead,
    live,
    takeScanTurn,
    publishMembership: (db, members) => registry.publishMembership(db, members),
    readMembership,
  };
}
