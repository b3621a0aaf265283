/**
 * Updates in the replay executor (`ctx.onUpdate`, docs/updates.md): the requests a run's owner
 * reads from the store, their checks, the journaling of the accepted ones, their handlers and the
 * keeping of their outcomes.
 *
 * Invariants:
 * 1. A request is checked before anything is journaled: the definition's schema (when the request
 *    is read), then the definition's validator and the handler's (when it is decided). A refusal,
 *    or a name with no handler, is kept as the request's outcome (`rejected`) and never journaled,
 *    so a replay never meets it.
 * 2. An update is accepted only at a point where the run's loop is idle with nothing waiting to be
 *    journaled, one per turn of the loop: every completion journaled before its UpdateAccepted has
 *    reached the workflow and none journaled after it has, and its handler starts at once, in the
 *    same turn. A replay starts the handler at the entry's place among the completions (history.ts),
 *    so the handler's ctx calls take the numbers they took live and see the same state.
 * 3. An update id is handled once per run: one accepted before (in the journal, or in this
 *    execution) or refused in this execution is skipped when the store lists it again. An accepted
 *    update without its UpdateCompleted (a crash in between) is handled again by the replay, its
 *    steps deduplicated by the journal as any other.
 * 4. An outcome is kept in the store (`updates.settle`, fenced by the run's epoch) after every
 *    entry the handler's result depends on is durable, and before UpdateCompleted is journaled: a
 *    crash between the two re-runs the handler's rest on the next owner, whose settle finds the
 *    kept outcome (the first wins) and journals the completion.
 * 5. Reading, settling and a handler still running are work in flight: the run neither suspends
 *    nor ends before they are done; a run whose workflow returned ends once its accepted handlers
 *    have settled. A store that fails a read or a settle stops the run (it resumes later).
 */
import { serializeError, type SerializedError } from '../../shared/errors.js';
import type { UpdateAcceptedEntry, UpdateCompletedEntry } from '../../shared/journal.js';
import type { UpdateOutcome, UpdateRequest } from '../../adapter/contracts/updates.js';
import { formatIssuePath } from '../../author/standard-schema.js';
import type { AnyUpdateDefinition, UpdateValidator } from '../../author/update.js';
import { UnencodableValueError } from '../../author/errors.js';
import { NonDeterminismError } from '../errors.js';
import { findUnencodable } from '../unencodable.js';
import type { ExecutionHost, NewEntry } from './execution-host.js';
import type { LoopWake } from './loop-wake.js';

/** The `code` of a request refused by a schema or a validator. */
export const UPDATE_REJECTED = 'BATON_UPDATE_REJECTED';
/** The `code` of a request whose name the workflow has no handler for. */
export const UPDATE_UNKNOWN = 'BATON_UPDATE_UNKNOWN';

/** A handler the workflow registered (`ctx.onUpdate`). */
interface UpdateHandler {
  update: AnyUpdateDefinition | undefined;
  handler: (args: unknown) => unknown;
  validate: UpdateValidator<unknown> | undefined;
}

/** A request read from the store whose schema passed: what the handler would receive. */
interface CheckedRequest {
  updateId: string;
  name: string;
  args: unknown;
}

/** What the updates need of their run (the executor). */
export interface UpdateRun {
  readonly runId: string;
  /** `name@version`, for messages. */
  readonly workflow: string;
  readonly host: ExecutionHost;
  readonly wake: LoopWake;
  /** True while new work may start: the run is neither frozen nor stopped, and has not failed. */
  isRunning(): boolean;
  /** True while the run may still write: not stopped (a frozen run finishes its work), not failed. */
  mayWrite(): boolean;
  /** The step number the next ctx call takes (for messages). */
  nextSeq(): number;
  /** Journals `entries` (the run's own append: in order, its failure stops the run). */
  append(entries: NewEntry[]): Promise<void>;
  /** Resolves once every append issued so far is durable. */
  flushAppends(): Promise<void>;
  /** Adds `delta` to the run's count of work in flight. */
  countInFlight(delta: number): void;
  /** Fails the run (a non-determinism). */
  fail(error: Error): void;
  /** Stops the run at once (a store that failed). */
  abort(cause: unknown): void;
}

export class RunUpdates {
  private readonly handlers = new Map<string, UpdateHandler>();
  /** Ids accepted: journaled before this execution, or here (invariant 3). */
  private readonly accepted = new Set<string>();
  /** Ids whose UpdateCompleted the journal holds. */
  private readonly completed = new Set<string>();
  /** Ids refused in this execution (their settle may still be on its way). */
  private readonly refused = new Set<string>();
  /** Requests read and past their schema, waiting for their turn (invariant 2). */
  private readonly ready: CheckedRequest[] = [];
  private reading = false;
  /** Another read was asked for while one was on its way. */
  private readAgain = false;
  /** Accepted handlers not yet settled and kept (invariant 5). */
  private unsettled = 0;

