/**
 * The HTTP API over real HTTP on loopback, served by the console's server as `baton serve` builds
 * it, with a client and a Worker on the in-memory bus and store: every route, the version and
 * schema rules of a start, the long poll, the statuses of the caller's mistakes (never a 500), the
 * access rules (token, cookie refused, trusted header, read-only, cross-site), webhooks, the
 * sign-in limiter, the API served alone; and every status seen here is one the OpenAPI document
 * lists for its operation.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import type { Store } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Worker } from '@baton/worker';
import { freeConsolePort } from '../../console-port.spec-helper.js';
import { resolveConsoleOptions, type ConsoleOptions } from '../../config.js';
import { ConsoleServer } from '../console-server.js';
import { API_SERVER_WORKFLOWS, apiWorkerOnly } from './api-workflows.spec-helper.js';
import { apiPromise } from './api-promise-workflow.spec-helper.js';
import { API_ROUTES } from './http-api.js';
import { OPENAPI_DOCUMENT } from './openapi.js';
import { signWebhook } from './webhook-signature.js';
import { signBodyWebhook, signStandardWebhook } from '@baton/client/webhooks';
import {
  API_WEBHOOKS,
  APPROVALS_SECRET,
  apiTwoNotes,
  ORDERS_SECRET,
  PUSHES_SECRET,
} from './api-webhooks.spec-helper.js';

const TOKEN = 'unit-api-token-5b9e1d7c';
const SECRET = 'unit-webhook-secret-3f8a2c61';

let store: Store;
let client: Client;
let worker: Worker;
const servers: ConsoleServer[] = [];
const logged: string[] = [];
/** `METHOD /template status` of every answer of a documented route. */
const seen = new Set<string>();

const templates = API_ROUTES.map((r) => ({
  key: `${r.method} ${r.path}`,
  pattern: new RegExp(`^${r.path.replace(/\{\w+\}/g, '[^/]+')}$`),
  method: r.method,
}));

interface Answer {
  status: number;
  headers: Headers;
  body: { error?: { code: string; message: string; issues?: string[] } } & Record<string, unknown>;
}

/** One request; its status is recorded under its route's template for the document check. */
async function call(
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const res = await fetch(`${base}${path.slice(1)}`, {
    method,
    headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...options.headers },
    ...(body !== undefined && { body }),
  });
  const text = await res.text();
  expect(res.headers.get('content-type'), `${method} ${path}`).toMatch(/^application\/json/);
  const pathname = new URL(`${base}${path.slice(1)}`).pathname;
  const route = templates.find((t) => t.method === method && t.pattern.test(pathname));
  if (route !== undefined) seen.add(`${route.key} ${res.status}`);
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as Answer['body'] };
}

async function serve(
  options: ConsoleOptions = {},
  extra: { console?: boolean; maxWaitMs?: number; env?: Record<string, string> } = {},
): Promise<string> {
  const server = new ConsoleServer({
    client,
    options: resolveConsoleOptions({ port: await freeConsolePort(), ...options }, extra.env ?? {}),
    fleet: { transport: 'memory', store: 'memory' },
    log: (line) => logged.push(line),
    api: {
      workflows: API_SERVER_WORKFLOWS,
      webhooks: API_WEBHOOKS,
      ...(extra.maxWaitMs !== undefined && { maxWaitMs: extra.maxWaitMs }),
    },
    ...(extra.console !== undefined && { console: extra.console }),
  });
  servers.push(server);
  return server.listen();
}

