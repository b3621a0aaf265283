/**
 * The dead-letter page request and purge checks every transport shares, and its cursors. A cursor
 * is the position (a stream sequence, an offset, a counter: whatever orders the transport's
 * letters) of the last letter on a page, base64url-encoded behind a `dl1:` tag so a cursor from
 * run queries or a typo is refused rather than read as a position.
 */
import {
  DEFAULT_DEAD_LETTER_PAGE,
  MAX_DEAD_LETTER_PAGE,
  type DeadLetterPurge,
  type DeadLetterQuery,
} from './contracts/transport.js';
import { ConfigError } from '../shared/errors.js';

const CURSOR_TAG = 'dl1:';

/** A checked {@link DeadLetterQuery}. */
export interface CheckedDeadLetterQuery {
  limit: number;
  /** The page holds letters positioned strictly below this; undefined for the newest page. */
  before: number | undefined;
}

/** Validates a page request; `owner` names the transport in the error (`nats transport`). */
export function checkDeadLetterQuery(query: DeadLetterQuery = {}, owner: string): CheckedDeadLetterQuery {
  const { limit = DEFAULT_DEAD_LETTER_PAGE, cursor } = query;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_DEAD_LETTER_PAGE) {
    throw new ConfigError(
      `${owner}: dead-letter page limit ${String(limit)} is invalid; give a whole number from 1 to ${MAX_DEAD_LETTER_PAGE}`,
    );
  }
  return { limit, before: cursor === undefined ? undefined : readCursor(cursor, owner) };
}

/** The cursor of a page whose last (oldest) letter is at `position`. */
export function deadLetterCursor(position: number): string {
  return Buffer.from(`${CURSOR_TAG}${position}`, 'utf8').toString('base64url');
}

function readCursor(cursor: string, owner: string): number {
  const text = typeof cursor === 'string' ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const position = Number(text.slice(CURSOR_TAG.length));
  if (!text.startsWith(CURSOR_TAG) || !Number.isSafeInteger(position) || position < 0) {
    throw new ConfigError(
      `${owner}: dead-letter cursor ${JSON.stringify(cursor)} is not one this transport issued; pass a page's cursor unchanged, or omit it for the newest letters`,
    );
  }
  return position;
}

/** Validates a purge request, naming what is wrong with it. */
export function checkDeadLetterPurge(purge: DeadLetterPurge, owner: string): DeadLetterPurge {
  const given = purge as Partial<Record<'ids' | 'all' | 'olderThan', unknown>> | null | undefined;
  const keys = given === null || typeof given !== 'object' ? [] : Object.keys(given);
  const hint = 'give exactly one of { ids: string[] }, { all: true } or { olderThan: <ms since epoch> }';
  if (keys.length !== 1 || given === null || given === undefined) {
    throw new ConfigError(`${owner}: dead-letter purge ${JSON.stringify(purge)} is invalid; ${hint}`);
  }
  if ('ids' in given) {
    if (!Array.isArray(given.ids) || !given.ids.every((id) => typeof id === 'string')) {
      throw new ConfigError(`${owner}: dead-letter purge ids must be an array of strings; ${hint}`);
    }
  } else if ('all' in given) {
    if (given.all !== true) throw new ConfigError(`${owner}: dead-letter purge all must be true; ${hint}`);
  } else if (!Number.isFinite(given.olderThan)) {
    throw new ConfigError(`${owner}: dead-letter purge olderThan must be a time in ms since epoch; ${hint}`);
  }
  return purge;
}

/** The letter's position from an id made of a whole number (`String(position)`), else undefined. */
export function positionOfId(id: string, prefix = ''): number | undefined {
  if (typeof id !== 'string' || !id.startsWith(prefix)) return undefined;
  const digits = id.slice(prefix.length);
  if (!/^\d{1,15}$/.test(digits)) return undefined;
  return Number(digits);
}
