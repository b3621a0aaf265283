/**
 * A 3-node Kafka cluster (KRaft, combined broker and controller nodes) of the test's own, run by
 * the infra scripts (`infra/clusters/kafka/`: start.sh, node.sh, stop.sh) on ports the caller
 * chooses, so a spec drives exactly what an operator would. Faults are real signals to real JVMs.
 *
 * ```ts
 * const cluster = await startKafkaCluster({ brokerPort: 19092, controllerPort: 19192 });
 * const leaders = await cluster.partitionLeaders('crash.journal');
 * await cluster.kill(leaders.get(0)!);
 * ```
 *
 * Invariants: `startKafkaCluster` resolves only once every broker is registered; `stop()` stops
 * every node and deletes the cluster's directory, and is safe to call twice; nothing here touches
 * the shared broker. Spec files run in parallel and the Kafka cluster specs share one port range:
 * a lock directory per broker port (holding the owner's pid, taken over when that process is gone)
 * makes a second cluster wait until the first one stopped.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { REPO_ROOT } from '../crash/worker-processes.js';

const run = promisify(execFile);
const SCRIPTS = resolve(REPO_ROOT, 'infra/clusters/kafka');
/** The scripts wait up to BATON_KAFKA_CLUSTER_TIMEOUT_S (120 s); this bounds one that hangs anyway. */
const SCRIPT_TIMEOUT_MS = 180_000;

export interface KafkaClusterOptions {
  /** Client port of node 1; nodes 2 and 3 take the next two. @defaultValue 19092 */
  brokerPort?: number;
  /** KRaft controller port of node 1; nodes 2 and 3 take the next two. @defaultValue 19192 */
  controllerPort?: number;
}

/** A node (its node.id): 1, 2 or 3. */
export type KafkaNode = 1 | 2 | 3;

export interface KafkaCluster {
  /** `kafka://h:p1,h:p2,h:p3`, as start.sh printed it: what BATON_TRANSPORT_URL takes. */
  readonly url: string;
  /** The brokers as `host:port`, for a kafkajs client of the test's own. */
  readonly brokers: string[];
  /** SIGKILLs node `n` (no clean shutdown); returns when the process is gone. */
  kill(n: KafkaNode): Promise<void>;
  /** Starts node `n` again on its ports and data, and waits until it answers and is registered. */
  start(n: KafkaNode): Promise<void>;
  /**
   * Waits until every node is registered and unfenced again, up to `timeoutMs`; rejects naming the
   * missing ones. A node that missed heartbeats for the session timeout (4 s here, for quick
   * failovers) is fenced until its next one, which a loaded machine can cause with no kill at all.
   */
  waitForBrokers(timeoutMs?: number): Promise<void>;
  /** The leader of each partition of `topic`, from the cluster's metadata (partition → node). */
  partitionLeaders(topic: string): Promise<Map<number, KafkaNode>>;
  /** The in-sync replicas of each partition of `topic` (partition → nodes). */
  inSyncReplicas(topic: string): Promise<Map<number, KafkaNode[]>>;
  /** Stops every node and deletes the cluster's data. */
  stop(): Promise<void>;
}

/** How long a cluster waits for another test's cluster on the same ports to stop. */
const PORT_LOCK_WAIT_MS = 300_000;

