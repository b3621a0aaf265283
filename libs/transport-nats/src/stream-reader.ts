/**
 * Reading stored messages by sequence, one request each, the consistent way for the stream's
 * replica count:
 *
 * - one replica: direct get (`$JS.API.DIRECT.GET.<stream>`), answered by the server that holds the
 *   stream without going through the JetStream API's leader coordination: the cheapest read;
 * - more replicas: `STREAM.MSG.GET`, answered by the stream leader. Direct get may be answered by
 *   a follower that has not applied the latest writes yet, and a worker that reads its run's
 *   journal right after appending its lease marker must see every record up to that marker.
 */
import type { StoredMsg } from '@nats-io/jetstream';
import type { TransportContext } from './context.js';

/** Which message to get: by sequence, the next one on a subject from a sequence, or the last. */
export type MessageQuery = { seq: number } | { seq: number; next_by_subj: string } | { last_by_subj: string };

/** A stored message, copied out of the client's buffers. */
export interface StoredRecord {
  seq: number;
  subject: string;
  data: Uint8Array;
  header: StoredMsg['header'];
}

/** Gets one message of `stream`, or null when there is none (for that query). */
export async function getStoredMessage(
  context: TransportContext,
  stream: string,
  replicas: number,
  query: MessageQuery,
): Promise<StoredRecord | null> {
  const { jsm } = context.session;
  const message =
    replicas === 1 ? await jsm.direct.getMessage(stream, query) : await jsm.streams.getMessage(stream, query);
  if (message === null) return null;
  return {
    seq: message.seq,
    subject: message.subject,
    data: new Uint8Array(message.data),
    header: message.header,
  };
}
