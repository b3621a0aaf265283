/**
 * The schedules, versions, start and search routes over real HTTP on loopback, with a client and
 * an in-process worker on the in-memory bus and store: what each page reads, each action behind
 * the CSRF token and refused in read-only mode, a start checked against its input schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Worker } from '@baton/worker';
import { pagesOrder, pagesReport } from '../console-pages.spec-helper.js';
import { freeConsolePort } from '../console-port.spec-helper.js';
import { startConsole } from '../index.js';
import type { ConsoleServer } from './console-server.js';

let store: ReturnType<typeof memoryStore>;
let client: Client;
let worker: Worker;
const servers: ConsoleServer[] = [];

async function consoleWith(readOnly = false): Promise<string> {
  const server = await startConsole({
    client,
    options: { port: await freeConsolePort(), readOnly },
    env: {},
    log: () => {},
    workflows: [pagesOrder],
  });
  servers.push(server);
  return server.url;
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as T;
}

/** A POST with the session's CSRF token (or none). */
async function post(url: string, path: string, body: unknown, csrf = true): Promise<Response> {
  const { csrfToken } = (await (await fetch(`${url}api/session`)).json()) as { csrfToken: string };
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(csrf && { 'x-csrf-token': csrfToken }) },
    body: JSON.stringify(body),
  });
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  const transport = memoryTransport();
  store = memoryStore();
  worker = new Worker({ transport, store, workflows: [pagesOrder, pagesReport] });
  await worker.start();
  client = new Client({ transport, store });
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await worker?.stop();
  await client?.close();
});

describe('the start route', () => {
  it('lists the loaded versions with their input schema and the live ones without', async () => {
    const url = await consoleWith();
    const startable = await getJson<Array<Record<string, unknown>>>(`${url}api/startable`);
    expect(startable).toEqual([
      expect.objectContaining({ name: 'pg_order', version: 1, live: true, loaded: true }),
      { name: 'pg_report', version: 1, live: true, loaded: false },
    ]);
    expect(startable[0]!['inputSchema']).toMatchObject({ required: ['customerId', 'amount'] });
  });

  it('refuses input its schema refuses (422 with the issues), starts good input once per key', async () => {
    const url = await consoleWith();
    const bad = await post(url, 'api/start', { workflow: 'pg_order', input: { amount: 0 } });
    expect(bad.status).toBe(422);
    const refused = (await bad.json()) as { error: string; issues: string[] };
    expect(refused.issues).toEqual([
      '$.customerId: a customer id is required',
      '$.amount: must be a whole number of at least 1',
    ]);
    expect((await client.runs.list({ workflow: 'pg_order' })).runs).toHaveLength(0);

    const body = { workflow: 'pg_order', input: { customerId: 'c-7', amount: 3 }, idempotencyKey: 'unit-k1' };
    const first = await post(url, 'api/start', body);
    expect(first.status).toBe(200);
    const started = (await first.json()) as { runId: string; created: boolean; done: string };
    expect(started).toMatchObject({ created: true, done: `started run ${started.runId}` });
    await until(
      async () => (await store.runs.get(started.runId))?.status === 'suspended',
      'the order to wait',
    );
    const again = (await (await post(url, 'api/start', body)).json()) as { runId: string; created: boolean };
    expect(again).toEqual(expect.objectContaining({ runId: started.runId, created: false }));

    const unknown = await post(url, 'api/start', { workflow: 'pg_nothing' });
    expect(unknown.status).toBe(422);
    expect(((await unknown.json()) as { error: string }).error).toMatch(/no live worker registers it/);
  });
});

describe('the versions route', () => {
  it('answers what client.fleet.versions answers: live workers and unfinished runs per version', async () => {
    const url = await consoleWith();
    await client.start(pagesOrder, { customerId: 'c-8', amount: 1 });
    await until(
      async () => (await client.runs.list({ workflow: 'pg_order', status: ['suspended'] })).runs.length > 0,
      'an unfinished order',
    );
    const listing = await getJson<{ versions: Array<Record<string, unknown>>; complete: boolean }>(
      `${url}api/versions`,
    );
    const order = listing.versions.find((v) => v['workflow'] === 'pg_order')!;
    expect(order).toMatchObject({ version: 1, workers: [worker.workerId], drained: false, stranded: false });
    expect((order['unfinished'] as { total: number }).total).toBeGreaterThan(0);
    expect(listing.versions.find((v) => v['workflow'] === 'pg_report')).toMatchObject({ drained: true });
  });
});