  constructor(
    private readonly run: UpdateRun,
    history: { accepted: Iterable<string>; completed: Iterable<string> },
  ) {
    for (const id of history.accepted) this.accepted.add(id);
    for (const id of history.completed) this.completed.add(id);
  }

  /** `ctx.onUpdate`: registers (or replaces) the handler of `name`. */
  register(
    update: AnyUpdateDefinition | string,
    handler: (args: unknown) => unknown,
    validate: UpdateValidator<unknown> | undefined,
  ): void {
    const name = typeof update === 'string' ? update : update.name;
    this.handlers.set(name, {
      update: typeof update === 'string' ? undefined : update,
      handler,
      validate,
    });
  }

  /** Whether the workflow registered any handler: only such a run reads its requests unasked. */
  get hasHandlers(): boolean {
    return this.handlers.size > 0;
  }

  /** Whether a request waits for its turn to be decided. */
  get hasReady(): boolean {
    return this.ready.length > 0;
  }

  /** Whether an accepted handler has not settled yet: the run does not end meanwhile. */
  get busy(): boolean {
    return this.unsettled > 0;
  }

  /**
   * Replay: the journal accepted this update here (invariant 2). Its handler starts now; without
   * one, the code no longer matches the history.
   */
  replayAccepted(entry: UpdateAcceptedEntry): void {
    const handler = this.handlers.get(entry.name);
    if (handler === undefined) {
      this.run.fail(
        new NonDeterminismError(
          this.run.runId,
          this.run.nextSeq(),
          `UpdateAccepted of update '${entry.name}' (id ${entry.updateId})`,
          'no handler registered for it at this point',
        ),
      );
      return;
    }
    this.accepted.add(entry.updateId);
    this.start(entry.updateId, entry.name, entry.args, handler);
  }

  /**
   * Reads the run's requests from the store, in the background (work in flight), and checks the
   * new ones against their schemas; those that pass wait for their turn, those that fail are
   * refused. A read asked for while one is on its way is made once that one is done.
   */
  read(): void {
    const readUpdates = this.run.host.readUpdates;
    if (readUpdates === undefined) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = true;
    this.run.countInFlight(1);
    void readUpdates
      .call(this.run.host)
      .then((requests) => this.check(requests))
      .catch((err: unknown) => this.run.abort(err))
      .finally(() => {
        this.reading = false;
        this.run.countInFlight(-1);
        if (this.readAgain && this.run.isRunning()) {
          this.readAgain = false;
          this.read();
        }
        this.run.wake.notify();
      });
  }

