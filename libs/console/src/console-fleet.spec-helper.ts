/**
 * What the console's end-to-end specs share: a fleet of worker processes on the tests' NATS and
 * Redis (or another store) in a namespace of its own, an operator client for it, the build of
 * the console (and of the CLI when a spec runs `baton console`), and a poll for a condition.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
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

/**
 * Checks that the console is built (its front-end included) and, with `projects`, those packages
 * too. It builds nothing: the tests' global setup built the whole workspace before any spec
 * started (libs/testing/src/global-setup.ts), and a spec that ran `nx run-many -t build` itself
 * rewrote libraries' dist/ while neighbouring specs' processes loaded them (CI, stop 48:
 * ENOENT for libs/core/dist/runtime/payload/keyring.js in cli-interactions.int.spec.ts while a
 * console spec "built" the console and Nx restored its dependencies from the cache).
 */
export async function buildConsole(projects: string[] = []): Promise<void> {
  const needed = [
    join(REPO_ROOT, 'libs/console/dist/public/index.html'),
    ...projects.map((name) => join(REPO_ROOT, PROJECT_DIRS[name] ?? name, 'dist')),
  ];
  const missing = needed.filter((path) => !existsSync(path));
  if (missing.length > 0)
    throw new Error(
      `not built: ${missing.join(', ')}; run the spec through vitest (its global setup builds the ` +
        'workspace) or run `npm run build` first',
    );
}

/** Where a project named by its package lives, for {@link buildConsole}'s check. */
const PROJECT_DIRS: Record<string, string> = { '@baton/cli': 'apps/cli', '@baton/console': 'libs/console' };

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
