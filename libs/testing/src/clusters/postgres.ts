/**
 * The PostgreSQL test cluster (infra/clusters/postgres) driven from a test: a primary, a
 * streaming standby and the endpoint that follows the primary, started fresh on the private
 * ports 15432, 15433 and 15440, and always stopped (with its data deleted) by `stop()`.
 *
 * ```ts
 * const cluster = await startPostgresCluster();
 * try {
 *   // store on cluster.url; then fail over as an operator would:
 *   await cluster.kill(cluster.primary);
 *   await cluster.promote(cluster.standby);
 * } finally {
 *   await cluster.stop();
 * }
 * ```
 *
 * The scripts do the work, so a test exercises exactly what an operator runs.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const SCRIPTS = resolve(REPO_ROOT, 'infra/clusters/postgres');
/**
 * Where a test's cluster keeps its data: apart from the one an operator may run by hand, and
 * outside the checkout, which the `postgres` user running initdb may not be able to enter (a
 * clone in a `mktemp -d` directory is root's alone); one per checkout.
 */
const TEST_DIR = resolve(
  tmpdir(),
  `baton-pg-cluster-test-${createHash('sha256').update(REPO_ROOT).digest('hex').slice(0, 12)}`,
);
/** start.sh initdb's, clones and waits for streaming: seconds here, bounded anyway. */
const SCRIPT_TIMEOUT_MS = 120_000;

export type PostgresNode = 1 | 2;

export interface PostgresClusterOptions {
  /**
   * true: the primary waits for the standby to flush each commit (`synchronous_standby_names =
   * '*'`); false: the standby is asynchronous.
   * @defaultValue true
   */
  synchronous?: boolean;
}

export interface PostgresCluster {
  /** The endpoint's URL, for BATON_STORE_URL: it always leads to the current primary. */
  readonly url: string;
  /** The node taking writes now. */
  readonly primary: PostgresNode;
  /** The other node. */
  readonly standby: PostgresNode;
  /** A URL straight to one node, bypassing the endpoint. */
  nodeUrl(node: PostgresNode): string;
  /** SIGKILLs the node's postmaster. */
  kill(node: PostgresNode): Promise<void>;
  /** Promotes the standby; the endpoint routes new connections to it and drops the old ones. */
  promote(node: PostgresNode): Promise<void>;
  /** Starts the node again: a former primary comes back as a standby of the current one. */
  start(node: PostgresNode): Promise<void>;
  /** Stops the endpoint and both nodes and deletes the data. Safe to call twice. */
  stop(): Promise<void>;
}

const NODE_PORTS: Record<PostgresNode, number> = { 1: 15432, 2: 15433 };

function script(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      'bash',
      [resolve(SCRIPTS, name), ...args],
      { env, timeout: SCRIPT_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          reject(
            new Error(
              `infra/clusters/postgres/${name} ${args.join(' ')} failed: ${err.message.split('\n')[0]}\n${stdout}${stderr}`,
              { cause: err },
            ),
          );
        } else {
          resolvePromise(stdout);
        }
      },
    );
  });
}

/** Starts a fresh cluster (any leftover of an earlier test's cluster is purged first). */
export async function startPostgresCluster(options: PostgresClusterOptions = {}): Promise<PostgresCluster> {
  const env = {
    ...process.env,
    BATON_PG_CLUSTER_DIR: TEST_DIR,
    BATON_PG_CLUSTER_SYNC: options.synchronous === false ? 'off' : 'on',
    BATON_NODE_BIN: process.execPath,
  };
  await script('stop.sh', ['--purge'], env);
  let output: string;
  try {
    output = await script('start.sh', [], env);
  } catch (err) {
    await script('stop.sh', ['--purge'], env).catch(() => undefined);
    throw err;
  }
  const url = output.trim().split('\n').at(-1) ?? '';
  if (!url.startsWith('postgres://')) throw new Error(`start.sh printed no URL last:\n${output}`);

  let primary: PostgresNode = 1;
  let stopping: Promise<void> | undefined;
  return {
    url,
    get primary() {
      return primary;
    },
    get standby() {
      return (3 - primary) as PostgresNode;
    },
    nodeUrl: (node) => `postgres://postgres@127.0.0.1:${NODE_PORTS[node]}/test`,
    kill: async (node) => {
      await script('node.sh', ['kill', String(node)], env);
    },
    promote: async (node) => {
      await script('node.sh', ['promote', String(node)], env);
      primary = node;
    },
    start: async (node) => {
      await script('node.sh', ['start', String(node)], env);
    },
    stop: () => (stopping ??= script('stop.sh', ['--purge'], env).then(() => undefined)),
  };
}
