/**
 * Dead letters on a Redis Stream of their own, `<prefix>:dlq`: one entry per letter, with the
 * original bytes (`d`) and headers (`h`, JSON) and the letter's own fields (`c` code, `r` reason,
 * `a` time). Entry ids are `0-<n>`, numbered on by `XADD 0-*` from the stream's last id, which
 * deleting entries keeps: a letter's id (`n`) is never reused. Redis takes values up to 512 MB,
 * so a letter is stored whole, never cut to fit.
 */
import { bufferView, ownedBytes, type DeadLetter, type StoredDeadLetter } from '@baton/core/adapter';
import type { TransportContext } from './context.js';
import { fieldsOf, positionOfEntryId, type StreamEntry } from './streams.js';

/** A reason longer than this is cut: it is a message for an operator, not a payload. */
const MAX_REASON_CHARS = 4_096;

/** Stores a dead letter; see the module comment. */
export async function storeDeadLetter(context: TransportContext, letter: DeadLetter): Promise<void> {
  const fields = [
    'd',
    Buffer.from(bufferView(letter.data)),
    'h',
    JSON.stringify(letter.headers),
    'c',
    oneLine(letter.code),
    'r',
    oneLine(letter.reason).slice(0, MAX_REASON_CHARS),
    'a',
    String(letter.at),
  ];
  await context.writeReplicated('deadLetter', () =>
    context.redis.xadd(context.layout.deadLetters, '0-*', ...fields),
  );
}

/** A stream entry as a letter. */
export function toStoredLetter([id, raw]: StreamEntry): StoredDeadLetter {
  const fields = fieldsOf(raw);
  const at = Number(fields.get('a')?.toString());
  return {
    id: String(positionOfEntryId(id)),
    data: ownedBytes(fields.get('d') ?? Buffer.alloc(0)),
    headers: parseHeaders(fields.get('h')?.toString()),
    code: fields.get('c')?.toString() ?? 'unknown',
    reason: fields.get('r')?.toString() ?? '',
    at: Number.isFinite(at) ? at : 0,
  };
}

function parseHeaders(json: string | undefined): Record<string, string> {
  if (json === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(json);
    if (parsed === null || typeof parsed !== 'object') return {};
    return Object.fromEntries(
      Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
  } catch {
    return {};
  }
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}