/** Waits (a few ms at a time) until the store knows the run with one of `statuses`. */
async function until(runId: string, statuses: string[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const status = (await store.runs.get(runId))?.status;
    if (status !== undefined && statuses.includes(status)) return;
    if (Date.now() > deadline)
      throw new Error(`run ${runId} is ${status ?? 'unknown'}, not ${statuses.join('/')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeAll(async () => {
  const transport = memoryTransport();
  store = memoryStore();
  client = new Client({ transport, store, retryUnavailableMs: 0 });
  worker = new Worker({
    transport,
    store,
    workflows: [...API_SERVER_WORKFLOWS, apiWorkerOnly, apiPromise, apiTwoNotes],
    leaseMs: 400,
    heartbeatMs: 100,
    reapIntervalMs: 50,
    fetchWaitMs: 20,
    inProcessWaitMs: 0,
    drainTimeoutMs: 1_000,
  });
  await worker.start();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await worker.stop();
});

describe('the HTTP API', () => {
  it('starts a run (201), waits for its result, describes and lists it, and answers a repeated key 200', async () => {
    const url = await serve();
    const started = await call(url, 'POST', '/v1/runs', {
      body: { workflow: 'api_greet', input: { name: 'Ada' }, idempotencyKey: 'greet-ada' },
    });
    expect(started.status).toBe(201);
    const runId = started.body['runId'] as string;
    expect(runId).toBe(client.runIdForKey('api_greet', 'greet-ada'));
    const result = await call(url, 'GET', `/v1/runs/${runId}/result?wait=10s`);
    // No version given: the highest one this server loaded.
    expect(result).toMatchObject({ status: 200, body: { runId, status: 'completed', result: 'hello, Ada' } });
    const again = await call(url, 'POST', '/v1/runs', {
      body: { workflow: 'api_greet', input: { name: 'Someone else' } },
      headers: { 'idempotency-key': 'greet-ada' },
    });
    expect(again).toMatchObject({ status: 200, body: { runId } });
    const described = await call(url, 'GET', `/v1/runs/${runId}`);
    expect(described.status).toBe(200);
    expect(described.body).toMatchObject({
      runId,
      workflow: 'api_greet',
      version: 2,
      status: 'completed',
      idempotencyKey: 'greet-ada',
      input: { name: 'Ada' },
      result: 'hello, Ada',
      attempts: 1,
      lease: { state: 'finished' },
    });
    expect(Object.keys(described.body).sort()).toEqual(
      [
        'attempts',
        'createdAt',
        'idempotencyKey',
        'input',
        'lease',
        'result',
        'runId',
        'status',
        'updatedAt',
        'version',
        'workflow',
      ].sort(),
    );
    const v1 = await call(url, 'POST', '/v1/runs', {
      body: { workflow: 'api_greet', version: 1, input: { name: 'Bo' } },
    });
    expect(v1.status).toBe(201);
    const v1Result = await call(url, 'GET', `/v1/runs/${v1.body['runId'] as string}/result?wait=10s`);
    expect(v1Result.body['result']).toBe('hello, Bo (v1)');
    const listed = await call(
      url,
      'GET',
      '/v1/runs?workflow=api_greet&idempotencyKeyPrefix=greet-&status=completed',
    );
    expect(listed.status).toBe(200);
    expect(listed.body['runs']).toEqual([
      expect.objectContaining({ runId, workflow: 'api_greet', version: 2, status: 'completed', owner: null }),
    ]);
    expect(listed.body['runs']).toEqual([expect.not.objectContaining({ input: expect.anything() })]);
    const paged = await call(url, 'GET', '/v1/runs?workflow=api_greet&limit=1&order=oldest');
    expect((paged.body['runs'] as unknown[]).length).toBe(1);
    expect(typeof paged.body['cursor']).toBe('string');
    const next = await call(
      url,
      'GET',
      `/v1/runs?workflow=api_greet&limit=1&order=oldest&cursor=${paged.body['cursor'] as string}`,
    );
    expect(next.status).toBe(200);
  });

  it("checks a loaded workflow's input against its schema: 422 with every issue, nothing sent", async () => {
    // A bus no worker reads, so what the API sent can be counted.
    const bus = memoryTransport();
    const server = new ConsoleServer({
      client: new Client({ transport: bus, store: memoryStore() }),
      options: resolveConsoleOptions({ port: await freeConsolePort() }, {}),
      fleet: { transport: 'memory', store: 'memory' },
      log: (line) => logged.push(line),
      api: { workflows: API_SERVER_WORKFLOWS },
    });
    servers.push(server);
    const url = await server.listen();
    const sent = async (): Promise<number> => (await bus.runQueue.fetch({ max: 10, expiresMs: 20 })).length;
    const bad = await call(url, 'POST', '/v1/runs', {
      body: { workflow: 'api_greet', input: { name: 7 }, idempotencyKey: 'greet-bad' },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatchObject({
      code: 'BATON_INVALID_INPUT',
      issues: ['$.name: must be a string'],
    });
    expect(bad.body.error?.message).toMatch(/input of workflow api_greet@2 does not match its input schema/);
    const badKey = await call(url, 'POST', '/v1/runs', {
      body: { workflow: 'api_greet', input: { name: 'x' }, idempotencyKey: '' },
    });
    expect(badKey.status).toBe(422);
    expect(badKey.body.error).toMatchObject({ code: 'BATON_INVALID_INPUT', field: 'idempotencyKey' });
    expect(await sent()).toBe(0);
    const good = await call(url, 'POST', '/v1/runs', {
      body: { workflow: 'api_greet', input: { name: 'x' } },
    });
    expect(good.status).toBe(201);
    expect(await sent()).toBe(1);
  });

  it("starts a workflow it did not load by the live workers' versions, and refuses one nothing registers", async () => {
    const url = await serve();
    const registered = await call(url, 'POST', '/v1/runs', {
      body: { workflow: 'api_worker_only', input: { any: ['thing'] } },
    });
    expect(registered.status).toBe(201);
    const runId = registered.body['runId'] as string;
    expect(await call(url, 'GET', `/v1/runs/${runId}/result?wait=10s`)).toMatchObject({
      body: { status: 'completed', result: { echoed: { any: ['thing'] } } },
    });
    expect((await store.runs.get(runId))?.version).toBe(3);
    const unknown = await call(url, 'POST', '/v1/runs', {
      body: { workflow: 'no_such_workflow', input: {} },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error).toMatchObject({ code: 'BATON_UNKNOWN_WORKFLOW' });
    expect(unknown.body.error?.message).toMatch(/not loaded by this server and no live worker registers it/);
    const version = await call(url, 'POST', '/v1/runs', {
      body: { workflow: 'api_worker_only', version: 9 },
    });
    expect(version.status).toBe(422);
    expect(version.body.error?.message).toMatch(
      /no live worker registers api_worker_only@9 \(the live workers register api_worker_only@3\)/,
    );
    const allowed = await call(url, 'POST', '/v1/runs', {
      body: {
        workflow: 'api_worker_only',
        version: 9,
        allowUnregistered: true,
        idempotencyKey: 'waits-for-v9',
      },
    });
    expect(allowed.status).toBe(201);
  });

  it('long-polls: 202 with the status while a run waits, then its payload once signalled; failed and cancelled runs answer 200 with the error', async () => {
    const url = await serve();
    const started = await call(url, 'POST', '/v1/runs', { body: { workflow: 'api_wait', input: null } });
    const runId = started.body['runId'] as string;
    await until(runId, ['suspended']);
    const pending = await call(url, 'GET', `/v1/runs/${runId}/result?wait=50ms`);
    expect(pending).toMatchObject({ status: 202, body: { runId, status: 'suspended' } });
    const signalled = await call(url, 'POST', `/v1/runs/${runId}/signals/go`, {
      body: { approved: true },
      headers: { 'idempotency-key': 'approval-1' },
    });
    expect(signalled).toMatchObject({ status: 202, body: { runId, signal: 'go' } });
    expect(await call(url, 'GET', `/v1/runs/${runId}/result?wait=10s`)).toMatchObject({
      status: 200,
      body: { status: 'completed', result: { approved: true } },
    });
    const late = await call(url, 'POST', `/v1/runs/${runId}/signals/go`, { body: 1 });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'BATON_RUN_STATE' });
    expect(late.body.error?.message).toMatch(/is completed: a signal to it would be dropped/);

    const failing = await call(url, 'POST', '/v1/runs', {
      body: { workflow: 'api_fail', input: { why: 'a test' } },
    });
    const failed = await call(url, 'GET', `/v1/runs/${failing.body['runId'] as string}/result?wait=10s`);
    expect(failed).toMatchObject({
      status: 200,
      body: { status: 'failed', error: { name: 'Error', message: 'api_fail fails on purpose: a test' } },
    });

    const waiting = await call(url, 'POST', '/v1/runs', { body: { workflow: 'api_wait' } });
    const waitingId = waiting.body['runId'] as string;
    await until(waitingId, ['suspended']);
    const cancel = await call(url, 'POST', `/v1/runs/${waitingId}/cancel`, {
      body: { reason: 'no longer needed' },
    });
    expect(cancel).toMatchObject({ status: 202, body: { runId: waitingId, status: 'cancel-requested' } });
    const cancelled = await call(url, 'GET', `/v1/runs/${waitingId}/result?wait=10s`);
    expect(cancelled).toMatchObject({
      status: 200,
      body: { status: 'cancelled', error: { code: 'BATON_CANCELLED' } },
    });
    expect(cancelled.body['error']).toMatchObject({ message: expect.stringMatching(/no longer needed/) });
    expect((await call(url, 'POST', `/v1/runs/${waitingId}/cancel`)).status).toBe(409);
  });

  /** Two runs, the first continued as the second by its owner played by hand: marked, then ended. */
  async function continuedAs(first: string, second: string): Promise<void> {
    for (const runId of [first, second]) {
      await store.runs.create({
        runId,
        workflow: 'api_elsewhere',
        version: 1,
        input: null,
        idempotencyKey: null,
      });
    }
    const lease = await store.leases.acquire(first, 'by-hand', 60_000);
    if (!lease.ok) throw new Error(`${first} not acquired`);
    await store.runs.continueAs(first, lease.epoch, second);
    const next = { runId: second, workflow: 'api_elsewhere', version: 1, input: null };
    await store.runs.finish(first, lease.epoch, { status: 'completed', result: { $batonContinuedAs: next } });
  }

  it('passes a signal to a run that continued as new on to its successor: 202, not 409', async () => {
    const url = await serve();
    const [first, second] = ['api-continued-1', 'api-continued-2'];
    await continuedAs(first, second);
    const signalled = await call(url, 'POST', `/v1/runs/${first}/signals/go`, {
      body: { n: 1 },
      headers: { 'idempotency-key': 'after-continue' },
    });
    expect(signalled).toMatchObject({ status: 202, body: { runId: first, signal: 'go' } });
    // The worker takes the message and delivers it to the successor; the first run keeps nothing.
    const deadline = Date.now() + 10_000;
    while (!(await store.signals.read(second)).some((s) => s.signalId === 'after-continue')) {
      if (Date.now() > deadline) throw new Error(`the signal never reached ${second}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await store.signals.read(first)).toEqual([]);
  });

  it('passes a cancel of a run that continued as new on to its successor: 202, not 409', async () => {
    const url = await serve();
    const [first, second] = ['api-cancel-continued-1', 'api-cancel-continued-2'];
    // Continued as the second, whose owner (played by hand below) holds it.
    await continuedAs(first, second);
    if (!(await store.leases.acquire(second, 'by-hand-2', 60_000)).ok)
      throw new Error(`${second} not acquired`);

    const cancelled = await call(url, 'POST', `/v1/runs/${first}/cancel`, {
      body: { reason: 'stop the chain' },
    });
    expect(cancelled).toMatchObject({ status: 202, body: { runId: first, status: 'cancel-requested' } });
    // A worker takes the cancel message and passes it on to the chain's current run.
    const deadline = Date.now() + 10_000;
    while ((await store.leases.get(second))?.cancelRequested !== true) {
      if (Date.now() > deadline) throw new Error(`the cancel never reached ${second}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect((await store.leases.get(second))?.cancelReason).toBe('stop the chain');
    // A run that finished without continuing is still a 409.
    await store.runs.finish(second, (await store.leases.get(second))!.epoch, {
      status: 'completed',
      result: 1,
    });
    expect((await call(url, 'POST', `/v1/runs/${second}/cancel`)).status).toBe(409);
  });

  it("sends updates: 200 with the handler's answer or its failure, 202 past the wait, a repeated id applied once", async () => {
    const url = await serve();
    const started = await call(url, 'POST', '/v1/runs', { body: { workflow: 'api_counter' } });
    const runId = started.body['runId'] as string;
    await until(runId, ['suspended']);
    const added = await call(url, 'POST', `/v1/runs/${runId}/updates/add`, { body: { args: 2 } });
    expect(added).toMatchObject({ status: 200, body: { runId, status: 'completed', result: 2 } });
    expect(added.body['updateId']).toEqual(expect.any(String));
    // A repeat of an id (the body's, or the header's) is answered with the kept result.
    const byKey = { body: { args: 5 }, headers: { 'idempotency-key': 'add-5' } };
    expect(await call(url, 'POST', `/v1/runs/${runId}/updates/add`, byKey)).toMatchObject({
      status: 200,
      body: { updateId: 'add-5', result: 7 },
    });
    expect(
      await call(url, 'POST', `/v1/runs/${runId}/updates/add`, { body: { args: 5, updateId: 'add-5' } }),
    ).toMatchObject({ status: 200, body: { updateId: 'add-5', result: 7 } });
    const refused = await call(url, 'POST', `/v1/runs/${runId}/updates/add`, { body: { args: 0 } });
    expect(refused).toMatchObject({ status: 422, body: { error: { code: 'BATON_UPDATE_REJECTED' } } });
    expect(refused.body.error?.message).toMatch(
      /rejected by its validator: add takes a whole number ≥ 1, got 0/,
    );
    const unknown = await call(url, 'POST', `/v1/runs/${runId}/updates/subtract`, { body: { args: 1 } });
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'BATON_UPDATE_UNKNOWN' } } });
    expect(unknown.body.error?.message).toMatch(/no handler for update 'subtract'; it handles 'add'/);
    const failed = await call(url, 'POST', `/v1/runs/${runId}/updates/add`, { body: { args: 'boom' } });
    expect(failed).toMatchObject({
      status: 200,
      body: { status: 'failed', error: { name: 'Error', message: 'add fails on purpose' } },
    });
    // Paused: no answer within the wait, 202 with the id; once resumed, the repeat gets the answer.
    await client.runs.pause(runId, 'a test');
    const pending = await call(url, 'POST', `/v1/runs/${runId}/updates/add`, {
      body: { args: 1, timeoutMs: 100 },
    });
    expect(pending).toMatchObject({ status: 202, body: { runId, status: 'pending' } });
    const updateId = pending.body['updateId'] as string;
    await client.runs.resume(runId);
    expect(
      await call(url, 'POST', `/v1/runs/${runId}/updates/add`, {
        body: { args: 1, updateId, timeoutMs: 10_000 },
      }),
    ).toMatchObject({ status: 200, body: { updateId, result: 8 } });
    await call(url, 'POST', `/v1/runs/${runId}/signals/go`, { body: null });
    expect(await call(url, 'GET', `/v1/runs/${runId}/result?wait=10s`)).toMatchObject({
      status: 200,
      body: { status: 'completed', result: 8 },
    });
    const late = await call(url, 'POST', `/v1/runs/${runId}/updates/add`, { body: { args: 1 } });
    expect(late).toMatchObject({ status: 409, body: { error: { code: 'BATON_RUN_STATE' } } });
    expect(late.body.error?.message).toMatch(/has finished \(completed\); a finished run takes no updates/);
  });

  it('cuts a long wait to its bound and answers a run still unknown after it 404', async () => {
    const url = await serve({}, { maxWaitMs: 150 });
    const started = await call(url, 'POST', '/v1/runs', { body: { workflow: 'api_wait' } });
    const runId = started.body['runId'] as string;
    await until(runId, ['suspended']);
    const begun = Date.now();
    expect((await call(url, 'GET', `/v1/runs/${runId}/result?wait=1h`)).status).toBe(202);
    expect(Date.now() - begun).toBeLessThan(5_000);
    const unknown = await call(url, 'GET', '/v1/runs/no-such-run/result?wait=100ms');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'BATON_NOT_FOUND' });
    await call(url, 'POST', `/v1/runs/${runId}/cancel`);
  });

  it("answers each caller's mistake with a 4xx and a code, never a 500", async () => {
    const url = await serve();
    const cases: Array<
      [
        string,
        string,
        { body?: unknown; raw?: string; headers?: Record<string, string> },
        number,
        string,
        RegExp,
      ]
    > = [
      ['POST', '/v1/runs', { raw: '{"workflow": ' }, 400, 'BATON_BAD_REQUEST', /not JSON/],
      ['POST', '/v1/runs', { body: ['api_greet'] }, 400, 'BATON_BAD_REQUEST', /must be a JSON object/],
      ['POST', '/v1/runs', { body: {} }, 400, 'BATON_BAD_REQUEST', /'workflow' is required/],
      [
        'POST',
        '/v1/runs',
        { body: { workflow: 'api_greet', idempotency_key: 'k' } },
        400,
        'BATON_BAD_REQUEST',
        /unknown field\(s\) 'idempotency_key'/,
      ],
      [
        'POST',
        '/v1/runs',
        { body: { workflow: 'api_greet', version: '2' } },
        400,
        'BATON_BAD_REQUEST',
        /'version' must be a whole number/,
      ],
      [
        'POST',
        '/v1/runs',
        { body: { workflow: 'api_greet', idempotencyKey: 'a' }, headers: { 'idempotency-key': 'b' } },
        400,
        'BATON_BAD_REQUEST',
        /differ/,
      ],
      [
        'POST',
        '/v1/runs',
        { raw: 'workflow=api_greet', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
        415,
        'BATON_UNSUPPORTED_MEDIA_TYPE',
        /must be JSON/,
      ],
      [
        'POST',
        '/v1/runs',
        { raw: JSON.stringify({ workflow: 'api_greet', input: 'x'.repeat(1_100_000) }) },
        413,
        'BATON_TOO_LARGE',
        /over 1048576 bytes/,
      ],
      [
        'GET',
        '/v1/runs/some-run/result?wait=30',
        {},
        400,
        'BATON_BAD_REQUEST',
        /'wait' must be a duration with its unit/,
      ],
      ['GET', '/v1/runs/some-run/result?wait=soon', {}, 400, 'BATON_BAD_REQUEST', /e\.g\. 500ms, 30s or 1m/],
      ['GET', '/v1/runs/no-such-run', {}, 404, 'BATON_NOT_FOUND', /no-such-run is not known to the store/],
      ['GET', '/v1/runs/bad%zzid', {}, 400, 'BATON_BAD_REQUEST', /malformed percent-encoding/],
      ['GET', '/v1/runs/has%20space', {}, 404, 'BATON_NOT_FOUND', /has space/],
      ['POST', '/v1/runs/no-such-run/cancel', {}, 404, 'BATON_NOT_FOUND', /not known/],
      ['POST', '/v1/runs/no-such-run/signals/go', { body: true }, 404, 'BATON_NOT_FOUND', /not known/],
      [
        'POST',
        '/v1/runs/no-such-run/updates/add',
        { body: { args: 1 } },
        404,
        'BATON_NOT_FOUND',
        /not known/,
      ],
      [
        'POST',
        '/v1/runs/some-run/updates/add',
        { body: { args: 1, timeout: 5 } },
        400,
        'BATON_BAD_REQUEST',
        /unknown field\(s\) 'timeout'; the fields are 'args', 'updateId', 'timeoutMs'/,
      ],
      [
        'POST',
        '/v1/runs/some-run/updates/add',
        { body: { timeoutMs: -1 } },
        400,
        'BATON_BAD_REQUEST',
        /'timeoutMs' must be a whole number of ms/,
      ],
      [
        'POST',
        '/v1/runs/some-run/updates/add',
        { body: { updateId: 'a' }, headers: { 'idempotency-key': 'b' } },
        400,
        'BATON_BAD_REQUEST',
        /Idempotency-Key header and the body's 'updateId' differ/,
      ],
      [
        'POST',
        '/v1/runs/some-run/updates/add',
        { body: { updateId: '' } },
        400,
        'BATON_BAD_REQUEST',
        /must be 1-256 characters/,
      ],
      [
        'POST',
        '/v1/runs/some-run/cancel',
        { body: { reason: 5 } },
        400,
        'BATON_BAD_REQUEST',
        /'reason' must be a string/,
      ],
      [
        'POST',
        '/v1/runs/some-run/signals/go',
        { body: 1, headers: { 'idempotency-key': 'has space' } },
        400,
        'BATON_BAD_REQUEST',
        /printable/,
      ],
      [
        'GET',
        '/v1/runs?status=sleeping',
        {},
        400,
        'BATON_BAD_REQUEST',
        /'status' sleeping is not a run status/,
      ],
      ['GET', '/v1/runs?colour=red', {}, 400, 'BATON_BAD_REQUEST', /unknown query parameter 'colour'/],
      ['GET', '/v1/runs?cursor=not-a-cursor', {}, 400, 'BATON_CONFIG', /cursor/],
      ['GET', '/v1/runs?limit=0', {}, 400, 'BATON_CONFIG', /limit/],
      ['GET', '/v1/nothing-here', {}, 404, 'BATON_NO_ROUTE', /no API route GET \/v1\/nothing-here/],
      [
        'DELETE',
        '/v1/runs/some-run',
        {},
        405,
        'BATON_METHOD_NOT_ALLOWED',
        /DELETE is not served at \/v1\/runs\/some-run \(GET is\)/,
      ],
    ];
    for (const [method, path, options, status, code, message] of cases) {
      const answer = await call(url, method, path, options);
      expect(answer.status, `${method} ${path}`).toBe(status);
      expect(answer.body.error?.code, `${method} ${path}`).toBe(code);
      expect(answer.body.error?.message, `${method} ${path}`).toMatch(message);
    }
    expect((await call(url, 'DELETE', '/v1/runs/x')).headers.get('allow')).toBe('GET');
    expect(logged.filter((l) => /\b500\b|BATON_INTERNAL/.test(l))).toEqual([]);
  });

  it('answers an error nobody mapped 500 BATON_INTERNAL with a redacted message, and logs it', async () => {
    const failing = new Client({ transport: memoryTransport(), store: memoryStore() });
    failing.describe = () =>
      Promise.reject(new Error('lost the connection to redis://app:hunter2-pass@db:6379'));
    const server = new ConsoleServer({
      client: failing,
      options: resolveConsoleOptions({ port: await freeConsolePort() }, {}),
      fleet: { transport: 'memory', store: 'memory' },
      log: (line) => logged.push(line),
      api: {},
    });
    servers.push(server);
    const url = await server.listen();
    const answer = await call(url, 'GET', '/v1/runs/r1');
    expect(answer.status).toBe(500);
    expect(answer.body.error).toEqual({
      code: 'BATON_INTERNAL',
      message: expect.stringMatching(/lost the connection to redis:\/\/app:\*\*\*@db:6379/),
    });
    expect(JSON.stringify(answer.body)).not.toContain('hunter2');
    expect(logged.some((l) => l.includes('api: GET /v1/runs/r1: 500 BATON_INTERNAL'))).toBe(true);
    expect(logged.join('\n')).not.toContain('hunter2');
  });

  it('takes the bearer token, not the console cookie; a wrong token is 401, and the document needs none', async () => {
    const url = await serve({ token: TOKEN });
    const bearer = { authorization: `Bearer ${TOKEN}` };
    const none = await call(url, 'GET', '/v1/runs');
    expect(none).toMatchObject({ status: 401, body: { error: { code: 'BATON_UNAUTHORIZED' } } });
    expect(
      (await call(url, 'GET', '/v1/runs', { headers: { authorization: 'Bearer wrong-token-123456' } }))
        .status,
    ).toBe(401);
    expect((await call(url, 'GET', '/v1/runs', { headers: bearer })).status).toBe(200);
    const login = await fetch(`${url}login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${TOKEN}`,
      redirect: 'manual',
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    expect((await fetch(`${url}api/runs`, { headers: { cookie } })).status).toBe(200);
    const withCookie = await call(url, 'GET', '/v1/runs', { headers: { cookie } });
    expect(withCookie.status).toBe(401);
    expect(withCookie.body.error?.message).toMatch(/does not take the console session cookie/);
    const doc = await fetch(`${url}v1/openapi.json`);
    expect(doc.status).toBe(200);
    expect(await doc.json()).toEqual(JSON.parse(JSON.stringify(OPENAPI_DOCUMENT)));
    expect(logged.join('\n')).not.toContain(TOKEN);
  });

  it('refuses writes in read-only mode and POSTs a browser could send cross-site; admits a trusted proxy header', async () => {
    const readOnly = await serve({ readOnly: true });
    const refused = await call(readOnly, 'POST', '/v1/runs', {
      body: { workflow: 'api_greet', input: { name: 'x' } },
    });
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'BATON_READ_ONLY' } } });
    expect((await call(readOnly, 'GET', '/v1/runs')).status).toBe(200);

    const open = await serve();
    const crossSite = await call(open, 'POST', '/v1/runs', {
      body: { workflow: 'api_greet', input: { name: 'x' } },
      headers: { origin: 'https://evil.example' },
    });
    expect(crossSite).toMatchObject({ status: 403, body: { error: { code: 'BATON_FORBIDDEN' } } });
    const fetchMetadata = await call(open, 'POST', '/v1/runs/some-run/cancel', {
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect(fetchMetadata.status).toBe(403);
    // fetch sets Host itself: node:http sends the one a rebinding page's request would carry.
    const rebound = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${open}v1/runs`, { headers: { host: 'rebound.example:8636' } }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.once('error', reject).end();
    });
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body)).toMatchObject({ error: { code: 'BATON_FORBIDDEN' } });

    const proxied = await serve({}, { env: { BATON_CONSOLE_TRUSTED_HEADER: 'X-Forwarded-User' } });
    expect((await call(proxied, 'GET', '/v1/runs')).status).toBe(401);
    const started = await call(proxied, 'POST', '/v1/runs', {
      body: { workflow: 'api_greet', input: { name: 'Proxy' } },
      headers: { 'x-forwarded-user': 'ada@example.com' },
    });
    expect(started.status).toBe(201);
    expect(logged).toContain('api: proxy ada@example.com POST /v1/runs 201');
  });

  it('admits a POST signed with a webhook secret without a token, and refuses a bad, stale or unsigned one', async () => {
    let now = Date.now();
    const server = new ConsoleServer({
      client,
      options: resolveConsoleOptions(
        { port: await freeConsolePort(), token: TOKEN },
        { BATON_API_WEBHOOK_SECRET: `old-secret-0123456789abcdef,${SECRET}` },
      ),
      fleet: { transport: 'memory', store: 'memory' },
      log: (line) => logged.push(line),
      api: { workflows: API_SERVER_WORKFLOWS },
      now: () => now,
    });
    servers.push(server);
    const url = await server.listen();
    const started = await call(url, 'POST', '/v1/runs', {
      body: { workflow: 'api_wait' },
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const runId = started.body['runId'] as string;
    await until(runId, ['suspended']);
    const event = '{"type":"payment.succeeded","amount":1200}';
    const signed = (body: string, secret = SECRET, at = now): Record<string, string> => ({
      'baton-signature': signWebhook(secret, body, at),
    });
    const path = `/v1/runs/${runId}/signals/go`;
    const tampered = await call(url, 'POST', path, {
      raw: event.replace('1200', '9900'),
      headers: signed(event),
    });
    expect(tampered).toMatchObject({ status: 401, body: { error: { code: 'BATON_BAD_SIGNATURE' } } });
    const stale = await call(url, 'POST', path, {
      raw: event,
      headers: signed(event, SECRET, now - 6 * 60_000),
    });
    expect(stale.status).toBe(401);
    expect(stale.body.error?.message).toMatch(/timestamp is 36[01] s from this server's clock/);
    expect((await call(url, 'POST', path, { raw: event })).status).toBe(401);
    const accepted = await call(url, 'POST', path, { raw: event, headers: signed(event) });
    expect(accepted).toMatchObject({ status: 202, body: { runId, signal: 'go' } });
    expect(logged).toContain(`api: webhook POST ${path} 202`);
    const outcome = await call(url, 'GET', `/v1/runs/${runId}/result?wait=10s`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(outcome.body['result']).toEqual({ type: 'payment.succeeded', amount: 1200 });
    // A signature is for POSTs: a GET still needs the token. The old secret still signs (rotation).
    expect((await call(url, 'GET', `/v1/runs/${runId}`, { headers: signed('') })).status).toBe(401);
    now += 1000;
    const withOld = await call(url, 'POST', `/v1/runs/${runId}/cancel`, {
      raw: '{}',
      headers: signed('{}', 'old-secret-0123456789abcdef', now),
    });
    expect(withOld.status).toBe(409);
    expect(logged.join('\n')).not.toContain(SECRET);
  });

  it('serves webhooks declared in code: verified by their layouts, routed to a start, a signal or a promise, a repeated delivery taken once', async () => {
    const url = await serve();
    const orders = (event: object, at = Date.now()): Promise<Answer> => {
      const raw = JSON.stringify(event);
      return call(url, 'POST', '/v1/webhooks/orders', {
        raw,
        headers: { 'baton-signature': signWebhook(ORDERS_SECRET, raw, at) },
      });
    };
    // What is not verified runs nothing: an unknown name, no signature, another secret, a stale one.
    const unknown = await call(url, 'POST', '/v1/webhooks/nope', { raw: '{}' });
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'BATON_NO_WEBHOOK' } } });
    expect(unknown.body.error?.message).toContain('served: approvals, orders, pushes');
    const unsigned = await call(url, 'POST', '/v1/webhooks/orders', { raw: '{"id":"e0","type":"ping"}' });
    expect(unsigned).toMatchObject({ status: 401, body: { error: { code: 'BATON_BAD_SIGNATURE' } } });
    expect(unsigned.body.error?.message).toBe(
      "webhook 'orders' refused the delivery's signature: the request has no baton-signature header",
    );
    const forged = await call(url, 'POST', '/v1/webhooks/orders', {
      raw: '{"id":"e0","type":"ping"}',
      headers: { 'baton-signature': signWebhook('another-secret-entirely', '{"id":"e0","type":"ping"}') },
    });
    expect(forged.status).toBe(401);
    const stale = await orders({ id: 'e0', type: 'ping' }, Date.now() - 10 * 60_000);
    expect(stale.body.error?.message).toMatch(/timestamp is 60\d s from this server's clock/);

    // A start: its key is the delivery id (the event id in the signed body); a repeat is the same run.
    const created = await orders({ id: 'evt-1', type: 'order.created', name: 'Ada' });
    expect(created).toMatchObject({
      status: 201,
      body: { webhook: 'orders', deliveryId: 'evt-1', action: 'start', created: true },
    });
    const runId = created.body['runId'] as string;
    expect(runId).toBe(client.runIdForKey('api_greet', 'webhook:orders:evt-1'));
    await until(runId, ['completed']);
    const again = await orders({ id: 'evt-1', type: 'order.created', name: 'Ada' });
    expect(again).toMatchObject({ status: 200, body: { action: 'start', runId, created: false } });
    expect(await client.result(runId, { timeoutMs: 5_000 })).toBe('hello, Ada (v1)');
    // The schema of the loaded workflow still applies to a webhook's start.
    const invalid = await orders({ id: 'evt-2', type: 'order.created', name: '' });
    expect(invalid).toMatchObject({ status: 422, body: { error: { code: 'BATON_INVALID_INPUT' } } });

    // A signal: its id is the delivery's, so a repeat is not a second signal.
    const notes = await client.start(apiTwoNotes, null);
    await until(notes.runId, ['suspended']);
    expect(await client.runs.waits(notes.runId)).toEqual([{ kind: 'signal', name: 'note' }]);
    const noteA = { id: 'evt-3', type: 'order.note', runId: notes.runId, name: 'first' };
    expect(await orders(noteA)).toMatchObject({
      status: 202,
      body: { action: 'signal', runId: notes.runId, signal: 'note' },
    });
    expect((await orders(noteA)).status).toBe(202);
    expect((await orders({ ...noteA, id: 'evt-4', name: 'second' })).status).toBe(202);
    expect(await notes.result({ timeoutMs: 10_000 })).toEqual(['first', 'second']);
    const late = await orders({ ...noteA, id: 'evt-5', name: 'third' });
    expect(late).toMatchObject({ status: 200, body: { action: 'signal', dropped: 'the run is completed' } });
    const nowhere = await orders({ ...noteA, id: 'evt-6', runId: 'no-such-run-0001' });
    expect(nowhere).toMatchObject({ status: 404, body: { error: { code: 'BATON_NOT_FOUND' } } });

    // Ignored, refused, a route that throws, a body that is not JSON.
    expect(await orders({ id: 'evt-7', type: 'ping' })).toMatchObject({
      status: 200,
      body: { action: 'ignore', reason: 'a ping' },
    });
    const refused = await orders({ id: 'evt-8', type: 'order.shipped' });
    expect(refused).toMatchObject({ status: 422, body: { error: { code: 'BATON_WEBHOOK_REFUSED' } } });
    expect(refused.body.error?.message).toContain("unknown event type 'order.shipped'");
    const thrown = await orders({ id: 'evt-9', type: 'boom' });
    expect(thrown).toMatchObject({ status: 500, body: { error: { code: 'BATON_WEBHOOK_ROUTE_FAILED' } } });
    expect(logged).toContainEqual(
      expect.stringContaining("webhook 'orders': its route threw Error: the route broke"),
    );
    const notJson = await call(url, 'POST', '/v1/webhooks/orders', {
      raw: 'plain words',
      headers: { 'baton-signature': signWebhook(ORDERS_SECRET, 'plain words'), 'content-type': 'text/plain' },
    });
    expect(notJson).toMatchObject({ status: 400, body: { error: { code: 'BATON_BAD_REQUEST' } } });

    // Standard Webhooks: the signed webhook-id is the delivery id; a promise completes once.
    const waiting = await client.start(apiPromise, null);
    await until(waiting.runId, ['suspended']);
    // What the runs list shows for it: a durable promise (its signal underneath, told apart).
    expect(await client.runs.waits(waiting.runId)).toEqual([{ kind: 'promise' }]);
    const [pending] = await client.promises.pending(waiting.runId);
    const approval = JSON.stringify({ token: pending!.token, approved: true });
    const approve = (id: string): Promise<Answer> =>
      call(url, 'POST', '/v1/webhooks/approvals', {
        raw: approval,
        headers: signStandardWebhook(APPROVALS_SECRET, id, approval),
      });
    expect(await approve('msg_1')).toMatchObject({
      status: 200,
      body: { webhook: 'approvals', deliveryId: 'msg_1', action: 'resolve', status: 'resolved' },
    });
    expect((await approve('msg_1')).status).toBe(200);
    expect(await waiting.result({ timeoutMs: 10_000 })).toEqual({ approved: true });
    const wrongId = await call(url, 'POST', '/v1/webhooks/approvals', {
      raw: approval,
      headers: { ...signStandardWebhook(APPROVALS_SECRET, 'msg_1', approval), 'webhook-id': 'msg_2' },
    });
    expect(wrongId.status).toBe(401);

    // GitHub's layout, a form body: the delivery id is the body's hash, so the same body is one run.
    const form = 'who=Grace';
    const push = (): Promise<Answer> =>
      call(url, 'POST', '/v1/webhooks/pushes', {
        raw: form,
        headers: {
          'x-hub-signature-256': signBodyWebhook(PUSHES_SECRET, form),
          'content-type': 'application/x-www-form-urlencoded',
        },
      });
    const pushed = await push();
    expect(pushed).toMatchObject({ status: 201, body: { action: 'start', created: true } });
    expect(pushed.body['deliveryId']).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await push()).body['runId']).toBe(pushed.body['runId']);
    expect(logged).toContain('api: webhook POST /v1/webhooks/pushes 201');

    // Read-only mode takes no delivery, verified or not.
    const readOnly = await serve({ readOnly: true });
    const raw = JSON.stringify({ id: 'evt-10', type: 'ping' });
    const refusedWrite = await call(readOnly, 'POST', '/v1/webhooks/orders', {
      raw,
      headers: { 'baton-signature': signWebhook(ORDERS_SECRET, raw) },
    });
    expect(refusedWrite).toMatchObject({ status: 403, body: { error: { code: 'BATON_READ_ONLY' } } });
  });

  it('counts wrong bearer tokens on the API against the address, as the console does (429, Retry-After)', async () => {
    const server = new ConsoleServer({
      client,
      options: resolveConsoleOptions({ port: await freeConsolePort(), token: TOKEN }, {}),
      fleet: { transport: 'memory', store: 'memory' },
      log: (line) => logged.push(line),
      api: {},
      signInLimits: {
        freeFailures: 1,
        baseDelayMs: 30_000,
        maxDelayMs: 30_000,
        forgetAfterMs: 60_000,
        maxAddresses: 10,
      },
    });
    servers.push(server);
    const url = await server.listen();
    expect(
      (await call(url, 'GET', '/v1/runs', { headers: { authorization: 'Bearer wrong-token-123456' } }))
        .status,
    ).toBe(401);
    const limited = await call(url, 'GET', '/v1/runs', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(limited).toMatchObject({
      status: 429,
      body: { error: { code: 'BATON_CONSOLE_SIGN_IN_LIMITED' } },
    });
    expect(limited.headers.get('retry-after')).toBe('30');
  });

  it('serves the API alone when told to: no pages, no console API', async () => {
    const url = await serve({}, { console: false });
    expect((await call(url, 'GET', '/v1/runs')).status).toBe(200);
    for (const path of ['/', '/api/runs', '/login']) {
      const answer = await call(url, 'GET', path);
      expect(answer, path).toMatchObject({ status: 404, body: { error: { code: 'BATON_NO_ROUTE' } } });
    }
  });

  it('completes a durable promise by its token: 200 (a repeat too), 404 for any unknown token, 409, 422, and logs no token', async () => {
    const url = await serve();
    const run = await client.start(apiPromise, null);
    await until(run.runId, ['suspended']);
    const [pending] = await client.promises.pending(run.runId);
    const token = pending!.token;
    const unknown = await call(url, 'POST', `/v1/promises/bp_${'x'.repeat(32)}/resolve`, {
      body: { approved: true },
    });
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'BATON_NOT_FOUND' } } });
    const garbage = await call(url, 'POST', '/v1/promises/not-a-token/resolve', { body: { approved: true } });
    expect(garbage).toEqual({ ...unknown, headers: garbage.headers });
    const invalid = await call(url, 'POST', `/v1/promises/${token}/resolve`, { body: { approved: 'yes' } });
    expect(invalid).toMatchObject({
      status: 422,
      body: {
        error: { code: 'BATON_INVALID_INPUT', field: 'value', issues: ['$.approved: must be boolean'] },
      },
    });
    const resolved = await call(url, 'POST', `/v1/promises/${token}/resolve`, { body: { approved: true } });
    expect(resolved).toMatchObject({ status: 200, body: { status: 'resolved' } });
    const repeated = await call(url, 'POST', `/v1/promises/${token}/resolve`, { body: { approved: true } });
    expect(repeated).toMatchObject({ status: 200, body: { status: 'resolved' } });
    const conflicting = await call(url, 'POST', `/v1/promises/${token}/reject`, { body: { message: 'no' } });
    expect(conflicting).toMatchObject({ status: 409, body: { error: { code: 'BATON_RUN_STATE' } } });
    expect(conflicting.body.error?.message).toContain('already resolved');
    expect(await run.result({ timeoutMs: 10_000 })).toEqual({ approved: true });

    const second = await client.start(apiPromise, null);
    await until(second.runId, ['suspended']);
    const [other] = await client.promises.pending(second.runId);
    const badBody = await call(url, 'POST', `/v1/promises/${other!.token}/reject`, { body: { reason: 'x' } });
    expect(badBody).toMatchObject({ status: 400, body: { error: { code: 'BATON_BAD_REQUEST' } } });
    const rejected = await call(url, 'POST', `/v1/promises/${other!.token}/reject`, {
      body: { message: 'declined', code: 'NOPE' },
    });
    expect(rejected).toMatchObject({ status: 200, body: { status: 'rejected' } });
    expect(await second.result({ timeoutMs: 10_000 })).toEqual({ rejected: 'declined' });
    // A token is a secret: the request log cuts it.
    expect(logged.filter((line) => line.includes(token) || line.includes(other!.token))).toEqual([]);
    expect(logged).toContainEqual(expect.stringMatching(/POST \/v1\/promises\/bp_.{3}…\/resolve 200$/));
  });

  it("asks a run's queries: 200 with the answer, 404 for an unknown run or name, 422 for a failed handler; read-only too", async () => {
    const url = await serve({ readOnly: true });
    const started = await client.start({ name: 'api_wait', version: 1 }, null);
    await until(started.runId, ['suspended']);
    const base = `/v1/runs/${started.runId}/queries`;
    expect(await call(url, 'GET', base)).toMatchObject({
      status: 200,
      body: { names: ['broken', 'waiting_for'] },
    });
    expect(await call(url, 'POST', `${base}/waiting_for`, { body: { args: { page: 2 } } })).toMatchObject({
      status: 200,
      body: { result: { waitingFor: 'go', args: { page: 2 } } },
    });
    expect(await call(url, 'POST', `${base}/waiting_for`)).toMatchObject({
      status: 200,
      body: { result: { waitingFor: 'go', args: null } },
    });
    const unknown = await call(url, 'POST', `${base}/waiting-for`, { body: {} });
    expect(unknown).toMatchObject({
      status: 404,
      body: { error: { code: 'BATON_UNKNOWN_QUERY', registered: ['broken', 'waiting_for'] } },
    });
    const broken = await call(url, 'POST', `${base}/broken`, { body: {} });
    expect(broken).toMatchObject({
      status: 422,
      body: {
        error: { code: 'BATON_QUERY_FAILED', failure: { name: 'Error', message: 'broken on purpose' } },
      },
    });
    expect((await call(url, 'POST', '/v1/runs/no-such-run/queries/waiting_for', { body: {} })).status).toBe(
      404,
    );
    expect((await call(url, 'GET', '/v1/runs/no-such-run/queries')).status).toBe(404);
    const badTimeout = await call(url, 'POST', `${base}/waiting_for`, { body: { timeoutMs: 'soon' } });
    expect(badTimeout).toMatchObject({ status: 400, body: { error: { code: 'BATON_BAD_REQUEST' } } });
    const badField = await call(url, 'POST', `${base}/waiting_for`, { body: { arg: 1 } });
    expect(badField.body.error?.message).toMatch(
      /unknown field\(s\) 'arg'; the fields are 'args', 'timeoutMs'/,
    );
    const badName = await call(url, 'POST', `${base}/two%20words`, { body: {} });
    expect(badName).toMatchObject({ status: 400, body: { error: { code: 'BATON_CONFIG' } } });
  });

  it('lists a run’s streams and follows one as events (http-api-streams.spec.ts reads them live)', async () => {
    const url = await serve();
    const started = await client.start({ name: 'api_greet', version: 2 }, { name: 'streams' });
    await until(started.runId, ['completed']);
    const base = `/v1/runs/${started.runId}/streams`;
    expect(await call(url, 'GET', base)).toMatchObject({ status: 200, body: { streams: [] } });
    expect((await call(url, 'GET', '/v1/runs/no-such-run/streams')).status).toBe(404);
    // A finished run that wrote no stream of that name: nothing, then the end.
    const res = await fetch(`${url}${base.slice(1)}/tokens`);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(await res.text()).toBe(
      'retry: 2000\n\nevent: end\ndata: {"reason":"run-finished","status":"completed"}\n\n',
    );
    seen.add(`GET /v1/runs/{runId}/streams/{name} ${res.status}`);
    expect(await call(url, 'GET', `${base}/two%20words`)).toMatchObject({
      status: 400,
      body: { error: { code: 'BATON_CONFIG' } },
    });
    expect((await call(url, 'GET', '/v1/runs/no-such-run/streams/tokens')).status).toBe(404);
  });

  it('answered only with statuses the OpenAPI document lists for each operation', () => {
    const paths = OPENAPI_DOCUMENT.paths as Record<
      string,
      Record<string, { responses: Record<string, unknown> }>
    >;
    const undocumented = [...seen].filter((entry) => {
      const [method, path, status] = entry.split(' ') as [string, string, string];
      return paths[path]?.[method.toLowerCase()]?.responses[status] === undefined;
    });
    expect(undocumented).toEqual([]);
    // The specs above reach every operation.
    for (const route of API_ROUTES)
      expect(
        [...seen].some((e) => e.startsWith(`${route.method} ${route.path} `)),
        route.path,
      ).toBe(true);
  });
});
