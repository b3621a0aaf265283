/**
 * @baton/transport-nats: the Baton {@link Transport} on NATS JetStream (nats-server 2.9 or newer).
 * Run messages go to a work-queue stream read by one durable pull consumer that every worker
 * shares; each run's journal is a subject of one stream, appended with an expected-last-sequence
 * check; dead letters have a stream of their own. connect() creates what is missing.
 *
 * @example
 * ```ts
 * import { natsTransport } from '@baton/transport-nats';
 *
 * const transport = natsTransport({
 *   servers: process.env.BATON_TRANSPORT_URL, // e.g. nats://worker:secret@nats:4222
 *   prefix: 'baton',                          // streams BATON_RUNS, BATON_JOURNAL, BATON_DLQ
 * });
 * await transport.connect(); // fails within connectTimeoutMs, naming the server, the cause and the fix
 * const worker = new Worker({ transport, store, workflows: [loanApproval] });
 * ```
 */
import { natsAdapterCode } from './code.js';
import { natsCode } from './registration.js';

export type {
  NatsTlsOptions,
  NatsTransportOptions,
  ResolvedNatsTransportOptions,
  StreamSetting,
} from './options.js';
export { DEFAULT_NATS_PREFIX, DEFAULT_NATS_SERVERS, resolveNatsTransportOptions } from './options.js';
export type { NatsCredentials } from './credentials.js';
export type { NatsLayout } from './layout.js';
export { layoutFor } from './layout.js';
export { maskServerUrl } from './server-urls.js';
export { natsTransport } from './nats-transport.js';
export { MIN_SERVER_VERSION } from './connection.js';
export { DEAD_LETTER_HEADERS } from './dead-letters.js';
export { InvalidHeaderError } from './messages.js';
export { deleteNatsStreams } from './admin.js';
export type { NatsObjectPayloadStoreOptions } from './object-payload-store.js';
export {
  DEFAULT_PAYLOAD_BUCKET,
  NatsObjectPayloadStore,
  natsObjectPayloadStore,
} from './object-payload-store.js';
/** The transport's pipelined publisher, exported for the bench's group-commit probe. */
export { JetStreamPublisher } from './publisher.js';
export { natsConnectionFromSettings, natsRegistration, type NatsSettings } from './registration.js';

// The registration holds none of the code above; importing the package provides it (AdapterCode).
natsCode.provide(natsAdapterCode);
