/**
 * One NATS connection with the transport's policy:
 *
 * 1. Opening fails within `connectTimeoutMs` with an error naming the servers (secrets masked),
 *    the cause and the fix: unreachable, refused credentials, a server older than 2.9, JetStream
 *    disabled, a missing permission. It never hangs, and never leaves a connection behind.
 * 2. Once open, the client reconnects by itself, forever (`maxReconnectAttempts: -1`); operations
 *    during an outage fail (BackendUnavailableError) and later ones succeed.
 * 3. Permission violations arrive asynchronously (the server answers a refused publish with -ERR,
 *    not on the request's inbox); {@link PermissionWatch} routes them to the operation waiting on
 *    that subject, so a refused pull request fails at once instead of waiting out its expiry.
 */
import { connect, errors as natsErrors, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { BackendUnavailableError } from '@baton/core/adapter';
import { authenticatorFor } from './credentials.js';
import {
  describe,
  findCause,
  isLeaderless,
  isPlacementRefusal,
  natsServerTooOld,
  natsUnavailable,
  toNatsError,
} from './errors.js';
import type { ResolvedNatsTransportOptions } from './options.js';
import { JetStreamPublisher } from './publisher.js';

/**
 * The oldest server the transport supports: 2.9 brought direct get (`allow_direct`,
 * `next_by_subj`) and the consumer create API with names. Newer features (multi-filter consumers
 * in 2.10, batched direct get in 2.11) are not used, so 2.9 and every later server work the same.
 */
export const MIN_SERVER_VERSION = [2, 9, 0] as const;

/**
 * Reconnect pacing once open: a restarted server is back within a second or two, and a fleet of
 * workers should not hammer it; jitter (nats.js default) spreads the fleet.
 */
const RECONNECT_TIME_WAIT_MS = 1_000;
/**
 * Client pings: the default (2 min × 2 missed) takes minutes to notice a server that vanished
 * without closing the socket; a worker should notice in about half a minute.
 */
const PING_INTERVAL_MS = 10_000;
const MAX_PINGS_OUT = 3;

/** Routes asynchronous permission violations to whoever waits on the refused subject. */
export interface PermissionWatch {
  /** Calls `onViolation` when the server refuses `subject`; returns the unsubscribe function. */
  watch(subject: string, onViolation: (error: Error) => void): () => void;
}

/** An open connection and its JetStream handles. */
export interface NatsSession {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  /** Pipelined JetStream publish (journal appends, run messages); see publisher.ts. */
  readonly publisher: JetStreamPublisher;
  /** The version the server reported at connect, e.g. `2.9.10`. */
  readonly serverVersion: string;
  readonly permissions: PermissionWatch;
  /** False from a disconnect until the client has reconnected. */
  isConnected(): boolean;
}

/** Connects, checks the server's version and JetStream; see the invariants above. */
export async function openSession(options: ResolvedNatsTransportOptions): Promise<NatsSession> {
  const context = { servers: options.displayServers, operation: 'connect' };
  const authenticator = await authenticatorFor(options.credentials);
  const nc = await connectWithin(options, authenticator);
  try {
    const serverVersion = nc.info?.version ?? '0.0.0';
    checkServerVersion(serverVersion, options.displayServers);
    const { permissions, isConnected } = watchStatus(nc);
    // jetstreamManager asks $JS.API.INFO first: this is where "JetStream disabled" and a missing
    // permission for the API show up, before the transport relies on anything.
    const jsm = await untilElected(
      () => jetstreamManager(nc, { timeout: options.requestTimeoutMs }),
      options.leaderWaitMs,
    );
    const js = jetstream(nc, { timeout: options.requestTimeoutMs });
    const publisher = new JetStreamPublisher(nc, options.requestTimeoutMs);
    return { nc, js, jsm, publisher, serverVersion, permissions, isConnected };
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw toNatsError(err, context);
  }
}

const LEADER_RETRY_MS = 250;

/**
 * Runs `setUp` (JetStream API requests on a connection that is open) again while the cluster is
 * between leaders, up to `waitMs`: for seconds after a node restarts or a partition
 * heals, the meta layer or a new stream answers "temporarily unavailable" (10008), "not leader"
 * (10009), or nothing within the request timeout, and a new stream may be refused placement
 * (10005, 10023) until the meta leader counts the nodes that are back (seen in CI right after an
 * election). A worker starting then waits instead of failing its start; any other error, and the
 * last one after `waitMs` (the option `leaderWaitMs`), is thrown: a cluster too small for the
 * replicas asked is told so after that wait.
 */
export async function untilElected<T>(setUp: () => Promise<T>, waitMs: number): Promise<T> {
  const waitUntil = Date.now() + waitMs;
  for (;;) {
    try {
      return await setUp();
    } catch (err) {
      const electing =
        isLeaderless(err) || isPlacementRefusal(err) || findCause(err, natsErrors.TimeoutError) !== undefined;
      if (!electing || Date.now() + LEADER_RETRY_MS > waitUntil) throw err;
      await new Promise((resolve) => setTimeout(resolve, LEADER_RETRY_MS));
    }
  }
}

async function connectWithin(
  options: ResolvedNatsTransportOptions,
  authenticator: Awaited<ReturnType<typeof authenticatorFor>>,
): Promise<NatsConnection> {
  const connecting = connect({
    servers: options.servers,
    name: options.name,
    timeout: options.connectTimeoutMs,
    maxReconnectAttempts: -1,
    reconnectTimeWait: RECONNECT_TIME_WAIT_MS,
    pingInterval: PING_INTERVAL_MS,
    maxPingOut: MAX_PINGS_OUT,
    // The first connect must fail fast and say why; only an established connection retries.
    waitOnFirstConnect: false,
    // Every request (each journal append is one) would otherwise build two Error objects up front
    // to keep the caller's stack: a sixth of the worker's CPU under load (docs/performance.md).
    // Our errors name the run and the operation instead.
    noAsyncTraces: true,
    ...(authenticator !== undefined && { authenticator }),
    ...(options.tls !== undefined && { tls: options.tls }),
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  // nats.js bounds each handshake by `timeout`, but several servers are tried in turn; this bounds
  // the whole attempt, and closes a connection that succeeds after we gave up on it.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      connecting.then((late) => late.close()).catch(() => undefined);
      reject(new natsErrors.TimeoutError());
    }, options.connectTimeoutMs);
  });
  try {
    return await Promise.race([connecting, deadline]);
  } catch (err) {
    const mapped = toNatsError(err, { servers: options.displayServers, operation: 'connect' });
    if (!(mapped instanceof BackendUnavailableError)) throw mapped;
    throw natsUnavailable(
      `nats transport connect: cannot reach NATS at ${options.displayServers} within ` +
        `${options.connectTimeoutMs} ms (${describe(err)}); check that the server runs and that the ` +
        'URL names its host and client port (4222 by default)',
      { cause: err },
    );
  } finally {
    clearTimeout(timer);
  }
}

