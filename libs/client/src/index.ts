/**
 * @baton/client: start runs, signal and cancel them, wait for results, read their history; and an
 * operator's sub-clients over runs, time travel, dead letters, bulk actions, the fleet and schedules.
 *
 * @example
 * ```ts
 * import { Client } from '@baton/client';
 *
 * const client = new Client({ transport, store });
 * // The input is checked against loanApproval's input type; result() has its output type.
 * const run = await client.start(loanApproval, { applicantId: 'A-7291' }, { idempotencyKey: 'loan-A-7291' });
 * await client.signal(run.runId, humanReview, true); // humanReview = defineSignal<boolean>('human_review')
 * const decision = await run.result({ timeoutMs: 60_000 });
 * // An operator's calls are grouped: client.runs, client.timeTravel, client.deadLetters,
 * // client.bulk, client.fleet, client.schedules.
 * await client.runs.pause(run.runId, 'looking into it');
 * ```
 */
export type { ClientOptions, StartOptions } from './client.js';
export type { UntypedWorkflowRef, WorkflowRef } from './validate-input.js';
export type { ForkOptions, ForkPoint, ResultOptions, RunDescription } from './run-handle.js';
export { Client } from './client.js';
export { RunHandle } from './run-handle.js';
// The sub-clients are reached as the client's properties (`client.runs`, …) and never built
// apart from it: their classes are types here.
export type { RunsApi, RunWait } from './runs.js';
export type { TimeTravelApi } from './time-travel.js';
export type { PromisesApi } from './promises.js';
export { DEFAULT_RETRY_UNAVAILABLE_MS, RetriesExhaustedError } from './retry-unavailable.js';
export { DEFAULT_RUN_PRIORITY, RUN_PRIORITIES, type RunPriority } from '@baton/core/runtime';
export type {
  SchedulesApi,
  CreateScheduleOptions,
  ScheduledWorkflow,
  SchedulePolicies,
  ScheduleTiming,
  ScheduleUpdate,
} from './schedules.js';
export type { DeadLettersApi, ShownDeadLetter } from './dead-letters.js';
export { IN_FLIGHT_STATUSES } from './replay-check.js';
export type {
  ReplayCheckCounts,
  ReplayCheckOptions,
  ReplayCheckProgress,
  ReplayCheckReport,
  ReplayCheckResultKind,
  ReplayCheckRun,
  ReplayCheckRunInfo,
  ReplayReach,
  ReplayVerdict,
} from './replay-check.js';
export {
  BULK_RUN_ACTION_NAMES,
  BULK_RUN_ACTIONS,
  type BulkApi,
  type BulkFailure,
  type BulkOptions,
  type BulkProgress,
  type BulkRefusal,
  type BulkRunAction,
  type BulkRunActionName,
  type BulkSummary,
  type DeadLetterFilter,
} from './bulk.js';
export {
  buildTimeline,
  type ActivityItem,
  type CheckpointItem,
  type EndItem,
  type FencedWriteItem,
  type LeaseItem,
  type RunTimeline,
  type SignalItem,
  type TimelineItem,
  type TimelineItemBase,
  type TimelineOwner,
  type TimerItem,
} from './timeline.js';
export type { FleetApi, BacklogOptions, DepartedFleetWorker, FleetBacklog, FleetWorker } from './fleet.js';
export {
  UNFINISHED_RUN_STATUSES,
  type VersionDrain,
  type VersionsListing,
  type VersionsOptions,
} from './versions.js';
// The types the client's methods take and return, so a producer or an operator names them
// without reaching into the adapter or runtime doors of @baton/core.
export type {
  AttributeCondition,
  BacklogDetail,
  BacklogPart,
  CheckpointSummary,
  DeadLetterPage,
  DeadLetterPurge,
  DeadLetterQuery,
  LeaseInfo,
  ListedRun,
  RedriveResult,
  ReportedWorker,
  RunAttribute,
  RunCounts,
  RunFilter,
  RunPage,
  RunQuery,
  RunRecord,
  RunStatus,
  ScheduleRecord,
  Store,
  StoredDeadLetter,
  Transport,
  WorkerReport,
  WorkflowVersions,
} from '@baton/core/adapter';
export { FINISHED_RUN_STATUSES, isFinishedRun, RUN_STATUSES } from '@baton/core/adapter';
// The text form of a search attribute filter, the CLI's, the HTTP API's and the console's.
export { parseAttributeFilter } from './attribute-filter.js';
// The backend failures a producer handles itself (wait and retry, fix credentials, grant an
// ACL), whichever bus or store it uses; `backend` and `code` say which server refused.
export { BackendAuthError, BackendPermissionError, BackendUnavailableError } from '@baton/core/adapter';
export type { JournalEntry, PositionedEntry } from '@baton/core/runtime';
export type { RunDeletion } from './run-deletion.js';
// What waiting on a run raises: its failure, its deletion by the retention sweep, its loss with
// the store's data, a wait that ran out of time.
export { RunDeletedError, RunLostError, TimeoutError, WorkflowFailedError } from './result-errors.js';
// What an update raises (docs/updates.md): refused before journaling, its handler failed, no answer in time.
export { UpdateFailedError, UpdateRejectedError, UpdateTimeoutError } from './update-errors.js';
export type { UpdateOptions } from './update-call.js';
export type { StreamReadOptions } from './streams.js';
export type { StreamItem } from '@baton/core';
// The rule a run stream's name follows (the bus's), for a reader that checks a name before it reads.
export { checkRunStreamName } from '@baton/core/adapter';
// What asking a run's query raises: no handler of that name, the handler failed, no answer in time.
export { QueryFailedError, QueryTimeoutError, UnknownQueryError } from './queries.js';
// What reading a run's protected data raises (a result, a fork, a checkpoint): bytes that do not
// verify, a key this client lacks, a checkpoint schema newer than it knows.
export { CheckpointIntegrityError, CheckpointSchemaError, MissingKeyError } from '@baton/core/runtime';
// A continued run's stored result (`client.describe`) names its successor; these read it.
export { CONTINUED_AS, isContinuedAsNew } from '@baton/core/runtime';
// What an operator tool shows and checks as the client does, so the CLI and the console need no
// door of @baton/core but the authors': a dead letter's message decoded, a sealed value's label, a
// start's fields checked as every worker checks them, a URL's secret masked, every store call
// wrapped in a rule (the console's bound in time) as the test kit wraps an adapter.
export { maskUrlSecret } from '@baton/core/adapter';
export { decodeDeadLetter, type DecodedDeadLetter } from './dead-letter-message.js';
export { isSealedValue, protectedLabel, startFieldProblem, wrapCalls } from '@baton/core/runtime';
