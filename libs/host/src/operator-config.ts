/**
 * The bus, the store and the payload settings for processes that operate a fleet without running
 * workflows (the `baton` CLI): the same variables, validation and adapter construction as the
 * worker process, without BATON_WORKFLOWS and the worker's tuning.
 *
 * Like producer-config.ts it reuses `readConfig`, `transportFromConfig` and `storeFromConfig` as
 * they are, giving `readConfig` only the variables an operator needs (plus a stand-in for
 * BATON_WORKFLOWS, which nothing here reads): a mistake in one of them is reported exactly as the
 * worker reports it, and a worker-only variable in the environment is neither read nor validated.
 */
import type { PayloadStore, Store, Transport } from '@baton/core/adapter';
import type { LargePayloadOptions, PayloadProtection } from '@baton/core/runtime';
import { largePayloadsFromConfig, storeFromConfig, transportFromConfig } from './adapters.js';
import { ENV, readConfig, type WorkerAppConfig } from './config.js';
import { variablesReadBy } from './variables.js';

/**
 * The worker's variables an operator's process reads: both URLs, every registered adapter's
 * variables (prefixes, schema, TLS files), the payload protection keys and the large-payload
 * settings, so it finds the same data and decodes it as the workers wrote it (those VARIABLES
 * rows read by `operator`).
 */
export const OPERATOR_ENV: readonly string[] = variablesReadBy('operator');

type Env = Record<string, string | undefined>;

/** The operator's adapters, built and not connected, with what a Client needs besides them. */
export interface OperatorAdapters {
  transport: Transport;
  store: Store;
  payloadProtection: PayloadProtection;
  largePayloads: LargePayloadOptions;
  /** Closes the adapters (and a separate payload store); safe to call twice. */
  close(): Promise<void>;
}

/**
 * Reads and validates the operator variables ({@link OPERATOR_ENV}) of `env`; throws ConfigError
 * naming the first bad one (BATON_TRANSPORT_URL and BATON_STORE_URL are required). Nothing connects.
 */
export function readOperatorConfig(env: Env): WorkerAppConfig {
  const picked: Env = { [ENV.workflows]: 'unused' };
  for (const name of OPERATOR_ENV) picked[name] = env[name];
  return readConfig(picked);
}

/**
 * Builds (does not connect) the transport, store and payload store the workers would use; their
 * code must be loaded (`loadAdapterCode(config)`, or their packages imported).
 */
export function operatorAdapters(config: WorkerAppConfig): OperatorAdapters {
  const transport = transportFromConfig(config);
  const store = storeFromConfig(config);
  const { options, separate } = largePayloadsFromConfig(config, store);
  const payloads: PayloadStore | undefined = separate;
  return {
    transport,
    store,
    payloadProtection: config.payloadProtection,
    largePayloads: options,
    async close() {
      await Promise.allSettled([
        transport.close(),
        store.close(),
        ...(payloads !== undefined && 'close' in payloads
          ? [(payloads as { close(): Promise<void> }).close()]
          : []),
      ]);
    },
  };
}
