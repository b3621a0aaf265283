/**
 * @baton/core: the workflow API, the replay executor, journal entries and their codec, the
 * transport and store contracts, typed errors, and in-memory adapters. No I/O, no client library.
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
export type { BatonErrorOptions, SerializedError } from './errors.js';
export {
  ActivityFailedError,
  ActivityTimeoutError,
  BatonError,
  CancelledError,
  CheckpointIntegrityError,
  CheckpointSchemaError,
  CheckpointUnreadableError,
  CodecError,
  ConfigError,
  deserializeError,
  FencedWriteError,
  InvalidInputError,
  isNonRetryable,
  JournalConflictError,
  LeaseLostError,
  MissingKeyError,
  NonDeterminismError,
  NonRetryableError,
  NotFoundError,
  RunStateError,
  RunDeletedError,
  PayloadTooLargeError,
  ResumeFailedError,
  refuseDelete,
  serializeError,
  SignalTimeoutError,
  TimeoutError,
  UnencodableValueError,
  WorkflowFailedError,
} from './errors.js';
export type {
  ActivityCompletedEntry,
  ActivityFailedEntry,
  ActivityStartedEntry,
  JournalEntry,
  JournalEntryType,
  LeaseAcquiredEntry,
  PatchMarkerEntry,
  PayloadRef,
  PositionedEntry,
  RunCancelledEntry,
  RunCompletedEntry,
  RunFailedEntry,
  SignalReceivedEntry,
  SignalTimedOutEntry,
  SignalWaitStartedEntry,
  StepEntry,
  TimerFiredEntry,
  TimerScheduledEntry,
  ValueRecordedEntry,
} from './journal.js';
export { filterFencedEntries, isStepEntry, JOURNAL_ENTRY_TYPES } from './journal.js';
export type {
  CancelMessage,
  ResumeMessage,
  RunMessage,
  RunMessageKind,
  SignalMessage,
  StartMessage,
  WakeMessage,
} from './messages.js';
export {
  decodeEntries,
  decodeMessage,
  encodeEntries,
  encodeJson,
  encodeMessage,
  JOURNAL_CODEC_VERSION,
  MAX_MESSAGE_DEPTH,
  MESSAGE_CODEC_VERSION,
} from './codec.js';
export { findUnencodable, unencodableEntries } from './unencodable.js';
export type { Adapter } from './contracts/adapter.js';
export type {
  DeadLetter,
  DeadLetterQueue,
  Delivery,
  EnqueueOptions,
  FetchOptions,
  JournalAppend,
  JournalLog,
  JournalRecord,
  RawMessage,
  RunQueue,
  Transport,
} from './contracts/transport.js';
export type {
  AcquireResult,
  CreatedAndLeased,
  NewRunToLease,
  Checkpoint,
  CheckpointStore,
  CheckpointSummary,
  DueTimer,
  InboxSignal,
  LeaseInfo,
  LeaseState,
  LeaseStore,
  NewRun,
  PayloadStore,
  PresenceStore,
  RenewRequest,
  RenewResult,
  RunIndex,
  RunLineage,
  ReopenResult,
  RetentionStore,
  RunOutcome,
  RunRecord,
  RunStatus,
  RunTombstone,
  SignalInbox,
  Store,
  StoreDataLoss,
  SuspendRequest,
  SuspendResult,
  TimerStore,
} from './contracts/store.js';
export { FINISHED_RUN_STATUSES, hasPresence } from './contracts/store.js';
export type {
  ActivityDefinition,
  AnyWorkflowDefinition,
  ActivityIO,
  ActivityOptions,
  SchemaWorkflowSpec,
  WaitForSignalOptions,
  WorkflowContext,
  WorkflowDefinition,
  WorkflowInput,
  WorkflowOutput,
} from './workflow.js';
export { checkFreshness, defineActivity, defineWorkflow, journalsStart } from './workflow.js';
export type { SignalDefinition, SignalPayload } from './signal.js';
export { defineSignal, signalName } from './signal.js';
export type {
  StandardSchemaInput,
  StandardSchemaOutput,
  StandardSchemaV1,
  StandardSchemaV1Issue,
  StandardSchemaV1Props,
  StandardSchemaV1Result,
  StandardSchemaV1Types,
} from './standard-schema.js';
export { formatIssuePath, isStandardSchema } from './standard-schema.js';
export type { AttemptContext, RetryFailure, RetryOptions, RetryPolicy } from './retry.js';
export { DEFAULT_RETRY_POLICY, runWithRetry } from './retry.js';
export type {
  ActivityAttemptInfo,
  ExecutionHost,
  ExecutionOutcome,
  ExecutorOptions,
  NewEntry,
} from './executor/execution-host.js';
export { ReplayExecutor } from './executor/replay-executor.js';
export { idempotencyKeyOf } from './executor/activity-execution.js';
export { assertRunId, newRunId, RUN_ID_PATTERN, runIdForKey } from './ids.js';
export type { MaskUrlOptions } from './urls.js';
export { maskUrlSecret } from './urls.js';
export { CONNECTION_FAILURE_CODES } from './connection-codes.js';
export { summarizeCheckpoint } from './checkpoint-summary.js';
export { checkStoredCheckpoint, parseStoredCheckpoint, parseStoredSummary } from './checkpoint-record.js';
export type { RunDeletion } from './retention.js';
export { deleteFinishedRun } from './retention.js';
export { bufferView, ownedBytes } from './bytes.js';
export type { CheckpointMigration, CheckpointMigrations } from './checkpoint-schema.js';
export {
  CHECKPOINT_SCHEMA_VERSION,
  checkpointMigrations,
  checkpointSchemaFor,
  migrateCheckpoint,
} from './checkpoint-schema.js';
export type { MemoryTransportOptions } from './memory/memory-transport.js';
export { AdapterLifecycle } from './lifecycle.js';
export type { LifecycleNames, LifecycleState } from './lifecycle.js';
export { memoryTransport } from './memory/memory-transport.js';
export type { MemoryStoreOptions } from './memory/memory-store.js';
export { damageMemoryCheckpoint, memoryStore } from './memory/memory-store.js';
export * from './payload/index.js';
export type {
  HistoryFallback,
  HistoryPoint,
  HistoryStart,
  HistoryStartOptions,
} from './runtime/history-start.js';
export { checkJournalFromStart, findHistoryStart } from './runtime/history-start.js';
export type { ReadRunHistoryOptions, RunHistory } from './runtime/run-history.js';
export { readRunHistory } from './runtime/run-history.js';
export type { OutgoingRunMessage, StartMessageFields } from './runtime/run-messages.js';
export {
  cancelMessage,
  resumeMessage,
  sendRunMessage,
  signalMessage,
  startMessage,
  wakeMessage,
} from './runtime/run-messages.js';
