/**
 * Run streams over HTTP, read as a program in any language reads them: real HTTP on loopback to
 * the console's server (as `baton serve` builds it), `fetch` reading the answer's body as it
 * arrives and parsing it as Server-Sent Events, with a Worker on the in-memory bus and store.
 *
 * - `GET /v1/runs/{runId}/streams`: the names; 404 for an unknown run.
 * - `GET /v1/runs/{runId}/streams/{name}`: events while the run writes (before it has finished),
 *   each sequence number once with its number as the event id, then `end` and the answer ends;
 *   `Last-Event-ID` and `?from=` resume; keep-alive comments; `run-finished` for a stream never
 *   closed; a caller hanging up stops the server's reading; 400 (bad name, bad `from` or
 *   `Last-Event-ID`) and 404 as JSON errors; the token required as on every route; allowed
 *   read-only.
 * - The console's own `/api/runs/<id>/streams[/<name>]` (the run page's EventSource): the same
 *   events, refusals in the console's error shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow, type StreamItem } from '@baton/core';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Worker } from '@baton/worker';
import { freeConsolePort } from '../../console-port.spec-helper.js';
import { resolveConsoleOptions, type ConsoleOptions } from '../../config.js';
import { ConsoleServer } from '../console-server.js';
import { sseEvents, sseMessages, type SseMessage } from '../sse-reader.spec-helper.js';

const TOKEN = 'unit-streams-token-8c1f4e2a';

/** Gates the spec opens: the activity waits on `gates.get(name)` after its second word. */
const gates = new Map<string, { opened: Promise<void>; open: () => void }>();
function gate(name: string): () => void {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  gates.set(name, { opened, open });
  return open;
}

const speak = defineActivity({
  name: 'sse_speak',
  run: async (input: { words: string[]; gate?: string }, io) => {
    const out = io.stream<string>('tokens');
    for (const [i, word] of input.words.entries()) {
      if (i === 2 && input.gate !== undefined) await gates.get(input.gate)?.opened;
      await out.write(word);
    }
    return input.words.length;
  },
});

/** `tokens`: the words, then `{ words: n }` from the workflow, then (unless `open`) the close. */
const speaker = defineWorkflow({
  name: 'sse_speaker',
  version: 1,
  run: async (ctx, input: { words: string[]; gate?: string; open?: boolean }) => {
    const words = await ctx.run(speak, input);
    const tokens = ctx.stream('tokens');
    tokens.write({ words });
    if (input.open !== true) tokens.close();
    return words;
  },
});

let client: Client;
let worker: Worker;
const servers: ConsoleServer[] = [];

async function serve(options: ConsoleOptions = {}, heartbeatMs?: number): Promise<string> {
  const server = new ConsoleServer({
    client,
    options: resolveConsoleOptions({ port: await freeConsolePort(), token: TOKEN, ...options }, {}),
    fleet: { transport: 'memory', store: 'memory' },
    log: () => {},
    api: {},
    ...(heartbeatMs !== undefined && { streamHeartbeatMs: heartbeatMs }),
  });
  servers.push(server);
  return server.listen();
}

const bearer = { authorization: `Bearer ${TOKEN}` };

function get(base: string, path: string, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(`${base}${path.slice(1)}`, { headers: { ...bearer, ...headers }, ...(signal && { signal }) });
}

