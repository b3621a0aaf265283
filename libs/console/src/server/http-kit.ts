/**
 * The small pieces every API module shares: a route table entry, JSON answers, bounded JSON
 * bodies, and the error an API module throws to answer with a status of its choosing.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@baton/client';
import type { BulkJobs } from './bulk-jobs.js';
import type { MetricsHistory } from './metrics-history.js';
import type { WorkflowCatalog } from './v1/start-run.js';
import { HttpError } from './http-error.js';

export { HttpError };

/** Largest request body accepted (a signal payload is the biggest thing a browser sends). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** What a handler gets: the client, the path's captures, the query and (for POST) the body. */
export interface ApiRequest {
  client: Client;
  params: string[];
  query: URLSearchParams;
  body: unknown;
  /** The console's bulk jobs. */
  bulk: BulkJobs;
  /** The workers' throughput and failures over the last hour (metrics-history.ts). */
  metrics: MetricsHistory;
  /** The workflows a start may name, with the definitions loaded for their input schemas. */
  workflows: WorkflowCatalog;
  /** Removes secrets from a message (security.ts). */
  redact: (text: string) => string;
}

export interface Route {
  method: 'GET' | 'POST';
  /** Matched against the whole path; captures become `params` (URL-decoded). */
  path: RegExp;
  /** True for every route that changes something: refused in read-only mode. */
  action?: boolean;
  handle: (request: ApiRequest) => Promise<unknown>;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
  });
  res.end(body);
}

/**
 * Reads the whole body as bytes (a webhook's signature is over the bytes as sent), refusing more
 * than {@link MAX_BODY_BYTES}.
 */
export async function readBodyBytes(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Reads the whole body as text, refusing more than {@link MAX_BODY_BYTES}. */
export async function readBody(req: IncomingMessage): Promise<string> {
  return (await readBodyBytes(req)).toString('utf8');
}

/**
 * A path capture, percent-decoded; a malformed escape (`%` not followed by two hex digits, or
 * bytes that are not UTF-8) is the caller's mistake, a 400, not a server error.
 */
export function decodePathPart(part: string, path: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpError(
      400,
      `the path ${path} has a malformed percent-encoding: a '%' must start an escape of two hex ` +
        "digits of UTF-8 (write a '%' itself as %25)",
    );
  }
}

/** Parses a JSON body; an empty body is `{}`. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new HttpError(400, `the request body is not JSON: ${(err as Error).message}`);
  }
}

/** The body as an object (an action's arguments), or 400. */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new HttpError(400, 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** An optional string field of a body, or 400 naming it. */
export function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new HttpError(400, `'${field}' must be a string`);
  return value;
}
