/** Reading the transport's streams, whose entry ids are all `0-<n>`. */
import { redisCommandFailed } from './errors.js';

/** One entry as ioredis's `…Buffer` stream commands return it: id and flat field/value pairs. */
export type StreamEntry = [id: Buffer, fields: Buffer[]];

/** The `n` of an entry id `0-<n>`; anything else was not written by this transport. */
export function positionOfEntryId(id: Buffer | string): number {
  const text = id.toString();
  const match = /^0-(\d+)$/.exec(text);
  const position = match === null ? NaN : Number(match[1]);
  if (!Number.isSafeInteger(position)) {
    throw redisCommandFailed(
      `redis transport: stream entry id '${text}' is not of the form 0-<n>; something other than the transport wrote to its keys`,
    );
  }
  return position;
}

/** The fields of an entry by name (names are ASCII, values stay bytes). */
export function fieldsOf(fields: Buffer[]): Map<string, Buffer> {
  const map = new Map<string, Buffer>();
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i]!.toString(), fields[i + 1]!);
  return map;
}
