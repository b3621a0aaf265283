/**
 * Operations on a prefix as a whole, outside a transport's lifecycle: for test clean-up and for
 * decommissioning an installation.
 */
import { openSession } from './connection.js';
import { toNatsError } from './errors.js';
import { layoutFor } from './layout.js';
import { resolveNatsTransportOptions, type NatsTransportOptions } from './options.js';
import { isApiError } from './setup.js';

/** JetStream API error: stream not found. */
const STREAM_NOT_FOUND = 10059;

/**
 * Deletes the prefix's streams (the run lanes, journal, dead letters), and with them the consumers and every run message,
 * journal record and dead letter. Streams already gone are fine. Irreversible.
 *
 * @example
 * await deleteNatsStreams({ servers: 'nats://127.0.0.1:4222', prefix: 'c1a2b3c4d5' });
 */
export async function deleteNatsStreams(options: NatsTransportOptions): Promise<void> {
  const resolved = resolveNatsTransportOptions(options);
  const layout = layoutFor(resolved.prefix);
  const session = await openSession(resolved);
  try {
    const runStreams = Object.values(layout.runLanes).map((lane) => lane.stream);
    for (const stream of [...runStreams, layout.journalStream, layout.deadLetterStream]) {
      try {
        await session.jsm.streams.delete(stream);
      } catch (err) {
        if (!isApiError(err, STREAM_NOT_FOUND)) {
          throw toNatsError(err, { servers: resolved.displayServers, operation: `delete stream ${stream}` });
        }
      }
    }
  } finally {
    await session.nc.close().catch(() => undefined);
  }
}
