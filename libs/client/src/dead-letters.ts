/**
 * The transport's dead letters as an operator handles them (`client.deadLetters`): list them,
 * look at one decoded, redrive or purge them. Thin and typed over the transport's dead-letter
 * queue, so the CLI, the console and applications share one API and its errors.
 */
import { NotFoundError } from '@baton/core';
import type {
  DeadLetterPage,
  DeadLetterPurge,
  DeadLetterQuery,
  RedriveResult,
  StoredDeadLetter,
  Transport,
} from '@baton/core/adapter';
import { decodeDeadLetter, type DecodedDeadLetter } from './dead-letter-message.js';

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
