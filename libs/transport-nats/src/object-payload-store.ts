/**
 * An opt-in {@link PayloadStore} on a JetStream Object Store: large payloads (claim check) kept in
 * NATS instead of in the Redis or Postgres store. One object per payload, named
 * `<runId>/<sha256>`, in one bucket (`BATON_PAYLOADS` by default).
 *
 * Invariants:
 * 1. connect() runs once at a time (a second call shares its promise), creates the bucket when
 *    missing and uses an existing one as it is; close() is idempotent and final: from its first
 *    call every operation throws BATON_CLOSED, naming the operation and the bucket.
 * 2. An object's name is `<runId>/<sha256>` with the run id checked against RUN_ID_PATTERN (no
 *    `/`), so `<runId>/` is a prefix of that run's objects and of no other run's.
 * 3. A put of a payload that is already there (same name, same SHA-256 digest) writes nothing: the
 *    key is the content's hash, so the bytes are the same.
 * 4. Every failure is a BatonError naming the operation and the bucket (and the servers, masked).
 */
import { createHash } from 'node:crypto';
import { Objm, StorageType, type ObjectStore } from '@nats-io/obj';
import { ConfigError, type BatonError } from '@baton/core';
import { AdapterLifecycle, assertRunId, type PayloadStore, invalidOption } from '@baton/core/adapter';
import { openSession, untilElected, type NatsSession } from './connection.js';
import { toNatsError } from './errors.js';
import {
  NATS_CONNECTION_OPTIONS,
  resolveNatsTransportOptions,
  type NatsTransportOptions,
  type ResolvedNatsTransportOptions,
} from './options.js';

/** The bucket used when none is given. */
export const DEFAULT_PAYLOAD_BUCKET = 'BATON_PAYLOADS';

/**
 * Bucket names: the bucket is a subject token (`$O.<bucket>.>`) and, prefixed with `OBJ_`, a
 * stream name, which JetStream bounds at 255 characters; nats.js accepts `[-\w]+`.
 */
const BUCKET_PATTERN = /^[A-Za-z0-9_-]{1,251}$/;

/** The key of a payload: the hex SHA-256 of its stored bytes (lower case, as the claim check writes it). */
const SHA256_PATTERN = /^[0-9a-f]{64}$/;

/** The connection options this store shares with {@link natsTransport}. */
type ConnectionOptions = Pick<
  NatsTransportOptions,
  | 'servers'
  | 'user'
  | 'pass'
  | 'token'
  | 'credsFile'
  | 'creds'
  | 'nkeySeed'
  | 'tls'
  | 'connectTimeoutMs'
  | 'requestTimeoutMs'
  | 'leaderWaitMs'
>;

/** Options of {@link natsObjectPayloadStore}; the connection options are those of the transport. */
export interface NatsObjectPayloadStoreOptions extends ConnectionOptions {
  /**
   * The object store bucket: 1-251 letters, digits, '_' and '-'. Created by connect() when
   * missing (stream `OBJ_<bucket>`).
   * @defaultValue 'BATON_PAYLOADS'
   */
  bucket?: string;
  /**
   * Where JetStream keeps the bucket when connect() creates it; an existing bucket keeps its own.
   * `memory` loses every payload when the server restarts; use it for tests only.
   * @defaultValue 'file'
   */
  storage?: 'file' | 'memory';
  /**
   * How many servers keep a copy of the bucket when connect() creates it (1, 3 or 5 in practice).
   * @defaultValue 1
   */
  replicas?: number;
  /**
   * The connection's name, shown by the server's monitoring (`connz`).
   * @defaultValue 'baton-payloads'
   */
  name?: string;
}

const CONNECTION_OPTIONS = NATS_CONNECTION_OPTIONS;
const KNOWN_OPTIONS: ReadonlySet<string> = new Set([
  ...CONNECTION_OPTIONS,
  'bucket',
  'storage',
  'replicas',
  'name',
]);

/** What the store's ConfigErrors name as their component. */
const COMPONENT = 'natsObjectPayloadStore';

/** {@link NatsObjectPayloadStoreOptions} after defaults and validation. */
interface ResolvedOptions {
  bucket: string;
  connection: ResolvedNatsTransportOptions;
}