/** Takes the lock of `port` (waiting for its holder to release it or die); returns the release. */
async function lockPorts(port: number): Promise<() => Promise<void>> {
  const lock = resolve(REPO_ROOT, `.tmp/clusters/kafka-ports-${port}.lock`);
  await mkdir(resolve(lock, '..'), { recursive: true });
  const deadline = Date.now() + PORT_LOCK_WAIT_MS;
  for (;;) {
    try {
      await mkdir(lock);
      await writeFile(resolve(lock, 'pid'), String(process.pid));
      return () => rm(lock, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(await readFile(resolve(lock, 'pid'), 'utf8').catch(() => ''));
    if (holder > 0 && !isAlive(holder)) {
      await rm(lock, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `a Kafka test cluster on port ${port} (lock ${lock}, pid ${holder || 'unknown'}) did not stop within ${PORT_LOCK_WAIT_MS / 1000} s`,
      );
    }
    await new Promise((done) => setTimeout(done, 500));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Starts a cluster in a fresh directory under the repository's `.tmp/clusters/`. */
export async function startKafkaCluster(options: KafkaClusterOptions = {}): Promise<KafkaCluster> {
  const brokerPort = options.brokerPort ?? 19092;
  const controllerPort = options.controllerPort ?? 19192;
  const unlock = await lockPorts(brokerPort);
  const dir = resolve(REPO_ROOT, `.tmp/clusters/kafka-test-${randomBytes(4).toString('hex')}`);
  const env = {
    ...process.env,
    BATON_KAFKA_CLUSTER_BROKER_PORT: String(brokerPort),
    BATON_KAFKA_CLUSTER_CONTROLLER_PORT: String(controllerPort),
    BATON_KAFKA_CLUSTER_DIR: dir,
  };
  const script = async (name: string, ...args: string[]): Promise<string> => {
    try {
      const { stdout } = await run('bash', [resolve(SCRIPTS, name), ...args], {
        env,
        timeout: SCRIPT_TIMEOUT_MS,
      });
      return stdout;
    } catch (err) {
      const { stderr } = err as { stderr?: string };
      throw new Error(
        `infra/clusters/kafka/${name} ${args.join(' ')} failed: ${stderr?.trim() || String(err)}`,
        {
          cause: err,
        },
      );
    }
  };
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      try {
        await script('stop.sh', '--purge').catch(async (err: unknown) => {
          await rm(dir, { recursive: true, force: true });
          throw err;
        });
      } finally {
        await unlock();
      }
    })());

  let url: string;
  try {
    url = (await script('start.sh')).trim().split('\n').at(-1) ?? '';
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
  const brokers = url.replace(/^kafka:\/\//, '').split(',');

  const kafka = new Kafka({
    clientId: 'baton-kafka-cluster-helper',
    brokers,
    connectionTimeout: 1_000,
    requestTimeout: 5_000,
    retry: { retries: 3, initialRetryTime: 200 },
    logLevel: logLevel.NOTHING,
  });
  /** Fresh admin per question: a killed broker must not leave a stale connection behind. */
  const partitions = async (topic: string) => {
    const admin = kafka.admin();
    try {
      await admin.connect();
      const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
      return metadata.topics[0]?.partitions ?? [];
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  };
  const waitForBrokers = async (timeoutMs = 30_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    let seen = '';
    for (let waited = false; ; waited = true) {
      const admin = kafka.admin();
      try {
        await admin.connect();
        const { brokers: registered } = await admin.describeCluster();
        seen = registered.map((b) => b.nodeId).join(', ');
        if (registered.length >= brokers.length) {
          if (waited) console.log(`[kafka cluster] all ${brokers.length} brokers registered again`);
          return;
        }
      } catch (err) {
        seen = `no answer (${(err as Error).message})`;
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
      if (!waited) console.log(`[kafka cluster] waiting for every broker to be registered: ${seen}`);
      if (Date.now() > deadline) {
        throw new Error(
          `kafka cluster: ${brokers.length} brokers not registered within ${timeoutMs} ms (registered: ${seen})`,
        );
      }
      await new Promise((done) => setTimeout(done, 250));
    }
  };
  const node = (action: string) => async (n: KafkaNode) => {
    await script('node.sh', action, String(n));
  };
  return {
    url,
    brokers,
    kill: node('kill'),
    start: node('start'),
    waitForBrokers,
    partitionLeaders: async (topic) =>
      new Map((await partitions(topic)).map((p) => [p.partitionId, p.leader as KafkaNode])),
    inSyncReplicas: async (topic) =>
      new Map((await partitions(topic)).map((p) => [p.partitionId, p.isr as KafkaNode[]])),
    stop,
  };
}
