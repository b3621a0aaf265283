/**
 * How many names each public door may export. A door is an audience's contract: every name on it
 * is one its readers must learn and one we must keep. A door that grows past its budget fails
 * api-report.spec.ts, so widening a door is a decision made in review (raise the budget here, and
 * say why in the commit), never a side effect of an export. A new door needs a budget too.
 *
 * `target` is where a door is heading (issue 34: each of @baton/core's folders its own door, the
 * authors' door holding only what a workflow author writes or catches); the budget is lowered as
 * names move, never raised to make room.
 */
export interface DoorBudget {
  max: number;
  target?: number;
}

export const API_BUDGETS: Record<string, DoorBudget> = {
  // 103: six helpers the CLI and the console took from core's adapter and runtime doors
  // (decodeDeadLetter, isSealedValue, protectedLabel, startFieldProblem, maskUrlSecret,
  // ScheduleRecord); BackendUnavailableError, BackendAuthError and BackendPermissionError, the
  // backend failures a producer catches without importing an adapter (issue 34 item 3).
  // 104: wrapCalls (core's runtime door), so the console bounds every store call with the walk of
  // an adapter's capabilities the test kit's severable adapters use, not a copy of it (issue 34 item 2).
  // 113: what left core's authors' door for the producer's: WorkflowFailedError, RunDeletedError,
  // RunLostError and TimeoutError (now the client's own, only it raises them); CheckpointIntegrityError,
  // MissingKeyError and CheckpointSchemaError (re-exported from the runtime door); CONTINUED_AS and
  // isContinuedAsNew (a continued run's stored result). decodeDeadLetter now lives here (issue 34 item 1).
  // 117: updates (issue 36 item 1): what an update raises, UpdateRejectedError, UpdateFailedError
  // and UpdateTimeoutError (only the client raises them), and UpdateOptions, its call's options.
  // 118: PromisesApi, the type of `client.promises` as the other sub-clients' are (issue 36 item 3);
  // its answers' types stay off the door (named through it).
  // 121: the three errors of asking a run's query (UnknownQueryError, QueryFailedError,
  // QueryTimeoutError: issue 36 item 2), which a caller tells apart (404, 422, 504 on the HTTP API);
  // the options and argument types of client.query stay off the door.
  // 124: search attributes (issue 36 item 5): AttributeCondition and RunAttribute, the filter's and
  // the record's types, and parseAttributeFilter, the one text form the CLI, the HTTP API and the
  // console read.
  // 125: RunWait, what `client.runs.waits` says a suspended or paused run waits for (issue 37
  // item 1: the runs list's "waits for" column, also in `baton runs describe`).
  // 126: DepartedFleetWorker, the answer of client.fleet.departed() (issue 37 item 3), which the
  // CLI and the console read; the type of one held run stays off the door (named through it).
  // 128: StreamItem and StreamReadOptions (issue 38 item 1): what `client.stream` yields and takes.
  // 129: checkRunStreamName, the bus's rule for a stream's name, which the CLI (a usage error) and
  // the HTTP API (a 400) check before they read; they cannot import core's adapter door.
  '@baton/client': { max: 129 },
  // 19 (issue 36 item 4): a door of its own so the client's stays as it was. defineWebhook and hmac
  // with their option, action, request and verifier types; isWebhook (how a module's exports are
  // told apart); and the signatures of each layout for both ends (sign*, verifyWebhook, the header
  // and tolerance, SignatureCheck, SignedRequest), which the console's door re-exports.
  '@baton/client/webhooks': { max: 19 },
  // 74: FencedWriteError and JournalConflictError went to the adapter door, LeaseLostError,
  // NonDeterminismError and ResumeFailedError to the runtime's: no author or client caller catches them.
  // 69: the key derivations (childKey, childKeyPrefix, parentOfKey, parentLinkOfKey,
  // continuationKey) went to the runtime door: the worker and the client derive keys, authors never.
  // 52 (target reached): the Standard Schema's parts (StandardSchemaV1Props, …Result, …Issue,
  // …Types, StandardSchemaInput, StandardSchemaOutput) left every door, reached through
  // StandardSchemaV1; CheckpointIntegrityError, MissingKeyError, PlaintextRefusedError,
  // CheckpointSchemaError, CONTINUED_AS, isContinuedAsNew and ContinuedAsNew went to the runtime
  // door; WorkflowFailedError, RunDeletedError, RunLostError and TimeoutError to @baton/client.
  // 54: defineUpdate and UpdateDefinition, what an author writes for updates (issue 36 item 1);
  // the validator's and the options' types are reached through them, not exported.
  // 57: durable promises (issue 36 item 3): DurablePromise, what `ctx.promise` gives, and the two
  // errors its value may throw, PromiseRejectedError and PromiseTimeoutError. Its options are named
  // through the context's signature, not on the door. Past the target of 55 by the
  // updates' two names and the queries' two (below).
  // 59: defineQuery and QueryDefinition (issue 36 item 2): what an author writes to answer a query
  // (ctx.onQuery) and a caller imports to ask it typed, as defineSignal and SignalDefinition are.
  // 62: run streams (issue 38 item 1): WorkflowStream (`ctx.stream`), ActivityStream (`io.stream`)
  // and StreamItem (what a reader gets), each named in the author's code.
  '@baton/core': { max: 62, target: 55 },
  // 176: invalidOption and ConfigErrorFields came with structured option errors (issue 34 item
  // 3), replacing each registration's message regexes.
  // 185: the backend error categories (BackendError, its seven categories and their options) that
  // replace the adapters' 23 error classes, one vocabulary for backend failure (issue 34 item 3).
  // 187: FencedWriteError and JournalConflictError, from the root door (issue 34 item 1).
  // 184: dead-letter administration written once in core; the adapters' check helpers leave the door (issue 34 item 2).
  // 189: what the NATS and Redis transports repeated, written once (issue 34 item 2, transport
  // mends): checkedJournal (every journal's run-id, expected-position and empty-range checks),
  // journalOnContext and shelfOnContext with their ContextJournal and ContextShelf (a journal and a
  // dead-letter shelf written against a transport's context).
  // 190: OperationsOf, the type a store writes each capability module against (the contract's
  // methods over its open state), so each store binds whole modules instead of a method table per
  // capability (issue 34 item 2, store modules).
  // 183: the checks every store shares leave the door (checkRunQuery, isAfter, issueRunCursor,
  // checkWorkerReport, checkReportTtl, checkSlotRequest, checkRateLimitRequest, checkNewSchedule,
  // checkScheduleQuery, checkDueLimit, assertScheduleId: 11 names): core makes them once, before a
  // call reaches the adapter. Four names came for that: checkedStore, which each store's factory
  // applies, StoreAdapter, what an adapter implements (its arguments checked), and the checked
  // forms it receives and answers, CheckedScheduleQuery and RunListing (issue 34 item 2).
  // 184: InstallationListing, what a registration's `installation.list` reads of one installation
  // on its server (issue 35 item 6, `baton admin drop`); the item and hook types stay off the door.
  // 158: 26 names no package outside core imports left the door (the page and rate-limit bounds
  // checkedStore applies, the claim planner, the registration's inner types, checkStoredCheckpoint,
  // ...). What stays is the contract: about 110 interface and record types a transport or a store
  // implements or answers (15 capabilities), the 11 errors an adapter throws, and the helpers every
  // adapter calls (journalOnContext, deadLetterQueue, settings, priorities). The example target of
  // 90 would move contract types off the door an adapter author must name; not done, on purpose.
  // 163: the update capability's contract (issue 36 item 1): UpdateStore and the records it takes
  // and answers (UpdateRequest, UpdateOutcome, KeptUpdate, UpdateRequestResult), which every store
  // implements; its argument check stays off the door (checkedStore applies it).
  // 166: the durable promise store capability (issue 36 item 3): PromiseStore, its record
  // (PromiseRecord) and the answer of a completion (PromiseCompleteResult), as every capability's.
  // 169: the query mailbox a store implements (`store.queries`: QueryMailbox, QueryRequest,
  // QueryReply; issue 36 item 2); its ask's result and checks stay off the door.
  // 173: search attributes (issue 36 item 5), a capability of the store contract: RunAttributeStore
  // (what a store implements), AttributeChanges (what it is given), RunAttribute (the record's
  // field) and AttributeCondition (the filter's field). The counted value and a checked test are
  // derived from them (Parameters<…>, CheckedRunQuery['attributes']) rather than named.
  // 175: departed workers (issue 37 item 3), part of the fleet capability every store implements:
  // DepartedWorker (what `fleet.departed()` answers) and MAX_REPORTED_RUNS (the bound on a report's
  // run ids, which the worker applies and the check enforces); how one ended is named through
  // DepartedWorker['ended'].
  // 180: run streams (issue 38 item 1): the RunStreamLog contract, checkRunStreamName, and
  // runStreamsOnContext / runStreamsOverJournal with StreamStartHint, which build a bus's run
  // streams over its own journal log (the record types stay off the door, named through it).
  // 181: StreamRecordWait, the hook a bus that can push gives them (NATS's subscription).
  // 183: CallBatcher and its options (issue 39 item 2): how a store gathers its workers' per-run
  // calls into batches, written once for the Redis and the PostgreSQL stores.
  '@baton/core/adapter': { max: 183, target: 90 },
  // 204: LeaseLostError, NonDeterminismError and ResumeFailedError, from the root door (issue 34 item 1).
  // 209: the five key derivations of child and successor runs, from the root door (issue 34 item 1).
  // 210: wrapCalls, every call of an adapter and of its capabilities through one rule, written once
  // for the console's bounded store and the test kit's severable adapters (issue 34 item 2).
  // 108 (target reached): 103 names no package outside core imported left the door (the journal
  // entry subtypes, the keyring, frame layout, signature and chain parts, migrations, the retry
  // loop, the group commit's classes and errors, schedule helpers only core calls,
  // NonDeterminismError, ...); decodeDeadLetter and deleteFinishedRun moved into @baton/client,
  // GroupLogTrimmer into @baton/worker (each their only user); seven names came from the root door.
  // 110: sealUpdateOutcome and openUpdateOutcome, an update's outcome sealed by the worker and
  // opened by the client as a run's outcome is (issue 36 item 1).
  // 112: isPromiseToken and PromiseDelivery, the token's shape and what a completion carries to its
  // run, both written by the client and read by the worker (issue 36 item 3).
  // 116: bounded histories (issue 38 item 3): HistoryLimits and DEFAULT_HISTORY_LIMITS, read by the
  // worker's options and the console's flag; HistoryLimitError, raised by the worker and matched by
  // callers; HistoryInfo, what the worker's host hands ctx.historyInfo(). Not on the authors' door,
  // which is at its budget: an author meets them through ctx.historyInfo() and the error's code.
  // 120: run streams (issue 38 item 1): the record format and its rules (encodeStreamRecord,
  // WireStreamItem, StreamFold), which the worker writes and the client reads by, and StreamWrite,
  // what the executor hands the worker's host.
  // 122: what continue-as-new carries over (issue 38 item 3): MAX_CONTINUATION_HOPS, the one bound
  // the worker (a signal) and the client (an update) apply when they follow a chain, and
  // carriesOver, core's rule of which signals go on to a successor (not Baton's own, whose names
  // core reserves), read by the worker's carry-over and its delivery along a chain.
  '@baton/core/runtime': { max: 122, target: 110 },
  '@baton/core/memory': { max: 5 },
  // 36: VARIABLES (every BATON_* variable, declared once; issue 34 item 3) with its three types,
  // and the producer's and console's names derived from it.
  // 41: `baton dev`'s fleet (DevFleet, its options and adapters) and the loader that imports the
  // workflow modules afresh after a change (freshWorkflowLoader, FreshWorkflowLoader): issue 35 item 1.
  // 44: listInstallation and dropInstallation (`baton admin drop` lists and removes an installation
  // through the registrations), and logFormatOf (BATON_LOG_FORMAT, read where the worker builds its
  // logger before the configuration is read) (issue 35 item 6).
  // 46: loadModules and LoadedModules, the workflows and the webhooks a server's modules export
  // (`baton serve --workflows`, `baton dev`; issue 36 item 4).
  '@baton/host': { max: 46 },
  // 23 (public since issue 35 item 3): starting the console and the HTTP API in one's own process,
  // its options, the bounded store it reads through, the API's error codes and OpenAPI document,
  // and the webhook signature; the server's parts (routes, limiter, metrics history) stay inside.
  '@baton/console': { max: 23 },
  '@baton/host/testing': { max: 2 },
  // 17: keyCensus, the listing of a key prefix both Redis adapters give `baton admin drop` (issue 35 item 6).
  '@baton/redis-kit': { max: 17 },
  '@baton/store-postgres': { max: 21 },
  '@baton/store-postgres/registration': { max: 4 },
  '@baton/store-redis': { max: 16 },
  '@baton/store-redis/registration': { max: 4 },
  // 25: recordRunEnd and RunOutcome (issue 37 item 6), the one place a run end's labels are made,
  // for the counters primed at 0 and the worker's record of each end alike.
  '@baton/telemetry': { max: 25 },
  '@baton/testing': { max: 9 },
  '@baton/testing/severable': { max: 3 },
  '@baton/testing/servers': { max: 18 },
  // 41: PauseCrashOptions, so a spec runs the pause scenario's pairs side by side (CI time).
  // 42: describeSigtermHandOff, the crash suite's one timed check, so its own spec runs alone and
  // the suite's other faults run beside another spec (CI time; vitest.projects.ts).
  // 43: describeUpdateCrash, the update scenario each adapter pair's crash spec calls (issue 36 item 1).
  // 44: describePromiseCrash, the durable promise crash scenario (issue 36 item 3).
  // 45: describeStreamCrash, the run streams crash scenario (issue 38 item 1).
  // 46: describeAgentCrash, the agent crash scenario (issue 38 item 2).
  '@baton/testing/crash': { max: 46 },
  // The crash suite's ledger alone (no vitest, no scenario), for workflow modules outside the
  // package that record their effects in it (examples/agent's crash module; issue 38 item 2).
  '@baton/testing/ledger': { max: 6 },
  '@baton/testing/clusters': { max: 20 },
  '@baton/transport-kafka': { max: 21 },
  '@baton/transport-kafka/registration': { max: 4 },
  // The class view of the run queue, off the package's door, for specs of partition ownership.
  '@baton/transport-kafka/testing': { max: 3 },
  '@baton/transport-nats': { max: 24 },
  '@baton/transport-nats/registration': { max: 5 },
  '@baton/transport-redis': { max: 15 },
  '@baton/transport-redis/registration': { max: 4 },
  '@baton/worker': { max: 16 },
};
