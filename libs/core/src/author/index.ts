/**
 * @baton/core: what a workflow author writes against — `defineWorkflow`, `defineActivity`, the
 * workflow context, durations, retry policies and the typed errors a run can end with. No I/O.
 *
 * The other doors serve other readers: `@baton/core/adapter` (transport and store authors),
 * `@baton/core/runtime` (the worker, the client and the test kit) and `@baton/core/memory` (the
 * embedded adapters for the demo and unit tests). A lint rule keeps each package to its doors.
 *
 * @example
 * ```ts
 * import { defineActivity, defineWorkflow } from '@baton/core';
 *
 * const charge = defineActivity({
 *   name: 'charge',
 *   idempotent: false,
 *   run: async (input: { cents: number }, io) => payments.charge(input.cents, { key: io.idempotencyKey }),
 * });
 * export const checkout = defineWorkflow({
 *   name: 'checkout',
 *   version: 1,
 *   run: async (ctx, input: { cents: number }) => ctx.run(charge, input),
 * });
 * ```
 */
export type { Duration } from './duration.js';
export { toMs } from './duration.js';
export type { BatonErrorOptions, SerializedError } from '../shared/errors.js';
export type { InvalidInputField } from './errors.js';
export { BatonError, ConfigError, NotFoundError, RunStateError } from '../shared/errors.js';
export {
  ActivityFailedError,
  ActivityTimeoutError,
  CancelledError,
  ChildWorkflowError,
  InvalidInputError,
  isNonRetryable,
  NonRetryableError,
  PromiseRejectedError,
  PromiseTimeoutError,
  SignalTimeoutError,
  UnencodableValueError,
} from './errors.js';
// What adapters raise, on this door until the adapter door takes them: a checkpoint a store cannot
// read, a record it cannot decode, a payload too large for the bus.
export { CheckpointUnreadableError, CodecError, PayloadTooLargeError } from '../adapter/errors.js';
export type {
  ActivityDefinition,
  AnyWorkflowDefinition,
  ActivityIO,
  ConcurrencyOptions,
  ActivityOptions,
  SchemaWorkflowSpec,
  WaitForSignalOptions,
  WorkflowContext,
  WorkflowDefinition,
  WorkflowInput,
  WorkflowOutput,
} from './workflow.js';
export { defineActivity, defineWorkflow } from './workflow.js';
export type { ActivityRateLimit, KeyedRateLimit, RateLimitDefinition, RateLimitSpec } from './rate-limit.js';
export { defineRateLimit } from './rate-limit.js';
export type { ChainResult, ContinueAsNewOptions } from './continue-as-new.js';
export { ContinueAsNew } from './continue-as-new.js';
export type { ChildHandle, ChildWorkflowOptions, ParentClosePolicy } from './child-workflows.js';
export { CHILD_START_DEAD_LETTERED } from './child-workflows.js';
export type { SignalDefinition, SignalPayload } from './signal.js';
// `ctx.promise`'s answer; its options are named through the context (`Parameters<…>`), not here.
export type { DurablePromise } from './promise.js';
export type { ActivityStream, StreamItem, WorkflowStream } from './streams.js';
export { defineSignal } from './signal.js';
// The options' and validator's types are reached through these (`Parameters<typeof defineUpdate>`).
export type { UpdateDefinition } from './update.js';
export { defineUpdate } from './update.js';
export type { QueryDefinition } from './query.js';
export { defineQuery } from './query.js';
// The schema an author passes; its parts are reached through it (`StandardSchemaV1['~standard']`).
export type { StandardSchemaV1 } from './standard-schema.js';
export type { RetryPolicy } from './retry.js';
export { DEFAULT_RETRY_POLICY } from './retry.js';
