/**
 * Vitest global setup: builds the workspace once, then makes sure the integration tests have their
 * servers.
 *
 * The build comes first and only here. Many specs run built code (the `baton` binary, worker
 * processes on dist/), and a spec that ran `nx run-many -t build` itself could rewrite a library's
 * dist/ while a neighbouring spec's process was loading it (CI, stop 45: ERR_MODULE_NOT_FOUND for
 * libs/transport-redis/dist/options.js in cli.int.spec.ts while admin-drop.int.spec.ts built). Nx's
 * cache makes the build a no-op (about 2 s) when nothing changed, as after CI's build phase.
 *
 * Servers: a server that answers at its URL (`BATON_TEST_*_URL`, else the loopback default) is
 * used as it is. One that does not is started with testcontainers, only when a Docker engine is
 * available, and its URL exported through the same variable. Kafka is the exception: an unreachable default broker is started
 * with `infra/kafka/start.sh` (a local JVM, no Docker) and left running. Without any of these,
 * the integration tests fail with connection errors naming the server: they never pass or skip
 * silently.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_TEST_KAFKA_URL,
  DEFAULT_TEST_NATS_URL,
  DEFAULT_TEST_POSTGRES_URL,
  DEFAULT_TEST_REDIS_URL,
  TEST_KAFKA_URL_ENV,
  TEST_NATS_URL_ENV,
  TEST_POSTGRES_URL_ENV,
  TEST_REDIS_URL_ENV,
  isReachable,
} from './servers.js';

interface ServerSpec {
  env: string;
  fallbackUrl: string;
  image: string;
  port: number;
  command?: string[];
  environment?: Record<string, string>;
  url(host: string, port: number): string;
}

const SERVERS: ServerSpec[] = [
  {
    env: TEST_NATS_URL_ENV,
    fallbackUrl: DEFAULT_TEST_NATS_URL,
    image: 'nats:2.10-alpine',
    port: 4222,
    command: ['-js'],
    url: (host, port) => `nats://${host}:${port}`,
  },
  {
    env: TEST_REDIS_URL_ENV,
    fallbackUrl: DEFAULT_TEST_REDIS_URL,
    image: 'redis:7-alpine',
    port: 6379,
    url: (host, port) => `redis://${host}:${port}`,
  },
  {
    env: TEST_POSTGRES_URL_ENV,
    fallbackUrl: DEFAULT_TEST_POSTGRES_URL,
    image: 'postgres:15-alpine',
    port: 5432,
    environment: { POSTGRES_HOST_AUTH_METHOD: 'trust', POSTGRES_DB: 'test' },
    url: (host, port) => `postgres://postgres@${host}:${port}/test`,
  },
];

type Stop = () => Promise<unknown>;

export default async function setup(): Promise<() => Promise<void>> {
  buildWorkspace();
  const stops: Stop[] = [];
  for (const spec of SERVERS) {
    const url = process.env[spec.env] || spec.fallbackUrl;
    if (await isReachable(url)) continue;
    const started = await startContainer(spec);
    if (started === undefined) {
      console.warn(
        `[baton tests] ${url} does not answer and no Docker engine is available; tests that need it will fail`,
      );
      continue;
    }
    process.env[spec.env] = started.url;
    stops.push(started.stop);
    console.warn(`[baton tests] started ${spec.image} for ${spec.env} at ${started.url}`);
  }
  await ensureKafka();
  return async () => {
    await Promise.allSettled(stops.map((stop) => stop()));
  };
}

async function startContainer(spec: ServerSpec): Promise<{ url: string; stop: Stop } | undefined> {
  // Loaded only here: most machines have the servers and never need it.
  const { GenericContainer, getContainerRuntimeClient, Wait } = await import('testcontainers');
  try {
    await getContainerRuntimeClient();
  } catch {
    return undefined;
  }
  let container = new GenericContainer(spec.image)
    .withExposedPorts(spec.port)
    .withWaitStrategy(Wait.forListeningPorts());
  if (spec.command) container = container.withCommand(spec.command);
  if (spec.environment) container = container.withEnvironment(spec.environment);
  const started = await container.start();
  return {
    url: spec.url(started.getHost(), started.getMappedPort(spec.port)),
    stop: () => started.stop(),
  };
}

/** The repository root, from this file's place in it (`libs/testing/src` or `libs/testing/dist`). */
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Builds every project (`nx run-many -t build`) before any spec starts; a failed build ends the run
 * with its output, since every spec that runs dist/ would fail on stale or missing code.
 */
function buildWorkspace(): void {
  const started = Date.now();
  const result = spawnSync('npx', ['nx', 'run-many', '-t', 'build', '--outputStyle=static'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, NX_DAEMON: 'false' },
    timeout: 600_000,
  });
  if (result.status !== 0) {
    const why = result.error ? result.error.message : `exit status ${result.status ?? result.signal}`;
    throw new Error(
      `[baton tests] the build before the tests failed (${why}); fix it and run again:\n` +
        `${result.stdout ?? ''}\n${result.stderr ?? ''}`,
    );
  }
  console.warn(`[baton tests] built the workspace (nx run-many -t build) in ${Date.now() - started} ms`);
}

/**
 * Starts the shared dev broker (`infra/kafka/start.sh`) when the Kafka test URL is the loopback
 * default and does not answer. It is left running afterwards, like the other shared test servers.
 * No Kafka testcontainer: a broker hands clients the address it advertises, which would have to be
 * the container's mapped host port, unknown until the container has started with its
 * configuration; the docker-compose `kafka` service is the Docker route.
 */
async function ensureKafka(): Promise<void> {
  const url = process.env[TEST_KAFKA_URL_ENV] || DEFAULT_TEST_KAFKA_URL;
  if (await isReachable(url)) return;
  if (url !== DEFAULT_TEST_KAFKA_URL) {
    console.warn(
      `[baton tests] Kafka at ${url} (${TEST_KAFKA_URL_ENV}) does not answer; Kafka tests will fail`,
    );
    return;
  }
  const script = `${REPO_ROOT}infra/kafka/start.sh`;
  console.warn(
    `[baton tests] ${url} does not answer: starting the local Kafka broker with infra/kafka/start.sh ` +
      '(it keeps running after the tests; infra/kafka/stop.sh stops it)',
  );
  const result = spawnSync('bash', [script], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
    // The port of the URL the tests use, whatever BATON_KAFKA_PORT the shell may have.
    env: { ...process.env, BATON_KAFKA_PORT: new URL(url).port },
  });
  if (result.status !== 0) {
    const why = result.error ? result.error.message : `exit status ${result.status ?? result.signal}`;
    console.warn(`[baton tests] could not start Kafka with ${script} (${why}); Kafka tests will fail`);
  }
}
