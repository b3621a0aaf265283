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

/** Marks a letter whose data was too large to keep: it cannot be redriven. */
export const DATA_DROPPED_HEADER = 'baton-dlq-data-dropped';

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
  if (tooLarge) headers[DATA_DROPPED_HEADER] = `${letter.data.byteLength} bytes`;
  await context.producer.send({
    topic: context.layout.dlqTopic,
    partition: 0,
    key: null,
    value: tooLarge ? Buffer.alloc(0) : Buffer.from(letter.data),
    headers,
  });
}
