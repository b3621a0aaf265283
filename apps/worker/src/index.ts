/**
 * The worker process (`baton-worker`): configuration from the environment, adapters from URLs,
 * workflow modules loaded at start. Exported for tests and for embedding the same start-up logic.
 *
 * @example
 * ```sh
 * BATON_TRANSPORT_URL=nats://127.0.0.1:4222 BATON_STORE_URL=redis://127.0.0.1:6379 \
 * BATON_WORKFLOWS=./dist/workflows.js node apps/worker/dist/main.js
 * ```
 */
export type { LogLevel, WorkerAppConfig, WorkerTuning } from './config.js';
export { ENV, readConfig } from './config.js';
export { loadAdapterCode, maskUrl, storeFromConfig, transportFromConfig } from './adapters.js';
export { ADAPTERS, isolatedEnv, removeIsolated } from './registry.js';
export { loadWorkflows } from './workflows.js';
export { runWorkerProcess } from './process.js';
export {
  OPERATOR_ENV,
  operatorAdapters,
  readOperatorConfig,
  type OperatorAdapters,
} from './operator-config.js';
