/**
 * A private PostgreSQL server for `bench:fleet` and `npm run bench`: initdb in a temporary directory, started with
 * pg_ctl on a free port, with room for a large fleet's connections (a worker holds a presence
 * session and its pool's connections). PostgreSQL refuses to run as root: as root, its tools run
 * as the `postgres` user (runuser), as infra/clusters/postgres does. Binaries: BATON_PG_BIN.
 */
import { execFile } from 'node:child_process';
import { access, chmod, constants, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '@baton/testing/servers';

const run = promisify(execFile);
const PG_BIN = process.env.BATON_PG_BIN || '/usr/lib/postgresql/15/bin';
/** Database of the store unless told otherwise; the ledger and the probes use `postgres`. */
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

/**
 * Why a private server cannot be started here (PostgreSQL's binaries missing; as root, no
 * `postgres` user or no runuser to become it), or undefined when it can.
 */
export async function privatePostgresUnavailable(): Promise<string | undefined> {
  for (const tool of ['initdb', 'pg_ctl']) {
    try {
      await access(join(PG_BIN, tool), constants.X_OK);
    } catch {
      return `${join(PG_BIN, tool)} is not there (BATON_PG_BIN names the directory of PostgreSQL's binaries)`;
    }
  }
  if (process.getuid?.() === 0) {
    try {
      await run('runuser', ['-u', 'postgres', '--', 'true'], { timeout: 10_000 });
    } catch (err) {
      return `PostgreSQL refuses to run as root, and becoming the postgres user failed (${(err as Error).message.split('\n')[0]})`;
    }
  }
  return undefined;
}

async function asPostgres(command: string, args: string[]): Promise<void> {
  const asRoot = process.getuid?.() === 0;
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  await run(file, argv, { timeout: 120_000 });
}

export async function startPrivatePostgres(
  options: { database?: string; label?: string } = {},
): Promise<PrivatePostgres> {
  const database = options.database ?? STORE_DATABASE;
  if (!/^[a-z][a-z0-9_]*$/.test(database))
    throw new Error(`database name '${database}' must be lowercase letters, digits and _`);
  const dir = await mkdtemp(join(tmpdir(), `baton-${options.label ?? 'fleet'}-pg-`));
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
      await client.query(`CREATE DATABASE ${database}`);
    } finally {
      await client.end();
    }
    return {
      adminUrl,
      storeUrl: `postgres://postgres@127.0.0.1:${port}/${database}`,
      storeDatabase: database,
      pid: () => pid,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
