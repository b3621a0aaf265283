/**
 * The HTTP API's error table: each error the client or the API raises for a caller's mistake is
 * a 4xx with its code, a store or bus that is away a 503 with Retry-After, and only what the table
 * does not know a 500, whose message is redacted like every other.
 */
import { describe, expect, it } from 'vitest';
import {
  BatonError,
  ConfigError,
  InvalidInputError,
  NotFoundError,
  RunStateError,
  UnencodableValueError,
} from '@baton/core';
import { BackendUnavailableError, RetriesExhaustedError, RunDeletedError, RunLostError } from '@baton/client';
import { StoreTimeoutError } from '../bounded-store.js';
import { HttpError } from '../http-error.js';
import { API_CODES, ApiError, errorAnswer, STATUS_OF_CODE } from './api-errors.js';

const redact = (text: string): string => text.replaceAll('hunter2', '***');

describe('the HTTP API error table', () => {
  it.each([
    ['an unknown run', new NotFoundError('run r1 is not known'), 404, 'BATON_NOT_FOUND'],
    ['a run lost with the store', new RunLostError('r1', 'seen running'), 404, 'BATON_NOT_FOUND'],
    ['a deleted run', new RunDeletedError('r1', 0), 404, 'BATON_RUN_DELETED'],
    ['a run in the wrong state', new RunStateError('r1', 'completed', 'finished'), 409, 'BATON_RUN_STATE'],
    ['a bad cursor or filter', new ConfigError('malformed cursor'), 400, 'BATON_CONFIG'],
    ['a body too large', new HttpError(413, 'request body over 1048576 bytes'), 413, API_CODES.tooLarge],
    [
      'a bad filter (console helper)',
      new HttpError(400, "'order' must be newest or oldest"),
      400,
      API_CODES.badRequest,
    ],
    [
      'an unknown workflow',
      new ApiError(API_CODES.unknownWorkflow, 'no such'),
      422,
      API_CODES.unknownWorkflow,
    ],
    ['an unencodable value', new UnencodableValueError('input', 'a BigInt at $.n'), 422, 'BATON_UNENCODABLE'],
  ])('answers %s with %i', (_what, err, status, code) => {
    const answer = errorAnswer(err, redact);
    expect(answer.status).toBe(status);
    expect(answer.body.error).toEqual({ code, message: (err as Error).message });
  });

  it("answers an input that fails its schema 422 with the schema's issues", () => {
    const answer = errorAnswer(
      new InvalidInputError('orders@1', ['$.qty: must be a number', '$.sku: required']),
      redact,
    );
    expect(answer.status).toBe(422);
    expect(answer.body.error).toMatchObject({
      code: 'BATON_INVALID_INPUT',
      field: 'input',
      issues: ['$.qty: must be a number', '$.sku: required'],
    });
  });

  it('answers a store or bus that did not answer 503 with Retry-After', () => {
    const timeout = errorAnswer(new StoreTimeoutError('runs.get', 2500), redact);
    expect(timeout).toMatchObject({ status: 503, headers: { 'Retry-After': '3' } });
    expect(timeout.body.error.code).toBe('BATON_STORE_TIMEOUT');
    const backend = new BackendUnavailableError('redis is loading', {
      backend: 'redis',
      code: 'BATON_REDIS_UNAVAILABLE',
    });
    expect(errorAnswer(backend, redact)).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
    const exhausted = new RetriesExhaustedError('client.start(run r1)', 3, 30_000, backend);
    expect(errorAnswer(exhausted, redact).status).toBe(503);
  });

  it('answers anything else 500 BATON_INTERNAL, its message redacted', () => {
    const answer = errorAnswer(new Error('connect to redis://app:hunter2@db failed'), redact);
    expect(answer.status).toBe(500);
    expect(answer.body.error).toEqual({
      code: API_CODES.internal,
      message: 'connect to redis://app:***@db failed',
    });
    expect(errorAnswer(new BatonError('BATON_SOMETHING_NEW', 'a bug'), redact).status).toBe(500);
    expect(errorAnswer('a string thrown', redact).status).toBe(500);
  });

  it('gives every code of its own a 4xx or a 503, and ApiError the status of its code', () => {
    for (const code of Object.values(API_CODES)) {
      if (code === API_CODES.internal) continue;
      expect(STATUS_OF_CODE[code], code).toBeGreaterThanOrEqual(400);
      expect(new ApiError(code, 'x').status).toBe(STATUS_OF_CODE[code]);
    }
    expect(new ApiError(API_CODES.internal, 'x').status).toBe(500);
  });
});
