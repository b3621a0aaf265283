/**
 * The in-process transport's dead letters: an array, oldest first, each letter positioned by a
 * counter (its id is the position as a string, never reused). Beyond `maxDeadLetters` the oldest
 * is dropped, so a poison-message storm cannot exhaust memory. Bytes are copied on the way in and
 * out. Paging, redrive and purge are the shared ones (dead-letter-queue.ts).
 */
import type { DeadLetter, StoredDeadLetter } from '../adapter/contracts/transport.js';
import type { DeadLetterShelf, PositionedDeadLetter } from '../adapter/dead-letter-queue.js';

export class MemoryDeadLetters implements DeadLetterShelf {
  readonly owner = 'memory transport';
  readonly scanPage = Number.MAX_SAFE_INTEGER;
  /** Oldest first. */
  private letters: PositionedDeadLetter[] = [];
  private lastPosition = 0;

  constructor(private readonly maxLetters: number) {}

  async store(letter: DeadLetter): Promise<void> {
    const position = ++this.lastPosition;
    this.letters.push({ position, letter: { ...copyLetter(letter), id: String(position) } });
    if (this.letters.length > this.maxLetters) this.letters.shift();
  }

  async newest(before: number | undefined, count: number): Promise<PositionedDeadLetter[]> {
    const below = this.letters.filter((l) => before === undefined || l.position < before);
    return below
      .slice(-count)
      .reverse()
      .map(({ position, letter }) => ({ position, letter: copyStoredLetter(letter) }));
  }

  async read(position: number): Promise<StoredDeadLetter | undefined> {
    const found = this.letters.find((l) => l.position === position);
    return found === undefined ? undefined : copyStoredLetter(found.letter);
  }

  async remove(positions: readonly number[]): Promise<number> {
    const doomed = new Set(positions);
    const before = this.letters.length;
    this.letters = this.letters.filter((l) => !doomed.has(l.position));
    return before - this.letters.length;
  }

  async removeAll(): Promise<number> {
    const count = this.letters.length;
    this.letters = [];
    return count;
  }
}

function copyStoredLetter(letter: StoredDeadLetter): StoredDeadLetter {
  return { ...copyLetter(letter), id: letter.id };
}

function copyLetter(letter: DeadLetter): DeadLetter {
  return {
    data: new Uint8Array(letter.data),
    headers: { ...letter.headers },
    reason: letter.reason,
    code: letter.code,
    at: letter.at,
  };
}
