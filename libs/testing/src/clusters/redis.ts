/**
 * A Redis primary, its replica and three sentinels for one test file, started with the
 * infra/clusters/redis scripts (the same ones an operator runs by hand) on ports and in a
 * directory of its own, so a cluster someone started with the defaults is never touched.
 *
 * ```ts
 * const cluster = await startRedisCluster();
 * afterAll(() => cluster.stop());
 * const primary = await cluster.primaryNode();
 * await cluster.kill(primary); // Sentinel promotes the replica
 * await cluster.start(primary); // back as a replica of the new primary
 * ```
 *
 * Nodes are numbered as node.sh numbers them: 1 and 2 are the data nodes (1 the primary after
 * start), 3 the first sentinel.
 */
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../crash/worker-processes.js';

const run = promisify(execFile);
const SCRIPTS = resolve(REPO_ROOT, 'infra/clusters/redis');
/** The scripts wait up to 60 s for the sentinels to agree; this bounds a script that hangs anyway. */
const SCRIPT_TIMEOUT_MS = 90_000;

export interface RedisClusterPorts {
  /** Data node 1 and data node 2. */
  data: [number, number];
  /** The three sentinels. */
  sentinels: [number, number, number];
}

/** Ports the cluster specs use: inside 16380-16389 / 26380-26389, apart from start.sh's defaults. */
export const TEST_REDIS_CLUSTER_PORTS: RedisClusterPorts = {
  data: [16382, 16383],
  sentinels: [26383, 26384, 26385],
};

export interface RedisClusterOptions {
  ports?: RedisClusterPorts;
  /** Sentinel's down-after-milliseconds. @defaultValue 2000 */
  downAfterMs?: number;
  masterName?: string;
}

export interface RedisCluster {
  /** `redis+sentinel://…/<master name>`, as start.sh printed it. */
  readonly url: string;
  readonly ports: RedisClusterPorts;
  /** kill -9 node 1, 2 (data nodes) or 3 (the first sentinel); returns when it is gone. */
  kill(node: 1 | 2 | 3): Promise<void>;
  /** Starts the node again (a data node as a replica of the current primary); waits for agreement. */
  start(node: 1 | 2 | 3): Promise<void>;
  /** SIGSTOP or SIGCONT a node's process: frozen, it keeps its sockets but answers nothing. */
  signal(node: 1 | 2 | 3, signal: 'SIGSTOP' | 'SIGCONT'): Promise<void>;
  /** The data node the sentinels name as the primary now. */
  primaryNode(): Promise<1 | 2>;
  /** Waits until the sentinels name another primary than `node`; returns the new one. */
  waitForFailover(from: 1 | 2, timeoutMs?: number): Promise<1 | 2>;
  /** Stops every process and deletes the data. Safe to call twice. */
  stop(): Promise<void>;
}

