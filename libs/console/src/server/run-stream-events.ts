/**
 * A run stream (docs/streams.md) as Server-Sent Events: the one writer behind the HTTP API's
 * `GET /v1/runs/{runId}/streams/{name}` and the console's `GET /api/runs/{id}/streams/{name}`
 * (the run page's live view). It follows the stream with `client.stream` and sends each item as
 * one event:
 *
 * ```text
 * id: 3
 * event: chunk            (or reset, close)
 * data: {"seq":3,"kind":"chunk","value":"Hel","step":2,"attempt":1}
 * ```
 *
 * then, once the stream is over, one `end` event without an id (`{"reason":"closed"}`, or
 * `{"reason":"run-finished","status":"completed"}` for a run that ended without closing it), and
 * the answer ends. A failure after the answer began is an `error` event (the server's error body)
 * before the end of the answer. A comment (`: keep-alive`) goes out every {@link HEARTBEAT_MS} so
 * that proxies keep a quiet stream's connection.
 *
 * Invariants:
 * 1. Nothing is written before the checks passed: a bad stream name, `from` or `Last-Event-ID` is a
 *    400, an unknown run a 404, each in the error shape of the server that answers.
 * 2. Every sequence number from `from` on is sent once, in order, with its number as the event's
 *    id, so a reader that reconnects with `Last-Event-ID` (as a browser's EventSource does by
 *    itself) misses nothing and gets nothing twice.
 * 3. The caller hanging up (or the server closing) stops the reading: `signal` aborts
 *    `client.stream`, and no `end` event is sent then (the stream is not over).
 * 4. A slow reader is not buffered without bound: each write waits for the socket to drain.
 */
import { once } from 'node:events';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { checkRunStreamName, isFinishedRun, type Client } from '@baton/client';
import { NotFoundError } from '@baton/core';
import { HttpError } from './http-error.js';

/** How often a quiet stream's connection gets a comment. */
export const HEARTBEAT_MS = 15_000;

/** How long a browser's EventSource waits before it reconnects (the `retry:` field). */
const RECONNECT_MS = 2_000;

