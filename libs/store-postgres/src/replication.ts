/**
 * The store's answer to an asynchronous standby. A lease, epoch, checkpoint or finish write the
 * primary acknowledged but never sent to its standby is gone once that standby is promoted: a
 * worker told "epoch 7 is yours" could meet a second worker handed epoch 7 again by the new
 * primary, and a step recorded as done could be done again. Baton's answer is the database's
 * own: commits that wait for a synchronous standby (`synchronous_standby_names` on the primary,
 * `synchronous_commit` of `remote_write`, `on` or `remote_apply`). Then every write a worker
 * saw acknowledged is on the standby a failover promotes, and a write the primary died before
 * acknowledging failed on the worker too, which treats it as it treats any failed store write.
 *
 * `requireSynchronousStandby` checks this once, when the store connects, and refuses a server
 * whose commits for the store's sessions would not wait (docs/production.md, "PostgreSQL").
 */
import type pg from 'pg';
import { pgError } from './errors.js';
import type { ResolvedPostgresStoreOptions } from './options.js';

/** What the server says about how its commits for this session are replicated. */
export interface ReplicationSettings {
  /** `synchronous_commit` in this session. */
  synchronousCommit: string;
  /** The primary's `synchronous_standby_names` (empty: no standby is waited for). */
  synchronousStandbyNames: string;
  /** True on a standby (read-only). */
  inRecovery: boolean;
  /**
   * Standbys connected as synchronous now; null when the role may not see it (pg_stat_replication
   * shows sync_state only to superusers and members of pg_read_all_stats).
   */
  synchronousStandbys: number | null;
}

export async function readReplicationSettings(client: pg.ClientBase): Promise<ReplicationSettings> {
  const { rows } = await client.query<{
    commit: string;
    names: string;
    recovery: boolean;
    sync: number | null;
  }>(
    `SELECT current_setting('synchronous_commit') AS commit,
            current_setting('synchronous_standby_names') AS names,
            pg_is_in_recovery() AS recovery,
            (SELECT CASE WHEN count(*) FILTER (WHERE sync_state IS NULL) > 0 THEN NULL
                         ELSE count(*) FILTER (WHERE sync_state IN ('sync', 'quorum')) END
               FROM pg_stat_replication)::int AS sync`,
  );
  const row = rows[0];
  if (row === undefined) throw new Error('the replication settings query returned no row');
  return {
    synchronousCommit: row.commit,
    synchronousStandbyNames: row.names.trim(),
    inRecovery: row.recovery,
    synchronousStandbys: row.sync,
  };
}

/** Why these settings do not make acknowledged commits survive a failover, or undefined. */
export function asynchronousReason(settings: ReplicationSettings): string | undefined {
  if (settings.inRecovery) {
    return 'the server is a standby (pg_is_in_recovery() is true); point the URL at the primary or at an endpoint that follows it';
  }
  if (settings.synchronousCommit === 'local' || settings.synchronousCommit === 'off') {
    return (
      `synchronous_commit is '${settings.synchronousCommit}' for the store's sessions, so commits never wait for a standby; ` +
      `set it to remote_write, on or remote_apply (the synchronousCommit option, BATON_POSTGRES_SYNCHRONOUS_COMMIT, or the server's setting)`
    );
  }
  if (settings.synchronousStandbyNames === '') {
    return (
      'synchronous_standby_names is empty on the primary, so every standby is asynchronous; name the standby there ' +
      "(e.g. ALTER SYSTEM SET synchronous_standby_names = '*'; SELECT pg_reload_conf()), or let your failover manager do it " +
      '(Patroni: synchronous_mode: true)'
    );
  }
  return undefined;
}

/** Refuses, when asked to, a server whose commits would not wait for a synchronous standby. */
export async function checkSynchronousStandby(
  client: pg.ClientBase,
  options: ResolvedPostgresStoreOptions,
): Promise<void> {
  if (!options.requireSynchronousStandby) return;
  const settings = await readReplicationSettings(client);
  const reason = asynchronousReason(settings);
  if (reason === undefined) return;
  const connected =
    settings.synchronousStandbys === null
      ? ''
      : ` (${settings.synchronousStandbys} synchronous standbys connected)`;
  throw pgError(
    'notSynchronous',
    `postgres store at ${options.displayUrl}: requireSynchronousStandby (BATON_POSTGRES_REQUIRE_SYNC) is set but ${reason}${connected}. ` +
      'Without it, a write acknowledged just before a failover may be missing on the promoted standby',
  );
}