describe('the schedules routes', () => {
  it('lists a schedule with its next due times; pauses, resumes, triggers and updates it', async () => {
    await client.schedules.create(
      { name: 'pg_report', version: 1 },
      { region: 'eu' },
      {
        scheduleId: 'unit-nightly',
        cron: '0 2 * * *',
        timeZone: 'UTC',
      },
    );
    const url = await consoleWith();
    type Listed = { scheduleId: string; paused: boolean; nextDueAt: number; upcoming: number[] };
    const list = async (): Promise<Listed> =>
      (await getJson<{ schedules: Listed[] }>(`${url}api/schedules`)).schedules.find(
        (s) => s.scheduleId === 'unit-nightly',
      )!;
    const listed = await list();
    expect(listed.upcoming).toHaveLength(3);
    expect(listed.upcoming[0]).toBe(listed.nextDueAt);
    expect(listed.upcoming[1]! - listed.upcoming[0]!).toBe(86_400_000);
    expect(new Date(listed.nextDueAt).getUTCHours()).toBe(2);

    expect((await post(url, 'api/schedules/unit-nightly/pause', {}, false)).status).toBe(403);
    expect((await list()).paused).toBe(false);
    const paused = await post(url, 'api/schedules/unit-nightly/pause', {});
    expect(((await paused.json()) as { done: string }).done).toMatch(/^paused/);
    expect(await list()).toMatchObject({ paused: true, upcoming: [] });
    await post(url, 'api/schedules/unit-nightly/resume', {});
    expect((await list()).paused).toBe(false);

    const triggered = (await (await post(url, 'api/schedules/unit-nightly/trigger', {})).json()) as {
      runId: string;
    };
    await until(
      async () => (await store.runs.get(triggered.runId))?.status === 'completed',
      'the triggered run',
    );
    expect((await store.runs.get(triggered.runId))?.idempotencyKey).toMatch(/^schedule:unit-nightly:now:/);
    expect((await list()).nextDueAt).toBe(listed.nextDueAt);

    const updated = await post(url, 'api/schedules/unit-nightly/update', { every: '1h', note: 'hourly now' });
    expect(updated.status).toBe(200);
    const after = await list();
    expect(after.upcoming[1]! - after.upcoming[0]!).toBe(3_600_000);
    const bad = await post(url, 'api/schedules/unit-nightly/update', { every: 'often' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/'every' must be/);
    expect((await post(url, 'api/schedules/nope/pause', {})).status).toBe(404);
  });
});

describe('the search route', () => {
  it('finds a run by id, then by idempotency key, then reads an attribute filter; else says what it tried', async () => {
    const url = await consoleWith();
    const run = await client.start(
      pagesOrder,
      { customerId: '42', amount: 2 },
      { idempotencyKey: 'search-key-1' },
    );
    await until(async () => (await store.runs.get(run.runId)) !== undefined, 'the run to be stored');
    const search = (q: string): Promise<Record<string, unknown>> =>
      getJson(`${url}api/search?q=${encodeURIComponent(q)}`);
    expect(await search(run.runId)).toEqual({ found: 'run', runId: run.runId });
    expect(await search('search-key-1')).toEqual({
      found: 'key',
      runs: [{ runId: run.runId, workflow: 'pg_order', version: 1, status: expect.any(String) }],
    });
    expect(await search('search-key')).toMatchObject({ found: 'nothing' });
    expect(await search('customerId=42')).toEqual({ found: 'attribute', expression: 'customerId=42' });
    const nothing = (await search('no such thing')) as { tried: string[] };
    expect(nothing.tried).toEqual([
      "no run has the id 'no such thing'",
      "no run has the idempotency key 'no such thing'",
      expect.stringMatching(/^it is not an attribute filter/),
    ]);
    expect((await fetch(`${url}api/search?q=`)).status).toBe(400);
  });
});

describe('a read-only console', () => {
  it('reads the pages but refuses the start and every schedule action with 403', async () => {
    const url = await consoleWith(true);
    expect((await fetch(`${url}api/schedules`)).status).toBe(200);
    expect((await fetch(`${url}api/versions`)).status).toBe(200);
    const before = (await client.runs.list({ workflow: 'pg_order' })).runs.length;
    const start = await post(url, 'api/start', {
      workflow: 'pg_order',
      input: { customerId: 'x', amount: 1 },
    });
    expect(start.status).toBe(403);
    expect(((await start.json()) as { error: string }).error).toMatch(/read-only/);
    for (const action of ['pause', 'resume', 'trigger', 'update'])
      expect((await post(url, `api/schedules/unit-nightly/${action}`, { note: 'x' })).status).toBe(403);
    expect((await client.runs.list({ workflow: 'pg_order' })).runs).toHaveLength(before);
  });
});
