/**
 * The connection flags and the Client a command uses. Configuration comes from the same BATON_*
 * variables as the worker (read by `@baton/host`, libs/host/src/operator-config.ts, as the worker reads them);
 * a flag overrides its variable.
 */
import { Client, type Store } from '@baton/client';
import {
  loadAdapterCode,
  OPERATOR_ENV,
  type OperatorAdapters,
  operatorAdapters,
  readOperatorConfig,
} from '@baton/host';
import type { Command } from 'commander';
import { UsageError } from './errors.js';

/** The global flags as commander gives them. */
export interface GlobalFlags {
  transportUrl?: string;
  storeUrl?: string;
  natsPrefix?: string;
  kafkaPrefix?: string;
  redisBusPrefix?: string;
  redisKeyPrefix?: string;
  postgresSchema?: string;
  set?: string[];
  json?: boolean;
}

/** Each connection flag and the variable it overrides. */
export const FLAG_VARIABLES = {
  transportUrl: 'BATON_TRANSPORT_URL',
  storeUrl: 'BATON_STORE_URL',
  natsPrefix: 'BATON_NATS_PREFIX',
  kafkaPrefix: 'BATON_KAFKA_PREFIX',
  redisBusPrefix: 'BATON_REDIS_BUS_PREFIX',
  redisKeyPrefix: 'BATON_REDIS_KEY_PREFIX',
  postgresSchema: 'BATON_POSTGRES_SCHEMA',
} as const;

/** Adds the global flags to the program. */
export function addGlobalFlags(program: Command): Command {
  return program
    .option('--transport-url <url>', 'the bus (BATON_TRANSPORT_URL): nats://…, kafka://… or redis://…')
    .option('--store-url <url>', 'the store (BATON_STORE_URL): redis://… or postgres://…')
    .option('--nats-prefix <prefix>', 'NATS stream prefix (BATON_NATS_PREFIX)')
    .option('--kafka-prefix <prefix>', 'Kafka topic prefix (BATON_KAFKA_PREFIX)')
    .option('--redis-bus-prefix <prefix>', 'Redis transport key prefix (BATON_REDIS_BUS_PREFIX)')
    .option('--redis-key-prefix <prefix>', 'Redis store key prefix (BATON_REDIS_KEY_PREFIX)')
    .option('--postgres-schema <schema>', 'Postgres schema (BATON_POSTGRES_SCHEMA)')
    .option(
      '--set <NAME=value>',
      'any other worker variable the CLI reads (keys, TLS files), repeatable',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--json', 'print JSON for scripts instead of tables');
}

/** The environment the flags describe: `env` with each given flag's variable replaced. */
export function envWithFlags(
  env: Record<string, string | undefined>,
  flags: GlobalFlags,
): Record<string, string | undefined> {
  const merged = { ...env };
  for (const [flag, variable] of Object.entries(FLAG_VARIABLES)) {
    const value = flags[flag as keyof typeof FLAG_VARIABLES];
    if (value !== undefined) merged[variable] = value;
  }
  for (const pair of flags.set ?? []) {
    const at = pair.indexOf('=');
    const name = at < 0 ? pair : pair.slice(0, at);
    if (at < 0 || !OPERATOR_ENV.includes(name)) {
      throw new UsageError(
        `--set '${at < 0 ? pair : name}' is not NAME=value with a variable the CLI reads; ` +
          `the names are ${OPERATOR_ENV.join(', ')}`,
      );
    }
    merged[name] = pair.slice(at + 1);
  }
  return merged;
}

/** A connected-on-demand client and how to release it. */
export class Session {
  private adapters: OperatorAdapters | undefined;
  private clientInstance: Client | undefined;

  constructor(
    private readonly env: Record<string, string | undefined>,
    private readonly flags: GlobalFlags,
  ) {}

  /**
   * The client, built on first use from the variables and flags (ConfigError names a bad one)
   * and connected. `wrapStore` (first use only) wraps the store the client uses, e.g. to bound
   * every call (`baton console`); `retryUnavailableMs` (first use only) is the client's option.
   */
  async client(
    wrapStore?: (store: Store) => Store,
    options: { retryUnavailableMs?: number } = {},
  ): Promise<Client> {
    if (this.clientInstance === undefined) {
      const config = readOperatorConfig(envWithFlags(this.env, this.flags));
      await loadAdapterCode(config);
      this.adapters = operatorAdapters(config);
      this.clientInstance = new Client({
        transport: this.adapters.transport,
        store: wrapStore === undefined ? this.adapters.store : wrapStore(this.adapters.store),
        payloadProtection: this.adapters.payloadProtection,
        largePayloads: this.adapters.largePayloads,
        ...options,
      });
    }
    await this.clientInstance.connect();
    return this.clientInstance;
  }

  async close(): Promise<void> {
    await this.adapters?.close();
  }
}
