/**
 * A 3-node NATS JetStream cluster of the test's own, run by the infra scripts
 * (`infra/clusters/nats/`: start.sh, node.sh, stop.sh) on ports the caller chooses, so a spec
 * drives exactly what an operator would. Faults are real signals to real server processes:
 * SIGKILL, and SIGSTOP/SIGCONT for a node that hangs while keeping its sockets.
 *
 * Invariants: `startNatsCluster` resolves only once the nodes agree on a JetStream meta leader;
 * `stop()` stops every node (thawing a frozen one first) and deletes the cluster's directory, and
 * is safe to call twice; nothing here touches the shared servers.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';

const run = promisify(execFile);

/** The infra scripts, found from this file (src/clusters or dist/clusters: same depth). */
const SCRIPTS = fileURLToPath(new URL('../../../../infra/clusters/nats/', import.meta.url));
const REPO = fileURLToPath(new URL('../../../../', import.meta.url));

export interface NatsClusterOptions {
  /** Client port of node 1; nodes 2 and 3 take the next two. */
  clientPort: number;
  /** Cluster route port of node 1. */
  routePort: number;
  /** Monitoring (HTTP) port of node 1. */
  httpPort: number;
  /**
   * `namespaces`: every node in a network namespace of its own behind a bridge
   * (BATON_NATS_CLUSTER_NETNS=1, needs root), so that `cut` can make one unreachable. Default
   * `loopback`: every node on 127.0.0.1.
   */
  network?: 'loopback' | 'namespaces';
}

/** A node: 1, 2 or 3. */
export type NatsNode = 1 | 2 | 3;
export const NATS_NODES: readonly NatsNode[] = [1, 2, 3];

export interface NatsCluster {
  /** Every node's client URL, comma-separated: what BATON_TRANSPORT_URL takes. */
  readonly url: string;
  /** SIGKILLs node `n` (no clean shutdown). */
  kill(n: NatsNode): Promise<void>;
  /** Starts node `n` again on its ports and data, and waits for a meta leader. */
  start(n: NatsNode): Promise<void>;
  /** SIGSTOPs node `n`: it keeps its sockets and answers nothing. */
  freeze(n: NatsNode): Promise<void>;
  /** SIGCONTs node `n`. */
  thaw(n: NatsNode): Promise<void>;
  /** Takes node `n`'s network link down: it runs on, and no packet reaches it or leaves it. */
  cut(n: NatsNode): Promise<void>;
  /** Takes node `n`'s link up again. */
  heal(n: NatsNode): Promise<void>;
  /** The node leading `stream`, as most answering nodes' monitoring endpoints say; if any. */
  streamLeader(stream: string): Promise<NatsNode | undefined>;
  /** The configured replicas of `stream` (`num_replicas`), as the first answering node says; if it exists. */
  streamReplicas(stream: string): Promise<number | undefined>;
  /** Stops every node and deletes the cluster's data. */
  stop(): Promise<void>;
}

/** Starts a cluster in a fresh directory under the repository's `.tmp/clusters/`. */
export async function startNatsCluster(options: NatsClusterOptions): Promise<NatsCluster> {
  const parent = join(REPO, '.tmp', 'clusters');
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(join(parent, 'nats-test-'));
  const env = {
    ...process.env,
    BATON_NATS_CLUSTER_CLIENT_PORT: String(options.clientPort),
    BATON_NATS_CLUSTER_ROUTE_PORT: String(options.routePort),
    BATON_NATS_CLUSTER_HTTP_PORT: String(options.httpPort),
    BATON_NATS_CLUSTER_DIR: dir,
    BATON_NATS_CLUSTER_NETNS: options.network === 'namespaces' ? '1' : '0',
  };
  const script = async (name: string, ...args: string[]): Promise<string> => {
    try {
      const { stdout } = await run('bash', [join(SCRIPTS, name), ...args], { env, timeout: 60_000 });
      return stdout;
    } catch (err) {
      const e = err as Error & { stdout?: string; stderr?: string };
      throw new Error(`infra/clusters/nats/${name} ${args.join(' ')} failed: ${e.stderr || e.message}`, {
        cause: err,
      });
    }
  };
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await script('stop.sh', '--purge');
  };
  let url: string;
  try {
    url = (await script('start.sh')).trim().split('\n').at(-1) ?? '';
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
  const node = (action: string) => async (n: NatsNode) => {
    await script('node.sh', action, String(n));
  };
  // Node n's monitoring endpoint: on the address its client URL names (the URL lists the nodes in order).
  const monitor = (n: NatsNode): string =>
    `http://${new URL(url.split(',')[n - 1]!).hostname}:${options.httpPort + n - 1}`;
  return {
    url,
    kill: node('kill'),
    start: node('start'),
    freeze: node('freeze'),
    thaw: node('thaw'),
    cut: node('cut'),
    heal: node('heal'),
    streamLeader: async (stream) => {
      // Every node at once (a frozen one answers nothing, slowly); the answer most nodes give,
      // since a node that lost touch may still name the old leader.
      const seen = await Promise.all(NATS_NODES.map((n) => leaderSeenBy(monitor(n), stream)));
      const votes = new Map<NatsNode, number>();
      for (const leader of seen) if (leader !== undefined) votes.set(leader, (votes.get(leader) ?? 0) + 1);
      return [...votes].sort((a, b) => b[1] - a[1])[0]?.[0];
    },
    streamReplicas: async (stream) => {
      for (const n of NATS_NODES) {
        const detail = await streamDetail(monitor(n), stream);
        if (detail?.config?.num_replicas !== undefined) return detail.config.num_replicas;
      }
      return undefined;
    },
    stop,
  };
}

interface StreamDetail {
  name: string;
  cluster?: { leader?: string };
  config?: { num_replicas?: number };
}
interface Jsz {
  account_details?: Array<{ stream_detail?: StreamDetail[] }>;
}

/** What the node with monitoring endpoint `monitor` reports of `stream`, if it answers. */
async function streamDetail(monitor: string, stream: string): Promise<StreamDetail | undefined> {
  try {
    const response = await fetch(`${monitor}/jsz?accounts=true&streams=true&config=true`, {
      signal: AbortSignal.timeout(1_000),
    });
    const jsz = (await response.json()) as Jsz;
    for (const account of jsz.account_details ?? []) {
      const detail = account.stream_detail?.find((d) => d.name === stream);
      if (detail !== undefined) return detail;
    }
  } catch {
    // A killed or frozen node does not answer; another may.
  }
  return undefined;
}

/** The leader of `stream` as the node with monitoring endpoint `monitor` reports it. */
async function leaderSeenBy(monitor: string, stream: string): Promise<NatsNode | undefined> {
  const match = /^n([123])$/.exec((await streamDetail(monitor, stream))?.cluster?.leader ?? '');
  return match ? (Number(match[1]) as NatsNode) : undefined;
}
