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
  VARIABLES,
} from '@baton/host';
import type { Command } from 'commander';
import { UsageError } from './errors.js';

/**
 * The connection flags: the variables the operator tools read that have a flag in `@baton/host`'s
 * VARIABLES (the bus and store URLs, each adapter's namespace). Their names, `--help` lines and
 * the variable each overrides all come from there, as the README's tables do.
 */
const CONNECTION_FLAGS = VARIABLES.flatMap((v) =>
  v.flag !== undefined && v.readBy.includes('operator') ? [{ variable: v.name, flag: v.flag }] : [],
);

/** commander's name of a flag's value: `--redis-bus-prefix` -> `redisBusPrefix`. */
function attributeOf(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/** Each connection flag (as commander names its value, `transportUrl`) and the variable it overrides. */
export const FLAG_VARIABLES: Readonly<Record<string, string>> = Object.fromEntries(
  CONNECTION_FLAGS.map(({ variable, flag }) => [attributeOf(flag.name), variable]),
);

/** The global flags as commander gives them: a connection flag's value under its attribute name. */
export interface GlobalFlags {
  readonly [connectionFlag: string]: string | string[] | boolean | undefined;
  set?: string[];
  json?: boolean;
}

/** Adds the global flags to the program. */
export function addGlobalFlags(program: Command): Command {
  for (const { variable, flag } of CONNECTION_FLAGS) {
    program.option(
      `${flag.name}${flag.argument === undefined ? '' : ` <${flag.argument}>`}`,
      `${flag.help} (${variable})`,
    );
  }
  return program
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
    const value = flags[flag];
    if (typeof value === 'string') merged[variable] = value;
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