/** Reads events until `stop` says so (or the body ends); the answer's body is left as it is. */
async function readEvents(
  body: ReadableStream<Uint8Array>,
  stop: (seen: { id?: string; event: string; data: unknown }[]) => boolean = () => false,
): Promise<{ id?: string; event: string; data: unknown }[]> {
  const seen: { id?: string; event: string; data: unknown }[] = [];
  for await (const event of sseEvents(body)) {
    seen.push(event);
    if (stop(seen)) break;
  }
  return seen;
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** How many `client.stream` readers the servers have open (counted around the client's method). */
let openReaders = 0;

beforeAll(async () => {
  const transport = memoryTransport();
  const store = memoryStore();
  client = new Client({ transport, store, retryUnavailableMs: 0 });
  const stream = client.stream.bind(client);
  client.stream = ((...args: Parameters<Client['stream']>) =>
    (async function* () {
      openReaders++;
      try {
        yield* stream(...args);
      } finally {
        openReaders--;
      }
    })()) as Client['stream'];
  worker = new Worker({ transport, store, workflows: [speaker], fetchWaitMs: 20, inProcessWaitMs: 0 });
  await worker.start();
});

afterAll(async () => {
  for (const { open } of gates.values()) open();
  await Promise.all(servers.map((s) => s.close()));
  await worker.stop();
});

const WORDS = ['Hel', 'lo', ', ', 'wor', 'ld'];
const chunk = (seq: number, value: unknown): object => ({
  id: String(seq),
  event: 'chunk',
  data: expect.objectContaining({ seq, kind: 'chunk', value }),
});

describe('run streams over the HTTP API (Server-Sent Events)', () => {
  it('sends each item once, live, with its seq as the id, then end; lists the names', async () => {
    const url = await serve();
    const open = gate('live');
    const run = await client.start(speaker, { words: WORDS, gate: 'live' });
    const res = await get(url, `/v1/runs/${run.runId}/streams/tokens`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const messages = sseMessages(res.body!);
    expect((await messages.next()).value).toEqual({ type: 'retry', ms: 2000 });
    // The first two words arrive while the activity still waits: the run has not finished.
    const early: SseMessage[] = [];
    while (early.length < 2) {
      const { value } = await messages.next();
      if (value?.type === 'event') early.push(value);
    }
    expect(early.map((m) => m.type === 'event' && [m.id, m.event])).toEqual([
      ['1', 'chunk'],
      ['2', 'chunk'],
    ]);
    expect((await client.describe(run.runId)).status).toBe('running');
    open();
    const rest: { id?: string; event: string; data: unknown }[] = [];
    for await (const m of { [Symbol.asyncIterator]: () => messages }) {
      if (m.type === 'event')
        rest.push({ ...(m.id && { id: m.id }), event: m.event, data: JSON.parse(m.data) });
    }
    expect(rest).toEqual([
      chunk(3, ', '),
      chunk(4, 'wor'),
      chunk(5, 'ld'),
      { id: '6', event: 'chunk', data: { seq: 6, kind: 'chunk', value: { words: 5 } } },
      { id: '7', event: 'close', data: { seq: 7, kind: 'close' } },
      { event: 'end', data: { reason: 'closed' } },
    ]);
    // The activity's chunks carry its step and attempt.
    expect(rest[0]!.data).toMatchObject({ step: 0, attempt: 1 });
    const names = await get(url, `/v1/runs/${run.runId}/streams`);
    expect(names.status).toBe(200);
    expect(await names.json()).toEqual({ streams: ['tokens'] });
    const unknown = await get(url, '/v1/runs/no-such-run/streams');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 'BATON_NOT_FOUND' } });
  });

  it('resumes after Last-Event-ID, or from ?from=, the later of the two', async () => {
    const url = await serve();
    const run = await client.start(speaker, { words: WORDS });
    await run.result({ timeoutMs: 10_000 });
    const seqs = async (path: string, headers: Record<string, string> = {}): Promise<string[]> => {
      const res = await get(url, path, headers);
      expect(res.status, path).toBe(200);
      return (await readEvents(res.body!)).map((e) => e.id ?? e.event);
    };
    const path = `/v1/runs/${run.runId}/streams/tokens`;
    expect(await seqs(path)).toEqual(['1', '2', '3', '4', '5', '6', '7', 'end']);
    expect(await seqs(path, { 'last-event-id': '5' })).toEqual(['6', '7', 'end']);
    expect(await seqs(`${path}?from=4`)).toEqual(['4', '5', '6', '7', 'end']);
    expect(await seqs(`${path}?from=2`, { 'last-event-id': '5' })).toEqual(['6', '7', 'end']);
    expect(await seqs(`${path}?from=6`, { 'last-event-id': '2' })).toEqual(['6', '7', 'end']);
    // Past the close: nothing but the end, which still says closed.
    const past = await get(url, path, { 'last-event-id': '7' });
    expect(await readEvents(past.body!)).toEqual([{ event: 'end', data: { reason: 'closed' } }]);
  });

  it('ends a stream the run never closed when the run has finished', async () => {
    const url = await serve();
    const run = await client.start(speaker, { words: ['a', 'b'], open: true });
    await run.result({ timeoutMs: 10_000 });
    const res = await get(url, `/v1/runs/${run.runId}/streams/tokens`);
    const events = await readEvents(res.body!);
    expect(events.map((e) => e.event)).toEqual(['chunk', 'chunk', 'chunk', 'end']);
    expect(events.at(-1)).toEqual({ event: 'end', data: { reason: 'run-finished', status: 'completed' } });
    // A name the run never wrote: nothing, then the end.
    const none = await get(url, `/v1/runs/${run.runId}/streams/other`);
    expect(await readEvents(none.body!)).toEqual([
      { event: 'end', data: { reason: 'run-finished', status: 'completed' } },
    ]);
  });

  it('keeps a quiet stream alive with comments, and stops reading when the caller hangs up', async () => {
    const url = await serve({}, 40);
    gate('quiet');
    const run = await client.start(speaker, { words: WORDS, gate: 'quiet' });
    const before = openReaders;
    const hangUp = new AbortController();
    const res = await get(url, `/v1/runs/${run.runId}/streams/tokens`, {}, hangUp.signal);
    const seen: SseMessage[] = [];
    const reading = (async () => {
      for await (const m of sseMessages(res.body!)) seen.push(m);
    })().catch(() => {});
    await until('two chunks and two keep-alive comments', () => {
      const events = seen.filter((m) => m.type === 'event').length;
      const comments = seen.filter((m) => m.type === 'comment' && m.text === 'keep-alive').length;
      return events === 2 && comments >= 2;
    });
    expect(openReaders).toBe(before + 1);
    hangUp.abort();
    await reading;
    // The server's reader of the stream ended with the connection (the run is still waiting).
    await until('the server to stop reading', () => openReaders === before);
    expect((await client.describe(run.runId)).status).toBe('running');
    gates.get('quiet')!.open();
  });

  it('refuses a bad name, from or Last-Event-ID (400) and an unknown run (404) as JSON, before any event', async () => {
    const url = await serve();
    const run = await client.start(speaker, { words: ['x'] });
    await run.result({ timeoutMs: 10_000 });
    const refused = async (path: string, headers: Record<string, string> = {}) => {
      const res = await get(url, path, headers);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/json/);
      return { status: res.status, body: (await res.json()) as { error: { code: string; message: string } } };
    };
    const base = `/v1/runs/${run.runId}/streams`;
    const badName = await refused(`${base}/two%20words`);
    expect(badName).toMatchObject({ status: 400, body: { error: { code: 'BATON_CONFIG' } } });
    expect(badName.body.error.message).toMatch(/run stream name 'two words' is not allowed/);
    expect(await refused(`${base}/tokens?from=0`)).toMatchObject({
      status: 400,
      body: {
        error: { code: 'BATON_BAD_REQUEST', message: expect.stringMatching(/'from' must be a whole number/) },
      },
    });
    expect((await refused(`${base}/tokens?from=abc`)).status).toBe(400);
    expect(await refused(`${base}/tokens`, { 'last-event-id': 'seven' })).toMatchObject({
      status: 400,
      body: { error: { message: expect.stringMatching(/Last-Event-ID header must be a whole number/) } },
    });
    expect(await refused('/v1/runs/no-such-run/streams/tokens')).toMatchObject({
      status: 404,
      body: { error: { code: 'BATON_NOT_FOUND' } },
    });
  });

  it('needs the token as every route does, and is served read-only', async () => {
    const url = await serve({ readOnly: true });
    const run = await client.start(speaker, { words: ['r', 'o'] });
    await run.result({ timeoutMs: 10_000 });
    const path = `/v1/runs/${run.runId}/streams/tokens`;
    const anonymous = await fetch(`${url}${path.slice(1)}`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: { code: 'BATON_UNAUTHORIZED' } });
    const wrong = await fetch(`${url}${path.slice(1)}`, {
      headers: { authorization: 'Bearer nope-0000000000' },
    });
    expect(wrong.status).toBe(401);
    const read = await get(url, path);
    expect(read.status).toBe(200);
    expect((await readEvents(read.body!)).map((e) => e.event)).toEqual([
      'chunk',
      'chunk',
      'chunk',
      'close',
      'end',
    ]);
  });
});

