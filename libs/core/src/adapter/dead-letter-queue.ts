/**
 * Dead-letter administration written once. A bus keeps its letters on a {@link DeadLetterShelf}:
 * store one, read the newest below a position, read one, remove some or all. Paging, get, redrive,
 * purge and the legacy list are built on those here, so every transport pages, refuses and counts
 * alike, and its cursors are the shared `dl1:` ones (dead-letter-check.ts).
 *
 * A letter's position is the whole number that orders the bus's letters (a stream sequence, an
 * offset, a counter); its id is the position behind the shelf's {@link DeadLetterShelf.idPrefix}.
 * A bus that reaches its connection through a context writes its shelf as a {@link ContextShelf}:
 * {@link shelfOnContext} hands each call the context.
 */
import type {
  DeadLetter,
  DeadLetterPage,
  DeadLetterPurge,
  DeadLetterQuery,
  DeadLetterQueue,
  EnqueueOptions,
  RedriveResult,
  StoredDeadLetter,
} from './contracts/transport.js';
import { DEFAULT_DEAD_LETTER_PAGE } from './contracts/transport.js';
import {
  checkDeadLetterPurge,
  checkDeadLetterQuery,
  deadLetterCursor,
  positionOfId,
} from './dead-letter-check.js';
import { ConfigError, NotFoundError } from '../shared/errors.js';

/** A stored letter with the position that orders it among the bus's letters. */
export interface PositionedDeadLetter {
  position: number;
  letter: StoredDeadLetter;
}

/**
 * What a bus provides for its dead letters. Every read or removal is told the public operation it
 * serves (`deadLetters.page`, `deadLetters.purge`, …), for the bus's errors to name it.
 */
export interface DeadLetterShelf {
  /** Names the transport in refusals (`nats transport`). */
  readonly owner: string;
  /** What comes before the position in a letter's id (Kafka `0-`); none when the id is the position. */
  readonly idPrefix?: string;
  /**
   * How many letters a walk over every letter (a purge by time) asks {@link newest} for at once: a
   * bus that reads its whole queue on every call anyway asks for all of them in one.
   */
  readonly scanPage: number;
  /** Stores a letter, after the ones stored before it. */
  store(letter: DeadLetter): Promise<void>;
  /** Up to `count` letters positioned strictly below `before` (no bound when undefined), newest first. */
  newest(before: number | undefined, count: number, operation: string): Promise<PositionedDeadLetter[]>;
  /** The letter at `position` (any whole number), or undefined when there is none. */
  read(position: number, operation: string): Promise<StoredDeadLetter | undefined>;
  /** Removes the letters at these positions (distinct); resolves how many of them were there. */
  remove(positions: readonly number[], operation: string): Promise<number>;
  /** Removes every letter; resolves how many there were. Later letters' positions go on above them. */
  removeAll(operation: string): Promise<number>;
  /**
   * Why this letter's bytes are not the original message (cut or dropped to fit the bus), so it
   * cannot be redriven; undefined when they are. Left out by a bus that stores every letter whole.
   */
  notOriginal?(letter: StoredDeadLetter): string | undefined;
}

/**
 * A shelf as a networked bus writes it (NATS, Redis): each call is handed the open transport's
 * context `C`, like the bus's other capability files, and {@link shelfOnContext} supplies it, so no
 * bus repeats the plumbing from its transport to its shelf.
 */
export interface ContextShelf<C> {
  readonly owner: string;
  readonly idPrefix?: string;
  readonly scanPage: number;
  store(context: C, letter: DeadLetter): Promise<void>;
  newest(
    context: C,
    before: number | undefined,
    count: number,
    operation: string,
  ): Promise<PositionedDeadLetter[]>;
  read(context: C, position: number, operation: string): Promise<StoredDeadLetter | undefined>;
  remove(context: C, positions: readonly number[], operation: string): Promise<number>;
  removeAll(context: C, operation: string): Promise<number>;
  notOriginal?(letter: StoredDeadLetter): string | undefined;
}

/**
 * The {@link DeadLetterShelf} of a {@link ContextShelf}: every call asks `open` for the context
 * under its operation (`deadLetters.add` for a store). `open` makes its own closed check: the
 * administration above calls the shelf again after awaiting (a redrive's removal, a purge's walk),
 * when a close may have come since the capability's guard looked. What `open` throws is the
 * call's rejection.
 */
