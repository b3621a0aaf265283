/**
 * What the client really puts on the run queue, held against the published JSON Schema
 * (docs/wire-protocol/run-message.v1.schema.json): every start, signal and cancel a producer can
 * make through `Client` (keyed, prioritised, traced, sealed, by reference) is a valid message of
 * protocol 1, travelling with the de-duplication id and key docs/wire-protocol.md names. The
 * encoder's own cases are in libs/core/src/runtime/wire-protocol.spec.ts.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { defineWorkflow } from '@baton/core';
import type { EnqueueOptions, Transport } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { resolvePayloadProtection, runIdForKey } from '@baton/core/runtime';
import { Client, type ClientOptions } from './index.js';

const SCHEMA_FILE = new URL('../../../docs/wire-protocol/run-message.v1.schema.json', import.meta.url);
const ajv = new Ajv({ strict: true, strictRequired: false, allErrors: true });
const isRunMessage = ajv.compile(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as object);

const greet = defineWorkflow({ name: 'greet', version: 1, run: async (_ctx, name: string) => `hi ${name}` });

interface Sent {
  body: { v: number; kind: string; runId: string } & Record<string, unknown>;
  options: EnqueueOptions | undefined;
}

/** A client over the memory bus whose run queue records every message it is handed, decoded. */
function recordingClient(options: Partial<ClientOptions> = {}): { client: Client; sent: Sent[] } {
  const transport: Transport = memoryTransport();
  const sent: Sent[] = [];
  const enqueue = transport.runQueue.enqueue.bind(transport.runQueue);
  transport.runQueue.enqueue = (data, enqueueOptions) => {
    sent.push({ body: JSON.parse(new TextDecoder().decode(data)) as Sent['body'], options: enqueueOptions });
    return enqueue(data, enqueueOptions);
  };
  return { client: new Client({ transport, ...options }), sent };
}

function expectValid(sent: Sent[]): void {
  expect(sent.length).toBeGreaterThan(0);
  for (const { body } of sent) {
    expect(isRunMessage(body) ? '' : ajv.errorsText(isRunMessage.errors), JSON.stringify(body)).toBe('');
  }
}

describe('the client on the wire', () => {
  it('starts, signals and cancels with valid messages, ids and keys (a producer with only the bus)', async () => {
    const { client, sent } = recordingClient();
    const keyed = await client.start(greet, 'Ada', { idempotencyKey: 'order-42' });
    const plain = await client.start(
      { name: 'report', version: 3 },
      { day: '2026-11-27' },
      {
        priority: 'high',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      },
    );
    await client.signal(keyed.runId, 'greeting', 'Hello', { signalId: 'sig-1' });
    await client.signal(plain.runId, 'go');
    await client.cancel(plain.runId, 'order withdrawn');
    expectValid(sent);

    expect(keyed.runId).toBe(runIdForKey('greet', 'order-42'));
    expect(sent.map(({ body, options }) => [body.kind, body.v, options?.msgId, options?.key])).toEqual([
      ['start', 1, `start:${keyed.runId}`, keyed.runId],
      ['start', 1, `start:${plain.runId}`, plain.runId],
      ['signal', 1, `signal:${keyed.runId}:sig-1`, keyed.runId],
      ['signal', 1, expect.stringMatching(`^signal:${plain.runId}:`), plain.runId],
      ['cancel', 1, undefined, plain.runId],
    ]);
    expect(sent[0]!.body).toMatchObject({
      workflow: 'greet',
      version: 1,
      input: 'Ada',
      idempotencyKey: 'order-42',
    });
    expect(sent[1]!.body).toMatchObject({ priority: 'high', traceparent: expect.stringMatching(/^00-/) });
    expect(sent[1]!.options?.priority).toBe('high');
  });

  it('writes version 3 for sealed values and version 2 for values by reference, both valid', async () => {
    const sealing = resolvePayloadProtection(
      { encryptionKeys: `k1:${randomBytes(32).toString('base64')}` },
      {},
    );
    const sealed = recordingClient({ payloadProtection: sealing });
    const run = await sealed.client.start(greet, 'Ada');
    await sealed.client.signal(run.runId, 'greeting', { text: 'Hello' });
    expectValid(sealed.sent);
    expect(sealed.sent.map((s) => s.body.v)).toEqual([3, 3]);
    expect(sealed.sent[0]!.body.input).toHaveProperty(['$baton.sealed'], 1);

    const store = memoryStore();
    const byRef = recordingClient({ store, largePayloads: { thresholdBytes: 16 } });
    const big = await byRef.client.start(greet, 'x'.repeat(100));
    await byRef.client.signal(big.runId, 'greeting', 'y'.repeat(100));
    expectValid(byRef.sent);
    expect(byRef.sent.map((s) => [s.body.v, Object.keys(s.body).filter((k) => k.endsWith('Ref'))])).toEqual([
      [2, ['inputRef']],
      [2, ['payloadRef']],
    ]);
  });
});
