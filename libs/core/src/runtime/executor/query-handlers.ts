/**
 * A run's query handlers (`ctx.onQuery`) and the one rule that makes them read-only: while a
 * handler runs, every method of the workflow's context throws QueryReadOnlyError naming the query
 * and the call (docs/queries.md).
 *
 * Invariants:
 * 1. Answering a query changes nothing the run sees: no ctx call gets through while a handler runs
 *    (the guard throws before the call takes a sequence number or appends anything), and the
 *    handler's failure, of any kind, is the query's answer, never the run's.
 * 2. A handler is synchronous: one that returns a promise fails the query (its rejection is
 *    swallowed, so it cannot surface as an unhandled rejection), since awaiting would let the
 *    run move on between the question and the answer.
 * 3. An answer is plain JSON data, copied at the moment of the answer: what the caller gets is the
 *    state when it was asked, whatever the run does next; a value with no JSON form fails the query
 *    with UnencodableValueError naming it.
 * 4. Every method of the workflow's context asks {@link QueryHandlers.refuseWhileAnswering} first
 *    (createContext in replay-executor.ts writes the check into each method, so a run's context
 *    costs no wrapper per method and a call no extra frame); queries.spec.ts calls every function
 *    of a context from inside a handler, so a method added without the check fails there.
 */
import { queryNameProblem, type QueryDefinition } from '../../author/query.js';
import { BatonError, ConfigError, serializeError, type SerializedError } from '../../shared/errors.js';
import { QueryReadOnlyError } from '../errors.js';
import { unencodableValue } from '../unencodable.js';

/** What asking a run's query gave: the handler's answer, its failure, or no handler of that name. */
export type QueryAnswer =
  | { status: 'answered'; result: unknown }
  | { status: 'failed'; error: SerializedError }
  | { status: 'unknown-query'; registered: string[] };

type Handler = (args: unknown) => unknown;

export class QueryHandlers {
  private readonly handlers = new Map<string, Handler>();
  /** The query whose handler is running, while it runs (invariant 1). */
  private answering: string | undefined;

  /** ctx.onQuery: registers (or replaces) the handler of `query`. */
  register(query: QueryDefinition<unknown, never>, handler: unknown): void {
    const name = query?.kind === 'query' ? query.name : undefined;
    if (name === undefined || queryNameProblem(name) !== undefined) {
      throw new ConfigError('ctx.onQuery: the first argument must be a query definition (defineQuery)');
    }
    if (typeof handler !== 'function') {
      throw new ConfigError(`ctx.onQuery('${name}'): the handler must be a function`);
    }
    this.handlers.set(name, handler as Handler);
  }

  /** The names with a handler, sorted. */
  get names(): string[] {
    return [...this.handlers.keys()].sort();
  }

  /** Runs the handler of `name` with `args` under the read-only guard (the module's invariants). */
  answer(name: string, args: unknown): QueryAnswer {
    const handler = this.handlers.get(name);
    if (handler === undefined) return { status: 'unknown-query', registered: this.names };
    let result: unknown;
    this.answering = name;
    try {
      result = handler(args);
    } catch (err) {
      return { status: 'failed', error: serializeError(err) };
    } finally {
      this.answering = undefined;
    }
    if (isThenable(result)) {
      result.then(undefined, () => undefined);
      return failed(
        new BatonError(
          'BATON_QUERY_ASYNC',
          `query '${name}': its handler returned a promise; a query handler answers at once from the ` +
            "workflow's state (no await, no async function)",
        ),
      );
    }
    let text: string | undefined;
    try {
      text = JSON.stringify(result);
    } catch (err) {
      return failed(unencodableValue(`the answer of query '${name}'`, result, err));
    }
    return { status: 'answered', result: text === undefined ? null : (JSON.parse(text) as unknown) };
  }

  /** Throws QueryReadOnlyError while a handler runs: the first thing every ctx method does (invariant 4). */
  refuseWhileAnswering(method: string): void {
    if (this.answering !== undefined) throw new QueryReadOnlyError(this.answering, `ctx.${method}`);
  }
}

function failed(error: Error): QueryAnswer {
  return { status: 'failed', error: serializeError(error) };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
