/**
 * Between Baton's RawMessage (bytes + string headers) and NATS messages: header conversion and the
 * size check every publish makes before it leaves the process.
 */
import {
  headers as natsHeaders,
  type MsgHdrs,
  type MsgHdrsImpl,
  type NatsConnection,
} from '@nats-io/transport-node';
import { BatonError, PayloadTooLargeError } from '@baton/core';

/**
 * Headers starting with `Nats-` steer the server (de-duplication, expected sequences, rollups);
 * they never come from or go to Baton's headers, so a dead-lettered delivery cannot smuggle its
 * `Nats-Msg-Id` into the dead-letter stream (where it would be dropped as a duplicate).
 */
const RESERVED_HEADER = /^nats-/i;
/** What NATS allows in a header name: printable ASCII without ':' or space. */
const HEADER_NAME = /^[!-9;-~]+$/;

/** A header Baton was given cannot travel as a NATS header. */
export class InvalidHeaderError extends BatonError {
  constructor(message: string) {
    super('BATON_INVALID_HEADER', message, { retryable: false });
  }
}

/** NATS headers for Baton's headers; `extra` are the transport's own (e.g. `Nats-Msg-Id`). */
export function toNatsHeaders(
  headers: Record<string, string> | undefined,
  extra: Record<string, string> = {},
): MsgHdrs {
  const h = natsHeaders();
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!HEADER_NAME.test(name) || RESERVED_HEADER.test(name)) {
      throw new InvalidHeaderError(
        `header name ${JSON.stringify(name)} cannot be used: names are printable ASCII without ':' or spaces, ` +
          "and 'Nats-…' names are reserved for the server",
      );
    }
    if (typeof value !== 'string' || /[\r\n]/.test(value)) {
      throw new InvalidHeaderError(`header ${name} must be a string without line breaks`);
    }
    h.set(name, value);
  }
  for (const [name, value] of Object.entries(extra)) h.set(name, value);
  return h;
}

/** Baton's headers of a NATS message: every header except the server's `Nats-…` ones. */
export function fromNatsHeaders(h: MsgHdrs | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  if (h === undefined) return result;
  for (const name of h.keys()) {
    if (RESERVED_HEADER.test(name)) continue;
    result[name] = h.get(name);
  }
  return result;
}

/** Bytes a message takes against the server's max_payload: data plus encoded headers. */
export function encodedSize(data: Uint8Array, h: MsgHdrs): number {
  // headers() always makes a MsgHdrsImpl; its encode() is what nats.js measures and sends.
  return data.byteLength + (h as MsgHdrsImpl).encode().byteLength;
}

/** At least the encoded size of `h`: every UTF-16 unit as 3 bytes, plus the framing. */
function headersUpperBound(h: MsgHdrs): number {
  let bound = 32; // "NATS/1.0\r\n", the closing "\r\n", a status line
  for (const name of h.keys()) {
    for (const value of h.values(name)) bound += 3 * (name.length + value.length) + 4;
  }
  return bound;
}

/** The largest message the connected server accepts, or undefined before the first INFO. */
export function maxPayload(nc: NatsConnection): number | undefined {
  return nc.info?.max_payload;
}

/**
 * Throws PayloadTooLargeError (BATON_TOO_LARGE, not retryable) when the message would exceed the
 * server's max_payload: failing here names the size and the limit, where the server would only
 * close the connection with "Maximum Payload Violation".
 */
export function assertFits(nc: NatsConnection, what: string, data: Uint8Array, h: MsgHdrs): void {
  const limit = maxPayload(nc);
  if (limit === undefined) return;
  // Encoding the headers to measure them would encode them twice per publish (nats.js encodes
  // them again to send): an upper bound settles the common case, far below the limit.
  if (data.byteLength + headersUpperBound(h) <= limit) return;
  const size = encodedSize(data, h);
  if (size > limit) throw new PayloadTooLargeError(what, size, limit);
}

/**
 * The headers that can travel, for a message that must be stored whatever it carries (a dead
 * letter): reserved and malformed names are dropped, line breaks in values become spaces.
 */
export function travellingHeaders(headers: Record<string, string>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name) || RESERVED_HEADER.test(name) || typeof value !== 'string') continue;
    result[name] = oneLine(value);
  }
  return result;
}

/** The text on one line, as a header value must be. */
export function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}
