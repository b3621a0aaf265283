/**
 * The bus for processes that only enqueue (the producer): the same variables, the same validation
 * and the same adapter construction as the worker process, without the worker's store and
 * workflow modules.
 *
 * It reuses `readConfig` and `transportFromConfig` as they are: `readConfig` is given only the
 * bus variables (plus stand-ins for the two worker-only required ones, which nothing here reads),
 * so a mistake in a bus variable is reported exactly as the worker reports it, and a worker-only
 * variable that happens to be in the environment is neither read nor validated.
 */
import type { AdapterLogHook, AdapterVariable, Transport } from '@baton/core/adapter';
import { loadAdapterCode, transportFromConfig } from './adapters.js';
import { ENV, readConfig, type LogLevel, type WorkerAppConfig } from './config.js';
import { registrationsOf } from './registry.js';

/**
 * The worker's variables that choose and configure the bus (every registered transport's); a
 * producer reads these and no others of the worker's.
 */
export const TRANSPORT_ENV: readonly string[] = [
  ENV.transportUrl,
  ...registrationsOf('transport').flatMap((r) =>
    (Object.values(r.variables) as AdapterVariable<unknown>[]).map((v) => v.name),
  ),
];

/** Stand-ins for the worker-only required variables; never used to connect to anything. */
const NOT_USED = { [ENV.storeUrl]: 'unused://producer', [ENV.workflows]: 'unused' };

type Env = Record<string, string | undefined>;

export interface TransportConfig {
  /** The configuration `transportFromConfig` takes; only its bus fields are meaningful. */
  config: WorkerAppConfig;
  logLevel: LogLevel;
}

/**
 * Reads and validates the bus variables and BATON_LOG_LEVEL; throws ConfigError naming the first
 * bad one (BATON_TRANSPORT_URL is required). Nothing connects.
 */
export function readTransportConfig(env: Env): TransportConfig {
  const picked: Env = { ...NOT_USED };
  for (const name of [...TRANSPORT_ENV, ENV.logLevel]) picked[name] = env[name];
  const config = readConfig(picked);
  return { config, logLevel: config.logLevel };
}

/**
 * Loads the bus's code and builds (does not connect) the transport the worker process would build
 * from these variables.
 */
export async function transportFromEnvConfig(
  config: TransportConfig,
  busLog?: AdapterLogHook,
): Promise<Transport> {
  await loadAdapterCode(config.config);
  return transportFromConfig(config.config, busLog);
}
