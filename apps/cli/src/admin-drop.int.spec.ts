/**
 * `baton admin drop`, the real binary (apps/cli/dist/main.js) against real servers, on NATS +
 * Redis, Kafka + Postgres and the Redis bus with the Redis store on one server. Two installations
 * share each pair's servers, each in a namespace of its own, both with a run message on the bus
 * and a schedule in the store:
 *
 * 1. Without --yes: the listing names the installation's streams or topics, keys or schema, and
 *    exit 0 with nothing removed (the servers, asked directly, still hold all of it).
 * 2. With --yes: exit 0, and the servers, asked directly, hold nothing of that namespace; the other
 *    installation's data is all there and still reads back (its schedule). A second drop has
 *    nothing to remove.
 * 3. A namespace another installation's data lies under (a Redis store prefix another one starts
 *    with; a Postgres schema holding another application's table) is refused, exit 1, nothing
 *    removed.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect as natsConnect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { Client } from '@baton/client';
import { loadAdapterCode, operatorAdapters, readOperatorConfig } from '@baton/host';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';
import { REPO_ROOT } from '@baton/testing/crash';
import { kafkaTestUrl, natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';

const CLI_MAIN = resolve(REPO_ROOT, 'apps/cli/dist/main.js');
const WORKFLOW = { name: 'drop_me', version: 1 };

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(file: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Result> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      { cwd: REPO_ROOT, env, timeout: timeoutMs, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** `baton …` with only these variables (and PATH) in its environment. */
function baton(env: Record<string, string>, ...args: string[]): Promise<Result> {
  return exec(process.execPath, [CLI_MAIN, ...args], { PATH: process.env.PATH, ...env }, 90_000);
}

/** The variables of an installation in namespace `ns` on the pair's servers. */
function installation(pair: Pair, ns: string): Record<string, string> {
  return {
    BATON_TRANSPORT_URL: pair.bus,
    BATON_STORE_URL: pair.store,
    ...isolatedEnv('transport', pair.bus, ns),
    ...isolatedEnv('store', pair.store, ns),
    ...pair.extra,
  };
}

/** A run message on the installation's bus and a schedule in its store, written by a client. */
async function seed(env: Record<string, string>): Promise<void> {
  const config = readOperatorConfig(env);
  await loadAdapterCode(config);
  const adapters = operatorAdapters(config);
  const client = new Client({ transport: adapters.transport, store: adapters.store });
  try {
    await client.start(WORKFLOW, { n: 1 }, { idempotencyKey: 'first' });
    await client.schedules.create(WORKFLOW, null, { scheduleId: 'nightly', every: '1h', paused: true });
  } finally {
    await client.close();
  }
}

/** The installation's schedule, read back by a client (proof its store data is whole). */
async function scheduleOf(env: Record<string, string>): Promise<string> {
  const config = readOperatorConfig(env);
  await loadAdapterCode(config);
  const adapters = operatorAdapters(config);
  const client = new Client({ transport: adapters.transport, store: adapters.store });
  try {
    return (await client.schedules.get('nightly')).scheduleId;
  } finally {
    await client.close();
  }
}

// What the servers hold, asked directly with their own client libraries.

