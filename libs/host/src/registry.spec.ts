/**
 * The worker app takes everything adapter-specific from registry.ts: these check that what it
 * derives (variables, adapter choice, namespaces, the variable an option error names, the producer's variables) comes
 * from the registrations and stays consistent with them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@baton/core';
import type { AdapterOption, AdapterVariable } from '@baton/core/adapter';
import { kafkaRegistration } from '@baton/transport-kafka/registration';
import { loadAdapterCode, storeFromConfig, transportFromConfig } from './adapters.js';
import { namingVariable, namingVariables, optionVariables } from './config-errors.js';
import { ENV, readConfig } from './config.js';
import { namespacesInUse } from './namespaces.js';
import { TRANSPORT_ENV } from './producer-config.js';
import { ADAPTERS, registrationFor } from './registry.js';
import { isolatedEnv, removeIsolated } from './testing.js';

const BASE = { [ENV.workflows]: './workflows.js' };
const variablesOf = (r: (typeof ADAPTERS)[number]) =>
  Object.values(r.variables) as AdapterVariable<unknown>[];
const optionsOf = (option: AdapterOption | undefined): readonly string[] =>
  option === undefined ? [] : typeof option === 'string' ? [option] : option;

describe('adapter registry', () => {
  it('puts every registered variable in ENV, each name once', () => {
    const names = ADAPTERS.flatMap((r) => variablesOf(r).map((v) => v.name));
    expect(new Set(names).size).toBe(names.length);
    const env = new Set<string>(Object.values(ENV));
    for (const name of names) expect(env.has(name), name).toBe(true);
    expect(ENV.natsPrefix).toBe('BATON_NATS_PREFIX');
    expect(ENV.kafkaSessionTimeoutMs).toBe('BATON_KAFKA_SESSION_TIMEOUT_MS');
    expect(ENV.redisKeyPrefix).toBe('BATON_REDIS_KEY_PREFIX');
    expect(ENV.postgresPoolSize).toBe('BATON_POSTGRES_POOL_SIZE');
  });

  it('serves each scheme by one adapter of a kind, matched case-insensitively', () => {
    for (const kind of ['transport', 'store'] as const) {
      const schemes = ADAPTERS.filter((r) => r.kind === kind).flatMap((r) => [...r.schemes]);
      expect(new Set(schemes).size).toBe(schemes.length);
    }
    expect(registrationFor('transport', 'TLS://h:4222')?.name).toBe('nats');
    expect(registrationFor('transport', 'kafkas://h:9093')?.name).toBe('kafka');
    expect(registrationFor('store', 'rediss://h')?.name).toBe('redis');
    expect(registrationFor('transport', 'redis+sentinel://s:26379/m')?.name).toBe('redisBus');
    expect(registrationFor('store', 'postgresql://u@h/db')?.name).toBe('postgres');
    expect(registrationFor('store', 'nats://h')).toBeUndefined();
  });

  it('reads each adapter setting under the adapter name and names a bad value', () => {
    const config = readConfig({
      ...BASE,
      [ENV.transportUrl]: 'kafka://127.0.0.1:9092',
      [ENV.storeUrl]: 'postgres://u@127.0.0.1/db',
      [ENV.kafkaPartitions]: ' 6 ',
      [ENV.kafkaPrefix]: 'orders',
      [ENV.postgresSchema]: 'orders',
    });
    expect(config.kafka).toMatchObject({ partitions: 6, prefix: 'orders', sessionTimeoutMs: undefined });
    expect(config.nats.prefix).toBeUndefined();
    expect(() =>
      readConfig({
        ...BASE,
        [ENV.transportUrl]: 'nats://h',
        [ENV.storeUrl]: 'redis://h',
        [ENV.kafkaSessionTimeoutMs]: '2',
      }),
    ).toThrow("BATON_KAFKA_SESSION_TIMEOUT_MS is '2'; it must be a whole number of at least 3");
  });

  it("comes without the adapters' code: a process loads the code of the bus and store it builds", async () => {
    const kafkaPostgres = readConfig({
      ...BASE,
      [ENV.transportUrl]: 'kafka://127.0.0.1:9092',
      [ENV.storeUrl]: 'postgres://u:secret@127.0.0.1/db',
    });
    // Nothing in this file imports the Kafka package itself, so its code is not loaded yet.
    expect(() => transportFromConfig(kafkaPostgres)).toThrow(
      "the Kafka transport's code is not loaded: await its registration's load() before create()",
    );
    const natsRedis = readConfig({
      ...BASE,
      [ENV.transportUrl]: 'nats://127.0.0.1:4222',
      [ENV.storeUrl]: 'redis://127.0.0.1:6379',
    });
    await loadAdapterCode(natsRedis);
    expect(transportFromConfig(natsRedis).name).toBe('nats');
    expect(storeFromConfig(natsRedis).name).toBe('redis');
    // Loading NATS and Redis loaded nothing of Kafka's.
    expect(() => kafkaRegistration.create('kafka://h:9092', {}, {})).toThrow(/code is not loaded/);
    await loadAdapterCode(kafkaPostgres);
    expect(transportFromConfig(kafkaPostgres).name).toBe('kafka');
    expect(storeFromConfig(kafkaPostgres).name).toBe('postgres');
  });

  it("shows the adapters' own namespaces, defaults included", async () => {
    const kafkaPostgres = readConfig({
      ...BASE,
      [ENV.transportUrl]: 'kafka://127.0.0.1:9092',
      [ENV.storeUrl]: 'postgres://u:secret@127.0.0.1/db',
      [ENV.kafkaPrefix]: 'orders',
    });
    expect(namespacesInUse(kafkaPostgres)).toEqual({ transportPrefix: 'orders', postgresSchema: 'baton' });
    const natsRedis = readConfig({
      ...BASE,
      [ENV.transportUrl]: 'nats://127.0.0.1:4222',
      [ENV.storeUrl]: 'redis://127.0.0.1:6379',
      [ENV.redisKeyPrefix]: 'orders:',
    });
    // The NATS prefix is resolved by the transport's own code, as it is when built.
    await loadAdapterCode(natsRedis);
    expect(namespacesInUse(natsRedis)).toEqual({ transportPrefix: 'baton', redisKeyPrefix: 'orders:' });
  });

  it('builds the adapter the scheme names, and lists the registered schemes when none does', async () => {
    const config = readConfig({
      ...BASE,
      [ENV.transportUrl]: 'kafkas://h:9093',
      [ENV.storeUrl]: 'rediss://h',
    });
    await loadAdapterCode(config);
    expect(transportFromConfig(config).name).toBe('kafka');
    expect(storeFromConfig(config).name).toBe('redis');
    // One Redis as bus and store: the variable, not the scheme, says which adapter a URL is for.
    const redisOnly = readConfig({
      ...BASE,
      [ENV.transportUrl]: 'redis://h:6379',
      [ENV.storeUrl]: 'redis://h:6379',
    });
    await loadAdapterCode(redisOnly);
    expect(transportFromConfig(redisOnly).name).toBe('redis');
    expect(storeFromConfig(redisOnly).name).toBe('redis');
    expect(namespacesInUse(redisOnly)).toEqual({ transportPrefix: 'baton-bus', redisKeyPrefix: 'baton:' });
    // On one server, prefixes whose keys would meet are refused, naming both and a way out.
    const overlapping = readConfig({
      ...BASE,
      [ENV.transportUrl]: 'redis://H:6379/0',
      [ENV.storeUrl]: 'redis://h:6379',
      [ENV.redisBusPrefix]: 'baton',
    });
    expect(() => storeFromConfig(overlapping)).toThrow(
      "BATON_REDIS_BUS_PREFIX 'baton' and BATON_REDIS_KEY_PREFIX 'baton:' overlap on the same Redis (h:6379/0): the bus's keys (baton:*) and the store's (baton:*) would meet; give the bus a prefix of its own, e.g. BATON_REDIS_BUS_PREFIX=baton-bus",
    );
    // Through Sentinel: the same sentinels (in any order) and master are the same server.
    const viaSentinel = {
      ...overlapping,
      transportUrl: 'redis+sentinel://s1:26379,s2:26379/orders',
      storeUrl: 'redis+sentinel://s2:26379,s1:26379/orders',
    };
    expect(() => storeFromConfig(viaSentinel)).toThrow(
      /overlap on the same Redis \(sentinel s1:26379,s2:26379\/orders\/0\)/,
    );
    // The same prefixes on another database, or another server, share nothing.
    expect(storeFromConfig({ ...overlapping, storeUrl: 'redis://h:6379/1' }).name).toBe('redis');
    expect(storeFromConfig({ ...overlapping, storeUrl: 'redis://other:6379' }).name).toBe('redis');
    const unknown = readConfig({ ...BASE, [ENV.transportUrl]: 'amqp://h', [ENV.storeUrl]: 'memory:' });
    expect(() => transportFromConfig(unknown)).toThrow(
      "BATON_TRANSPORT_URL 'amqp://h' names an unsupported bus; use nats://, tls://, kafka://, kafkas://, redis://, rediss://, redis+sentinel:// or rediss+sentinel://",
    );
    expect(() => storeFromConfig(unknown)).toThrow('use redis://… or postgres://… here');
  });

  it("names the variable of the adapter the URL picks for each of its options, the URL's included", () => {
    for (const r of ADAPTERS) {
      const urlVariable = r.kind === 'transport' ? ENV.transportUrl : ENV.storeUrl;
      const env = { [urlVariable]: `${r.schemes[0]}://h` };
      const variables = optionVariables(r.kind, env);
      const options = [
        ...variablesOf(r).flatMap((v) => optionsOf(v.option).map((option) => [option, v.name] as const)),
        ...optionsOf(r.urlOption).map((option) => [option, urlVariable] as const),
      ];
      for (const [option, variable] of options) {
        const err = new ConfigError(`${r.name}: ${option} is bad`, { option, value: 'v', expected: 'use w' });
        const named = namingVariable(err, variables, {});
        expect(named.message, `${r.name} ${option}`).toBe(`${variable} is 'v': use w`);
        expect(named.cause).toBe(err);
      }
    }
  });

  it('leaves a ConfigError that names no option, or one without a variable, as it is', () => {
    const env = { [ENV.transportUrl]: 'nats://h:4222' };
    const variables = optionVariables('transport', env);
    const plain = new ConfigError('BATON_NATS_CREDS_FILE names /x, which cannot be read');
    expect(namingVariable(plain, variables, env)).toBe(plain);
    const unmapped = new ConfigError('natsTransport: storage is "disk"', {
      option: 'storage',
      value: '"disk"',
      expected: "use 'file' or 'memory'",
    });
    expect(namingVariable(unmapped, variables, env)).toBe(unmapped);
    // No registered adapter for the URL: nothing is named (that error names the URL variable).
    expect(optionVariables('store', { [ENV.storeUrl]: 'mysql://h' }).size).toBe(0);
    const other = new Error('not a configuration error');
    expect(() =>
      namingVariables('worker', {}, () => {
        throw other;
      }),
    ).toThrow(other);
  });

  it("gives the producer every transport's variables and no store's", () => {
    for (const r of ADAPTERS) {
      for (const v of variablesOf(r))
        expect(TRANSPORT_ENV.includes(v.name), v.name).toBe(r.kind === 'transport');
    }
    expect(TRANSPORT_ENV).toContain(ENV.transportUrl);
    expect(TRANSPORT_ENV).not.toContain(ENV.storeUrl);
  });

  it('gives tests and the bench a namespace per adapter as its variables, and refuses an unknown one', async () => {
    expect(isolatedEnv('transport', 'nats://h:4222', 'c1')).toEqual({ BATON_NATS_PREFIX: 'c1' });
    expect(isolatedEnv('transport', 'kafka://h:9092', 'c1')).toEqual({ BATON_KAFKA_PREFIX: 'c1' });
    expect(isolatedEnv('transport', 'redis://h:6379', 'c1')).toEqual({ BATON_REDIS_BUS_PREFIX: 'c1-bus' });
    expect(isolatedEnv('store', 'redis://h', 'c1')).toEqual({ BATON_REDIS_KEY_PREFIX: 'c1:' });
    expect(isolatedEnv('store', 'postgres://h/db', 'c1')).toEqual({ BATON_POSTGRES_SCHEMA: 'c1' });
    expect(() => isolatedEnv('store', 'mysql://h', 'c1')).toThrow(/no registered store for 'mysql'/);
    await expect(removeIsolated('transport', 'amqp://h', 'c1')).rejects.toThrow(/no registered transport/);
  });

  it("has every variable of the worker process, the registered adapters' included, in docs/configuration.md's table", () => {
    const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
    const missing = Object.values(ENV).filter((name) => !doc.includes(`| \`${name}\``));
    expect(
      missing,
      "add each to VARIABLES and run npm run docs:variables (docs/configuration.md's table of worker variables)",
    ).toEqual([]);
  });
});
