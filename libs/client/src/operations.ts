/**
 * What an operator does with a fleet through the client: find runs (`client.runs`) and look at,
 * redrive or purge dead letters (`client.deadLetters`). Thin and typed over the store's run
 * queries and the transport's dead-letter queue, so the CLI, the console and applications share
 * one API and its errors.
 */
import { NotFoundError } from '@baton/core';
import type {
  DeadLetterPage,
  DeadLetterPurge,
  DeadLetterQuery,
  ListedRun,
  RedriveResult,
  RunCounts,
  RunPage,
  RunQuery,
  Store,
  StoredDeadLetter,
  Transport,
} from '@baton/core/adapter';
import { decodeDeadLetter, type DecodedDeadLetter } from '@baton/core/runtime';

/** Runs as an operator finds them; reads the store. */
export class RunQueriesApi {
  constructor(private readonly store: (method: string) => Store) {}

  /**
   * One page of the runs the query matches, newest first unless `order: 'oldest'`; pass the page's
   * `cursor` (with the same filter and order) for the next. ConfigError names an invalid filter or
   * a cursor from another query.
   */
  list(query: RunQuery = {}): Promise<RunPage> {
    return this.store('runs.list').listRuns(query);
  }

  /** Every run the query matches, page after page (`limit` runs a page). */
  async *all(query: Omit<RunQuery, 'cursor'> = {}): AsyncGenerator<ListedRun> {
    let cursor: string | undefined;
    do {
      const page = await this.list({ ...query, ...(cursor !== undefined && { cursor }) });
      yield* page.runs;
      cursor = page.cursor;
    } while (cursor !== undefined);
  }

  /** How many runs there are, by status and by workflow and status. */
  count(): Promise<RunCounts> {
    return this.store('runs.count').countRuns();
  }
}

/** A dead letter with its original run message decoded, or why it cannot be. */
export interface ShownDeadLetter extends StoredDeadLetter {
  message: DecodedDeadLetter;
}

/** The transport's dead letters: poison messages, each with its code and reason. */
export class DeadLettersApi {
  constructor(private readonly transport: Transport) {}

  /** Newest first, a page at a time; pass the page's `cursor` for older ones. */
  list(query: DeadLetterQuery = {}): Promise<DeadLetterPage> {
    return this.transport.deadLetters.page(query);
  }

  /** One letter with its original message decoded; NotFoundError when there is none by that id. */
  async show(id: string): Promise<ShownDeadLetter> {
    const letter = await this.transport.deadLetters.get(id);
    if (letter === undefined) throw notFound('show', id);
    return { ...letter, message: decodeDeadLetter(letter) };
  }

  /**
   * Puts the letter's original message back on the run queue, then removes the letter (a crash in
   * between runs the message twice, which the store's idempotency makes harmless; it is never
   * lost). NotFoundError for an unknown id; ConfigError for a letter whose bytes were cut.
   */
  async redrive(id: string): Promise<RedriveResult> {
    try {
      return await this.transport.deadLetters.redrive(id);
    } catch (err) {
      if (err instanceof NotFoundError) throw notFound('redrive', id);
      throw err;
    }
  }

  /** Removes letters by id, by age (dead-lettered before `olderThan`) or all; resolves how many. */
  purge(purge: DeadLetterPurge): Promise<number> {
    return this.transport.deadLetters.purge(purge);
  }
}

function notFound(method: string, id: string): NotFoundError {
  return new NotFoundError(
    `client.deadLetters.${method}(${id}): no dead letter has that id (never was, or already ` +
      'redriven or purged); list them with client.deadLetters.list()',
  );
}
