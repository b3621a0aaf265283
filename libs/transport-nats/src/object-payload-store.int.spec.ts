/**
 * The NATS object store as a payload store, on the shared server: the payload conformance suite,
 * then its own behaviour (lifecycle errors naming the operation and the bucket, argument checks,
 * no rewrite of a payload already stored). One bucket for the file, deleted in afterAll.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { describePayloadStoreConformance, sha256Of } from '@baton/testing';
import { natsTestUrl } from '@baton/testing/servers';
import { DEFAULT_PAYLOAD_BUCKET, natsObjectPayloadStore, type NatsObjectPayloadStore } from './index.js';

const bucket = `T${randomBytes(5).toString('hex')}_PAYLOADS`;
const storeFor = (): NatsObjectPayloadStore =>
  natsObjectPayloadStore({ servers: natsTestUrl(), bucket, storage: 'memory' });

let store: NatsObjectPayloadStore;
beforeAll(async () => {
  store = storeFor();
  await store.connect();
});
afterAll(async () => {
  await store?.close();
  const nc = await connect({ servers: natsTestUrl() });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(`OBJ_${bucket}`).catch(() => undefined);
  } finally {
    await nc.close();
  }
});

describe('nats object payload store: conformance', () => {
  describePayloadStoreConformance(() => store);
});

describe('nats object payload store', () => {
  it('keeps payloads in the configured bucket, in memory when asked, under nats-object-store', async () => {
    expect(store.location).toBe('nats-object-store');
    expect(store.bucket).toBe(bucket);
    const nc = await connect({ servers: natsTestUrl() });
    try {
      const info = await (await jetstreamManager(nc)).streams.info(`OBJ_${bucket}`);
      expect(info.config.storage).toBe('memory');
    } finally {
      await nc.close();
    }
    expect(natsObjectPayloadStore().bucket).toBe(DEFAULT_PAYLOAD_BUCKET);
  });

  it('does not write a payload that is already stored again', async () => {
    const data = randomBytes(300_000);
    const hash = sha256Of(data);
    await store.put('run-rewrite', hash, data);
    const nc = await connect({ servers: natsTestUrl() });
    try {
      const jsm = await jetstreamManager(nc);
      const before = (await jsm.streams.info(`OBJ_${bucket}`)).state.last_seq;
      await store.put('run-rewrite', hash, data);
      expect((await jsm.streams.info(`OBJ_${bucket}`)).state.last_seq).toBe(before);
    } finally {
      await nc.close();
    }
    const back = await store.get('run-rewrite', hash);
    expect(back).toBeInstanceOf(Uint8Array);
    expect(sha256Of(back!)).toBe(hash); // toEqual walks 300 000 elements one by one: seconds
  });

  it('writes a payload again after it was deleted', async () => {
    const data = randomBytes(100);
    const hash = sha256Of(data);
    await store.put('run-again', hash, data);
    await store.delete(['run-again']);
    await store.delete(['run-again']);
    expect(await store.get('run-again', hash)).toBeUndefined();
    await store.put('run-again', hash, data);
    expect(await store.get('run-again', hash)).toEqual(new Uint8Array(data));
  });

  it("deletes a run's payloads and not those of a run whose id it prefixes", async () => {
    const data = randomBytes(100);
    const hash = sha256Of(data);
    await store.put('run-p', hash, data);
    await store.put('run-p-2', hash, data);
    await store.delete(['run-p']);
    expect(await store.get('run-p', hash)).toBeUndefined();
    expect(await store.get('run-p-2', hash)).toEqual(new Uint8Array(data));
  });

  it('refuses a run id or key that would not name one run and one payload', async () => {
    const hash = sha256Of(new Uint8Array([1]));
    await expect(store.put('a/b', hash, new Uint8Array([1]))).rejects.toMatchObject({
      code: 'BATON_CONFIG',
    });
    await expect(store.get('run', 'not-a-hash')).rejects.toMatchObject({ code: 'BATON_CONFIG' });
    await expect(store.delete(['a/b'])).rejects.toMatchObject({ code: 'BATON_CONFIG' });
  });

  it('refuses unknown options and bucket names JetStream would not take', () => {
    expect(() => natsObjectPayloadStore({ bucket: 'a.b' })).toThrow(/bucket "a\.b"/);
    expect(() => natsObjectPayloadStore({ prefix: 'x' } as never)).toThrow(/unknown option 'prefix'/);
    expect(() => natsObjectPayloadStore({ replicas: 0 })).toThrow(/^natsObjectPayloadStore: replicas/);
  });

  it('fails before connect() and after close() with an error naming the operation and the bucket', async () => {
    const other = storeFor();
    const hash = sha256Of(new Uint8Array([7]));
    await expect(other.get('run', hash)).rejects.toMatchObject({
      code: 'BATON_NOT_CONNECTED',
      message: expect.stringMatching(new RegExp(`bucket '${bucket}'.*: get called`)),
    });
    await other.connect();
    await other.put('run-closed', hash, new Uint8Array([7]));
    await other.close();
    await other.close();
    for (const [operation, call] of [
      ['put', () => other.put('run-closed', hash, new Uint8Array([7]))],
      ['get', () => other.get('run-closed', hash)],
      ['delete', () => other.delete(['run-closed'])],
      ['connect', () => other.connect()],
    ] as const) {
      const error = await call().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toMatchObject({ code: 'BATON_CLOSED' });
      expect((error as Error).message).toContain(`: ${operation} called`);
      expect((error as Error).message).toContain(`bucket '${bucket}'`);
    }
  });

  it('fails connect() naming the operation and the servers when NATS is unreachable', async () => {
    const unreachable = natsObjectPayloadStore({
      servers: 'nats://127.0.0.1:1',
      bucket,
      connectTimeoutMs: 1_000,
    });
    await expect(unreachable.connect()).rejects.toMatchObject({
      code: 'BATON_NATS_UNAVAILABLE',
      message: expect.stringContaining('127.0.0.1:1'),
    });
    await unreachable.close();
  });
});
