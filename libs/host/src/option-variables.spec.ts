/**
 * A ConfigError an adapter or the Worker throws for a bad option carries the option's name, and
 * the worker process names the BATON_* variable that sets it from that name alone. The last test
 * drives every registered variable's setting through its adapter with bad values: each error must
 * carry an option the registration maps to that variable, so an option check added without a
 * mapping fails here.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, defineWorkflow } from '@baton/core';
import type { AdapterOption, AdapterVariable } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { resolvePostgresStoreOptions } from '@baton/store-postgres';
import { resolveKafkaOptions } from '@baton/transport-kafka';
import { resolveNatsTransportOptions } from '@baton/transport-nats';
import { resolveRedisTransportOptions } from '@baton/transport-redis';
import { resolveWorkerOptions } from '@baton/worker';
import { namingVariable, namingVariables, optionVariables, registrationVariables } from './config-errors.js';
import { ENV, WORKER_OPTION_VARIABLES } from './config.js';
import { ADAPTERS } from './registry.js';

/** A Worker's required options, for checking the others. */
const WORKER_BASE = {
  transport: memoryTransport(),
  store: memoryStore(),
  workflows: [defineWorkflow({ name: 'w', version: 1, run: async () => undefined })],
};

/** A URL each adapter accepts; Kafka's carries credentials, so its SASL mechanism is checked. */
const URLS: Record<string, string> = {
  nats: 'nats://127.0.0.1:4222',
  kafka: 'kafka://u:pw@127.0.0.1:9092',
  redisBus: 'redis://127.0.0.1:6379',
  redis: 'redis://127.0.0.1:6379',
  postgres: 'postgres://u@127.0.0.1:5432/db',
};

/** Values no setting of its kind takes everywhere: each is refused by at least one check. */
const BAD_VALUES = {
  number: [0, -1, 1.5, 1e9],
  boolean: ['yes'],
  text: ['', 'A.b:* !', '/no/such/dir/file'],
};

/** What a variable's setting is, by what its parser makes of a value each kind takes. */
function kindOf(variable: AdapterVariable<unknown>): keyof typeof BAD_VALUES {
  try {
    const parsed = variable.parse('1', variable.name);
    return typeof parsed === 'number' ? 'number' : typeof parsed === 'boolean' ? 'boolean' : 'text';
  } catch {
    return 'text';
  }
}

const optionsOf = (option: AdapterOption | undefined): readonly string[] =>
  option === undefined ? [] : typeof option === 'string' ? [option] : option;

