/**
 * Durable promises from outside the run (`client.promises`): resolve or reject one by its token,
 * read one, and list a run's (docs/promises.md; core's author/promise.ts has the invariants). The
 * HTTP API (`POST /v1/promises/{token}/resolve`) and `baton promises …` call these.
 *
 * Invariants:
 * 1. A string that is not a token, a token the store does not know and one whose run was deleted
 *    are refused alike (NotFoundError, the token not echoed): a guess learns nothing.
 * 2. Nothing is stored for a value its promise's JSON Schema refuses (InvalidInputError naming each
 *    issue), nor for one with no JSON form.
 * 3. A completion repeated as it was (the same outcome, an equal value or error) changes nothing
 *    and answers as the first did, so a caller may retry it freely; a different one, one after the
 *    timeout, one after the run finished and one after it continued as new (naming the successor)
 *    are refused with RunStateError naming why.
 * 4. The delivery is sealed for its run when the client encrypts, exactly as a signal payload is
 *    (the store keeps it and the run's inbox holds it); a suspended run is woken by a message on
 *    the bus, sent after the store completed the promise.
 */
import { isDeepStrictEqual } from 'node:util';
import { Ajv, type ValidateFunction } from 'ajv';
import {
  BatonError,
  InvalidInputError,
  NotFoundError,
  RunStateError,
  type SerializedError,
} from '@baton/core';
import { assertRunId, type PromiseRecord, type Store } from '@baton/core/adapter';
import {
  isPromiseToken,
  openValue,
  sealValue,
  wakeMessage,
  type PayloadProtection,
  type PromiseDelivery,
} from '@baton/core/runtime';
import type { FleetProtectionCheck } from './fleet-protection.js';
import type { Outbox } from './outbox.js';

/** What a completion answers: how the promise ended (the same for a repeat, invariant 3). */
export interface PromiseCompletion {
  state: 'resolved' | 'rejected';
}

/** A durable promise as an operator sees it: its token is a secret; show it only to operators. */
export type PromiseInfo = PromiseRecord;

/** What `reject` takes: a message, an Error, or an error's name and message (and code). */
export type PromiseRejection = string | Error | { name?: string; message: string; code?: string };

/** Compiled JSON Schemas, by their text: a promise is often completed more than once (retries). */
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 256;
let ajv: Ajv | undefined;

export class PromisesApi {
  constructor(
    private readonly store: (method: string) => Store,
    private readonly connect: () => Promise<void>,
    private readonly outbox: Outbox,
    private readonly protection: () => PayloadProtection,
    private readonly fleetProtection: FleetProtectionCheck,
  ) {}

  /**
   * Resolves the promise whose token this is: the workflow awaiting `p.value` receives `value`
   * (the schema's output, when `ctx.promise` was given a schema). Needs the store. NotFoundError for
   * an unknown token; InvalidInputError (field `value`) for a value its schema refuses; RunStateError
   * when it was completed otherwise before, timed out, or its run finished. A repeat of the same
   * resolve answers as the first did.
   */
  resolve(token: string, value: unknown): Promise<PromiseCompletion> {
    return this.complete('resolve', token, { outcome: 'resolved', value: value ?? null });
  }

  /**
   * Rejects the promise whose token this is: `p.value` throws PromiseRejectedError carrying `error`
   * (its name, message and code; no stack). Errors as {@link resolve}; a repeat of the same
   * rejection answers as the first did.
   */
  reject(token: string, error: PromiseRejection): Promise<PromiseCompletion> {
    return this.complete('reject', token, { outcome: 'rejected', error: rejectionOf(error) });
  }

  /** The promise whose token this is. NotFoundError for an unknown one. Needs the store. */
  async get(token: string): Promise<PromiseInfo> {
    const method = 'promises.get';
    const store = this.store(method);
    if (!isPromiseToken(token)) throw unknownToken(method);
    await this.connect();
    return this.known(store, method, token);
  }

  /**
   * The run's promises still pending, by step, with their tokens: for an operator's describe
   * (tokens are secrets: whoever has one may complete its promise). Needs the store.
   */
  async pending(runId: string): Promise<PromiseInfo[]> {
    const store = this.store('promises.pending');
    assertRunId(runId);
    await this.connect();
    const all = await this.outbox.retrying(`client.promises.pending(run ${runId})`, () =>
      store.promises.forRun(runId),
    );
    return all.filter((promise) => promise.state === 'pending').map(withoutPayload);
  }

  private async complete(
    verb: 'resolve' | 'reject',
    token: string,
    completion: { outcome: 'resolved'; value: unknown } | { outcome: 'rejected'; error: SerializedError },
  ): Promise<PromiseCompletion> {
    const method = `promises.${verb}`;
    const store = this.store(method);
    // Before any connection: a string that is no token is refused as an unknown one (invariant 1).
    if (!isPromiseToken(token)) throw unknownToken(method);
    await this.connect();
    const record = await this.known(store, method, token);
    if (completion.outcome === 'resolved' && record.schema !== undefined) {
      checkValue(record.schema, completion.value, `client.${method}`);
    }
    const operation = `client.${method}(promise of run ${record.runId}, step #${record.seq})`;
    await this.fleetProtection.check(operation);
    const delivery = { token, ...completion } as PromiseDelivery;
    const what = `${completion.outcome === 'resolved' ? 'value' : 'error'} of the durable promise of step #${record.seq}`;
    const payload = sealValue(delivery, record.runId, 'signal payload', this.protection(), what);
    const answer = await this.outbox.retrying(operation, () =>
      store.promises.complete(token, { outcome: completion.outcome, payload }),
    );
    if (!answer.found) throw unknownToken(method);
    if (answer.completed) {
      if (answer.wake) await this.outbox.send(operation, wakeMessage(answer.runId, 'signal'));
      return { state: completion.outcome };
    }
    if (answer.continuedAs !== undefined) throw continuedRefusal(method, answer.record, answer.continuedAs);
    return this.repeated(method, answer.record, delivery, answer.runFinished === true);
  }

