/**
 * The connect/close lifecycle every network adapter shares (NATS and Kafka transports, the NATS
 * object payload store, the Redis and Postgres stores), around what an open adapter holds (`T`:
 * its connection and what it set up).
 *
 * Invariants:
 * 1. `connect()` sets up once: concurrent calls share one attempt; a failed attempt leaves the
 *    adapter as created, so connect() may be called again; a connected adapter answers at once.
 * 2. `close()` is final and idempotent: the state is `closed` from the call on (synchronously, so
 *    nothing slips in before its promise settles), a connect under way is waited for, and what it
 *    opened is torn down. A connect that finishes after close() releases what it made and fails
 *    with BATON_CLOSED.
 * 3. `open(operation)` hands out the open state, or throws BATON_CLOSED after close() and
 *    BATON_NOT_CONNECTED before connect() succeeded, naming the adapter, the operation and what
 *    to do.
 * 4. `openOrConnect(operation, connect)`, for adapters whose operations connect on first use (the
 *    stores), refuses after close() like open(), otherwise connects first when not open yet. An
 *    operation whose connect is overtaken by close() fails with BATON_CLOSED naming the
 *    operation, with what the connect failed with as its cause.
 * 5. A capability is guarded once, as a whole: `guard` for adapters that are connected first (the
 *    transports), `bind` for those whose operations connect on first use and map their errors (the
 *    stores; `bindAll` binds a record of capabilities, each under its key); either way an
 *    operation is named `<capability>.<method>` in its errors. One closed
 *    check per operation: a guarded capability's methods reach the open state with
 *    `connected(operation)`, which does not check again; `open` is for work that runs after an
 *    await (a close may have come meanwhile) or outside a guard.
 */
import { BatonError } from '../shared/errors.js';

export type LifecycleState = 'created' | 'connecting' | 'open' | 'closed';

export interface LifecycleNames {
  /** Names the adapter in errors, e.g. `nats transport`. */
  adapter: string;
  /** What a caller that forgot to connect should do, e.g. `await transport.connect() first`. */
  connectHint: string;
  /** What a caller of a closed adapter should do, e.g. `create a new transport instead`. */
  closedHint: string;
}

export class AdapterLifecycle<T> {
  private current: LifecycleState = 'created';
  private connecting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private value: T | undefined;

  constructor(private readonly names: LifecycleNames) {}

  get state(): LifecycleState {
    return this.current;
  }