function checkServerVersion(version: string, servers: string): void {
  const parts = version.split(/[.-]/, 3).map((part) => Number.parseInt(part, 10));
  for (let i = 0; i < MIN_SERVER_VERSION.length; i++) {
    const have = parts[i] ?? 0;
    const need = MIN_SERVER_VERSION[i] ?? 0;
    if (Number.isNaN(have) || have < need) break;
    if (have > need) return;
    if (i === MIN_SERVER_VERSION.length - 1) return;
  }
  throw natsServerTooOld(
    version,
    `nats transport connect at ${servers}: the server is NATS ${version}, older than ` +
      `${MIN_SERVER_VERSION.join('.')}, which the transport needs (direct get, the consumer create API); ` +
      'upgrade nats-server',
  );
}

/** Follows the connection's status: permission violations to their watchers, and connectivity. */
function watchStatus(nc: NatsConnection): { permissions: PermissionWatch; isConnected(): boolean } {
  const watchers = new Map<string, Set<(error: Error) => void>>();
  let connected = true;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') connected = false;
      else if (status.type === 'reconnect') connected = true;
      else if (status.type === 'error' && status.error instanceof natsErrors.PermissionViolationError) {
        for (const onViolation of watchers.get(status.error.subject) ?? []) onViolation(status.error);
      }
    }
  })().catch(() => undefined);
  const permissions: PermissionWatch = {
    watch(subject, onViolation) {
      const set = watchers.get(subject) ?? new Set();
      set.add(onViolation);
      watchers.set(subject, set);
      return () => {
        set.delete(onViolation);
        if (set.size === 0) watchers.delete(subject);
      };
    },
  };
  return { permissions, isConnected: () => connected };
}
