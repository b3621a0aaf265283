/**
 * Data too large for the bus, on a real nats-server with a small max_payload (64 KiB):
 * - with the claim check off: a producer's start message is refused with an error naming the
 *   limit (nothing is lost: the caller knows), and an activity result that cannot be journaled
 *   fails its run with the reason and a dead letter, while the worker process carries on;
 * - with the claim check on (threshold 16 KiB, below the bus's limit): the same input and result
 *   go by reference and the runs complete.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { PayloadTooLargeError } from '@baton/core';
import type { Store, Transport } from '@baton/core/adapter';
import { WorkerProcess } from '@baton/testing/crash';
import { redisTestUrl, startPrivateNats, type PrivateServer } from '@baton/testing/servers';
import { purgeRedisKeyPrefix } from '@baton/store-redis';
import { loadAdapterCode, readConfig, storeFromConfig, transportFromConfig } from '@baton/host';
import { inputLength, oversized } from './oversized.spec-helper.js';

const MAX_PAYLOAD = 64 * 1024;
/** Registers the test only in the block it belongs to (not as a skipped one in the other). */
const onlyIf = (yes: boolean): typeof it => (yes ? it : ((() => undefined) as unknown as typeof it));
const KEY_PREFIX = `toolarge-${process.pid}-${Date.now()}:`;

describe.each([
  { claimCheck: 'off', threshold: 'off' as const },
  { claimCheck: 'on', threshold: 16 * 1024 },
])(
  'data too large for the bus (real nats-server, max_payload 64 KiB), claim check $claimCheck',
  ({ threshold }) => {
    let server: PrivateServer;
    let configDir: string;
    let worker: WorkerProcess;
    let transport: Transport;
    let store: Store;
    let client: Client;

    beforeAll(async () => {
      configDir = await mkdtemp(join(tmpdir(), 'baton-too-large-'));
      const config = join(configDir, 'nats.conf');
      await writeFile(config, `max_payload: ${MAX_PAYLOAD}\n`);
      server = await startPrivateNats(['-c', config]);
      const env = {
        BATON_TRANSPORT_URL: server.url,
        BATON_STORE_URL: redisTestUrl(),
        BATON_REDIS_KEY_PREFIX: KEY_PREFIX,
        BATON_WORKFLOWS: fileURLToPath(new URL('./oversized.spec-helper.ts', import.meta.url)),
        BATON_PAYLOAD_REF_THRESHOLD_BYTES: String(threshold),
      };
      const resolved = readConfig(env);
      await loadAdapterCode(resolved);
      transport = transportFromConfig(resolved);
      store = storeFromConfig(resolved);
      client = new Client({ transport, store, largePayloads: { thresholdBytes: threshold } });
      worker = new WorkerProcess('too-large', env);
      await worker.ready();
    }, 60_000);

    afterAll(async () => {
      worker?.signal('SIGTERM');
      await worker?.exited;
      await Promise.allSettled([transport?.close(), store?.close()]);
      await server?.dispose();
      await purgeRedisKeyPrefix({ url: redisTestUrl(), keyPrefix: KEY_PREFIX });
      await rm(configDir, { recursive: true, force: true });
    }, 60_000);

    onlyIf(threshold === 'off')(
      'refuses a start message above the limit at the producer, naming size and limit',
      async () => {
        const huge = 'y'.repeat(MAX_PAYLOAD + 1);
        // Named by ref: the input is deliberately not the workflow's input type (a number).
        const ref = { name: oversized.name, version: oversized.version };
        const error = await client.start(ref, huge).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(PayloadTooLargeError);
        expect((error as Error).message).toMatch(/above the bus's limit of 65536 bytes/);
      },
    );

    onlyIf(threshold === 'off')(
      'fails a run whose activity result cannot be journaled and dead-letters the reason',
      { timeout: 60_000 },
      async () => {
        const small = await client.start(oversized, 1_000);
        const large = await client.start(oversized, MAX_PAYLOAD * 2);
        expect(await small.result({ timeoutMs: 30_000 })).toBe(1_000);
        await expect(large.result({ timeoutMs: 30_000 })).rejects.toThrow(/above the bus's limit/);
        expect(await store.runs.get(large.runId)).toMatchObject({
          status: 'failed',
          error: { name: 'PayloadTooLargeError' },
        });
        const letters = await transport.deadLetters.list();
        expect(letters).toEqual([
          expect.objectContaining({ code: 'too-large', reason: expect.stringContaining(large.runId) }),
        ]);
        expect(worker.alive).toBe(true);
        // The worker goes on with other runs.
        const after = await client.start(oversized, 10);
        expect(await after.result({ timeoutMs: 30_000 })).toBe(10);
      },
    );

    onlyIf(threshold !== 'off')(
      'passes an input and an activity result above the limit by reference, and the runs complete',
      { timeout: 60_000 },
      async () => {
        const huge = 'y'.repeat(MAX_PAYLOAD + 1);
        const input = await client.start(inputLength, huge);
        const large = await client.start(oversized, MAX_PAYLOAD * 2);
        expect(await input.result({ timeoutMs: 30_000 })).toBe(huge.length);
        expect(await large.result({ timeoutMs: 30_000 })).toBe(MAX_PAYLOAD * 2);
        expect(await transport.deadLetters.list()).toEqual([]);
        const journal = await transport.journal.read(large.runId, 0);
        for (const record of journal) expect(record.data.byteLength).toBeLessThan(threshold as number);
      },
    );
  },
);
