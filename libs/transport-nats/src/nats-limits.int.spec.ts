/**
 * Messages above the server's max_payload are refused before they are sent, with a
 * PayloadTooLargeError (BATON_TOO_LARGE, not retryable) naming the size and the limit; a dead
 * letter that large is kept, truncated. On a private nats-server with `max_payload: 64 KB`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayloadTooLargeError } from '@baton/core';
import type { Transport } from '@baton/core/adapter';
import { startPrivateNats, type PrivateServer } from '@baton/testing/servers';
import { DEAD_LETTER_HEADERS, natsTransport } from './index.js';

const MAX_PAYLOAD = 64 * 1024;

describe('nats transport: payload limits', () => {
  let server: PrivateServer;
  let configDir: string;
  let transport: Transport;

  beforeAll(async () => {
    configDir = await mkdtemp(join(tmpdir(), 'baton-nats-limits-'));
    const config = join(configDir, 'limits.conf');
    await writeFile(config, `max_payload: ${MAX_PAYLOAD}\n`);
    server = await startPrivateNats(['-c', config]);
    transport = natsTransport({ servers: server.url, prefix: 'limits' });
    await transport.connect();
  });

  afterAll(async () => {
    await transport?.close();
    await server?.dispose();
    await rm(configDir, { recursive: true, force: true });
  });

  it('refuses a run message above max_payload before sending it, naming size, limit and remedy', async () => {
    const size = MAX_PAYLOAD + 1_000;
    const err = await transport.runQueue
      .enqueue(new Uint8Array(size))
      .catch((e: unknown) => e as PayloadTooLargeError);
    expect(err).toBeInstanceOf(PayloadTooLargeError);
    expect(err).toMatchObject({ code: 'BATON_TOO_LARGE', retryable: false, limit: MAX_PAYLOAD });
    expect(err?.size).toBeGreaterThanOrEqual(size);
    expect(err?.message).toContain(`limit of ${MAX_PAYLOAD} bytes`);
    expect(err?.message).toContain('max_payload');
    expect(await transport.runQueue.fetch({ max: 1, expiresMs: 200 })).toEqual([]);
  });

  it('accepts a message just under the limit', async () => {
    await transport.runQueue.enqueue(new Uint8Array(MAX_PAYLOAD - 100));
    const [delivery] = await transport.runQueue.fetch({ max: 1, expiresMs: 2_000 });
    expect(delivery?.data.byteLength).toBe(MAX_PAYLOAD - 100);
    await delivery?.ack();
  });

  it('refuses a journal record above max_payload, counting its headers, and appends nothing', async () => {
    const err = await transport.journal
      .append({ runId: 'big', data: new Uint8Array(MAX_PAYLOAD), expectedLastPosition: 0 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayloadTooLargeError);
    expect((err as PayloadTooLargeError).message).toContain('journal record of run big');
    expect(await transport.journal.read('big', 0)).toEqual([]);
  });

  it('keeps a dead letter of a too-large message, truncated and marked', async () => {
    const original = new Uint8Array(MAX_PAYLOAD * 2).fill(7);
    await transport.deadLetters.add({
      data: original,
      headers: { 'baton-kind': 'start' },
      reason: 'message is too large',
      code: 'too-large',
      at: 42,
    });
    const [letter] = await transport.deadLetters.list();
    expect(letter).toMatchObject({ code: 'too-large', at: 42 });
    expect(letter?.reason).toContain('message is too large');
    expect(letter?.reason).toContain(`truncated from ${original.byteLength} bytes`);
    expect(letter?.headers).toMatchObject({
      'baton-kind': 'start',
      [DEAD_LETTER_HEADERS.truncated]: String(original.byteLength),
    });
    expect(letter?.data.byteLength).toBeGreaterThan(MAX_PAYLOAD / 2);
    expect(letter?.data.byteLength).toBeLessThan(MAX_PAYLOAD);
    expect(letter?.data.every((byte) => byte === 7)).toBe(true);
  });
});