export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const ports = options.ports ?? TEST_REDIS_CLUSTER_PORTS;
  const dir = resolve(REPO_ROOT, `.tmp/clusters/redis-test-${randomBytes(4).toString('hex')}`);
  const masterName = options.masterName ?? 'baton';
  const env = {
    ...process.env,
    BATON_REDIS_CLUSTER_DIR: dir,
    BATON_REDIS_MASTER_NAME: masterName,
    BATON_REDIS_NODE1_PORT: String(ports.data[0]),
    BATON_REDIS_NODE2_PORT: String(ports.data[1]),
    BATON_REDIS_SENTINEL_PORTS: ports.sentinels.join(','),
    BATON_REDIS_DOWN_AFTER_MS: String(options.downAfterMs ?? 2_000),
  };
  const script = async (name: string, ...args: string[]): Promise<string> => {
    try {
      const { stdout } = await run(resolve(SCRIPTS, name), args, { env, timeout: SCRIPT_TIMEOUT_MS });
      return stdout;
    } catch (err) {
      const { stderr } = err as { stderr?: string };
      throw new Error(
        `infra/clusters/redis/${name} ${args.join(' ')} failed: ${stderr?.trim() || String(err)}`,
        {
          cause: err,
        },
      );
    }
  };
  const redisCli = async (port: number, ...args: string[]): Promise<string> =>
    (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5_000 })).stdout;

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await script('stop.sh', '--purge').catch(async (err: unknown) => {
        await rm(dir, { recursive: true, force: true });
        throw err;
      });
    })());

  let url: string;
  try {
    url = (await script('start.sh')).trim().split('\n').at(-1) ?? '';
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }

  const pidOf = async (node: 1 | 2 | 3): Promise<number> =>
    Number((await readFile(resolve(dir, node === 3 ? 's1' : String(node), 'redis.pid'), 'utf8')).trim());

  const primaryNode = async (): Promise<1 | 2> => {
    for (const port of ports.sentinels) {
      try {
        const reply = (await redisCli(port, 'SENTINEL', 'get-master-addr-by-name', masterName)).split('\n');
        const primaryPort = Number(reply[1]);
        if (primaryPort === ports.data[0]) return 1;
        if (primaryPort === ports.data[1]) return 2;
      } catch {
        // This sentinel is down (or frozen); ask the next.
      }
    }
    throw new Error(`no sentinel on ports ${ports.sentinels.join(', ')} names a primary of this cluster`);
  };

  return {
    url,
    ports,
    kill: async (node) => {
      await script('node.sh', 'kill', String(node));
    },
    start: async (node) => {
      await script('node.sh', 'start', String(node));
    },
    signal: async (node, signal) => {
      process.kill(await pidOf(node), signal);
    },
    primaryNode,
    waitForFailover: async (from, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const now = await primaryNode().catch(() => from);
        if (now !== from) return now;
        if (Date.now() > deadline)
          throw new Error(`Sentinel did not promote a new primary within ${timeoutMs} ms`);
        await new Promise((done) => setTimeout(done, 100));
      }
    },
    stop,
  };
}

/** The parts of an ioredis client (and its Sentinel connector) that the race below uses. */
interface SentinelClient {
  readonly status: string;
  stream?: { destroy(): void };
  once(event: 'connecting' | 'end', listener: () => void): unknown;
  ping(): Promise<string>;
  connector?: {
    failoverDetector?: { sentinels: Array<{ client: { emit(...args: unknown[]): boolean } }> } | null;
  };
}

/**
 * Puts `client`, an ioredis connection open through Sentinel, through the race in which ioredis 5
 * ends it for good (`reviveEndedRedis` in `@baton/core/adapter`): its socket drops as when the
 * primary dies, and the moment its reconnect starts asking the sentinels for the primary, the
 * previous connection's failover detector hears `+switch-master` as when a sentinel announces the
 * promotion. Resolves when ioredis has ended the connection (status `end`), proving the race was
 * run; rejects when it did not end within `withinMs`. The announcement is injected on the
 * detector's own sentinel subscription, since no client can publish on a sentinel's channels.
 */
export async function endThroughSentinelRace(client: unknown, withinMs = 5_000): Promise<void> {
  const redis = client as SentinelClient;
  const deadline = Date.now() + withinMs;
  // The detector subscribes just after the connection is made.
  let detector = redis.connector?.failoverDetector;
  while (!detector && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    detector = redis.connector?.failoverDetector;
  }
  if (!detector || redis.status !== 'ready') {
    throw new Error(`endThroughSentinelRace: the connection is ${redis.status}, with no failover detector`);
  }
  const subscription = detector.sentinels[0]!.client;
  redis.once('connecting', () => {
    subscription.emit('message', '+switch-master', 'baton 127.0.0.1 1 127.0.0.1 2');
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ended = new Promise<void>((resolve, reject) => {
    redis.once('end', resolve);
    timer = setTimeout(
      () => reject(new Error(`endThroughSentinelRace: the connection did not end (status ${redis.status})`)),
      Math.max(deadline - Date.now(), 0),
    );
  });
  redis.stream!.destroy();
  await ended.finally(() => clearTimeout(timer));
}

/**
 * PINGs `client` (an ioredis connection) every 50 ms until it answers; returns the answer, or
 * undefined when it did not answer within `withinMs`. For a connection that should come back by
 * itself, such as one {@link endThroughSentinelRace} ended.
 */
export async function pingWithin(client: unknown, withinMs = 10_000): Promise<string | undefined> {
  const redis = client as SentinelClient;
  const deadline = Date.now() + withinMs;
  for (;;) {
    const answer = await redis.ping().catch(() => undefined);
    if (answer !== undefined || Date.now() > deadline) return answer;
    await new Promise((r) => setTimeout(r, 50));
  }
}
