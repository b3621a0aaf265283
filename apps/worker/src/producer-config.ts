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
import type { Transport } from '@baton/core/adapter';
import type { KafkaLogHook } from '@baton/transport-kafka';
import { transportFromConfig } from './adapters.js';
import { ENV, readConfig, type LogLevel, type WorkerAppConfig } from './config.js';

/** The worker's variables that choose and configure the bus; a producer reads these and no others of the worker's. */
export const TRANSPORT_ENV = [
  ENV.transportUrl,
  ENV.natsPrefix,
  ENV.natsAckWaitMs,
  ENV.natsCredsFile,
  ENV.natsTlsCaFile,
  ENV.kafkaPrefix,
  ENV.kafkaPartitions,
  ENV.kafkaSessionTimeoutMs,
  ENV.kafkaAckWaitMs,
  ENV.kafkaSaslMechanism,
  ENV.kafkaTlsCaFile,
] as const;

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

/** Builds (does not connect) the transport the worker process would build from these variables. */
export function transportFromEnvConfig(config: TransportConfig, kafkaLog?: KafkaLogHook): Transport {
  return transportFromConfig(config.config, kafkaLog);
}