/** What the `end` event says. */
export interface StreamEnd {
  reason: 'closed' | 'run-finished';
  /** The run's status, for `run-finished` (absent when the run was deleted meanwhile). */
  status?: string;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function wholeNumber(text: string, what: string, least: number): number {
  if (!/^\d{1,15}$/.test(text) || Number(text) < least)
    throw new HttpError(400, `${what} must be a whole number of at least ${least}, got '${text}'`);
  return Number(text);
}

/**
 * The first sequence number to send: `?from=` (1 when absent), or, when the request carries
 * `Last-Event-ID` (a reconnecting EventSource), the number after it if that is later. 400 for a
 * value that is not a whole number.
 */
export function streamStart(query: URLSearchParams, headers: IncomingHttpHeaders): number {
  const fromText = query.get('from');
  const from = fromText === null || fromText === '' ? 1 : wholeNumber(fromText, "'from'", 1);
  const lastText = header(headers, 'last-event-id')?.trim();
  if (lastText === undefined || lastText === '') return from;
  return Math.max(from, wholeNumber(lastText, 'the Last-Event-ID header', 0) + 1);
}

/** The checks made before anything is written: the name (ConfigError, 400), the run (NotFoundError, 404). */
export async function checkStreamRequest(client: Client, runId: string, name: string): Promise<void> {
  checkRunStreamName(name);
  await client.describe(runId);
}

export interface RunStreamEventsOptions {
  /** The first sequence number to send. */
  from: number;
  /** Aborted when the caller hangs up or the server closes. */
  signal: AbortSignal;
  /** @defaultValue {@link HEARTBEAT_MS} */
  heartbeatMs?: number;
  /** The data of the `error` event for a failure after the answer began (redacted). */
  failure: (err: unknown) => unknown;
}

function dataOf(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/** Why the stream is over, once `client.stream` ended without an abort. */
async function endOf(client: Client, runId: string, closed: boolean): Promise<StreamEnd> {
  if (closed) return { reason: 'closed' };
  try {
    const { status } = await client.describe(runId);
    return isFinishedRun(status) ? { reason: 'run-finished', status } : { reason: 'closed' };
  } catch (err) {
    if (err instanceof NotFoundError) return { reason: 'run-finished' };
    throw err;
  }
}

/**
 * Answers with the stream `name` of run `runId` as events (see the module's comment), after
 * {@link checkStreamRequest} passed. Resolves once the answer has ended.
 */
export async function sendRunStreamEvents(
  res: ServerResponse,
  client: Client,
  runId: string,
  name: string,
  options: RunStreamEventsOptions,
): Promise<void> {
  const { from, signal } = options;
  const write = async (text: string): Promise<void> => {
    if (res.destroyed) return;
    if (!res.write(text)) await once(res, 'drain', { signal });
  };
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    // nginx and others buffer an answer unless told not to; events must go out as they come.
    'X-Accel-Buffering': 'no',
  });
  const heartbeat = setInterval(() => {
    if (!res.destroyed) res.write(': keep-alive\n\n');
  }, options.heartbeatMs ?? HEARTBEAT_MS);
  try {
    await write(`retry: ${RECONNECT_MS}\n\n`);
    // Read from the start and skip what is before `from`: the reader folds the whole stream
    // anyway, and this way a close before `from` is still seen as the end it is.
    let closed = false;
    for await (const item of client.stream(runId, name, { signal })) {
      if (item.kind === 'close') closed = true;
      if (item.seq < from) continue;
      await write(`id: ${item.seq}\nevent: ${item.kind}\ndata: ${dataOf(item)}\n\n`);
    }
    if (signal.aborted) return;
    await write(`event: end\ndata: ${dataOf(await endOf(client, runId, closed))}\n\n`);
  } catch (err) {
    if (signal.aborted || res.destroyed) return;
    await write(`event: error\ndata: ${dataOf(options.failure(err))}\n\n`).catch(() => {});
  } finally {
    clearInterval(heartbeat);
    res.end();
  }
}

/** The console's live view's path: `/api/runs/<id>/streams/<name>`. */
const CONSOLE_EVENTS_PATH = /^\/api\/runs\/([^/]+)\/streams\/([^/]+)$/;

/** The console's own settings for its stream route. */
export interface ConsoleStreamEvents {
  client: Client;
  redact: (text: string) => string;
  heartbeatMs?: number;
  decode: (part: string) => string;
}

/**
 * The console's `GET /api/runs/<id>/streams/<name>` (the run page's EventSource), or false for
 * another request. A refusal before the answer began is thrown for the server's usual error
 * answer; the `error` event carries `{ error, code }` as the console's JSON errors do.
 */
export async function consoleStreamEvents(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  settings: ConsoleStreamEvents,
): Promise<boolean> {
  const match = CONSOLE_EVENTS_PATH.exec(url.pathname);
  if (match === null || req.method !== 'GET') return false;
  const runId = settings.decode(match[1]!);
  const name = settings.decode(match[2]!);
  const from = streamStart(url.searchParams, req.headers);
  await checkStreamRequest(settings.client, runId, name);
  const controller = new AbortController();
  const hungUp = (): void => controller.abort(new Error('the page closed the connection'));
  res.once('close', hungUp);
  try {
    await sendRunStreamEvents(res, settings.client, runId, name, {
      from,
      signal: controller.signal,
      ...(settings.heartbeatMs !== undefined && { heartbeatMs: settings.heartbeatMs }),
      failure: (err) => {
        const code = (err as { code?: unknown } | null)?.code;
        return {
          error: settings.redact(err instanceof Error ? err.message : String(err)),
          ...(typeof code === 'string' && { code }),
        };
      },
    });
  } finally {
    res.off('close', hungUp);
  }
  return true;
}
