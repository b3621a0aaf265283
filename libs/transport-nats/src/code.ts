/**
 * The package's code its registration needs, in a module of its own: registration.ts imports it
 * lazily (`load()`), and index.ts provides it to whoever imported the package. Neither of those
 * modules is imported from here, so the lazy import closes no cycle.
 */
import { natsTransport } from './nats-transport.js';
import { natsObjectPayloadStore } from './object-payload-store.js';
import { deleteNatsStreams, listNatsStreams } from './admin.js';
import { resolveNatsTransportOptions } from './options.js';

/** What the registration needs of the package's code. */
export interface NatsCode {
  natsTransport: typeof natsTransport;
  natsObjectPayloadStore: typeof natsObjectPayloadStore;
  deleteNatsStreams: typeof deleteNatsStreams;
  listNatsStreams: typeof listNatsStreams;
  resolveNatsTransportOptions: typeof resolveNatsTransportOptions;
}

export const natsAdapterCode: NatsCode = {
  natsTransport,
  natsObjectPayloadStore,
  deleteNatsStreams,
  listNatsStreams,
  resolveNatsTransportOptions,
};
