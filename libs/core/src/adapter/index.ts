/**
 * @baton/core/adapter: for authors of a transport or a store. The contracts every adapter
 * implements (and the conformance suites in @baton/testing check), their record types, the
 * registration the worker process reads an adapter by, the adapter lifecycle, the categories of
 * backend failure their errors map to, the errors of a write under a stale epoch and of a lost
 * journal race (FencedWriteError, JournalConflictError), and the small helpers adapters share:
 * variable parsers, URL masking, connection-failure codes, byte views, stored-checkpoint parsing,
 * run-id checks, the checks of every journal call (`journalOnContext`, `checkedJournal`) and of every store call
 * (`checkedStore`: a store adapter implements `StoreAdapter`, its arguments already checked).
 * (What only the two Redis adapters share, Sentinel URLs, connection settings and Lua script
 * runners, is `@baton/redis-kit`.)
 */
export type { Adapter } from './contracts/adapter.js';
export { GROUP_POSITION_BASE, checkGroupLogName, isGroupPosition } from './contracts/group-journal.js';
export type {
  GroupLog,
  GroupLogUse,
  JournalIndex,
  JournalPointer,
  PointerAppend,
  PointerAppendResult,
  RunPointers,
} from './contracts/group-journal.js';
export type {
  AdapterKind,
  AdapterLogHook,
  AdapterOption,
  AdapterRegistration,
  AdapterVariable,
  AnyAdapterRegistration,
  InstallationListing,
} from './contracts/registration.js';
export { AdapterCode } from './contracts/registration.js';
export { parseWholeNumber, switchSetting, textSetting, wholeNumberSetting } from './settings.js';
export { PriorityLanes } from './priority-lanes.js';
export {
  DEFAULT_RUN_PRIORITY,
  PRIORITY_CYCLE,
  RUN_PRIORITIES,
  checkRunPriority,
  laneFor,
  laneLevels,
} from './priority.js';
export type { RunPriority } from './priority.js';
export type {
  BacklogDetail,
  BacklogPart,
  RunQueueMembership,
  DeadLetter,
  DeadLetterPage,
  DeadLetterPurge,
  DeadLetterQuery,
  DeadLetterQueue,
  RedriveResult,
  StoredDeadLetter,
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
export type { RunStreamLog } from './contracts/run-streams.js';
export { checkRunStreamName } from './contracts/run-streams.js';
export type { StreamRecordWait, StreamStartHint } from './run-stream-log.js';
export { runStreamsOnContext, runStreamsOverJournal } from './run-stream-log.js';
export type { Store, StoreAdapter, StoreDataLoss, RecordedDataLoss } from './contracts/store.js';
export { checkedStore } from './checked-store.js';
export type {
  AcquireResult,
  LeaseInfo,
  LeaseState,
  LeaseStore,
  RenewRequest,
  RenewResult,
  SuspendRequest,
  SuspendResult,
} from './contracts/leases.js';
export type {
  CancelRequestResult,
  PauseHeldResult,
  PauseRequestResult,
  ResumeResult,
  RunControlStore,
} from './contracts/control.js';
export type { Checkpoint, CheckpointStore, CheckpointSummary } from './contracts/checkpoints.js';
export type {
  CreatedAndLeased,
  NewRun,
  NewRunToLease,
  ReopenResult,
  RunIndex,
  RunOutcome,
} from './contracts/run-index.js';
export type { RunRecord, RunStatus } from './contracts/run-record.js';
export type { RunAttributeStore } from './contracts/attributes.js';
export type { AttributeChanges, RunAttribute } from '../shared/attributes.js';
export type { DueTimer, InboxSignal, SignalInbox, TimerStore } from './contracts/waits.js';
export type { PresenceStore, PublishedMembership, ScanTurn } from './contracts/presence.js';
export { MEMBERSHIP_TURN } from './contracts/presence.js';
export type { RetentionStore, RunTombstone } from './contracts/retention.js';
export type { PayloadStore } from './contracts/payloads.js';
export {
  FINISHED_RUN_STATUSES,
  isFinishedRun,
  RUN_STATUSES,
  UNFINISHED_RUN_STATUSES,
} from './contracts/run-record.js';
export type {
  AttributeCondition,
  CheckedRunQuery,
  ListedRun,
  RunCounts,
  RunFilter,
  RunListing,
  RunPage,
  RunPosition,
  RunQueries,
  RunQuery,
} from './contracts/run-queries.js';
export { deadLetterQueue, shelfOnContext } from './dead-letter-queue.js';
export { checkedJournal, journalOnContext } from './journal-log.js';
export type { ContextJournal } from './journal-log.js';
export type { ContextShelf, DeadLetterShelf, PositionedDeadLetter } from './dead-letter-queue.js';
export type {
  CatchupPolicy,
  CheckedScheduleQuery,
  NewSchedule,
  OverlapPolicy,
  SchedulePage,
  ScheduleQuery,
  ScheduleRecord,
  ScheduleSpec,
  ScheduleStore,
  ScheduleWrite,
} from './contracts/schedules.js';
export type { ConcurrencyStore, SlotAnswer, SlotRequest, SlotState } from './contracts/concurrency.js';
export { MAX_CONCURRENCY_KEY_LENGTH } from './contracts/concurrency.js';
export type { RateLimitAnswer, RateLimitRequest, RateLimitStore } from './contracts/rate-limits.js';
export type { PromiseCompleteResult, PromiseRecord, PromiseStore } from './contracts/promises.js';
export type {
  KeptUpdate,
  UpdateOutcome,
  UpdateRequest,
  UpdateRequestResult,
  UpdateStore,
} from './contracts/updates.js';
export type { QueryMailbox, QueryReply, QueryRequest } from './contracts/query-mailbox.js';
export type {
  DepartedWorker,
  FleetStore,
  ReportedEncryption,
  ReportedWorker,
  WorkerReport,
  WorkflowVersions,
} from './contracts/fleet.js';
export { MAX_REPORTED_RUNS } from './contracts/fleet.js';
export { AdapterLifecycle } from './lifecycle.js';
export { CallBatcher, type CallBatcherOptions } from './call-batcher.js';
export type { OperationsOf } from './lifecycle.js';
export { maskUrlSecret } from './urls.js';
export { CONNECTION_FAILURE_CODES } from './connection-codes.js';
export { bufferView, ownedBytes } from './bytes.js';
export { summarizeCheckpoint } from './checkpoint-summary.js';
export { parseStoredCheckpoint, parseStoredSummary } from './checkpoint-record.js';
export { invalidOption, type ConfigErrorFields } from '../shared/errors.js';
export { FencedWriteError, JournalConflictError, refuseDelete } from './errors.js';
export {
  BackendAuthError,
  BackendConflictError,
  BackendError,
  BackendNotDurableError,
  BackendPermissionError,
  BackendRequestError,
  BackendUnavailableError,
  BackendUnsupportedError,
} from './backend-errors.js';
export { assertRunId, RUN_ID_PATTERN } from '../shared/ids.js';
