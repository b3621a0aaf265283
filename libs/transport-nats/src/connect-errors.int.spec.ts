/**
 * connect() and operations fail with errors that name the server, the cause and the fix, and
 * never hang: an unreachable port, a server that never answers, refused credentials, a missing
 * permission, JetStream disabled for the account. Users and permissions live on a private
 * nats-server started by this file; the shared one is never changed.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transport } from '@baton/core/adapter';
import { freePort, startPrivateNats, type PrivateServer } from '@baton/testing/servers';
import { deleteNatsStreams, natsTransport } from './index.js';

const PASSWORD = 'secret-pw-7291';
const CREW = 'crew';

/** What a producer publishes to, as the README lists it: connect, enqueue, read history. */
function producerPublish(prefix: string): string[] {
  const P = prefix.toUpperCase();
  return [
    '$JS.API.INFO',
    `$JS.API.STREAM.INFO.${P}_RUNS`,
    `$JS.API.STREAM.INFO.${P}_JOURNAL`,
    `$JS.API.STREAM.INFO.${P}_DLQ`,
    `$JS.API.CONSUMER.INFO.${P}_RUNS.${prefix}-workers`,
    `${prefix}.runs`,
    `$JS.API.DIRECT.GET.${P}_JOURNAL`,
    `$JS.API.CONSUMER.CREATE.${P}_JOURNAL`,
    `$JS.API.CONSUMER.MSG.NEXT.${P}_JOURNAL.*`,
    `$JS.API.CONSUMER.DELETE.${P}_JOURNAL.*`,
  ];
}

/** What a worker publishes to, as the README lists it: everything, including creating the streams. */
function workerPublish(prefix: string): string[] {
  const P = prefix.toUpperCase();
  return [
    ...producerPublish(prefix),
    `$JS.API.STREAM.CREATE.${P}_RUNS`,
    `$JS.API.STREAM.CREATE.${P}_JOURNAL`,
    `$JS.API.STREAM.CREATE.${P}_DLQ`,
    `$JS.API.STREAM.UPDATE.${P}_RUNS`,
    `$JS.API.STREAM.UPDATE.${P}_JOURNAL`,
    `$JS.API.STREAM.UPDATE.${P}_DLQ`,
    `$JS.API.CONSUMER.CREATE.${P}_RUNS.${prefix}-workers`,
    `$JS.API.CONSUMER.MSG.NEXT.${P}_RUNS.${prefix}-workers`,
    `$JS.ACK.${P}_RUNS.${prefix}-workers.>`,
    `${prefix}.journal.>`,
    `${prefix}.dlq`,
    `$JS.API.DIRECT.GET.${P}_DLQ`,
  ];
}

/** What an operator's tool publishes to, as the README lists it: a producer's, and dead-letter administration. */
function operatorPublish(prefix: string): string[] {
  const P = prefix.toUpperCase();
  return [
    ...producerPublish(prefix),
    `$JS.API.DIRECT.GET.${P}_DLQ`,
    `$JS.API.STREAM.MSG.DELETE.${P}_DLQ`,
    `$JS.API.STREAM.PURGE.${P}_DLQ`,
  ];
}

/** The error connect() rejects with; the transport is closed either way. */
async function connectError(transport: Transport): Promise<Error & { code?: string; subject?: string }> {
  try {
    await transport.connect();
  } catch (err) {
    return err as Error;
  } finally {
    await transport.close();
  }
  throw new Error('connect() succeeded');
}