function resolveOptions(options: NatsObjectPayloadStoreOptions): ResolvedOptions {
  for (const name of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(name)) {
      const expected = `the options are ${[...KNOWN_OPTIONS].join(', ')}`;
      throw new ConfigError(`${COMPONENT}: unknown option '${name}'; ${expected}`, {
        component: COMPONENT,
        option: name,
        expected,
      });
    }
  }
  const bucket = options.bucket ?? DEFAULT_PAYLOAD_BUCKET;
  if (typeof bucket !== 'string' || !BUCKET_PATTERN.test(bucket)) {
    const expected =
      `is not a valid object store name; use 1-251 letters, digits, '_' and '-' (e.g. ` +
      `'${DEFAULT_PAYLOAD_BUCKET}'): it becomes a subject token and part of a stream name`;
    throw invalidOption(
      { component: COMPONENT, option: 'bucket', value: String(bucket), expected: `it ${expected}` },
      `bucket ${JSON.stringify(bucket)} ${expected}`,
    );
  }
  const connectionOptions: NatsTransportOptions = { name: options.name ?? 'baton-payloads' };
  for (const name of CONNECTION_OPTIONS) {
    if (options[name] !== undefined) Object.assign(connectionOptions, { [name]: options[name] });
  }
  if (options.storage !== undefined) connectionOptions.storage = options.storage;
  if (options.replicas !== undefined) connectionOptions.replicas = options.replicas;
  try {
    // The transport's checks and defaults for servers, credentials, TLS, timeouts, storage and
    // replicas; its messages name natsTransport, ours name this store.
    return { bucket, connection: resolveNatsTransportOptions(connectionOptions) };
  } catch (err) {
    // The same error under this store's name: its fields say which connection option it is about.
    if (err instanceof ConfigError && err.component !== undefined && err.message.startsWith(err.component)) {
      const { option, value, expected, related } = err;
      throw new ConfigError(`${COMPONENT}${err.message.slice(err.component.length)}`, {
        cause: err.cause,
        component: COMPONENT,
        ...(option !== undefined && { option }),
        ...(value !== undefined && { value }),
        ...(expected !== undefined && { expected }),
        ...(related !== undefined && { related }),
      });
    }
    throw err;
  }
}

/**
 * Creates a {@link NatsObjectPayloadStore}. Options are checked now (ConfigError naming the
 * option); nothing touches the network until connect().
 *
 * @example
 * const payloads = natsObjectPayloadStore({ servers: 'nats://nats:4222', bucket: 'BATON_PAYLOADS' });
 * await payloads.connect(); // creates the bucket if missing
 */
export function natsObjectPayloadStore(options: NatsObjectPayloadStoreOptions = {}): NatsObjectPayloadStore {
  return new NatsObjectPayloadStore(options);
}

/**
 * Large payloads in a JetStream Object Store, on a connection of its own: object
 * `<runId>/<sha256>` in the bucket (default `BATON_PAYLOADS`). An object store splits a payload
 * into chunks (128 KiB, or the server's max_payload if smaller), so payloads far above NATS's
 * message limit fit.
 *
 * - `get` answers undefined for a payload that is missing (never written, or deleted).
 * - `put` is idempotent: a payload already stored with the same digest is not written again.
 * - `delete(runIds)` is idempotent (runs without payloads, and payloads already deleted,
 *   are fine). An object store cannot delete by prefix, so **each call lists the whole bucket
 *   once** (one read of every object's metadata) and deletes the objects of the given runs:
 *   callers should batch runs into one call rather than call it run by run.
 * - Errors are BatonErrors (the backend categories of @baton/core/adapter, BackendUnavailableError,
 *   BackendPermissionError, …, with this package's BATON_NATS_* codes, or BATON_CLOSED /
 *   BATON_NOT_CONNECTED) whose message names the operation and the bucket.
 */
export class NatsObjectPayloadStore implements PayloadStore {
  readonly location = 'nats-object-store';
  /** The object store bucket. */
  readonly bucket: string;

  private readonly options: ResolvedNatsTransportOptions;
  /** created → connecting → open; closed is final. */
  private readonly lifecycle: AdapterLifecycle<{ session: NatsSession; os: ObjectStore }>;

  constructor(options: NatsObjectPayloadStoreOptions = {}) {
    const resolved = resolveOptions(options);
    this.bucket = resolved.bucket;
    this.options = resolved.connection;
    this.lifecycle = new AdapterLifecycle({
      adapter: `nats object payload store (bucket '${this.bucket}')`,
      connectHint: 'await payloads.connect() first',
      closedHint: 'create a new store instead',
    });
  }

  /** Connects and creates the bucket when missing. Safe to call more than once. */
  connect(): Promise<void> {
    return this.lifecycle.connect(
      () => this.setUp(),
      ({ session }) => session.nc.close(),
    );
  }

