/**
 * Dead letters on JetStream: the original bytes and headers on `<prefix>.dlq`, with the reason in
 * headers (`baton-dlq-code`, `baton-dlq-reason`, `baton-dlq-at`). A dead letter is the last record
 * of a message that could not be processed, so it is never lost for being too large: data that
 * does not fit the server's max_payload is stored truncated, marked `baton-dlq-truncated:
 * <original bytes>`, and the reason says so.
 */
import type { DeadLetter } from '@baton/core/adapter';
import type { TransportContext } from './context.js';
import {
  encodedSize,
  fromNatsHeaders,
  maxPayload,
  oneLine,
  toNatsHeaders,
  travellingHeaders,
} from './messages.js';
import type { StoredRecord } from './stream-reader.js';

/** Header names of a dead letter's own fields. */
export const DEAD_LETTER_HEADERS = {
  code: 'baton-dlq-code',
  reason: 'baton-dlq-reason',
  at: 'baton-dlq-at',
  truncated: 'baton-dlq-truncated',
} as const;

/** A reason longer than this is cut: it is a message for an operator, not a payload. */
const MAX_REASON_CHARS = 4_096;

/** Stores a dead letter; see the module comment. */
export async function storeDeadLetter(context: TransportContext, letter: DeadLetter): Promise<void> {
  const { nc, js } = context.session;
  const original = travellingHeaders(letter.headers);
  for (const name of Object.values(DEAD_LETTER_HEADERS)) delete original[name];
  const own = {
    [DEAD_LETTER_HEADERS.code]: oneLine(letter.code),
    [DEAD_LETTER_HEADERS.reason]: oneLine(letter.reason).slice(0, MAX_REASON_CHARS),
    [DEAD_LETTER_HEADERS.at]: String(letter.at),
  };
  let data = letter.data;
  let h = toNatsHeaders(original, own);
  const limit = maxPayload(nc);
  if (limit !== undefined && encodedSize(data, h) > limit) {
    const size = data.byteLength;
    const marked = {
      ...own,
      [DEAD_LETTER_HEADERS.reason]: `${own[DEAD_LETTER_HEADERS.reason]} (data truncated from ${size} bytes to fit max_payload ${limit})`,
      [DEAD_LETTER_HEADERS.truncated]: String(size),
    };
    h = toNatsHeaders(original, marked);
    // Headers too large on their own: keep the dead letter's fields, drop the message's headers.
    if (encodedSize(new Uint8Array(), h) > limit) h = toNatsHeaders({}, marked);
    data = data.subarray(0, Math.max(0, limit - encodedSize(new Uint8Array(), h)));
  }
  try {
    await js.publish(context.layout.deadLetterSubject, data, { headers: h });
  } catch (err) {
    throw context.toError('deadLetter', err);
  }
}

export function toDeadLetter(record: StoredRecord): DeadLetter {
  const headers = fromNatsHeaders(record.header);
  const code = headers[DEAD_LETTER_HEADERS.code] ?? 'unknown';
  const reason = headers[DEAD_LETTER_HEADERS.reason] ?? '';
  const at = Number(headers[DEAD_LETTER_HEADERS.at]);
  delete headers[DEAD_LETTER_HEADERS.code];
  delete headers[DEAD_LETTER_HEADERS.reason];
  delete headers[DEAD_LETTER_HEADERS.at];
  return { data: record.data, headers, code, reason, at: Number.isFinite(at) ? at : 0 };
}