describe('nats transport: unreachable servers', () => {
  it('rejects connect() for a port nobody listens on, naming the server with its password masked', async () => {
    const port = await freePort();
    const err = await connectError(
      natsTransport({ servers: `nats://app:${PASSWORD}@127.0.0.1:${port}`, connectTimeoutMs: 1_000 }),
    );
    expect(err).toMatchObject({ name: 'NatsUnavailableError', code: 'BATON_NATS_UNAVAILABLE' });
    expect(err.message).toContain(`cannot reach NATS at nats://app:***@127.0.0.1:${port} within 1000 ms`);
    expect(err.message).toContain('connection refused');
    expect(err.message).not.toContain(PASSWORD);
  });

  it('gives up within connectTimeoutMs on a server that accepts connections but never answers', async () => {
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const err = await connectError(
        natsTransport({ servers: `nats://127.0.0.1:${port}`, connectTimeoutMs: 500 }),
      );
      expect(err).toMatchObject({ code: 'BATON_NATS_UNAVAILABLE' });
      expect(err.message).toContain(`cannot reach NATS at nats://127.0.0.1:${port} within 500 ms`);
    } finally {
      silent.close();
    }
  });

  it('names a creds file that cannot be read', async () => {
    const err = await connectError(natsTransport({ credsFile: '/nonexistent/app.creds' }));
    expect(err).toMatchObject({ code: 'BATON_CONFIG' });
    expect(err.message).toContain('credsFile /nonexistent/app.creds cannot be read');
  });

  it('refuses operations before connect() and after close()', async () => {
    const transport = natsTransport({ servers: `nats://127.0.0.1:${await freePort()}` });
    await expect(transport.runQueue.enqueue(new Uint8Array([1]))).rejects.toMatchObject({
      code: 'BATON_NOT_CONNECTED',
    });
    await transport.close();
    await expect(transport.runQueue.fetch({ max: 1, expiresMs: 10 })).rejects.toMatchObject({
      code: 'BATON_CLOSED',
    });
    await expect(transport.connect()).rejects.toMatchObject({ code: 'BATON_CLOSED' });
  });
});