  /** The answer to a completion of a promise no longer pending (invariant 3). */
  private repeated(
    method: string,
    record: PromiseRecord,
    delivery: PromiseDelivery,
    runFinished: boolean,
  ): PromiseCompletion {
    const refuse = (why: string): RunStateError =>
      new RunStateError(record.runId, runFinished ? 'finished' : record.state, `client.${method}: ${why}`);
    if (runFinished) {
      throw refuse('the run that made this promise has finished, so nothing waits for it any more');
    }
    const at = record.completedAt === undefined ? '' : ` at ${new Date(record.completedAt).toISOString()}`;
    if (record.state === 'timed-out') {
      throw refuse(
        `this promise timed out${at}; its workflow went on without it and it can no longer be completed`,
      );
    }
    // openValue hands a value that is not sealed back as it is.
    const first = openValue(
      record.payload,
      record.runId,
      'signal payload',
      this.protection(),
    ) as PromiseDelivery;
    if (first.outcome === delivery.outcome && isDeepStrictEqual(jsonOf(first), jsonOf(delivery))) {
      return { state: first.outcome };
    }
    throw refuse(
      `this promise was already ${record.state}${at} with ${record.state === 'resolved' ? 'another value' : 'another error'}; ` +
        'a promise completes once (a repeat of the same completion is accepted)',
    );
  }

  /** The record of `token` (invariant 1). */
  private async known(store: Store, method: string, token: string): Promise<PromiseRecord> {
    const record = await this.outbox.retrying(`client.${method}`, () => store.promises.get(token));
    if (record === undefined) throw unknownToken(method);
    return record;
  }
}

/**
 * The refusal of a completion of a promise whose run continued as new (docs/continue-as-new.md): the
 * promise was a step of that run, which its successor never took, so nothing waits for it any more.
 */
function continuedRefusal(method: string, record: PromiseRecord, successor: string): RunStateError {
  return new RunStateError(
    record.runId,
    'continued',
    `client.${method}: the run that made this promise (${record.runId}, step #${record.seq}) continued as ` +
      `new as run ${successor}, and a durable promise belongs to the run that made it: nothing waits for ` +
      'this one any more. Have the successor make a new promise (ctx.promise) and hand out its token',
  );
}

/** The refusal of a token nobody knows; it does not repeat the token (a secret, or a guess). */
function unknownToken(method: string): NotFoundError {
  return new NotFoundError(
    `client.${method}: no durable promise has this token (check that it was copied whole; a promise ` +
      'is deleted with its run)',
  );
}

/** An error given to `reject`, as journaled: name, message and code, never a stack. */
function rejectionOf(error: PromiseRejection): SerializedError {
  if (typeof error === 'string') return { name: 'Error', message: error };
  if (typeof error !== 'object' || error === null || typeof error.message !== 'string') {
    throw new InvalidInputError('', ['$: must be a string, an Error or { name?, message, code? }'], {
      field: 'value',
      message: 'client.promises.reject: the error must be a message, an Error or { name?, message, code? }',
    });
  }
  const code = (error as { code?: unknown }).code;
  return {
    name: typeof error.name === 'string' && error.name !== '' ? error.name : 'Error',
    message: error.message,
    ...(typeof code === 'string' && { code }),
  };
}

/** A record without its payload (a pending one has none; the listing never needs it). */
function withoutPayload(record: PromiseRecord): PromiseInfo {
  const { payload: _payload, ...rest } = record;
  return rest;
}

/** `value` as JSON would carry it (undefined fields gone, key order irrelevant to the comparison). */
function jsonOf(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/**
 * Checks `value` against a promise's JSON Schema (invariant 2): InvalidInputError listing each
 * issue as `$.path: message`.
 */
function checkValue(schema: Record<string, unknown>, value: unknown, call: string): void {
  const validate = validatorOf(schema);
  if (validate(value)) return;
  const issues = (validate.errors ?? []).map(
    (e) => `${pathOf(e.instancePath)}: ${e.message ?? 'is invalid'}`,
  );
  throw new InvalidInputError('', issues, {
    field: 'value',
    message:
      `${call}: the value does not match the promise's schema: ${issues.join('; ')}. ` +
      'Nothing was stored: send a value the schema accepts',
  });
}

function validatorOf(schema: Record<string, unknown>): ValidateFunction {
  const text = JSON.stringify(schema);
  let validate = compiled.get(text);
  if (validate !== undefined) return validate;
  // The dialect is draft-07 (core asks the schema library for it); a `$schema` naming another is
  // dropped rather than refused, so a library that answers in a close dialect still works.
  const { $schema: _dialect, ...body } = schema;
  ajv ??= new Ajv({ allErrors: true, strict: false });
  try {
    validate = ajv.compile(body);
  } catch (err) {
    throw new BatonError(
      'BATON_PROMISE_SCHEMA',
      `the promise's JSON Schema cannot be compiled (${err instanceof Error ? err.message : String(err)}); ` +
        "fix the schema given to ctx.promise in the workflow's code",
    );
  }
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  compiled.set(text, validate);
  return validate;
}

/** A JSON Pointer (`/items/0/sku`) as `$.items[0].sku`. */
function pathOf(pointer: string): string {
  let out = '$';
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(key)) out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out;
}
