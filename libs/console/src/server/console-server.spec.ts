/**
 * The console's server over real HTTP on loopback, with a client on the in-memory store and bus:
 * the API answers, the security rules hold end to end (token, CSRF, read-only, headers), and no
 * secret leaves the server.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import type { Store } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { freeConsolePort } from '../console-port.spec-helper.js';
import { resolveConsoleOptions } from '../config.js';
import { startConsole } from '../index.js';
import { boundedStore } from './bounded-store.js';
import { ConsoleServer } from './console-server.js';

const TOKEN = 'unit-console-token-7f3a9c1e';

let publicDir = '';
let store: Store;
let client: Client;
const servers: ConsoleServer[] = [];
const logged: string[] = [];

async function consoleWith(options: { token?: string; readOnly?: boolean }): Promise<string> {
  const server = await startConsole({
    client,
    options: { port: await freeConsolePort(), ...options },
    env: { BATON_TRANSPORT_URL: 'nats://user:hunter2-password@bus:4222', BATON_STORE_URL: 'redis://r:6379' },
    publicDir,
    log: (line) => logged.push(line),
  });
  servers.push(server);
  return server.url;
}

async function session(url: string, headers: Record<string, string> = {}): Promise<{ csrfToken: string }> {
  const res = await fetch(`${url}api/session`, { headers });
  expect(res.status).toBe(200);
  return (await res.json()) as { csrfToken: string };
}

/** Sends `text` as is on a new connection (fetch normalises paths) and resolves the whole answer. */
function rawRequest(url: string, text: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(text));
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    socket.once('end', () => resolve(answer));
    socket.once('error', reject);
  });
}

beforeAll(async () => {
  publicDir = await mkdtemp(join(tmpdir(), 'console-public-'));
  await mkdir(join(publicDir, 'assets'));
  await writeFile(join(publicDir, 'index.html'), '<!doctype html><title>console</title>');
  await writeFile(join(publicDir, 'assets', 'app-1.js'), 'export {};');
  store = memoryStore();
  client = new Client({ transport: memoryTransport(), store });
  for (const [runId, workflow] of [
    ['run-a1', 'orders'],
    ['run-a2', 'orders'],
    ['run-b1', 'billing'],
  ] as const) {
    await store.runs.create({ runId, workflow, version: 1, input: { n: 1 }, idempotencyKey: `key-${runId}` });
  }
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await rm(publicDir, { recursive: true, force: true });
});