  /**
   * Runs `setUp` unless connected or connecting (invariant 1). `setUp` releases what it made when
   * it fails; `release` is for what it made when close() came meanwhile.
   */
  connect(setUp: () => Promise<T>, release: (value: T) => Promise<void>): Promise<void> {
    if (this.current === 'closed') return Promise.reject(this.closedError('connect'));
    if (this.current === 'open') return Promise.resolve();
    this.connecting ??= this.setUp(setUp, release).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async setUp(setUp: () => Promise<T>, release: (value: T) => Promise<void>): Promise<void> {
    this.current = 'connecting';
    let value: T;
    try {
      value = await setUp();
    } catch (err) {
      if (this.current === 'connecting') this.current = 'created';
      throw err;
    }
    if (this.current !== 'connecting') {
      await release(value).catch(() => undefined);
      throw this.closedError('connect');
    }
    this.value = value;
    this.current = 'open';
  }

  /** Closes for good (invariant 2); `tearDown` gets the open state, or undefined if it never opened. */
  close(tearDown: (value: T | undefined) => Promise<void>): Promise<void> {
    this.current = 'closed';
    this.closing ??= (async () => {
      await this.connecting?.catch(() => undefined);
      await tearDown(this.value);
    })();
    return this.closing;
  }

  /** The open state; see invariant 3. */
  open(operation: string): T {
    if (this.current === 'closed') throw this.closedError(operation);
    return this.connected(operation);
  }

  /**
   * The open state for an operation whose closed check was just made, by the capability's
   * {@link guard} with nothing awaited since: only BATON_NOT_CONNECTED is left to throw (invariant
   * 5). After close() it still hands out what connect() set up, so work that awaited anything since
   * its guard asks {@link open}, which checks again.
   */
  connected(operation: string): T {
    if (this.value === undefined) {
      throw new BatonError(
        'BATON_NOT_CONNECTED',
        `${this.names.adapter}: ${operation} called before connect() succeeded; ${this.names.connectHint}`,
      );
    }
    return this.value;
  }

  /**
   * The open state, connecting first when not open yet (invariant 4). `connect` is the adapter's
   * own connect(), so that an operation and an explicit connect() share one attempt.
   */
  async openOrConnect(operation: string, connect: () => Promise<void>): Promise<T> {
    if (this.current !== 'open') {
      this.assertNotClosed(operation);
      try {
        await connect();
      } catch (err) {
        // A method call, not the field: close() may have come while connect() was awaited.
        if (this.isClosed()) throw this.closedError(operation, err);
        throw err;
      }
    }
    return this.open(operation);
  }

  /** What connect() set up, if it succeeded (also after close()); for status reads that never throw. */
  peek(): T | undefined {
    return this.value;
  }

  /** Throws BATON_CLOSED once close() was called. */
  assertNotClosed(operation: string): void {
    if (this.current === 'closed') throw this.closedError(operation);
  }

  /**
   * `capability` with this lifecycle's rule applied once ({@link guardClosed}): after close(),
   * every method but `answersWhenClosed` rejects with BATON_CLOSED naming `<label>.<method>`.
   *
   * @example
   * this.journal = this.lifecycle.guard('journal', natsJournal(open));
   */
  guard<C extends object>(label: string, capability: C, answersWhenClosed: readonly string[] = []): C {
    return guardClosed(label, capability, (operation) => this.assertNotClosed(operation), answersWhenClosed);
  }

  /**
   * A capability made of functions that take the open state first (a store's leases.ts, runs.ts…),
   * each run through `run` (the adapter's one runner: connect on first use, refuse after close(),
   * map errors), named `<label>.<method>`; see {@link bindOperations}.
   *
   * @example
   * this.leases = this.lifecycle.bind('leases', leases, this.op); // leases: OperationsOf<Ctx, LeaseStore>
   */
  bind<S, M extends Operations<S>>(
    label: string,
    operations: M,
    run: OperationRunner<S>,
  ): BoundOperations<S, M> {
    return bindOperations(label, operations, run);
  }

  /**
   * {@link bind} for each capability of a record, under its key: a store binds its capability
   * modules at once, each module's operations written against the contract ({@link OperationsOf}).
   *
   * @example
   * const bound = this.lifecycle.bindAll({ leases, checkpoints }, this.op);
   */
  bindAll<S, R extends Record<string, Operations<S>>>(
    capabilities: R,
    run: OperationRunner<S>,
  ): BoundCapabilities<S, R> {
    return bindCapabilities(capabilities, run);
  }

  /** The BATON_CLOSED error for `operation`; `cause` is what the operation failed with, if it ran. */
  closedError(operation: string, cause?: unknown): BatonError {
    return new BatonError(
      'BATON_CLOSED',
      `${this.names.adapter}: ${operation} called after close(); ${this.names.closedHint}`,
      cause === undefined ? {} : { cause },
    );
  }

  private isClosed(): boolean {
    return this.current === 'closed';
  }
}

/**
 * The lifecycle rule applied once to a whole capability object (a transport's `runQueue`,
 * `journal`, `deadLetters`, …): every method first calls `assertNotClosed('<label>.<method>')`,
 * and a throw there (or the method's own synchronous throw: not connected yet) is the method's
 * rejection, so no adapter repeats the check per method.
 * `answersWhenClosed` lists the methods that must answer on a closed adapter instead (a backlog
 * that says "unknown" as undefined, a hint that is only stored). Methods run on the capability
 * itself; its other members (flags, constants) read through unchanged.
 * Adapters on {@link AdapterLifecycle} use its `guard`.
 */
export function guardClosed<C extends object>(
  label: string,
  capability: C,
  assertNotClosed: (operation: string) => void,
  answersWhenClosed: readonly string[] = [],
): C {
  const guarded = Object.create(capability) as Record<string, unknown>;
  for (const name of methodNames(capability)) {
    const method = (capability as Record<string, unknown>)[name] as (...args: unknown[]) => unknown;
    // Every method runs on the capability itself, never on the guarded object (whose own methods
    // are the guards).
    if (answersWhenClosed.includes(name)) {
      guarded[name] = method.bind(capability);
      continue;
    }
    const operation = `${label}.${name}`;
    guarded[name] = (...args: unknown[]): unknown => {
      try {
        assertNotClosed(operation);
        return method.apply(capability, args);
      } catch (err) {
        return Promise.reject(err);
      }
    };
  }
  return guarded as C;
}

/** Functions that take an adapter's open state (`S`) first, by the capability's method names. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any argument list; bound types keep each one's own
export type Operations<S> = Record<string, (state: S, ...args: any[]) => unknown>;

/** Runs `work` on the open state as operation `operation`: the adapter's rules around every call. */
export type OperationRunner<S> = <R>(operation: string, work: (state: S) => Promise<R>) => Promise<R>;

/** {@link Operations} with the state bound: the same arguments after it, answered by a promise. */
export type BoundOperations<S, M extends Operations<S>> = {
  [K in keyof M]: M[K] extends (state: S, ...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

/**
 * How a store module writes a capability `C` of the contract over its open state `S`: each of
 * `C`'s methods that answer a promise, as a function taking the state first and then the method's
 * own arguments, answering what the method answers (or a promise of it: an in-process store
 * answers at once). Members that are no operation (a flag, a subscription such as
 * `watchCancels`) are left out; the store adds them beside the bound operations.
 *
 * @example
 * export const checkpoints: OperationsOf<Db, CheckpointStore> = { write, load, list };
 */
export type OperationsOf<S, C> = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any argument list; each method keeps its own
  [K in keyof C as C[K] extends (...args: any[]) => Promise<unknown> ? K : never]: C[K] extends (
    ...args: infer A
  ) => Promise<infer R>
    ? (state: S, ...args: A) => R | Promise<R>
    : never;
};

/** A record of capabilities bound by {@link bindCapabilities}: each one's {@link BoundOperations}. */
export type BoundCapabilities<S, R extends Record<string, Operations<S>>> = {
  [K in keyof R]: BoundOperations<S, R[K]>;
};

/**
 * {@link bindOperations} for each capability of `capabilities`, labelled by its key, so a store
 * composes its modules in one call (`{ leases, checkpoints, … }`) instead of a table per method.
 */
export function bindCapabilities<S, R extends Record<string, Operations<S>>>(
  capabilities: R,
  run: OperationRunner<S>,
): BoundCapabilities<S, R> {
  const bound: Record<string, unknown> = {};
  for (const [label, operations] of Object.entries(capabilities)) {
    bound[label] = bindOperations(label, operations, run);
  }
  return bound as BoundCapabilities<S, R>;
}

/**
 * A capability object from functions that take the open state first: method `name` runs
 * `run('<label>.<name>', async (state) => operations[name](state, ...args))`. So an adapter writes its
 * rules (the lifecycle check, connecting on first use, error mapping) once, in `run`, and each
 * capability module stays a set of plain functions over the state.
 */
export function bindOperations<S, M extends Operations<S>>(
  label: string,
  operations: M,
  run: OperationRunner<S>,
): BoundOperations<S, M> {
  const bound: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const [name, operation] of Object.entries(operations)) {
    const named = `${label}.${name}`;
    bound[name] = (...args: unknown[]) => run(named, async (state) => operation(state, ...args));
  }
  return bound as BoundOperations<S, M>;
}

/** The names of an object's methods, its own and its class's. */
export function methodNames(target: object): string[] {
  const names = new Set<string>();
  for (let o: object | null = target; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (name === 'constructor') continue;
      const descriptor = Object.getOwnPropertyDescriptor(o, name);
      if (typeof descriptor?.value === 'function') names.add(name);
    }
  }
  return [...names];
}