  private async setUp(): Promise<{ session: NatsSession; os: ObjectStore }> {
    let session: NatsSession | undefined;
    try {
      session = await openSession(this.options);
      const js = session.js;
      const os = await untilElected(async () => {
        const bucket = await new Objm(js).create(this.bucket, {
          description: 'Baton large payloads (claim check), one object per <runId>/<sha256>',
          storage: this.options.storage === 'memory' ? StorageType.Memory : StorageType.File,
          replicas: this.options.replicas,
        });
        // Objm.create does not report every failure to look the bucket up; ask once, so a missing
        // permission or a bucket that cannot be created fails here rather than on the first put.
        await bucket.status();
        return bucket;
      }, this.options.leaderWaitMs);
      return { session, os };
    } catch (err) {
      await session?.nc.close().catch(() => undefined);
      throw this.toError('connect', err);
    }
  }

  /** Closes the connection. Idempotent and final. */
  close(): Promise<void> {
    return this.lifecycle.close(async (opened) => {
      const nc = opened?.session.nc;
      if (nc !== undefined && !nc.isClosed()) await nc.close().catch(() => undefined);
    });
  }

  async put(runId: string, sha256: string, data: Uint8Array): Promise<void> {
    const os = this.open('put');
    const name = this.objectName('put', runId, sha256);
    await this.run('put', async () => {
      const existing = await os.info(name);
      if (existing !== null && !existing.deleted && existing.digest === objectDigest(data)) return;
      await os.putBlob({ name }, data);
    });
  }

  async get(runId: string, sha256: string): Promise<Uint8Array | undefined> {
    const os = this.open('get');
    const name = this.objectName('get', runId, sha256);
    return this.run('get', async () => {
      const data = await os.getBlob(name);
      if (data === null) return undefined;
      // A one-chunk object comes back as the received message's bytes, a Node Buffer: give the
      // caller a plain Uint8Array of its own, as every store does.
      return data.constructor === Uint8Array ? data : new Uint8Array(data);
    });
  }

  async delete(runIds: readonly string[]): Promise<void> {
    const os = this.open('delete');
    for (const runId of runIds) this.checkRunId('delete', runId);
    if (runIds.length === 0) return;
    const runs = new Set(runIds);
    await this.run('delete', async () => {
      const doomed = (await os.list())
        .filter((info) => {
          const run = runOf(info.name);
          return !info.deleted && run !== undefined && runs.has(run);
        })
        .map((info) => info.name);
      for (const name of doomed) await os.delete(name);
    });
  }

  // ------------------------------------------------------------------------------------------

  /** The object store of an open store; throws BATON_CLOSED or BATON_NOT_CONNECTED otherwise. */
  private open(operation: string): ObjectStore {
    return this.lifecycle.open(operation).os;
  }

  /** Runs `work`, turning its failure into the store's error for `operation`. */
  private async run<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      // close() cut the connection under the operation: say so, not "NATS did not answer".
      if (this.lifecycle.state === 'closed') throw this.lifecycle.closedError(operation);
      throw this.toError(operation, err);
    }
  }

  private toError(operation: string, err: unknown): BatonError {
    return toNatsError(err, {
      servers: this.options.displayServers,
      operation: `${operation} on object store bucket '${this.bucket}'`,
    });
  }

  private objectName(operation: string, runId: string, sha256: string): string {
    this.checkRunId(operation, runId);
    if (typeof sha256 !== 'string' || !SHA256_PATTERN.test(sha256)) {
      throw new ConfigError(
        `nats object payload store (bucket '${this.bucket}') ${operation}: payload key ` +
          `${JSON.stringify(sha256)} is not a SHA-256; use the 64 lower-case hex digits of the payload's digest`,
      );
    }
    return `${runId}/${sha256}`;
  }

  /** Run ids become the object name's first segment: a `/` in one would mix runs (invariant 2). */
  private checkRunId(operation: string, runId: string): void {
    try {
      assertRunId(runId);
    } catch (err) {
      throw new ConfigError(
        `nats object payload store (bucket '${this.bucket}') ${operation}: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }
}

/** The run of an object named `<runId>/<sha256>`; undefined for a name of another form. */
function runOf(name: string): string | undefined {
  const slash = name.indexOf('/');
  return slash > 0 ? name.slice(0, slash) : undefined;
}

/** The digest an object store records for `data`: `SHA-256=` and the padded base64url hash. */
function objectDigest(data: Uint8Array): string {
  const base64 = createHash('sha256').update(data).digest('base64');
  return `SHA-256=${base64.replace(/\+/g, '-').replace(/\//g, '_')}`;
}
