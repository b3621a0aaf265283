/**
 * What the console's end-to-end specs share: a fleet of worker processes on the tests' NATS and
 * Redis (or another store) in a namespace of its own, an operator client for it, the build of
 * the console (and of the CLI when a spec runs `baton console`), and a poll for a condition.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { Client } from '@baton/client';
import { REPO_ROOT, WorkerFleet } from '@baton/testing/crash';
import { natsTestUrl, redisTestUrl } from '@baton/testing/servers';
// The code of the adapters operatorAdapters builds below (the CLI loads it with loadAdapterCode).
import '@baton/store-postgres';
import '@baton/store-redis';
import '@baton/transport-nats';
import { type OperatorAdapters, operatorAdapters, readOperatorConfig } from '@baton/host';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';

export const CONSOLE_WORKFLOWS = resolve(REPO_ROOT, 'libs/console/src/console-workflows.spec-helper.ts');

/** Polls `check` until it returns a value other than undefined; fails naming `what` after `ms`. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Builds the console (its front-end included) and `projects` besides; nx caches what is built. */
export function buildConsole(projects: string[] = []): Promise<void> {
  return new Promise<void>((done, fail) =>
    execFile(
      'npx',
      [
        'nx',
        'run-many',
        '-t',
        'build',
        `--projects=${['@baton/console', ...projects].join(',')}`,
        '--outputStyle=static',
      ],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, NX_DAEMON: 'false' },
        maxBuffer: 16 * 1024 * 1024,
        timeout: 280_000,
      },
      (error, stdout, stderr) => (error ? fail(new Error(`build failed:\n${stdout}\n${stderr}`)) : done()),
    ),
  );
}

export interface ConsoleFleet {
  /** The namespace: stream, key prefix or schema of this fleet. */
  ns: string;
  /** BATON_* variables naming the fleet, as the console and the workers read them. */
  env: Record<string, string>;
  fleet: WorkerFleet;
  adapters: OperatorAdapters;
  client: Client;
  /** Stops the workers, closes the client and removes the namespace. */
  dispose(): Promise<void>;
}

/**
 * A fleet in a fresh namespace `<prefix><random>` on the tests' NATS and `storeUrl` (Redis by
 * default); `workerEnv` is added to every worker's variables.
 */
export function consoleFleet(
  prefix: string,
  workerEnv: Record<string, string> = {},
  storeUrl: string = redisTestUrl(),
): ConsoleFleet {
  const ns = `${prefix}${randomBytes(4).toString('hex')}`;
  const bus = natsTestUrl();
  const env: Record<string, string> = {
    BATON_TRANSPORT_URL: bus,
    BATON_STORE_URL: storeUrl,
    ...isolatedEnv('transport', bus, ns),
    ...isolatedEnv('store', storeUrl, ns),
  };
  const fleet = new WorkerFleet({ ...env, BATON_WORKFLOWS: CONSOLE_WORKFLOWS, ...workerEnv });
  const adapters = operatorAdapters(readOperatorConfig(env));
  const client = new Client({ transport: adapters.transport, store: adapters.store });
  return {
    ns,
    env,
    fleet,
    adapters,
    client,
    async dispose() {
      await fleet.shutdown();
      await adapters.close();
      await removeIsolated('transport', bus, ns);
      await removeIsolated('store', storeUrl, ns);
    },
  };
}
