/**
 * Operations on a prefix as a whole, outside a transport's lifecycle: for test clean-up and for
 * decommissioning an installation (`baton admin drop`: list, then delete).
 */
import type { InstallationListing } from '@baton/core/adapter';
import { openSession } from './connection.js';
import { toNatsError } from './errors.js';
import { layoutFor } from './layout.js';
import { resolveNatsTransportOptions, type NatsTransportOptions } from './options.js';
import { isApiError } from './setup.js';

/** One thing the listing names. */
type InstallationItem = InstallationListing['items'][number];

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
  const session = await openSession(resolved);
  try {
    for (const stream of streamsOf(resolved.prefix)) {
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

/** Every stream a prefix's transport creates: the run lanes, the journal, the dead letters. */
function streamsOf(prefix: string): string[] {
  const layout = layoutFor(prefix);
  const runStreams = Object.values(layout.runLanes).map((lane) => lane.stream);
  return [...runStreams, layout.journalStream, layout.deadLetterStream];
}

/**
 * The prefix's streams that exist, each with its messages and consumers. Stream names are the
 * prefix upper-cased, and a prefix is lower case: no other prefix names the same streams, so
 * nothing here is shared. Changes nothing.
 */
export async function listNatsStreams(options: NatsTransportOptions): Promise<InstallationListing> {
  const resolved = resolveNatsTransportOptions(options);
  const session = await openSession(resolved);
  const items: InstallationItem[] = [];
  try {
    for (const stream of streamsOf(resolved.prefix)) {
      try {
        const { state } = await session.jsm.streams.info(stream);
        const consumers = state.consumer_count;
        items.push({
          kind: 'stream',
          name: stream,
          detail: `${state.messages} message(s), ${consumers} consumer(s)`,
        });
      } catch (err) {
        if (!isApiError(err, STREAM_NOT_FOUND)) {
          throw toNatsError(err, { servers: resolved.displayServers, operation: `read stream ${stream}` });
        }
      }
    }
    return { items };
  } finally {
    await session.nc.close().catch(() => undefined);
  }
}