describe('nats transport: credentials and permissions', () => {
  const prefix = 'perm';
  let server: PrivateServer;
  let configDir: string;

  beforeAll(async () => {
    configDir = await mkdtemp(join(tmpdir(), 'baton-nats-auth-'));
    const config = join(configDir, 'auth.conf');
    await writeFile(
      config,
      `accounts {
        APP: {
          jetstream: enabled
          users: [
            { user: admin, password: "${PASSWORD}" }
            { user: noapi, password: "${PASSWORD}",
              permissions: { publish: { allow: ["$JS.API.INFO"] }, subscribe: { allow: ["_INBOX.>"] } } }
            { user: nopull, password: "${PASSWORD}",
              permissions: {
                publish: { allow: ["$JS.API.>", "_INBOX.>", "${prefix}.>"], deny: ["$JS.API.CONSUMER.MSG.NEXT.>"] }
                subscribe: { allow: ["_INBOX.>"] } } }
          ]
        }
        NOJS: { users: [ { user: nojs, password: "${PASSWORD}" } ] }
        CREW: {
          jetstream: enabled
          users: [
            { user: worker, password: "${PASSWORD}", permissions: {
                publish: { allow: ${JSON.stringify(workerPublish(CREW))} }, subscribe: { allow: ["_INBOX.>"] } } }
            { user: producer, password: "${PASSWORD}", permissions: {
                publish: { allow: ${JSON.stringify(producerPublish(CREW))} }, subscribe: { allow: ["_INBOX.>"] } } }
            { user: operator, password: "${PASSWORD}", permissions: {
                publish: { allow: ${JSON.stringify(operatorPublish(CREW))} }, subscribe: { allow: ["_INBOX.>"] } } }
          ]
        }
      }
      `,
    );
    server = await startPrivateNats(['-c', config]);
  });

  afterAll(async () => {
    await server?.dispose();
    await rm(configDir, { recursive: true, force: true });
  });

  const as = (user: string, password = PASSWORD): Transport =>
    natsTransport({
      servers: server.url,
      user,
      pass: password,
      prefix,
      storage: 'memory',
      connectTimeoutMs: 2_000,
    });

  it('names refused credentials as an authorization problem, without the password', async () => {
    const err = await connectError(
      natsTransport({ servers: `nats://admin:wrong-pw@127.0.0.1:${server.port}` }),
    );
    expect(err).toMatchObject({ name: 'NatsAuthError', code: 'BATON_NATS_AUTH' });
    expect(err.message).toContain('Authorization Violation');
    expect(err.message).toContain(`nats://admin:***@127.0.0.1:${server.port}`);
    expect(err.message).not.toContain('wrong-pw');
  });

  it('says JetStream is not enabled for an account without it, and how to enable it', async () => {
    const err = await connectError(as('nojs'));
    expect(err).toMatchObject({ name: 'NatsJetStreamDisabledError', code: 'BATON_NATS_JETSTREAM_DISABLED' });
    expect(err.message).toContain('JetStream is not enabled');
  });

  it('names the JetStream API subject a user may not use', async () => {
    const err = await connectError(as('noapi'));
    expect(err).toMatchObject({
      name: 'NatsPermissionError',
      code: 'BATON_NATS_PERMISSION',
      resource: `$JS.API.STREAM.INFO.${prefix.toUpperCase()}_RUNS`,
    });
    expect(err.message).toContain(
      `permission to publish to '$JS.API.STREAM.INFO.${prefix.toUpperCase()}_RUNS'`,
    );
  });

  it('works with exactly the permissions the README lists for a worker and a producer', async () => {
    const encoder = new TextEncoder();
    const crew = (user: string): Transport =>
      natsTransport({ servers: server.url, user, pass: PASSWORD, prefix: CREW, storage: 'memory' });
    const worker = crew('worker');
    const producer = crew('producer');
    try {
      await worker.connect();
      await producer.connect();
      await producer.runQueue.enqueue(encoder.encode('start'), { msgId: 'start:run-1' });
      const [delivery] = await worker.runQueue.fetch({ max: 5, expiresMs: 2_000 });
      await delivery?.nak(10);
      const [again] = await worker.runQueue.fetch({ max: 5, expiresMs: 2_000 });
      await again?.ack();
      let last = 0;
      for (let i = 0; i < 6; i++) {
        last = await worker.journal.append({
          runId: 'run-1',
          data: encoder.encode(`e${i}`),
          expectedLastPosition: last,
        });
      }
      expect(await worker.journal.read('run-1', 0)).toHaveLength(6);
      expect(await producer.journal.read('run-1', 0)).toHaveLength(6);
      await worker.deadLetters.add({ data: encoder.encode('x'), headers: {}, reason: 'r', code: 'c', at: 1 });
      expect(await worker.deadLetters.list()).toHaveLength(1);
    } finally {
      await worker.close();
      await producer.close();
    }
  });

  it('administers dead letters with exactly the permissions the README lists for an operator', async () => {
    const encoder = new TextEncoder();
    const crew = (user: string): Transport =>
      natsTransport({ servers: server.url, user, pass: PASSWORD, prefix: CREW, storage: 'memory' });
    const worker = crew('worker');
    const operator = crew('operator');
    const producer = crew('producer');
    try {
      await worker.connect();
      await operator.connect();
      await producer.connect();
      await worker.runQueue
        .fetch({ max: 10, expiresMs: 200 })
        .then((batch) => Promise.all(batch.map((d) => d.ack())));
      for (const code of ['a', 'b', 'c']) {
        await worker.deadLetters.add({ data: encoder.encode(code), headers: {}, reason: 'r', code, at: 1 });
      }
      const { letters } = await operator.deadLetters.page({ limit: 3 });
      expect(letters.slice(0, 3).map((l) => l.code)).toEqual(['c', 'b', 'a']);
      const [c, b] = letters;
      expect(await operator.deadLetters.get(c!.id)).toMatchObject({ code: 'c' });
      await operator.deadLetters.redrive(c!.id);
      const [redriven] = await worker.runQueue.fetch({ max: 1, expiresMs: 2_000 });
      expect(new TextDecoder().decode(redriven?.data)).toBe('c');
      await redriven?.ack();
      expect(await operator.deadLetters.purge({ ids: [b!.id] })).toBe(1);
      await expect(producer.deadLetters.purge({ all: true })).rejects.toMatchObject({
        code: 'BATON_NATS_PERMISSION',
        resource: `$JS.API.STREAM.PURGE.${CREW.toUpperCase()}_DLQ`,
      });
      expect(await operator.deadLetters.purge({ all: true })).toBeGreaterThanOrEqual(1);
      expect((await operator.deadLetters.page()).letters).toEqual([]);
    } finally {
      await worker.close();
      await operator.close();
      await producer.close();
    }
  });

  it('fails a fetch at once, naming the subject, when the user may not pull from the consumer', async () => {
    const transport = as('nopull');
    try {
      await transport.connect();
      const started = Date.now();
      await expect(transport.runQueue.fetch({ max: 1, expiresMs: 10_000 })).rejects.toMatchObject({
        code: 'BATON_NATS_PERMISSION',
        resource: `$JS.API.CONSUMER.MSG.NEXT.${prefix.toUpperCase()}_RUNS.${prefix}-workers`,
      });
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await transport.close();
      await deleteNatsStreams({ servers: server.url, user: 'admin', pass: PASSWORD, prefix });
    }
  });
});
