/**
 * @baton/core/runtime: the machinery behind a run, for the worker, the client and the test kit
 * only: journal entries and their codec, run messages, the replay executor, retries, checkpoint
 * schema and migrations, retention, payload protection (compression, encryption, signatures, the
 * hash chain, claim checks), the idempotency keys of child and successor runs, and the errors of
 * the run machinery (a lost lease, non-determinism, repeated resume failures). Nothing here is a
 * workflow author's concern, and an adapter needs none of it.
 */
export { deserializeError, serializeError } from '../shared/errors.js';
export { LeaseLostError, NonDeterminismError, ResumeFailedError } from './errors.js';
export type { GroupJournalOptions, JournalMode } from './group-journal.js';
export {
  GroupCommitter,
  GroupRecordMissingError,
  supportsGroupJournal,
  withGroupJournal,
} from './group-journal.js';
export { GroupRecordError } from './group-records.js';
export type { GroupLogTrimPass } from './group-log-trim.js';
export { GroupLogTrimmer } from './group-log-trim.js';
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
} from '../shared/journal.js';
export { filterFencedEntries, isStepEntry, JOURNAL_ENTRY_TYPES } from '../shared/journal.js';
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
export type { DecodedDeadLetter } from './dead-letter-message.js';
export { decodeDeadLetter } from './dead-letter-message.js';
export { checkFreshness, journalsStart } from '../author/workflow.js';
export { signalName } from '../author/signal.js';
export { formatIssuePath, isStandardSchema } from '../author/standard-schema.js';
export type { AttemptContext, RetryFailure, RetryOptions } from '../author/retry.js';
export { runWithRetry } from '../author/retry.js';
export type {
  ActivityAttemptInfo,
  ExecutionHost,
  ExecutionOutcome,
  ExecutorOptions,
  NewEntry,
} from './executor/execution-host.js';
export { ReplayExecutor } from './executor/replay-executor.js';
export type { RefusedSignal } from './executor/pending-waits.js';
export { idempotencyKeyOf } from './executor/activity-execution.js';
export { newRunId, runIdForKey } from '../shared/ids.js';
export type { StartField, StartFieldProblem } from '../author/start-fields.js';
export { startFieldProblem, WORKFLOW_NAME_PATTERN } from '../author/start-fields.js';
export { childKey, childKeyPrefix, continuationKey, parentLinkOfKey, parentOfKey } from './run-keys.js';
export type { ChildEnd, ChildStarted } from '../author/child-workflows.js';
export {
  CHILD_START_PREFIX,
  childEndSignalId,
  childrenInJournal,
  childSignalName,
} from '../author/child-workflows.js';
export type { ChildStartRequest } from './executor/execution-host.js';
export type { FiringPlan, PlannedRun, PreviousRun } from '../adapter/schedule-times.js';
export {
  checkCatchupPolicy,
  checkScheduleSpec,
  DEFAULT_CATCHUP,
  fireTimeOf,
  freshState,
  isKnownTimeZone,
  jitterFor,
  MIN_SCHEDULE_INTERVAL_MS,
  nextDueAfter,
  OVERLAP_POLICIES,
  planFiring,
  scheduleRunId,
  scheduleRunKey,
} from '../adapter/schedule-times.js';
export type { RunDeletion } from './retention.js';
export { deleteFinishedRun } from './retention.js';
export type { CheckpointMigration, CheckpointMigrations } from './checkpoint-schema.js';
export {
  CHECKPOINT_SCHEMA_VERSION,
  checkpointMigrations,
  checkpointSchemaFor,
  migrateCheckpoint,
} from './checkpoint-schema.js';
export * from './payload/index.js';
export type { HistoryFallback, HistoryPoint, HistoryStart, HistoryStartOptions } from './history-start.js';
export { checkJournalFromStart, findHistoryStart } from './history-start.js';
export type { ReadRunHistoryOptions, RunHistory } from './run-history.js';
export { readRunHistory } from './run-history.js';
export type { OutgoingRunMessage, StartMessageFields } from './run-messages.js';
export { DEFAULT_RUN_PRIORITY, RUN_PRIORITIES, checkRunPriority } from '../adapter/priority.js';
export type { RunPriority } from '../adapter/priority.js';
export {
  cancelMessage,
  resumeMessage,
  sendRunMessage,
  signalMessage,
  startMessage,
  wakeMessage,
} from './run-messages.js';
export { wrapCalls } from './wrap-calls.js';
