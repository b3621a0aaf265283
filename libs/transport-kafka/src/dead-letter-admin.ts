/**
 * The dead-letter shelf on Kafka (paging, redrive and purge are core's, dead-letter-queue.ts). A
 * letter's position is its offset, and its id `0-<offset>`: its partition (the DLQ topic has
 * exactly one) and offset, stable for as long as the record exists.
 *
 * Kafka cannot delete one record, so removal is a marker appended to the same DLQ topic: a record
 * keyed `baton-dlq-removed` whose header `baton-dlq-removes` lists the removed offsets, or whose
 * header `baton-dlq-removes-below` removes every letter below an offset (purge all). Reading
 * reads the topic's retained records once, letters and markers together, and leaves out the removed
 * letters. Keeping the markers in the letters' own topic means no second topic to create, secure
 * and retain: a marker always comes after the letters it names, so retention (the topic's
 * `retention.ms`, the broker default unless set) drops a letter before its marker. The cost is one
 * read of the retained dead letters per call, which is fine for a queue of poison messages that
 * operators read by hand.
 */
import type {
  DeadLetter,
  DeadLetterShelf,
  PositionedDeadLetter,
  StoredDeadLetter,
} from '@baton/core/adapter';
import type { KafkaContext, KafkaGuard } from './context.js';
import { DATA_DROPPED_HEADER, DEAD_LETTER_HEADERS, storeDeadLetter } from './dead-letters.js';

const ID_PREFIX = '0-';
const MARKER_KEY = 'baton-dlq-removed';
const REMOVES = 'baton-dlq-removes';
const REMOVES_BELOW = 'baton-dlq-removes-below';

export class KafkaDeadLetters implements DeadLetterShelf {
  readonly owner = 'kafka transport';
  readonly idPrefix = ID_PREFIX;
  /** Every read reads the whole topic: a walk asks for every letter at once. */
  readonly scanPage = Number.MAX_SAFE_INTEGER;

  constructor(private readonly guard: KafkaGuard) {}

  store(letter: DeadLetter): Promise<void> {
    return this.guard('deadLetters.add', false, (context) => storeDeadLetter(context, letter));
  }

  async newest(
    before: number | undefined,
    count: number,
    operation: string,
  ): Promise<PositionedDeadLetter[]> {
    const letters = await this.guard(operation, true, readLetters);
    return letters
      .filter((l) => before === undefined || l.position < before)
      .slice(-count)
      .reverse();
  }

  async read(offset: number, operation: string): Promise<StoredDeadLetter | undefined> {
    return (await this.guard(operation, true, readLetters)).find((l) => l.position === offset)?.letter;
  }

  /** Appends a marker removing those of the letters still listed; resolves how many they were. */
  remove(offsets: readonly number[], operation: string): Promise<number> {
    return this.guard(operation, false, async (context) => {
      const chosen = new Set(offsets);
      const listed = (await readLetters(context)).filter((l) => chosen.has(l.position));
      if (listed.length === 0) return 0;
      await appendMarker(context, { [REMOVES]: listed.map((l) => l.position).join(',') });
      return listed.length;
    });
  }

  /** Appends a marker removing every letter below the newest one's offset + 1. */
  removeAll(operation: string): Promise<number> {
    return this.guard(operation, false, async (context) => {
      const letters = await readLetters(context);
      const last = letters.at(-1);
      if (last === undefined) return 0;
      await appendMarker(context, { [REMOVES_BELOW]: String(last.position + 1) });
      return letters.length;
    });
  }

  notOriginal(letter: StoredDeadLetter): string | undefined {
    const dropped = letter.headers[DATA_DROPPED_HEADER];
    return dropped === undefined
      ? undefined
      : `its data (${dropped}) was too large for the topic and was not kept`;
  }
}

/** Every letter not removed, oldest first. */
async function readLetters(context: KafkaContext): Promise<PositionedDeadLetter[]> {
  const [offsets] = await context.admin.fetchTopicOffsets(context.layout.dlqTopic);
  if (offsets === undefined) return [];
  const high = Number(offsets.high);
  const low = Number(offsets.low);
  if (high <= low) return [];
  const records = await context.reader.read(context.layout.dlqTopic, 0, low, high - 1, () => true);
  const removed = new Set<number>();
  let removedBelow = 0;
  const letters: PositionedDeadLetter[] = [];
  for (const record of records) {
    if (record.key === MARKER_KEY) {
      for (const offset of (record.headers[REMOVES] ?? '').split(','))
        if (offset !== '') removed.add(Number(offset));
      removedBelow = Math.max(removedBelow, Number(record.headers[REMOVES_BELOW] ?? 0) || 0);
      continue;
    }
    letters.push({
      position: record.offset,
      letter: toStoredLetter(record.offset, record.value, record.headers),
    });
  }
  return letters.filter((l) => l.position >= removedBelow && !removed.has(l.position));
}

async function appendMarker(context: KafkaContext, headers: Record<string, string>): Promise<void> {
  await context.producer.send({
    topic: context.layout.dlqTopic,
    partition: 0,
    key: MARKER_KEY,
    value: Buffer.alloc(0),
    headers,
  });
}

function toStoredLetter(
  offset: number,
  value: Buffer,
  recordHeaders: Record<string, string>,
): StoredDeadLetter {
  const headers = { ...recordHeaders };
  const code = headers[DEAD_LETTER_HEADERS.code] ?? 'unknown';
  const reason = headers[DEAD_LETTER_HEADERS.reason] ?? '';
  const at = Number(headers[DEAD_LETTER_HEADERS.at] ?? 0);
  for (const name of Object.values(DEAD_LETTER_HEADERS)) delete headers[name];
  const letter: DeadLetter = { data: new Uint8Array(value), headers, code, reason, at };
  return { ...letter, id: `${ID_PREFIX}${offset}` };
}
