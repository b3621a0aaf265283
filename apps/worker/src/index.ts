/**
 * The worker process (`baton-worker`): configuration from the environment, adapters from URLs,
 * workflow modules loaded at start. Exported for embedding the same start-up logic; the
 * configuration, adapter and workflow-loading code it shares with the producer, the CLI and the
 * console is `@baton/host`.
 *
 * @example
 * ```sh
 * BATON_TRANSPORT_URL=nats://127.0.0.1:4222 BATON_STORE_URL=redis://127.0.0.1:6379 \
 * BATON_WORKFLOWS=./dist/workflows.js node apps/worker/dist/main.js
 * ```
 */
export { runWorkerProcess } from './process.js';
