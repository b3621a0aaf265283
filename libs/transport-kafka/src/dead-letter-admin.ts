/**
 * Dead-letter administration on Kafka. A letter's id is `0-<offset>`: its partition (the DLQ
 * topic has exactly one) and offset, stable for as long as the record exists.
 *
 * Kafka cannot delete one record, so removal is a marker appended to the same DLQ topic: a record
 * keyed `baton-dlq-removed` whose header `baton-dlq-removes` lists the removed offsets, or whose
 * header `baton-dlq-removes-below` removes every letter below an offset (purge all). Listing reads
 * the topic's retained records once, letters and markers together, and leaves out the removed
 * letters. Keeping the markers in the letters' own topic means no second topic to create, secure
 * and retain: a marker always comes after the letters it names, so retention (the topic's
 * `retention.ms`, the broker default unless set) drops a letter before its marker. The cost is one
 * read of the retained dead letters per call, which is fine for a queue of poison messages that
 * operators read by hand.
 */
import { ConfigError, NotFoundError } from '@baton/core';
import {
  checkDeadLetterPurge,
  checkDeadLetterQuery,
  pageOfDeadLetters,
  positionOfId,
  type DeadLetter,
  type DeadLetterPage,
  type DeadLetterPurge,
  type DeadLetterQuery,
  type StoredDeadLetter,
} from '@baton/core/adapter';
import type { KafkaContext } from './context.js';
import { DATA_DROPPED_HEADER, DEAD_LETTER_HEADERS, DEFAULT_DEAD_LETTER_LIMIT } from './dead-letters.js';

const OWNER = 'kafka transport';
const ID_PREFIX = '0-';
const MARKER_KEY = 'baton-dlq-removed';
const REMOVES = 'baton-dlq-removes';
const REMOVES_BELOW = 'baton-dlq-removes-below';

/** A letter with its offset, as {@link pageOfDeadLetters} takes them. */
interface PositionedLetter {
  position: number;
  letter: StoredDeadLetter;
}

/** Every letter not removed, oldest first. */
async function readLetters(context: KafkaContext): Promise<PositionedLetter[]> {
  const [offsets] = await context.admin.fetchTopicOffsets(context.layout.dlqTopic);
  if (offsets === undefined) return [];
  const high = Number(offsets.high);
  const low = Number(offsets.low);
  if (high <= low) return [];
  const records = await context.reader.read(context.layout.dlqTopic, 0, low, high - 1, () => true);
  const removed = new Set<number>();
  let removedBelow = 0;
  const letters: PositionedLetter[] = [];
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

/** The most recent `limit` letters not removed, oldest first. */
export async function listDeadLetters(
  context: KafkaContext,
  limit = DEFAULT_DEAD_LETTER_LIMIT,
): Promise<DeadLetter[]> {
  limit = Math.floor(limit);
  if (!(limit > 0)) return [];
  const letters = await readLetters(context);
  return letters.slice(-limit).map(({ letter: { id: _id, ...letter } }) => letter);
}

export async function pageDeadLetters(
  context: KafkaContext,
  query: DeadLetterQuery | undefined,
): Promise<DeadLetterPage> {
  const checked = checkDeadLetterQuery(query, OWNER);
  return pageOfDeadLetters(await readLetters(context), checked);
}

export async function getDeadLetter(
  context: KafkaContext,
  id: string,
): Promise<StoredDeadLetter | undefined> {
  const offset = positionOfId(id, ID_PREFIX);
  if (offset === undefined) return undefined;
  return (await readLetters(context)).find((l) => l.position === offset)?.letter;
}

/** The letter to redrive, refused when gone or when its data was dropped. */
export async function letterToRedrive(context: KafkaContext, id: string): Promise<StoredDeadLetter> {
  const letter = await getDeadLetter(context, id);
  if (letter === undefined) {
    throw new NotFoundError(
      `${OWNER}: no dead letter ${JSON.stringify(id)} to redrive; it was never there, or was already redriven or purged (list them with pageDeadLetters)`,
    );
  }
  const dropped = letter.headers[DATA_DROPPED_HEADER];
  if (dropped !== undefined) {
    throw new ConfigError(
      `${OWNER}: dead letter ${id} cannot be redriven: its data (${dropped}) was too large for the topic and was not kept; purge it once handled`,
    );
  }
  return letter;
}

/** Appends a marker removing the chosen letters; resolves how many of them were still listed. */
export async function purgeDeadLetters(context: KafkaContext, purge: DeadLetterPurge): Promise<number> {
  checkDeadLetterPurge(purge, OWNER);
  const letters = await readLetters(context);
  let headers: Record<string, string>;
  let count: number;
  if ('all' in purge) {
    const last = letters.at(-1);
    if (last === undefined) return 0;
    headers = { [REMOVES_BELOW]: String(last.position + 1) };
    count = letters.length;
  } else {
    const chosen =
      'ids' in purge
        ? letters.filter((l) => purge.ids.includes(l.letter.id))
        : letters.filter((l) => l.letter.at < purge.olderThan);
    if (chosen.length === 0) return 0;
    headers = { [REMOVES]: chosen.map((l) => l.position).join(',') };
    count = chosen.length;
  }
  await context.producer.send({
    topic: context.layout.dlqTopic,
    partition: 0,
    key: MARKER_KEY,
    value: Buffer.alloc(0),
    headers,
  });
  return count;
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
