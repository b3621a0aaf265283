/**
 * Offline checks of docker-compose.yml (no Docker engine needed): it is read with the `yaml`
 * package, anchors and `<<` merge keys resolved as Compose resolves them, and checked against the
 * worker's and the producer's own lists of variables, the source tree and the Dockerfile. Each
 * check collects every problem it finds, naming the service, variable or path, and expects none.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseDocument } from 'yaml';
import { ENV } from '@baton/host';
import { PRODUCER_READS } from '../../worker/src/producer.js';
import { OTEL_ENV } from '../../worker/src/telemetry.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const COMPOSE_FILE = join(REPO, 'docker-compose.yml');
const COLLECTOR_CONFIG = 'infra/otel/collector.yaml';
/** WORKDIR of the image: the repository layout starts here. */
const IMAGE_WORKDIR = '/app';

/** The standard OpenTelemetry SDK variables a worker or producer service may set (both start the SDK). */
const OTEL_VARIABLES = OTEL_ENV;
const WORKER_VARIABLES = new Set<string>([...Object.values(ENV), ...OTEL_VARIABLES]);
const PRODUCER_VARIABLES = new Set<string>([...PRODUCER_READS, ...OTEL_VARIABLES]);
/** Host ports the tests and developers rely on (docs/developing.md, "Checks and tests"). */
const SERVER_PORTS: Record<string, string[]> = {
  nats: ['4222:4222', '8222:8222'],
  redis: ['6379:6379'],
  postgres: ['5432:5432'],
  kafka: ['9092:9092'],
};

interface Healthcheck {
  test?: string | string[];
  disable?: boolean;
}

interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: Healthcheck;
  profiles?: string[];
  ports?: (string | number | { host_ip?: string; published?: string | number; target?: number })[];
  volumes?: (string | { source?: string; target?: string })[];
  restart?: string;
  stop_grace_period?: string;
  hostname?: string;
}

interface ComposeFile {
  name?: string;
  services: Record<string, Service>;
}

function loadCompose(): ComposeFile {
  const text = readFileSync(COMPOSE_FILE, 'utf8');
  const doc = parseDocument(text, { merge: true });
  if (doc.errors.length > 0)
    throw new Error(`docker-compose.yml: ${doc.errors.map((e) => e.message).join('; ')}`);
  return doc.toJS({ maxAliasCount: 1000 }) as ComposeFile;
}

const compose = loadCompose();
const services = Object.entries(compose.services);