describe('option errors name the variable', () => {
  it("reports an adapter's own option error as the variable, its value and what is expected", () => {
    const nats = { [ENV.transportUrl]: 'nats://h:4222', [ENV.natsPrefix]: 'A.B' };
    expect(() =>
      namingVariables('transport', nats, () =>
        resolveNatsTransportOptions({ servers: 'nats://h:4222', prefix: 'A.B' }),
      ),
    ).toThrow("BATON_NATS_PREFIX is 'A.B': it is not a safe name; use 1-48 lower-case letters");
    const kafka = { [ENV.transportUrl]: 'kafka://h:9092', [ENV.kafkaPrefix]: 'a.b' };
    expect(() =>
      namingVariables('transport', kafka, () =>
        resolveKafkaOptions({ brokers: 'kafka://h:9092', prefix: 'a.b' }),
      ),
    ).toThrow("BATON_KAFKA_PREFIX is 'a.b': it must be 1-100 letters");
    // Another option named in what is expected is named by its variable too.
    const redisBus = {
      [ENV.transportUrl]: 'redis://h:6379',
      [ENV.redisBusPollMs]: '500',
      [ENV.redisBusAckWaitMs]: '200',
    };
    expect(() =>
      namingVariables('transport', redisBus, () =>
        resolveRedisTransportOptions({ url: 'redis://h:6379', pollMs: 500, ackWaitMs: 200 }),
      ),
    ).toThrow(
      "BATON_REDIS_BUS_POLL_MS is '500': it must be below BATON_REDIS_BUS_ACK_WAIT_MS (200): an empty",
    );
    const postgres = { [ENV.storeUrl]: 'postgres://u:s3cret@h/db', [ENV.postgresPoolSize]: '0' };
    expect(() =>
      namingVariables('store', postgres, () =>
        resolvePostgresStoreOptions({ url: 'postgres://u:s3cret@h/db', poolSize: 0 }),
      ),
    ).toThrow("BATON_POSTGRES_POOL_SIZE is '0': it must be a positive integer of connections, e.g. 10");
    // A URL is shown as the variable holds it, its secret masked (a NATS token is one).
    const token = { [ENV.transportUrl]: 'nats://tok-s3cret@h:99999' };
    expect(() =>
      namingVariables('transport', token, () =>
        resolveNatsTransportOptions({ servers: 'nats://tok-s3cret@h:99999' }),
      ),
    ).toThrow(
      "BATON_TRANSPORT_URL is 'nats://***@h:99999': it is not valid: it cannot be parsed; expected nats://",
    );
  });

  it("names the variable of each Worker option the environment sets, from the Worker's own error", () => {
    const env = { [ENV.leaseMs]: '1000', [ENV.heartbeatMs]: '600' };
    const worker = () => resolveWorkerOptions({ ...WORKER_BASE, leaseMs: 1000, heartbeatMs: 600 });
    expect(worker).toThrow('heartbeatMs (600) must be below leaseMs/2 (500)');
    expect(() => namingVariables('worker', env, worker)).toThrow(
      "BATON_HEARTBEAT_MS is '600': it must be below BATON_LEASE_MS/2 (500) so a renewal lands before the lease expires",
    );
    for (const [option, variable] of Object.entries(WORKER_OPTION_VARIABLES)) {
      const err = new ConfigError(`${option} is bad`, { option, value: '0', expected: 'use 1' });
      expect(namingVariable(err, optionVariables('worker', {}), {}).message).toBe(
        `${variable} is '0': use 1`,
      );
    }
    // The value is the variable's, never a secret's.
    const secret = new ConfigError('redisStore: sentinelPassword', {
      option: 'sentinelPassword',
      value: '***',
      expected: 'drop it',
    });
    const redis = { [ENV.storeUrl]: 'redis://h', [ENV.redisSentinelPassword]: 'pw-s3cret' };
    expect(namingVariable(secret, optionVariables('store', redis), redis).message).toBe(
      "BATON_REDIS_SENTINEL_PASSWORD is '***': drop it",
    );
  });

  it("carries, for every bad value of a registered variable's setting, an option mapped to that variable", async () => {
    for (const registration of ADAPTERS) {
      await registration.load?.();
      const url = URLS[registration.name]!;
      const variables = registrationVariables(registration, 'BATON_URL');
      for (const [setting, variable] of Object.entries(registration.variables) as [
        string,
        AdapterVariable<unknown>,
      ][]) {
        const refused: unknown[] = [];
        for (const value of BAD_VALUES[kindOf(variable)]) {
          let built: { close?: () => Promise<void> } | undefined;
          try {
            built = registration.create(url, { [setting]: value }, {}) as never;
          } catch (err) {
            const where = `${registration.name}.${setting} = ${JSON.stringify(value)}`;
            expect(err, where).toBeInstanceOf(ConfigError);
            const { option } = err as ConfigError;
            expect(option, `${where}: ${(err as Error).message}`).toBeDefined();
            expect(variables.get(option!), `${where}: option ${option}`).toBe(variable.name);
            refused.push(value);
          }
          await built?.close?.();
        }
        expect(refused.length, `no bad value of ${variable.name} was refused`).toBeGreaterThan(0);
      }
    }
  });

  it('maps each option a registration names to one variable only', () => {
    for (const registration of ADAPTERS) {
      const names = [
        ...optionsOf(registration.urlOption),
        ...(Object.values(registration.variables) as AdapterVariable<unknown>[]).flatMap((v) =>
          optionsOf(v.option),
        ),
      ];
      expect(new Set(names).size, registration.name).toBe(names.length);
    }
  });
});
