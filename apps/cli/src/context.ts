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
  type BatonVariable,
} from '@baton/host';
import type { Command } from 'commander';
import { UsageError } from './errors.js';

/**
 * The connection flags: the variables the operator tools read that have a flag in `@baton/host`'s
 * VARIABLES (the bus and store URLs, each adapter's namespace). Their names, `--help` lines and
 * the variable each overrides all come from there, as docs/configuration.md's tables do.
 */
const CONNECTION_FLAGS = VARIABLES.flatMap((v) =>
  v.flag !== undefined && v.readBy.includes('operator') ? [{ variable: v.name, flag: v.flag }] : [],
);

function variableNamed(name: string): BatonVariable {
  const found = VARIABLES.find((v) => v.name === name);
  if (found === undefined) throw new Error(`${name} is not in @baton/host's VARIABLES`);
  return found;
}

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
  wide?: boolean;
}

/**
 * Adds the flag `variable` declares (VARIABLES in `@baton/host`) to `command`: its name, value and
 * `--help` line, which names the variable and, when it has one, its default. A repeatable flag
 * collects its values in a list.
 */
export function addVariableFlag(command: Command, variable: BatonVariable): Command {
  const { flag } = variable;
  if (flag === undefined) throw new Error(`${variable.name} declares no flag`);
  const spec = `${flag.name}${flag.argument === undefined ? '' : ` <${flag.argument}>`}`;
  const shownDefault =
    variable.default === 'none' || variable.default === 'required'
      ? ''
      : `; default ${variable.default.replaceAll('`', '')}`;
  const help = `${flag.help} (${variable.name}${flag.repeatable === true ? ': comma-separated' : ''}${shownDefault})`;
  return flag.repeatable === true
    ? command.option(spec, help, (value: string, previous: string[] = []) => [...previous, value])
    : command.option(spec, help);
}

/** Adds the global flags to the program. */
export function addGlobalFlags(program: Command): Command {
  for (const { variable } of CONNECTION_FLAGS) addVariableFlag(program, variableNamed(variable));
  return program
    .option(
      '--set <NAME=value>',
      'any other worker variable the CLI reads (keys, TLS files), repeatable',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--json', 'print JSON for scripts instead of tables')
    .option('--wide', 'tables with every column and every value whole (wider than 120 columns)');
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
