/**
 * Showing a dead letter: the transport keeps the original message as bytes (a letter is often
 * there precisely because its bytes do not decode), so decoding is the reader's job, done here for
 * the client's listings and bulk actions, and for the CLI and the console through the client's
 * door. It never throws: an unreadable letter is the common case, and the
 * operator needs to be told why rather than get an exception from the tool meant to inspect it.
 */
import type { RawMessage } from '@baton/core/adapter';
import { decodeMessage, type RunMessage } from '@baton/core/runtime';

/** Headers the transports set when a letter's data is not the whole original message. */
const CUT_HEADERS = {
  'baton-dlq-truncated': (value: string) => `its data was cut from ${value} bytes to fit the bus`,
  'baton-dlq-data-dropped': (value: string) => `its data (${value}) was too large to keep`,
} as const;

/** A dead letter's original message, decoded, or why it could not be. */
export type DecodedDeadLetter =
  { readable: true; message: RunMessage } | { readable: false; problem: string };

/** Decodes the run message a dead letter holds; see {@link DecodedDeadLetter}. */
export function decodeDeadLetter(letter: RawMessage): DecodedDeadLetter {
  for (const [header, describe] of Object.entries(CUT_HEADERS)) {
    const value = letter.headers[header];
    if (value !== undefined)
      return { readable: false, problem: `not the original message: ${describe(value)}` };
  }
  try {
    return { readable: true, message: decodeMessage(letter.data) };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return {
      readable: false,
      problem: `unparseable run message (${letter.data.byteLength} bytes): ${reason}`,
    };
  }
}
