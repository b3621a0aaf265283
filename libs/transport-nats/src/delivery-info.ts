/**
 * Delivery facts of a JetStream message, read from its ack subject, so a delivery costs no
 * request. Two forms exist:
 *
 * - `$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>` (9 tokens, 2.9 and
 *   servers without domains);
 * - `$JS.ACK.<domain>.<account>.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>.<token>`
 *   (12 tokens, newer servers; 11 when the trailing token is absent).
 */

/** What an ack subject tells about one delivery. */
export interface AckInfo {
  /** 1 on first delivery, incremented on every redelivery. */
  deliveryCount: number;
  /** The message's sequence in its stream. */
  streamSequence: number;
}

/** Where the delivery count sits in each form; the stream sequence follows it. */
const DELIVERED_INDEX_V1 = 4;
const DELIVERED_INDEX_V2 = 6;

/** Reads an ack subject; throws for a subject that is not a JetStream ack. */
export function ackInfoOf(replySubject: string | undefined): AckInfo {
  const subject = replySubject ?? '';
  const tokens = subject.split('.');
  if (tokens[0] !== '$JS' || tokens[1] !== 'ACK') {
    throw new Error(`'${subject}' is not a JetStream ack subject; was the message fetched from a consumer?`);
  }
  const index = tokens.length === 9 ? DELIVERED_INDEX_V1 : tokens.length >= 11 ? DELIVERED_INDEX_V2 : -1;
  const deliveryCount = Number(tokens[index]);
  const streamSequence = Number(tokens[index + 1]);
  if (!isCount(deliveryCount) || !isCount(streamSequence)) {
    throw new Error(`cannot read the delivery count and sequence from ack subject '${subject}'`);
  }
  return { deliveryCount, streamSequence };
}

function isCount(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 1;
}