describe("the console's run stream routes (the run page's live view)", () => {
  it('lists the names and sends the same events; refuses in the console’s error shape', async () => {
    // No token: the console admits loopback, as `baton console` on a laptop.
    const server = new ConsoleServer({
      client,
      options: resolveConsoleOptions({ port: await freeConsolePort() }, {}),
      fleet: { transport: 'memory', store: 'memory' },
      log: () => {},
    });
    servers.push(server);
    const url = await server.listen();
    const run = await client.start(speaker, { words: ['p', 'q'] });
    await run.result({ timeoutMs: 10_000 });
    const names = await fetch(`${url}api/runs/${run.runId}/streams`);
    expect(await names.json()).toEqual({ streams: ['tokens'] });
    const res = await fetch(`${url}api/runs/${run.runId}/streams/tokens`, {
      headers: { 'last-event-id': '1' },
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = await readEvents(res.body!);
    expect(events.map((e) => (e.data as StreamItem).seq ?? e.event)).toEqual([2, 3, 4, 'end']);
    const badName = await fetch(`${url}api/runs/${run.runId}/streams/no%20spaces`);
    expect(badName.status).toBe(400);
    expect(await badName.json()).toMatchObject({
      code: 'BATON_CONFIG',
      error: expect.stringMatching(/not allowed/),
    });
    const unknown = await fetch(`${url}api/runs/no-such-run/streams/tokens`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'BATON_NOT_FOUND' });
  });
});