export function shelfOnContext<C>(open: (operation: string) => C, shelf: ContextShelf<C>): DeadLetterShelf {
  const on = async <T>(operation: string, work: (context: C) => Promise<T>): Promise<T> =>
    work(open(operation));
  const { owner, idPrefix, scanPage } = shelf;
  return {
    owner,
    scanPage,
    ...(idPrefix !== undefined && { idPrefix }),
    ...(shelf.notOriginal !== undefined && { notOriginal: shelf.notOriginal.bind(shelf) }),
    store: (letter) => on('deadLetters.add', (context) => shelf.store(context, letter)),
    newest: (before, count, operation) =>
      on(operation, (context) => shelf.newest(context, before, count, operation)),
    read: (position, operation) => on(operation, (context) => shelf.read(context, position, operation)),
    remove: (positions, operation) => on(operation, (context) => shelf.remove(context, positions, operation)),
    removeAll: (operation) => on(operation, (context) => shelf.removeAll(context, operation)),
  };
}

/**
 * The {@link DeadLetterQueue} of a shelf; `enqueue` is the transport's run queue, where a redriven
 * letter goes back.
 */
export function deadLetterQueue(
  shelf: DeadLetterShelf,
  enqueue: (data: Uint8Array, options?: EnqueueOptions) => Promise<void>,
): DeadLetterQueue {
  const { owner } = shelf;
  const positionOf = (id: string): number | undefined => positionOfId(id, shelf.idPrefix);

  return {
    add: (letter) => shelf.store(letter),

    async list(limit = DEFAULT_DEAD_LETTER_PAGE): Promise<DeadLetter[]> {
      limit = Math.floor(limit);
      if (!(limit > 0)) return [];
      const newest = await shelf.newest(undefined, limit, 'deadLetters.list');
      return newest.reverse().map(({ letter: { id: _id, ...letter } }) => letter);
    },

    async page(query?: DeadLetterQuery): Promise<DeadLetterPage> {
      const { limit, before } = checkDeadLetterQuery(query, owner);
      // One more than the page, to know whether older letters remain.
      const found = await shelf.newest(before, limit + 1, 'deadLetters.page');
      const page = found.slice(0, limit);
      const last = page.at(-1);
      return {
        letters: page.map((l) => l.letter),
        ...(found.length > limit && last !== undefined ? { cursor: deadLetterCursor(last.position) } : {}),
      };
    },

    async get(id: string): Promise<StoredDeadLetter | undefined> {
      const position = positionOf(id);
      return position === undefined ? undefined : shelf.read(position, 'deadLetters.get');
    },

    // The run queue has the message (acknowledged) before the letter goes: a crash in between
    // leaves both, never neither (the contract).
    async redrive(id: string): Promise<RedriveResult> {
      const position = positionOf(id);
      const letter = position === undefined ? undefined : await shelf.read(position, 'deadLetters.redrive');
      if (position === undefined || letter === undefined) {
        throw new NotFoundError(
          `${owner}: no dead letter ${JSON.stringify(id)} to redrive; it was never there, or was already redriven or purged (list them with deadLetters.page)`,
        );
      }
      const why = shelf.notOriginal?.(letter);
      if (why !== undefined) {
        throw new ConfigError(
          `${owner}: dead letter ${id} cannot be redriven: ${why}; purge it once handled`,
        );
      }
      await enqueue(letter.data, { headers: letter.headers });
      await shelf.remove([position], 'deadLetters.redrive');
      return { id, bytes: letter.data.byteLength };
    },

    async purge(purge: DeadLetterPurge): Promise<number> {
      checkDeadLetterPurge(purge, owner);
      const operation = 'deadLetters.purge';
      if ('all' in purge) return shelf.removeAll(operation);
      if ('ids' in purge) {
        const positions = purge.ids.map(positionOf).filter((p): p is number => p !== undefined);
        return shelf.remove([...new Set(positions)], operation);
      }
      // `at` is the letter's own field, not its position's order: walk every letter and compare.
      const doomed: number[] = [];
      for (let before: number | undefined; ;) {
        const letters = await shelf.newest(before, shelf.scanPage, operation);
        for (const { position, letter } of letters) if (letter.at < purge.olderThan) doomed.push(position);
        const last = letters.at(-1);
        if (letters.length < shelf.scanPage || last === undefined) break;
        before = last.position;
      }
      return shelf.remove(doomed, operation);
    },
  };
}