  private async check(requests: readonly UpdateRequest[]): Promise<void> {
    for (const request of requests) {
      const { updateId, name } = request;
      if (this.seen(updateId) || this.ready.some((r) => r.updateId === updateId)) continue;
      const schema = this.handlers.get(name)?.update?.schema;
      if (schema === undefined) {
        this.ready.push({ updateId, name, args: request.args });
        continue;
      }
      const result = await schema['~standard'].validate(request.args);
      if (result.issues === undefined) {
        this.ready.push({ updateId, name, args: result.value });
        continue;
      }
      const issues = result.issues.map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`);
      this.refuse(updateId, name, {
        name: 'UpdateRejectedError',
        code: UPDATE_REJECTED,
        message:
          `update '${name}' to run ${this.run.runId}: its arguments do not match the update's schema: ` +
          `${issues.join('; ')}. Fix the arguments and send it again with a new update id`,
      });
    }
  }

  /**
   * Decides the oldest request whose turn came (invariant 2): call only at an idle point with no
   * append pending. Refuses it (no handler, a validator threw), or journals it and starts its
   * handler at once. One per call: the run's loop turns before the next.
   */
  decideNext(): void {
    const request = this.ready.shift();
    if (request === undefined) return;
    const { updateId, name, args } = request;
    if (this.seen(updateId)) return;
    const handler = this.handlers.get(name);
    if (handler === undefined) {
      const known = [...this.handlers.keys()].sort();
      this.refuse(updateId, name, {
        name: 'UpdateRejectedError',
        code: UPDATE_UNKNOWN,
        message:
          `run ${this.run.runId} (workflow ${this.run.workflow}) has no handler for update '${name}'` +
          (known.length > 0 ? `; it handles ${known.map((k) => `'${k}'`).join(', ')}` : '; it handles none') +
          '. Check the name, or register it with ctx.onUpdate at the top of the workflow',
      });
      return;
    }
    const refusal = validatorRefusal(handler, args);
    if (refusal !== undefined) {
      this.refuse(updateId, name, {
        name: 'UpdateRejectedError',
        code: UPDATE_REJECTED,
        message: `update '${name}' to run ${this.run.runId} was rejected by its validator: ${refusal}`,
      });
      return;
    }
    this.accepted.add(updateId);
    this.run.append([{ type: 'UpdateAccepted', updateId, name, args }]).catch(() => undefined);
    this.start(updateId, name, args, handler);
  }

  /** Seen before: accepted (journal or here) or refused here (invariant 3). */
  private seen(updateId: string): boolean {
    return this.accepted.has(updateId) || this.refused.has(updateId);
  }

  /** Keeps a refusal as the request's outcome; nothing is journaled (invariant 1). */
  private refuse(updateId: string, name: string, error: SerializedError): void {
    this.refused.add(updateId);
    this.keep(updateId, name, { status: 'rejected', error }, undefined);
  }

  /** Starts a handler now, synchronously (invariant 2), and keeps its outcome once it settles. */
  private start(updateId: string, name: string, args: unknown, handler: UpdateHandler): void {
    this.unsettled++;
    let settled: Promise<unknown>;
    try {
      settled = Promise.resolve(handler.handler(args));
    } catch (err) {
      settled = Promise.reject(err as Error);
    }
    settled
      .then(
        (result): UpdateOutcome => {
          const problem = findUnencodable(result);
          if (problem === undefined) return { status: 'completed', result };
          const error = new UnencodableValueError(`result of update '${name}' (id ${updateId})`, problem);
          return { status: 'failed', error: serializeError(error) };
        },
        (err: unknown): UpdateOutcome => ({ status: 'failed', error: serializeError(err) }),
      )
      .then((outcome) => {
        if (this.completed.has(updateId)) {
          this.unsettled--;
          this.run.wake.notify();
          return;
        }
        this.keep(updateId, name, outcome, () => {
          this.unsettled--;
        });
      })
      .catch(() => undefined);
  }

  /**
   * Keeps an outcome in the store once every append before it is durable (invariant 4), then, for
   * an accepted update, journals UpdateCompleted. Work in flight; a failure stops the run.
   */
  private keep(
    updateId: string,
    name: string,
    outcome: UpdateOutcome,
    accepted: (() => void) | undefined,
  ): void {
    const settleUpdate = this.run.host.settleUpdate;
    this.run.countInFlight(1);
    void (async () => {
      await this.run.flushAppends();
      // A stopped run's appends may have failed: what the handler saw is not all durable.
      if (!this.run.mayWrite()) return;
      await settleUpdate?.call(this.run.host, { updateId, name, outcome });
      if (accepted === undefined || !this.run.mayWrite()) return;
      const entry: Extract<NewEntry, { type: 'UpdateCompleted' }> =
        outcome.status === 'completed'
          ? { type: 'UpdateCompleted', updateId, name, result: outcome.result }
          : { type: 'UpdateCompleted', updateId, name, error: outcome.error };
      this.completed.add(updateId);
      await this.run.append([entry]);
    })()
      .catch((err: unknown) => this.run.abort(err))
      .finally(() => {
        accepted?.();
        this.run.countInFlight(-1);
        this.run.wake.notify();
      });
  }
}

/** The history's update ids: accepted, and those with their UpdateCompleted. */
export function updatesInHistory(entries: Iterable<{ type: string }>): {
  accepted: string[];
  completed: string[];
} {
  const accepted: string[] = [];
  const completed: string[] = [];
  for (const entry of entries) {
    if (entry.type === 'UpdateAccepted') accepted.push((entry as UpdateAcceptedEntry).updateId);
    else if (entry.type === 'UpdateCompleted') completed.push((entry as UpdateCompletedEntry).updateId);
  }
  return { accepted, completed };
}

/**
 * The message of the first validator (the definition's, then the handler's) that refuses `args`,
 * or undefined when both pass. A validator must answer at once (invariant 1): a promise refuses.
 */
function validatorRefusal(handler: UpdateHandler, args: unknown): string | undefined {
  for (const validate of [handler.update?.validate, handler.validate]) {
    if (validate === undefined) continue;
    let answer: unknown;
    try {
      answer = validate(args);
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
    if (answer !== undefined && typeof (answer as { then?: unknown }).then === 'function') {
      // Its outcome would come after the update's turn: refuse rather than decide on a guess.
      (answer as Promise<unknown>).catch(() => undefined);
      return 'the validator returned a promise; a validator must be synchronous (throw to reject)';
    }
  }
  return undefined;
}
