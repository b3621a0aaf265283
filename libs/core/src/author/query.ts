/**
 * Typed queries: one definition, imported by the workflow that answers the query
 * (`ctx.onQuery(query, handler)`) and by the caller that asks it (`client.query(runId, query)`),
 * so the arguments and the answer are typed on both sides (docs/queries.md).
 *
 * A query reads a run's state and changes nothing: its handler is synchronous, it is never
 * journaled, and every ctx call inside it is refused (the replay executor's query handlers,
 * runtime/executor/query-handlers.ts).
 */
import { ConfigError } from '../shared/errors.js';
import { workflowNameProblem } from './start-fields.js';

/**
 * Carries the types only; no value is ever stored under them. Symbols declared but never created
 * keep the markers out of editors' completions and out of the JSON of a definition.
 */
declare const resultType: unique symbol;
declare const argsType: unique symbol;

/**
 * A named query whose handler receives `Args` and answers a `Result`. Create one with
 * {@link defineQuery}.
 */
export interface QueryDefinition<Result = unknown, Args = void> {
  readonly kind: 'query';
  /** The name the handler is registered under and a caller asks by (HTTP API, CLI). */
  readonly name: string;
  /** Type-level only: the answer's type. Never present at runtime. */
  readonly [resultType]?: Result;
  /** Type-level only: the arguments' type. Never present at runtime. */
  readonly [argsType]?: (args: Args) => void;
}

/**
 * Defines a query answering a `Result`, asked with `Args` (none by default):
 *
 * ```ts
 * export const progress = defineQuery<{ done: number; total: number }>('progress');
 * // in the workflow: ctx.onQuery(progress, () => ({ done, total }));
 * const { done } = await client.query(runId, progress);
 * ```
 *
 * The name is 1-128 letters, digits, '_', '.', ':' and '-' (it travels in a URL path and on the
 * command line); anything else is refused with ConfigError here, not at the first ask.
 */
export function defineQuery<Result, Args = void>(name: string): QueryDefinition<Result, Args> {
  const problem = queryNameProblem(name);
  if (problem !== undefined) throw new ConfigError(`defineQuery: ${problem}`);
  return Object.freeze({ kind: 'query' as const, name });
}

/** What is wrong with a query name, in words that follow "defineQuery: "; undefined when valid. */
export function queryNameProblem(name: unknown): string | undefined {
  if (typeof name === 'string' && workflowNameProblem(name) === undefined) return undefined;
  return (
    `the query name ${JSON.stringify(name) ?? String(name)} is invalid: ` +
    "use 1-128 characters from letters, digits, '_', '.', ':' and '-'"
  );
}

/** The name of a query given as a definition or as a plain name. */
export function queryName(query: string | QueryDefinition<unknown, never>): string {
  return typeof query === 'string' ? query : query.name;
}
