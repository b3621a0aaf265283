/**
 * Search attributes over HTTP (docs/search-attributes.md), served by the console's server on
 * loopback over the in-memory store: `GET /v1/runs` by `attr=<expression>` and `attr.<name>`, a
 * run's attributes in the listing and its description, the 400 of a filter that does not read;
 * the console's own API (the runs page, its counts, and the bulk count on the same filter).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import type { AttributeChanges, Store } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { freeConsolePort } from '../../console-port.spec-helper.js';
import { resolveConsoleOptions } from '../../config.js';
import { ConsoleServer } from '../console-server.js';

let store: Store;
let server: ConsoleServer;
let url: string;

/** A finished run of `orders` with `changes` set. */
async function runWith(runId: string, changes: AttributeChanges): Promise<void> {
  await store.runs.create({ runId, workflow: 'orders', version: 1, input: null, idempotencyKey: null });
  const lease = await store.leases.acquire(runId, 'worker-http', 60_000);
  if (!lease.ok) throw new Error(`could not lease ${runId}`);
  await store.attributes.set(runId, lease.epoch, changes);
  await store.runs.finish(runId, lease.epoch, { status: 'completed', result: null });
}

async function get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const ids = (body: Record<string, unknown>): string[] =>
  (body['runs'] as { runId: string }[]).map((r) => r.runId);

beforeAll(async () => {
  store = memoryStore();
  const client = new Client({ transport: memoryTransport(), store, retryUnavailableMs: 0 });
  server = new ConsoleServer({
    client,
    options: resolveConsoleOptions({ port: await freeConsolePort() }, {}),
    fleet: { transport: 'memory', store: 'memory' },
    log: () => undefined,
    api: { workflows: [] },
  });
  url = await server.listen();
  await runWith('run-a', {
    customerId: { type: 'keyword', value: '42' },
    total: { type: 'number', value: 150 },
  });
  await runWith('run-b', {
    customerId: { type: 'keyword', value: '42' },
    total: { type: 'number', value: 20 },
  });
  await runWith('run-c', {
    customerId: { type: 'keyword', value: '7' },
    vip: { type: 'boolean', value: true },
  });
});

afterAll(async () => {
  await server.close();
});

describe('search attributes over HTTP', () => {
  it('lists runs by attr.<name> and attr=<expression>, with the attributes in each run', async () => {
    const byName = await get('v1/runs?attr.customerId=42&order=oldest');
    expect(byName.status).toBe(200);
    expect(ids(byName.body)).toEqual(['run-a', 'run-b']);
    expect((byName.body['runs'] as { attributes: unknown }[])[0]?.attributes).toEqual({
      customerId: { type: 'keyword', value: '42' },
      total: { type: 'number', value: 150 },
    });
    const ranged = await get(`v1/runs?attr=${encodeURIComponent('total>=100')}&attr.customerId=42`);
    expect(ids(ranged.body)).toEqual(['run-a']);
    expect(ids((await get(`v1/runs?attr.total=${encodeURIComponent('<100')}`)).body)).toEqual(['run-b']);
    expect(ids((await get('v1/runs?attr.vip:boolean=true')).body)).toEqual(['run-c']);
    const described = await get('v1/runs/run-c');
    expect(described.body['attributes']).toEqual({
      customerId: { type: 'keyword', value: '7' },
      vip: { type: 'boolean', value: true },
    });
  });

  it('answers a filter that does not read 400, naming it, and still refuses unknown parameters', async () => {
    const bad = await get('v1/runs?attr.total:number=lots');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      error: {
        message: expect.stringMatching(
          /attribute filter 'total:number=lots' has 'lots', which is not a number/,
        ),
      },
    });
    const range = await get(`v1/runs?attr.customerId:keyword=${encodeURIComponent('>=4')}`);
    expect(range.status).toBe(400);
    expect((await get('v1/runs?attribute.customerId=42')).status).toBe(400);
  });

  it('serves the console page the same filter, the value’s counts and the bulk count', async () => {
    const page = await get(`api/runs?attr=${encodeURIComponent('customerId=42')}`);
    expect(ids(page.body).sort()).toEqual(['run-a', 'run-b']);
    const counts = await get(`api/run-counts?attr=${encodeURIComponent('customerId=42')}`);
    expect(counts.body).toMatchObject({ attribute: 'customerId=42', total: 2, byStatus: { completed: 2 } });
    expect(counts.body['scope']).toBe('attribute');
    // A filter the store keeps no counts for: the matching runs, walked (the page says so).
    const walked = await get(`api/run-counts?attr=${encodeURIComponent('total>=1')}`);
    expect(walked.body).toMatchObject({ total: 2, scope: 'filter' });
    expect(walked.body['attribute']).toBeUndefined();
    expect(walked.body['capped']).toBeUndefined();
    const all = await get('api/run-counts');
    expect(all.body).toMatchObject({ total: 3, scope: 'all' });
    const bulk = await get(`api/bulk/count?action=delete&attr=${encodeURIComponent('customerId=42')}`);
    expect(bulk.body).toEqual({ action: 'delete', count: 2 });
  });
});
