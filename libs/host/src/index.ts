/**
 * `@baton/host`: what every Baton process shares, so no app imports another. The worker process,
 * the producer, the `baton` CLI, the console, the bench and the demo use it to
 *
 * - know the adapters a fleet can run on (the registry, by URL scheme) and load only the code of
 *   the two a process builds;
 * - read BATON_* configuration (the worker's, and the operator tools' subset of it) and build the
 *   transport and the store it names, with errors that name the variable; every variable any of
 *   them reads is declared once, in VARIABLES (docs/configuration.md's tables and the CLI's flags come from it);
 * - refuse two adapters sharing one namespace, and mask a URL's secrets for logs;
 * - load workflow modules.
 *
 * Test and benchmark helpers (isolated namespaces) are on `@baton/host/testing`.
 *
 * @example
 * ```ts
 * import { operatorAdapters, readOperatorConfig } from '@baton/host';
 *
 * const { transport, store } = operatorAdapters(readOperatorConfig(process.env));
 * ```
 */
export {
  ENV,
  logFormatOf,
  readConfig,
  type AdapterSettings,
  type LogLevel,
  type WorkerAppConfig,
  type WorkerProcessConfig,
  type WorkerTuning,
} from './config.js';
export { namingVariables, type ConfigBuilder } from './config-errors.js';
export {
  largePayloadsFromConfig,
  loadAdapterCode,
  maskUrl,
  storeFromConfig,
  transportFromConfig,
} from './adapters.js';
export { ADAPTERS, registrationFor, registrationsOf, schemeOf, type RegisteredAdapter } from './registry.js';
export { namespacesInUse, type Namespaces } from './namespaces.js';
export { dropInstallation, listInstallation } from './installation.js';
export {
  OPERATOR_ENV,
  operatorAdapters,
  readOperatorConfig,
  type OperatorAdapters,
} from './operator-config.js';
export {
  readTransportConfig,
  TRANSPORT_ENV,
  transportFromEnvConfig,
  type TransportConfig,
} from './producer-config.js';
export {
  CONSOLE_ENV,
  PRODUCER_ENV,
  VARIABLES,
  type BatonVariable,
  type VariableFlag,
  type VariableReader,
} from './variables.js';
export { loadModules, loadWorkflows, type LoadedModules } from './workflows.js';
export { DevFleet, type DevAdapters, type DevFleetOptions } from './dev-fleet.js';
export { freshWorkflowLoader, type FreshWorkflowLoader } from './fresh-modules.js';
