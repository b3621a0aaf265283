/**
 * Vitest global setup: makes sure the integration tests have their servers. A server that answers
 * at its URL (`BATON_TEST_*_URL`, else the loopback default) is used as it is. One that does not
 * is started with testcontainers, only when a Docker engine is available, and its URL exported
 * through the same variable. Without either, the integration tests fail with connection errors
 * naming the server: they never pass or skip silently.
 */
import {
  DEFAULT_TEST_NATS_URL,
  DEFAULT_TEST_POSTGRES_URL,
  DEFAULT_TEST_REDIS_URL,
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
