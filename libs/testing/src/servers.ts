/**
 * Where integration tests find their servers, and private server instances for tests that must
 * stop or break one (never the shared ones).
 *
 * URLs come from the environment, else the loopback defaults. A vitest global setup
 * (`libs/testing/src/global-setup.ts`) starts containers with testcontainers only when a server
 * is unreachable and a Docker engine is available, and exports their URLs through the same
 * variables. Import from `@baton/testing/servers`; it does not load vitest.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Environment variables naming the servers integration tests use. */
export const TEST_NATS_URL_ENV = 'BATON_TEST_NATS_URL';
export const TEST_REDIS_URL_ENV = 'BATON_TEST_REDIS_URL';
export const TEST_POSTGRES_URL_ENV = 'BATON_TEST_POSTGRES_URL';
export const TEST_KAFKA_URL_ENV = 'BATON_TEST_KAFKA_URL';

export const DEFAULT_TEST_NATS_URL = 'nats://127.0.0.1:4222';
export const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_TEST_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
/** The broker `infra/kafka/start.sh` runs (or docker-compose's `kafka` service). */
export const DEFAULT_TEST_KAFKA_URL = 'kafka://127.0.0.1:9092';

export function natsTestUrl(): string {
  return process.env[TEST_NATS_URL_ENV] || DEFAULT_TEST_NATS_URL;
}
export function redisTestUrl(): string {
  return process.env[TEST_REDIS_URL_ENV] || DEFAULT_TEST_REDIS_URL;
}
export function postgresTestUrl(): string {
  return process.env[TEST_POSTGRES_URL_ENV] || DEFAULT_TEST_POSTGRES_URL;
}
export function kafkaTestUrl(): string {
  return process.env[TEST_KAFKA_URL_ENV] || DEFAULT_TEST_KAFKA_URL;
}

/** True when something accepts TCP connections at the URL's host and port. */
export function isReachable(url: string, timeoutMs = 1_000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** A TCP port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once `url`'s port accepts connections; rejects after `timeoutMs`. */
export async function waitUntilReachable(url: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await isReachable(url, 500))) {
    if (Date.now() > deadline) throw new Error(`${url} did not accept connections within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A server process of the test's own, on its own port and data directory: it may be stopped and
 * restarted (same port, same data) to test outages without touching the shared services.
 */
export interface PrivateServer {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** The server's process id while it runs (benchmarks read its CPU time from /proc). */
  pid(): number | undefined;
  /** Stops the process (SIGTERM, then SIGKILL after 5 s). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  restart(): Promise<void>;
  /** Stops it and removes its data directory. */
  dispose(): Promise<void>;
}

interface ServerSpec {
  command: string;
  args(port: number, dataDir: string): string[];
  url(port: number): string;
}

async function startPrivateServer(label: string, spec: ServerSpec): Promise<PrivateServer> {
  const port = await freePort();
  const dataDir = await mkdtemp(join(tmpdir(), `baton-${label}-`));
  const url = spec.url(port);
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    const started = spawn(spec.command, spec.args(port, dataDir), { stdio: 'ignore' });
    child = started;
    const exited = new Promise<never>((_, reject) =>
      started.once('exit', (code) => reject(new Error(`${spec.command} exited with ${code} at start`))),
    );
    exited.catch(() => undefined);
    await Promise.race([waitUntilReachable(url), exited]);
  };
  const stop = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill('SIGTERM');
    const force = setTimeout(() => running.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(force);
  };
  await launch();
  return {
    url,
    port,
    dataDir,
    pid: () => child?.pid,
    stop,
    restart: async () => {
      await stop();
      await launch();
    },
    dispose: async () => {
      await stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A private nats-server with JetStream (file storage in its own directory). */
export function startPrivateNats(extraArgs: string[] = []): Promise<PrivateServer> {
  return startPrivateServer('nats', {
    command: process.env.BATON_NATS_SERVER_BIN || 'nats-server',
    args: (port, dir) => ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir, ...extraArgs],
    url: (port) => `nats://127.0.0.1:${port}`,
  });
}

/** A private redis-server with an append-only file, so a restart keeps its data. */
export function startPrivateRedis(extraArgs: string[] = []): Promise<PrivateServer> {
  return startPrivateServer('redis', {
    command: process.env.BATON_REDIS_SERVER_BIN || 'redis-server',
    args: (port, dir) => [
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      ...extraArgs,
    ],
    url: (port) => `redis://127.0.0.1:${port}`,
  });
}