function envOf(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((entry) => {
        const at = entry.indexOf('=');
        return at < 0 ? [entry, ''] : [entry.slice(0, at), entry.slice(at + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

function dependenciesOf(service: Service): string[] {
  const deps = service.depends_on ?? [];
  return Array.isArray(deps) ? deps : Object.keys(deps);
}

function argv(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value.map(String) : value.split(/\s+/).filter(Boolean);
}

/** Services running the image built from this repository's Dockerfile. */
const built = services.filter(([, s]) => s.build !== undefined);
const isProducer = (s: Service): boolean => argv(s.entrypoint).some((a) => a.endsWith('producer-main.js'));
const workers = built.filter(([, s]) => !isProducer(s));
const producers = built.filter(([, s]) => isProducer(s));

/** `./apps/worker/dist/x.js` (relative to the image's WORKDIR) -> `apps/worker/src/x.ts` in the repository. */
function sourceOf(imagePath: string): string | undefined {
  const inRepo = imagePath.startsWith(`${IMAGE_WORKDIR}/`)
    ? imagePath.slice(IMAGE_WORKDIR.length + 1)
    : imagePath.replace(/^\.\//, '');
  const match = /^((?:apps|libs)\/[^/]+)\/dist\/(.+)\.js$/.exec(inRepo);
  if (!match) return undefined;
  return `${match[1]}/src/${match[2]}.ts`;
}

/** Parses a Compose duration (`35s`, `1m30s`, `500ms`) into milliseconds. */
function durationMs(value: string): number {
  const units: Record<string, number> = { us: 0.001, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
  let total = 0;
  const rest = value.replace(/(\d+(?:\.\d+)?)(us|ms|s|m|h)/g, (_, n: string, unit: string) => {
    total += Number(n) * units[unit]!;
    return '';
  });
  if (rest.trim() !== '' || value.trim() === '') throw new Error(`'${value}' is not a duration`);
  return total;
}

type Port = NonNullable<Service['ports']>[number];

interface PublishedPort {
  /** The host address it listens on; '' means every interface. */
  hostIp: string;
  /** The host port; '' means one Docker picks. */
  published: string;
  target: string;
}

/**
 * Reads a port in any Compose form: `80`, `8081:8080`, `127.0.0.1:8081:8080`, `[::1]:8081:8080`
 * (each with an optional `/tcp` or `/udp`), or the long form `{ host_ip, published, target }`.
 */
function parsePort(port: Port): PublishedPort {
  if (typeof port === 'object') {
    return {
      hostIp: port.host_ip ?? '',
      published: String(port.published ?? ''),
      target: String(port.target ?? ''),
    };
  }
  let rest = String(port).replace(/\/(tcp|udp|sctp)$/, '');
  let hostIp = '';
  const bracketed = /^\[([^\]]+)\]:(.*)$/.exec(rest);
  if (bracketed) [, hostIp, rest] = bracketed as unknown as [string, string, string];
  const parts = rest.split(':');
  if (parts.length === 3 && hostIp === '') hostIp = parts.shift()!;
  const target = parts.pop() ?? '';
  return { hostIp, published: parts.pop() ?? '', target };
}

/** The host side of a published port: `127.0.0.1:8081:8080` -> `8081`. */
function hostPort(port: Port): string {
  return parsePort(port).published;
}

/** A loopback address: reachable from this machine only. */
function isLoopback(address: string): boolean {
  return /^127\.\d+\.\d+\.\d+$/.test(address) || address === '::1';
}

describe('docker-compose.yml', () => {
  it('defines the servers, three workers, a producer and the optional fleets', () => {
    const names = Object.keys(compose.services);
    for (const name of [
      'nats',
      'redis',
      'postgres',
      'kafka',
      'worker-1',
      'worker-2',
      'worker-3',
      'producer',
    ]) {
      expect(names, `service ${name} is missing`).toContain(name);
    }
    expect(workers.map(([n]) => n).filter((n) => /^worker-\d$/.test(n))).toHaveLength(3);
    expect(producers.length, 'no service runs apps/worker/dist/producer-main.js').toBeGreaterThan(0);
  });

  it('names only existing services in depends_on, enabled whenever the dependant is', () => {
    const problems: string[] = [];
    for (const [name, service] of services) {
      for (const dep of dependenciesOf(service)) {
        const target = compose.services[dep];
        if (!target) {
          problems.push(`${name} depends on '${dep}', which is not a service`);
          continue;
        }
        const need = target.profiles ?? [];
        const have = service.profiles ?? [];
        if (need.length > 0 && (have.length === 0 || !have.every((p) => need.includes(p)))) {
          problems.push(
            `${name} (profiles: ${have.join(',') || 'none'}) depends on ${dep}, only in profiles ${need}`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('waits for healthy servers before starting a worker or producer', () => {
    const problems: string[] = [];
    for (const [name, service] of built) {
      const deps = service.depends_on;
      if (!deps || Array.isArray(deps) || Object.keys(deps).length === 0) {
        problems.push(`${name}: depends_on must list its servers with condition: service_healthy`);
        continue;
      }
      for (const [dep, spec] of Object.entries(deps)) {
        if (spec?.condition !== 'service_healthy')
          problems.push(`${name}: depends_on ${dep} is not service_healthy`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('gives workers only variables the worker reads or standard OTEL_* ones', () => {
    const problems: string[] = [];
    for (const [name, service] of workers) {
      for (const variable of Object.keys(envOf(service))) {
        if (!WORKER_VARIABLES.has(variable)) problems.push(`${name}: ${variable} is not read by the worker`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('gives producers only variables the producer reads', () => {
    const problems: string[] = [];
    for (const [name, service] of producers) {
      for (const variable of Object.keys(envOf(service))) {
        if (!PRODUCER_VARIABLES.has(variable))
          problems.push(`${name}: ${variable} is not read by the producer`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('sets every variable a worker or producer requires', () => {
    const problems: string[] = [];
    for (const [name, service] of workers) {
      for (const variable of [ENV.transportUrl, ENV.storeUrl, ENV.workflows]) {
        if (!envOf(service)[variable]) problems.push(`${name}: ${variable} is not set`);
      }
    }
    for (const [name, service] of producers) {
      if (!envOf(service)[ENV.transportUrl]) problems.push(`${name}: ${ENV.transportUrl} is not set`);
    }
    expect(problems).toEqual([]);
  });

  it('points BATON_WORKFLOWS at modules the image build produces', () => {
    const dockerfile = readFileSync(join(REPO, 'Dockerfile'), 'utf8');
    const problems: string[] = [];
    for (const [name, service] of workers) {
      for (const module of (envOf(service)[ENV.workflows] ?? '').split(',').map((m) => m.trim())) {
        const source = sourceOf(module);
        if (!source) {
          problems.push(
            `${name}: ${ENV.workflows} '${module}' is not a <package>/dist/<file>.js path in the image`,
          );
        } else if (!existsSync(join(REPO, source))) {
          problems.push(`${name}: ${ENV.workflows} '${module}' has no source ${source}`);
        } else if (/\.spec(-helper)?\.ts$/.test(source)) {
          problems.push(
            `${name}: ${ENV.workflows} '${module}' comes from a spec file, which the build leaves out`,
          );
        } else {
          const pkg = source.split('/src/')[0]!;
          if (!new RegExp(`COPY --from=build \\S*/${pkg}/dist `).test(dockerfile)) {
            problems.push(
              `${name}: ${ENV.workflows} '${module}': the Dockerfile's runtime stage does not copy ${pkg}/dist`,
            );
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('runs entrypoints and commands whose sources exist', () => {
    const problems: string[] = [];
    for (const [name, service] of built) {
      for (const arg of [...argv(service.entrypoint), ...argv(service.command)]) {
        if (!arg.endsWith('.js')) continue;
        const source = sourceOf(arg);
        if (!source || !existsSync(join(REPO, source))) {
          problems.push(`${name}: runs ${arg}, but ${source ?? 'no <package>/src file'} does not exist`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('gives every service a healthcheck; workers and producers probe with node', () => {
    const problems: string[] = [];
    for (const [name, service] of services) {
      const check = service.healthcheck;
      const test = argv(check?.test);
      if (!check || check.disable || test.length === 0 || test[0] === 'NONE') {
        problems.push(`${name} has no healthcheck`);
      } else if (service.build !== undefined && !(test[0] === 'CMD' && test[1] === 'node')) {
        problems.push(`${name}: the runtime image has no curl or wget; probe with ['CMD', 'node', ...]`);
      }
    }
    for (const [name, service] of workers) {
      const test = argv(service.healthcheck?.test).join(' ');
      if (!test.includes('/healthz') || !test.includes(ENV.httpPort)) {
        problems.push(`${name}: the healthcheck must fetch /healthz on ${ENV.httpPort}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('pins every image (a tag that is not latest, or a digest)', () => {
    const problems: string[] = [];
    for (const [name, service] of services) {
      const image = service.image;
      if (!image) {
        if (service.build === undefined) problems.push(`${name} has neither image nor build`);
        continue;
      }
      const tag = /^(?:[^/]+\/)*[^/:@]+(?::([^@/]+))?(?:@sha256:[0-9a-f]{64})?$/.exec(image);
      if (!tag) problems.push(`${name}: image '${image}' cannot be read`);
      else if (!image.includes('@sha256:') && (tag[1] === undefined || tag[1] === 'latest')) {
        problems.push(`${name}: image '${image}' is not pinned`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('gives workers time to hand off before Docker kills them, and restarts them', () => {
    const problems: string[] = [];
    for (const [name, service] of workers) {
      const env = envOf(service);
      const drain = Number(env[ENV.drainTimeoutMs] ?? 10_000);
      const shutdown = Number(env[ENV.shutdownTimeoutMs] ?? drain + 15_000);
      const grace = service.stop_grace_period ? durationMs(service.stop_grace_period) : 10_000;
      if (!(grace > shutdown)) {
        problems.push(
          `${name}: stop_grace_period ${grace} ms is not above ${ENV.shutdownTimeoutMs} ${shutdown} ms`,
        );
      }
      if (service.restart !== 'unless-stopped') problems.push(`${name}: restart is '${service.restart}'`);
    }
    expect(problems).toEqual([]);
  });

  it('connects workers and producers to servers they depend on, on their in-network addresses', () => {
    const problems: string[] = [];
    const kafkaAdvertised = envOf(compose.services['kafka'] ?? {})['KAFKA_ADVERTISED_LISTENERS'] ?? '';
    for (const [name, service] of built) {
      const env = envOf(service);
      for (const variable of [ENV.transportUrl, ENV.storeUrl]) {
        const url = env[variable];
        if (!url) continue;
        for (const address of url
          .replace(/^[a-z]+:\/\/(?:[^@/]*@)?/i, '')
          .split(/[/?]/)[0]!
          .split(',')) {
          const host = address.split(':')[0]!;
          if (!compose.services[host])
            problems.push(`${name}: ${variable} names host '${host}', which is not a service`);
          else if (!dependenciesOf(service).includes(host))
            problems.push(`${name}: ${variable} uses ${host} without depends_on`);
          if (/^kafkas?:/.test(url) && !kafkaAdvertised.includes(`//${address}`)) {
            problems.push(`${name}: ${variable} '${address}' is not among the broker's advertised listeners`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('keeps the servers on the host ports the tests use, and no host port twice', () => {
    const problems: string[] = [];
    for (const [name, ports] of Object.entries(SERVER_PORTS)) {
      const published = (compose.services[name]?.ports ?? [])
        .map(parsePort)
        .map((p) => `${p.published}:${p.target}`);
      for (const port of ports)
        if (!published.includes(port)) problems.push(`${name} no longer publishes ${port}`);
    }
    const seen = new Map<string, string>();
    for (const [name, service] of services) {
      for (const port of service.ports ?? []) {
        const host = hostPort(port);
        if (seen.has(host)) problems.push(`${name} and ${seen.get(host)} both publish host port ${host}`);
        seen.set(host, name);
      }
    }
    expect(problems).toEqual([]);
  });

  it('publishes every port on 127.0.0.1 only, never on all interfaces', () => {
    // The servers have no passwords: a port on every interface would open them to the network.
    const problems: string[] = [];
    for (const [name, service] of services) {
      for (const port of service.ports ?? []) {
        const { hostIp } = parsePort(port);
        if (!isLoopback(hostIp)) {
          problems.push(
            `${name}: port '${typeof port === 'object' ? JSON.stringify(port) : String(port)}' is published on ` +
              `${hostIp === '' ? 'all interfaces' : hostIp}; write it as '127.0.0.1:<host>:<container>'`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('advertises the broker to host clients on the loopback address it is published on', () => {
    const env = envOf(compose.services['kafka'] ?? {});
    const hostListener = (env['KAFKA_ADVERTISED_LISTENERS'] ?? '')
      .split(',')
      .find((listener) => listener.startsWith('PLAINTEXT://'));
    const published = (compose.services['kafka']?.ports ?? [])
      .map(parsePort)
      .find((p) => p.target === '9092');
    expect(published, 'kafka does not publish 9092').toBeDefined();
    expect(hostListener).toBe(`PLAINTEXT://${published!.hostIp}:${published!.published}`);
  });

  it('has a kafka profile whose workers use the Kafka broker', () => {
    const kafkaWorkers = workers.filter(([, s]) => s.profiles?.includes('kafka'));
    expect(kafkaWorkers.length, 'no worker in the kafka profile').toBeGreaterThan(0);
    for (const [name, service] of kafkaWorkers) {
      expect(envOf(service)[ENV.transportUrl], `${name}: ${ENV.transportUrl}`).toMatch(/^kafka:\/\//);
    }
  });

  it('has a redis profile whose workers use one Redis as bus and store, under prefixes of their own', () => {
    const redisWorkers = workers.filter(([, s]) => s.profiles?.includes('redis'));
    expect(redisWorkers.length, 'no worker in the redis profile').toBeGreaterThan(0);
    const defaultStorePrefix = 'baton:';
    for (const [name, service] of redisWorkers) {
      const env = envOf(service);
      expect(env[ENV.transportUrl], `${name}: ${ENV.transportUrl}`).toMatch(/^redis:\/\//);
      expect(env[ENV.storeUrl], `${name}: ${ENV.storeUrl}`).toBe(env[ENV.transportUrl]);
      // Apart from the default fleet, whose store keeps `baton:` on the same server.
      const storePrefix = env[ENV.redisKeyPrefix] ?? defaultStorePrefix;
      const busKeys = `${env[ENV.redisBusPrefix] ?? 'baton-bus'}:`;
      expect(storePrefix, `${name}: ${ENV.redisKeyPrefix}`).not.toBe(defaultStorePrefix);
      for (const [a, b] of [
        [busKeys, storePrefix],
        [busKeys, defaultStorePrefix],
        [storePrefix, defaultStorePrefix],
      ] as const) {
        expect(a.startsWith(b) || b.startsWith(a), `${name}: keys ${a}* and ${b}* meet`).toBe(false);
      }
    }
    const producer = envOf(compose.services['redis-producer'] ?? {});
    expect(producer[ENV.redisBusPrefix]).toBe(envOf(redisWorkers[0]![1])[ENV.redisBusPrefix]);
  });

  describe('otel profile', () => {
    const collector = compose.services['otel-collector'];
    const jaeger = compose.services['jaeger'];

    it('has the collector and Jaeger, only in the otel profile', () => {
      expect(collector, 'service otel-collector is missing').toBeDefined();
      expect(jaeger, 'service jaeger is missing').toBeDefined();
      expect(collector?.profiles, 'otel-collector profiles').toEqual(['otel']);
      expect(jaeger?.profiles, 'jaeger profiles').toEqual(['otel']);
      expect(
        (jaeger?.ports ?? []).map(String).some((p) => p.endsWith(':16686')),
        'Jaeger UI port 16686',
      ).toBe(true);
    });

    it('mounts a collector configuration that exists, parses and wires its pipelines', () => {
      const mount = (collector?.volumes ?? []).map(String).find((v) => v.includes(COLLECTOR_CONFIG));
      expect(mount, `otel-collector does not mount ${COLLECTOR_CONFIG}`).toBeDefined();
      const path = join(REPO, COLLECTOR_CONFIG);
      expect(existsSync(path), `${COLLECTOR_CONFIG} does not exist`).toBe(true);
      const config = parse(readFileSync(path, 'utf8')) as {
        receivers: Record<string, { protocols?: Record<string, { endpoint?: string }> }>;
        processors?: Record<string, unknown>;
        exporters: Record<string, { endpoint?: string }>;
        extensions?: Record<string, unknown>;
        service: { extensions?: string[]; pipelines: Record<string, Record<string, string[]>> };
      };
      const problems: string[] = [];
      for (const [pipeline, parts] of Object.entries(config.service.pipelines)) {
        for (const kind of ['receivers', 'processors', 'exporters'] as const) {
          for (const component of parts[kind] ?? []) {
            if (!(config[kind] ?? {})[component])
              problems.push(`pipeline ${pipeline}: ${kind} '${component}' is not defined`);
          }
        }
      }
      for (const extension of config.service.extensions ?? []) {
        if (!(config.extensions ?? {})[extension]) problems.push(`extension '${extension}' is not defined`);
      }
      const otlp = config.receivers['otlp']?.protocols ?? {};
      if (!otlp['grpc']?.endpoint?.endsWith(':4317'))
        problems.push('the OTLP receiver does not take gRPC on 4317');
      if (!otlp['http']?.endpoint?.endsWith(':4318'))
        problems.push('the OTLP receiver does not take HTTP on 4318');
      const traceExporters = config.service.pipelines['traces']?.['exporters'] ?? [];
      if (!traceExporters.some((e) => config.exporters[e]?.endpoint?.startsWith('jaeger:'))) {
        problems.push('no trace exporter sends to the jaeger service');
      }
      expect(problems).toEqual([]);
    });

    it('points the workers at the collector with the standard OTEL_* variables', () => {
      const problems: string[] = [];
      for (const [name, service] of workers) {
        const env = envOf(service);
        const endpoint = env['OTEL_EXPORTER_OTLP_ENDPOINT'];
        if (endpoint !== 'http://otel-collector:4318') {
          problems.push(
            `${name}: OTEL_EXPORTER_OTLP_ENDPOINT is '${endpoint}', not http://otel-collector:4318`,
          );
        }
        if (env['OTEL_EXPORTER_OTLP_PROTOCOL'] !== 'http/protobuf') {
          problems.push(`${name}: OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf for port 4318`);
        }
        for (const variable of ['OTEL_SERVICE_NAME', 'OTEL_TRACES_EXPORTER', 'OTEL_METRICS_EXPORTER']) {
          if (!env[variable]) problems.push(`${name}: ${variable} is not set`);
        }
      }
      expect(problems).toEqual([]);
    });
  });
});
