/**
 * Dead letters on Kafka: a one-partition topic, so they keep their order. The original message's
 * data is the record value; its headers travel as they were, plus `baton-dlq-code`,
 * `baton-dlq-reason` and `baton-dlq-at`.
 */
import type { DeadLetter } from '@baton/core/adapter';
import type { KafkaContext } from './context.js';

export const DEAD_LETTER_HEADERS = {
  code: 'baton-dlq-code',
  reason: 'baton-dlq-reason',
  at: 'baton-dlq-at',
} as const;

export const DEFAULT_DEAD_LETTER_LIMIT = 100;
const MAX_REASON_CHARS = 4_096;

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').slice(0, MAX_REASON_CHARS);
}

export async function storeDeadLetter(context: KafkaContext, letter: DeadLetter): Promise<void> {
  const headers: Record<string, string> = { ...letter.headers };
  headers[DEAD_LETTER_HEADERS.code] = oneLine(letter.code);
  headers[DEAD_LETTER_HEADERS.reason] = oneLine(letter.reason);
  headers[DEAD_LETTER_HEADERS.at] = String(letter.at);
  // A dead letter too large for the topic keeps its reason and loses its data, never the letter.
  const tooLarge = letter.data.byteLength > context.options.maxMessageBytes;
  if (tooLarge) headers['baton-dlq-data-dropped'] = `${letter.data.byteLength} bytes`;
  await context.producer.send({
    topic: context.layout.dlqTopic,
    partition: 0,
    key: null,
    value: tooLarge ? Buffer.alloc(0) : Buffer.from(letter.data),
    headers,
  });
}

export async function listDeadLetters(
  context: KafkaContext,
  limit = DEFAULT_DEAD_LETTER_LIMIT,
): Promise<DeadLetter[]> {
  limit = Math.floor(limit);
  if (!(limit > 0)) return [];
  const [offsets] = await context.admin.fetchTopicOffsets(context.layout.dlqTopic);
  if (offsets === undefined) return [];
  const high = Number(offsets.high);
  const low = Number(offsets.low);
  if (high <= low) return [];
  const from = Math.max(low, high - limit);
  const records = await context.reader.read(context.layout.dlqTopic, 0, from, high - 1, () => true);
  return records.map((record) => {
    const headers = { ...record.headers };
    const code = headers[DEAD_LETTER_HEADERS.code] ?? 'unknown';
    const reason = headers[DEAD_LETTER_HEADERS.reason] ?? '';
    const at = Number(headers[DEAD_LETTER_HEADERS.at] ?? 0);
    for (const name of Object.values(DEAD_LETTER_HEADERS)) delete headers[name];
    return { data: new Uint8Array(record.value), headers, code, reason, at };
  });
}
