/**
 * @baton/core/runtime: the machinery behind a run, for the worker, the client and the test kit
 * only: journal entries and their codec, run messages, the replay executor, run history, the
 * checkpoint schema, payload protection (compression, encryption, signatures, the hash chain,
 * claim checks), the idempotency keys of child and successor runs, a continued run's record,
 * schedule due times, and the errors of the run machinery (a lost lease, repeated resume
 * failures, protected data that cannot be read). Nothing here is a workflow author's concern, and
 * an adapter needs none of it. A name is exported only while one of those packages calls it:
 * what works behind the calls (the keyring, frame layout, migrations, the retry loop) stays inside.
 */
export { serializeError } from '../shared/errors.js';
export { LeaseLostError, ResumeFailedError } from './errors.js';
// What reading a run's protected data can raise, caught by the worker (to hold or fail a run) and
// re-exported by @baton/client for producers and operators.
export { CheckpointIntegrityError } from '../adapter/errors.js';
export { CheckpointSchemaError, MissingKeyError, PlaintextRefusedError } from './errors.js';
export type { JournalMode } from './group-journal.js';
export { supportsGroupJournal, withGroupJournal } from './group-journal.js';
export type { JournalEntry, PayloadRef, PositionedEntry } from '../shared/journal.js';
export { filterFencedEntries, isStepEntry } from '../shared/journal.js';
export type {
  CancelMessage,
  ResumeMessage,
  RunMessage,
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
  MAX_MESSAGE_DEPTH,
} from './codec.js';
export { findUnencodable, unencodableEntries } from './unencodable.js';
export { signalName } from '../author/signal.js';
export { formatIssuePath, isStandardSchema } from '../author/standard-schema.js';
export type { ExecutionHost, ExecutionOutcome, NewEntry } from './executor/execution-host.js';
export { ReplayExecutor } from './executor/replay-executor.js';
export type { StreamWrite } from './executor/execution-host.js';
export type { WireStreamItem } from './run-stream-records.js';
export { encodeStreamRecord, StreamFold } from './run-stream-records.js';
export { idempotencyKeyOf } from './executor/activity-execution.js';
export { newRunId, runIdForKey } from '../shared/ids.js';
export { startFieldProblem } from '../author/start-fields.js';
export { childKey, childKeyPrefix, continuationKey, parentLinkOfKey, parentOfKey } from './run-keys.js';
export type { ChildEnd } from '../author/child-workflows.js';
export { childEndSignalId, childrenInJournal, childSignalName } from '../author/child-workflows.js';
// Durable promises: the client checks a token's shape and builds what a completion carries.
export type { PromiseDelivery } from '../author/promise.js';
export { isPromiseToken } from '../author/promise.js';
// A continued run's recorded result, naming its successor: the worker starts it, the client
// follows it (and re-exports the two values for producers reading a stored result).
export type { ContinuedAsNew } from '../author/continue-as-new.js';
export {
  CONTINUED_AS,
  carriesOver,
  isContinuedAsNew,
  MAX_CONTINUATION_HOPS,
} from '../author/continue-as-new.js';
// Bounded histories (author/history-info.ts): the worker's limits and its error; an author reads
// HistoryInfo through ctx.historyInfo() and a caller the error's code, BATON_HISTORY_LIMIT.
export type { HistoryInfo, HistoryLimits } from '../author/history-info.js';
export { DEFAULT_HISTORY_LIMITS, HistoryLimitError } from '../author/history-info.js';
export type { ChildStartRequest } from './executor/execution-host.js';
export type { PreviousRun } from '../adapter/schedule-times.js';
export {
  checkScheduleSpec,
  DEFAULT_CATCHUP,
  freshState,
  nextDueAfter,
  planFiring,
} from '../adapter/schedule-times.js';
export { CHECKPOINT_SCHEMA_VERSION, checkpointSchemaFor } from './checkpoint-schema.js';
export * from './payload/index.js';
export type { HistoryFallback, HistoryStart } from './history-start.js';
export { findHistoryStart } from './history-start.js';
export type { RunHistory } from './run-history.js';
export { readRunHistory } from './run-history.js';
export type { OutgoingRunMessage } from './run-messages.js';
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
