/**
 * A private PostgreSQL server for `bench:fleet`: initdb in a temporary directory, started with
 * pg_ctl on a free port, with room for a large fleet's connections (a worker holds a presence
 * session and its pool's connections). PostgreSQL refuses to run as root: as root, its tools run
 * as the `postgres` user (runuser), as infra/clusters/postgres does. Binaries: BATON_PG_BIN.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '@baton/testing/servers';

const run = promisify(execFile);
const PG_BIN = process.env.BATON_PG_BIN || '/usr/lib/postgresql/15/bin';
/** Database of the store; the ledger and the probes use `postgres`. */
const STORE_DATABASE = 'fleet';

export interface PrivatePostgres {
  /** The `postgres` database: the probes' and the crash ledger's. */
  adminUrl: string;
  storeUrl: string;
  storeDatabase: string;
  /** The postmaster's pid while it runs. */
  pid(): number | undefined;
  /** Stops the server (fast shutdown) and removes its directory. */
  stop(): Promise<void>;
}

async function asPostgres(command: string, args: string[]): Promise<void> {
  const asRoot = process.getuid?.() === 0;
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  await run(file, argv, { timeout: 120_000 });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-fleet-pg-'));
  // The directory must belong to the user that runs the server.
  if (process.getuid?.() === 0) await run('chown', ['postgres:', dir]);
  await chmod(dir, 0o700);
  const dataDir = join(dir, 'data');
  const port = await freePort();
  let pid: number | undefined;
  const stop = async (): Promise<void> => {
    if (pid !== undefined) {
      await asPostgres(join(PG_BIN, 'pg_ctl'), ['stop', '-w', '-t', '30', '-m', 'fast', '-D', dataDir]).catch(
        () => {
          if (pid !== undefined) process.kill(pid, 'SIGKILL');
        },
      );
      pid = undefined;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await asPostgres(join(PG_BIN, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync']);
    const options = [
      `-p ${port}`,
      '-c listen_addresses=127.0.0.1',
      `-k ${dir}`,
      '-c max_connections=1000',
      '-c shared_buffers=128MB',
      // Durable commits, as production runs them: a commit's WAL flush is part of its cost.
      '-c synchronous_commit=on',
    ].join(' ');
    await asPostgres(join(PG_BIN, 'pg_ctl'), [
      'start',
      '-w',
      '-t',
      '60',
      '-D',
      dataDir,
      '-l',
      join(dir, 'log'),
      '-o',
      options,
    ]);
    pid = Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${STORE_DATABASE}`);
    } finally {
      await client.end();
    }
    return {
      adminUrl,
      storeUrl: `postgres://postgres@127.0.0.1:${port}/${STORE_DATABASE}`,
      storeDatabase: STORE_DATABASE,
      pid: () => pid,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