describe('the console server', () => {
  it('lists runs by the filters in the query string, pages with the cursor, and counts them', async () => {
    const url = await consoleWith({});
    const page = (await (await fetch(`${url}api/runs?workflow=orders&limit=1`)).json()) as {
      runs: { runId: string }[];
      cursor?: string;
    };
    expect(page.runs.map((r) => r.runId)).toHaveLength(1);
    const next = (await (
      await fetch(`${url}api/runs?workflow=orders&limit=1&cursor=${page.cursor}`)
    ).json()) as {
      runs: { runId: string }[];
    };
    expect([...page.runs, ...next.runs].map((r) => r.runId).sort()).toEqual(['run-a1', 'run-a2']);
    const counts = (await (await fetch(`${url}api/run-counts`)).json()) as { total: number };
    expect(counts.total).toBe(3);
    const bad = await fetch(`${url}api/runs?status=sleeping`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/'status' sleeping is not a run status/);
  });

  it('answers 404 naming an unknown run, and serves the app for page paths', async () => {
    const url = await consoleWith({});
    const res = await fetch(`${url}api/runs/no-such-run`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toMatch(/no-such-run/);
    const page = await fetch(`${url}runs/run-a1`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>console</title>');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await fetch(`${url}assets/app-1.js`)).headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${url}assets/app-0.js`)).status).toBe(404);
    expect(await (await fetch(`${url}..%2f..%2fetc%2fpasswd`)).text()).toContain('<title>console</title>');
  });

  it('acts only with the CSRF token, and tells the page the fleet kinds, not their URLs', async () => {
    const url = await consoleWith({});
    const info = await (await fetch(`${url}api/session`)).text();
    expect(info).toContain('"transport":"nats"');
    expect(info).not.toContain('hunter2');
    const cancel = (headers: Record<string, string>): Promise<Response> =>
      fetch(`${url}api/runs/run-b1/cancel`, { method: 'POST', headers, body: '{}' });
    expect((await cancel({ 'content-type': 'application/json' })).status).toBe(403);
    const { csrfToken } = await session(url);
    const res = await cancel({ 'content-type': 'application/json', 'x-csrf-token': csrfToken });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { done: string }).done).toMatch(/cancel requested/);
  });

  it('refuses every action in read-only mode, with a message that says why', async () => {
    const url = await consoleWith({ readOnly: true });
    const { csrfToken } = await session(url);
    const res = await fetch(`${url}api/runs/run-a1/pause`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken },
      body: '{}',
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toMatch(/read-only/);
    expect((await store.runs.get('run-a1'))?.status).toBe('pending');
  });

  it('with a token: refuses requests without it, signs a browser in with a cookie, never echoes it', async () => {
    const url = await consoleWith({ token: TOKEN });
    expect((await fetch(`${url}api/runs`)).status).toBe(401);
    const page = await fetch(url, { redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/login');
    expect((await fetch(`${url}api/runs`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(
      200,
    );
    const wrong = await fetch(`${url}login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'token=nope',
    });
    expect(wrong.status).toBe(401);
    const login = await fetch(`${url}login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${TOKEN}`,
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const cookie = login.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly; SameSite=Strict/);
    expect(cookie).not.toContain(TOKEN);
    const withCookie = await fetch(`${url}api/session`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(withCookie.status).toBe(200);
    expect(await withCookie.text()).not.toContain(TOKEN);
    expect(logged.join('\n')).not.toContain(TOKEN);
  });

  it('counts a bulk action first, then runs it as a job whose progress and summary can be read', async () => {
    for (const runId of ['run-c1', 'run-c2'])
      await store.runs.create({ runId, workflow: 'reports', version: 1, input: {}, idempotencyKey: null });
    const url = await consoleWith({});
    const count = await (await fetch(`${url}api/bulk/count?action=pause&workflow=reports`)).json();
    expect(count).toEqual({ action: 'pause', count: 2 });
    expect((await fetch(`${url}api/bulk/count?action=explode`)).status).toBe(400);
    const { csrfToken } = await session(url);
    const started = await fetch(`${url}api/bulk/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken },
      body: JSON.stringify({ action: 'pause', filter: 'workflow=reports' }),
    });
    expect(started.status).toBe(200);
    const job = (await started.json()) as { id: string };
    let state: { done: boolean; summary?: { succeeded: string[] } } = { done: false };
    for (let i = 0; i < 100 && !state.done; i++) {
      state = (await (await fetch(`${url}api/bulk/jobs/${job.id}`)).json()) as typeof state;
      if (!state.done) await new Promise((r) => setTimeout(r, 20));
    }
    expect(state.summary?.succeeded.sort()).toEqual(['run-c1', 'run-c2']);
    expect((await store.runs.get('run-c1'))?.status).toBe('paused');
    expect((await fetch(`${url}api/bulk/jobs/nope`)).status).toBe(404);
  });

  it('answers 400, not 500, for a malformed percent-escape in an API path', async () => {
    const url = await consoleWith({});
    for (const path of ['api/runs/%E0%A4%A', 'api/runs/100%/timeline', 'api/dead-letters/%zz']) {
      const res = await fetch(`${url}${path}`);
      expect(res.status, path).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/malformed percent-encoding.*%25/);
    }
    expect((await fetch(`${url}api/runs/run%2Da1`)).status).toBe(200);
    // A path URL parsing would read as a host (`//x:y`) is still a path (the app's page), and a
    // target that parses as neither is a 400: no 500 for either.
    const raw = (target: string): Promise<string> =>
      rawRequest(url, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect(await raw('//api:runs')).toMatch(/^HTTP\/1\.1 200 /);
    expect(await raw('//[')).toMatch(/^HTTP\/1\.1 200 /);
    expect(await raw('http://[bad/')).toMatch(/^HTTP\/1\.1 400 [^]*not a path or a URL/);
  });

  it('answers 503 with Retry-After when a store call outlasts its bound, and says an action may still land', async () => {
    const hung = new Proxy(store, {
      get(target, property) {
        const hang = () => new Promise(() => undefined);
        if (property === 'runs') return { ...target.runs, list: hang };
        if (property === 'control') return { ...target.control, requestPause: hang };
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    // As `baton console` builds it: store calls bounded, and not retried by the client itself.
    const frozenClient = new Client({
      transport: memoryTransport(),
      store: boundedStore(hung, 100),
      retryUnavailableMs: 0,
    });
    const server = new ConsoleServer({
      client: frozenClient,
      options: resolveConsoleOptions({ port: await freeConsolePort() }, {}),
      fleet: { transport: 'memory', store: 'memory' },
      publicDir,
      log: (line) => logged.push(line),
    });
    servers.push(server);
    const url = await server.listen();
    const res = await fetch(`${url}api/runs`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toMatchObject({
      code: 'BATON_STORE_TIMEOUT',
      error: expect.stringMatching(/runs\.list\(\) within 100 ms/),
    });
    expect((await fetch(`${url}api/runs/run-a1`)).status).toBe(200);
    const { csrfToken } = await session(url);
    const pause = await fetch(`${url}api/runs/run-a1/pause`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken },
      body: '{}',
    });
    expect(pause.status).toBe(503);
    expect(((await pause.json()) as { error: string }).error).toMatch(
      /may still take effect .* reload before trying it again/,
    );
  });

  it('rate-limits wrong tokens per address, on the sign-in form and the bearer header alike (429, Retry-After)', async () => {
    let now = 1_000_000;
    const lines: string[] = [];
    const server = new ConsoleServer({
      client,
      options: resolveConsoleOptions({ port: await freeConsolePort(), token: TOKEN }, {}),
      fleet: { transport: 'memory', store: 'memory' },
      publicDir,
      log: (line) => lines.push(line),
      signInLimits: {
        freeFailures: 3,
        baseDelayMs: 4_000,
        maxDelayMs: 8_000,
        forgetAfterMs: 60_000,
        maxAddresses: 100,
      },
      now: () => now,
    });
    servers.push(server);
    const url = await server.listen();
    const signIn = (token: string): Promise<Response> =>
      fetch(`${url}login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${token}`,
        redirect: 'manual',
      });
    const bearer = (token: string): Promise<Response> =>
      fetch(`${url}api/session`, { headers: { authorization: `Bearer ${token}` } });
    expect((await signIn('wrong-1')).status).toBe(401);
    expect((await bearer('wrong-2')).status).toBe(401);
    // The last free try: refused (401), and the address now waits 4 s before the next.
    expect((await signIn('wrong-3')).status).toBe(401);
    const limited = await signIn(TOKEN);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('4');
    expect(await limited.text()).toMatch(/Too many wrong tokens from your address: try again in 4 s/);
    const limitedBearer = await bearer(TOKEN);
    expect(limitedBearer.status).toBe(429);
    expect(await limitedBearer.json()).toMatchObject({ code: 'BATON_CONSOLE_SIGN_IN_LIMITED' });
    // A signed-in browser's cookie is not a guess: it keeps working while the address waits.
    now += 4_000;
    const cookie = (await signIn(TOKEN)).headers.get('set-cookie')!.split(';')[0]!;
    expect((await bearer(TOKEN)).status).toBe(200);
    // Another wrong token doubles the wait; the correct token is let in again once it is over.
    expect((await bearer('wrong-4')).status).toBe(401);
    expect((await bearer(TOKEN)).headers.get('retry-after')).toBe('8');
    expect((await fetch(`${url}api/session`, { headers: { cookie } })).status).toBe(200);
    now += 8_000;
    expect((await bearer(TOKEN)).status).toBe(200);
    expect(lines.filter((l) => l.includes('wrong access token'))).toHaveLength(1);
    expect(lines.join('\n')).not.toContain(TOKEN);
  });

  it('behind a proxy, counts wrong tokens by the last entry of the client-address header, only when told to', async () => {
    const limits = {
      freeFailures: 1,
      baseDelayMs: 60_000,
      maxDelayMs: 60_000,
      forgetAfterMs: 60_000,
      maxAddresses: 100,
    };
    const consoleBehindProxy = async (env: Record<string, string>): Promise<string> => {
      const server = new ConsoleServer({
        client,
        options: resolveConsoleOptions({ port: await freeConsolePort(), token: TOKEN }, env),
        fleet: { transport: 'memory', store: 'memory' },
        publicDir,
        log: (line) => logged.push(line),
        signInLimits: limits,
      });
      servers.push(server);
      return server.listen();
    };
    const bearer = (url: string, token: string, forwardedFor: string): Promise<Response> =>
      fetch(`${url}api/session`, {
        headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': forwardedFor },
      });
    const told = await consoleBehindProxy({ BATON_CONSOLE_CLIENT_ADDRESS_HEADER: 'X-Forwarded-For' });
    // The client wrote the first entry itself; the proxy appended the address it saw.
    expect((await bearer(told, 'wrong', '203.0.113.1, 198.51.100.7')).status).toBe(401);
    expect((await bearer(told, TOKEN, '203.0.113.2, 198.51.100.7')).status).toBe(429);
    expect((await bearer(told, TOKEN, '198.51.100.8')).status).toBe(200);
    const notTold = await consoleBehindProxy({});
    expect((await bearer(notTold, 'wrong', '198.51.100.7')).status).toBe(401);
    // Without the setting the header is the client's word: the connection's address (loopback) waits.
    expect((await bearer(notTold, TOKEN, '198.51.100.9')).status).toBe(429);
  });
});