async function natsStreams(url: string, prefix: string): Promise<string[]> {
  const nc = await natsConnect({ servers: url.replace(/^nats:\/\//, '') });
  try {
    const names: string[] = [];
    for await (const name of (await jetstreamManager(nc)).streams.names()) names.push(name);
    return names.filter((n) => n.startsWith(`${prefix.toUpperCase()}_`)).sort();
  } finally {
    await nc.close();
  }
}

async function kafkaNames(url: string, prefix: string): Promise<string[]> {
  const brokers = url.replace(/^kafka:\/\//, '').split(',');
  const admin = new Kafka({ clientId: 'drop-spec', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${prefix}.`));
    const groups = (await admin.listGroups()).groups
      .map((g) => g.groupId)
      .filter((g) => g.startsWith(`${prefix}-`));
    return [...topics, ...groups].sort();
  } finally {
    await admin.disconnect();
  }
}

async function redisKeys(url: string, prefix: string): Promise<string[]> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    return keys.sort();
  } finally {
    redis.disconnect();
  }
}

async function postgres<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function postgresTables(url: string, schema: string): Promise<string[]> {
  return postgres(url, async (client) => {
    const found = await client.query<{ name: string }>(
      `SELECT n.nspname || '.' || coalesce(c.relname, '') AS name
         FROM pg_namespace n LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relkind = 'r'
        WHERE n.nspname = $1 ORDER BY 1`,
      [schema],
    );
    return found.rows.map((r) => r.name);
  });
}

interface Pair {
  name: string;
  bus: string;
  store: string;
  extra: Record<string, string>;
  /** Everything the servers hold of namespace `ns`, asked directly. */
  held(ns: string): Promise<string[]>;
  /** Names the listing shows for namespace `ns`. */
  listed(ns: string): string[];
}

const PAIRS: Pair[] = [
  {
    name: 'nats+redis',
    bus: natsTestUrl(),
    store: redisTestUrl(),
    extra: {},
    held: async (ns) => [
      ...(await natsStreams(natsTestUrl(), ns)),
      ...(await redisKeys(redisTestUrl(), `${ns}:`)),
    ],
    listed: (ns) => [`${ns.toUpperCase()}_RUNS`, `${ns.toUpperCase()}_JOURNAL`, `${ns}:sched:*`],
  },
  {
    name: 'kafka+postgres',
    bus: kafkaTestUrl(),
    store: postgresTestUrl(),
    extra: { BATON_KAFKA_PARTITIONS: '1' },
    held: async (ns) => [
      ...(await kafkaNames(kafkaTestUrl(), ns)),
      ...(await postgresTables(postgresTestUrl(), ns)),
    ],
    listed: (ns) => [`${ns}.runs`, `${ns}.journal`, `${ns}.schedules`],
  },
  {
    name: 'redis+redis',
    bus: redisTestUrl(),
    store: redisTestUrl(),
    extra: {},
    held: async (ns) => [
      ...(await redisKeys(redisTestUrl(), `${ns}-bus:`)),
      ...(await redisKeys(redisTestUrl(), `${ns}:`)),
    ],
    listed: (ns) => [`${ns}-bus:runs:*`, `${ns}:sched:*`],
  },
];

describe.each(PAIRS)('baton admin drop on $name', (pair) => {
  // Two namespaces of the same length: neither name starts with the other.
  const ns = `drop${randomBytes(3).toString('hex')}`;
  const other = `keep${randomBytes(3).toString('hex')}`;
  const env = installation(pair, ns);
  const otherEnv = installation(pair, other);

  beforeAll(async () => {
    await seed(env);
    await seed(otherEnv);
  }, 120_000);

  afterAll(async () => {
    for (const id of [ns, other]) {
      await removeIsolated('transport', pair.bus, id);
      await removeIsolated('store', pair.store, id);
    }
  }, 120_000);

  it('lists the installation and removes nothing without --yes', async () => {
    const before = await pair.held(ns);
    expect(before.length).toBeGreaterThan(0);
    const dry = await baton(env, 'admin', 'drop');
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    for (const name of pair.listed(ns)) expect(dry.stdout).toContain(name);
    expect(dry.stdout).not.toContain(other);
    expect(dry.stdout).toMatch(/nothing removed \(dry run\)\. Add --yes to remove all of it\.\n$/);
    for (const line of dry.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(120);
    const asJson = await baton(env, '--json', 'admin', 'drop');
    expect(asJson.code).toBe(0);
    const report = JSON.parse(asJson.stdout) as {
      dryRun: boolean;
      parts: { role: string; listing: { items: unknown[] } }[];
    };
    expect(report.dryRun).toBe(true);
    expect(report.parts.map((p) => p.role)).toEqual(['bus', 'store']);
    for (const part of report.parts) expect(part.listing.items.length).toBeGreaterThan(0);
    expect(await pair.held(ns)).toEqual(before);
  }, 120_000);

  it('with --yes leaves nothing of the namespace on the servers, and the other installation whole', async () => {
    const otherBefore = await pair.held(other);
    expect(otherBefore.length).toBeGreaterThan(0);
    const drop = await baton(env, 'admin', 'drop', '--yes');
    expect(drop.stderr).toBe('removing it…\n');
    expect(drop.code).toBe(0);
    expect(drop.stdout).toMatch(/removed: the bus and the store hold nothing of this installation\n$/);
    expect(await pair.held(ns)).toEqual([]);
    expect(await pair.held(other)).toEqual(otherBefore);
    expect(await scheduleOf(otherEnv)).toBe('nightly');

    const again = await baton(env, 'admin', 'drop', '--yes');
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(again.stdout).toMatch(/\nnothing of it is on the bus or the store\nnothing to remove\n$/);
  }, 120_000);
});

describe('baton admin drop refuses a namespace with data of others under it', () => {
  it('a Redis store prefix another installation starts with: exit 1, nothing removed', async () => {
    const pair = PAIRS[0]!;
    const ns = `drop${randomBytes(3).toString('hex')}`;
    const env = installation(pair, ns);
    // Another installation whose key prefix starts with this one's (`<ns>:` and `<ns>:eu:`).
    const nested = { ...installation(pair, `${ns}eu`), BATON_REDIS_KEY_PREFIX: `${ns}:eu:` };
    try {
      await seed(env);
      await seed(nested);
      const before = await pair.held(ns);
      const refused = await baton(env, 'admin', 'drop', '--yes');
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        new RegExp(
          `^refused: nothing was removed: the store \\(redis://[^)]*\\): \\d+ key\\(s\\) matching ${ns}:\\* are not the Redis store's \\(e\\.g\\. '${ns}:eu:`,
        ),
      );
      expect(await pair.held(ns)).toEqual(before);
      expect(await scheduleOf(nested)).toBe('nightly');
    } finally {
      await removeIsolated('transport', pair.bus, ns);
      await removeIsolated('transport', pair.bus, `${ns}eu`);
      await removeIsolated('store', pair.store, ns);
    }
  }, 120_000);

  it("a Postgres schema holding another application's table: exit 1, nothing removed", async () => {
    const pair = PAIRS[1]!;
    const ns = `drop${randomBytes(3).toString('hex')}`;
    const env = installation(pair, ns);
    try {
      await seed(env);
      await postgres(pair.store, (client) => client.query(`CREATE TABLE ${ns}.invoices (id int)`));
      const before = await pair.held(ns);
      const refused = await baton(env, 'admin', 'drop', '--yes');
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        new RegExp(
          `^refused: nothing was removed: the store \\(postgres://[^)]*\\): 1 object\\(s\\) in schema ${ns} are not the Postgres store's \\(e\\.g\\. ${ns}\\.invoices\\)`,
        ),
      );
      expect(await pair.held(ns)).toEqual(before);
      expect(before).toContain(`${ns}.invoices`);
    } finally {
      await removeIsolated('transport', pair.bus, ns);
      await removeIsolated('store', pair.store, ns);
    }
  }, 120_000);
});
