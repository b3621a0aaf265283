/**
 * The published wire protocol (docs/wire-protocol.md and its JSON Schema) held against the code:
 * every kind of message the shared constructors write validates against the schema, the doc's
 * examples and its run-id example are right, and the decoder accepts everything the schema
 * accepts and refuses what both should refuse. The schema is stricter than the decoder in a few
 * documented places (listed below, checked both ways), so a producer that validates against it is
 * never refused by a worker, and the schema cannot drift from the code unnoticed.
 */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { assertRunId, runIdForKey } from '../shared/ids.js';
import { decodeMessage, MAX_MESSAGE_DEPTH } from './codec.js';
import { resolvePayloadProtection } from './payload/payload-config.js';
import { sealValue } from './payload/sealed-values.js';
import { testKeys } from './payload/test-keys.spec-helper.js';
import {
  cancelMessage,
  resumeMessage,
  signalMessage,
  startMessage,
  wakeMessage,
  type OutgoingRunMessage,
} from './run-messages.js';

const DOCS = new URL('../../../../docs/', import.meta.url);
const schema = JSON.parse(
  readFileSync(new URL('wire-protocol/run-message.v1.schema.json', DOCS), 'utf8'),
) as object;
const doc = readFileSync(new URL('wire-protocol.md', DOCS), 'utf8');

// Strict: an unknown keyword or a loose type in the schema is an error, not a silent no-op. Only
// `required` may name properties the enclosing schema defines (the `not`/`if` of input and inputRef).
const ajv = new Ajv({ strict: true, strictRequired: false, allErrors: true });
const validate = ajv.compile(schema);

/** The schema's verdict: '' when valid, else every problem on one line. */
function schemaProblems(message: unknown): string {
  return validate(message) ? '' : ajv.errorsText(validate.errors);
}

/**
 * What a worker reads of a delivery, as libs/worker/src/poison.ts `parseRunMessage` does: the
 * decoder, then the run id's pattern (which the decoder leaves to it). Throws where it refuses.
 */
function workerReads(bytes: Uint8Array): unknown {
  const message = decodeMessage(bytes);
  assertRunId(message.runId);
  return message;
}

const bodyOf = (message: OutgoingRunMessage): unknown => JSON.parse(new TextDecoder().decode(message.data));
const bytesOf = (message: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(message));

const ref = { sha256: 'a'.repeat(64), size: 70_000, run: 'r1' };
const sealing = resolvePayloadProtection({ encryptionKeys: testKeys(['k1']).spec }, {});
const sealed = (value: unknown, purpose: 'run input' | 'signal payload') =>
  sealValue(value, 'r1', purpose, sealing);

describe('the run-message schema', () => {
  it('compiles in strict mode and names its protocol version', () => {
    expect(validate).toBeTypeOf('function');
    expect((schema as { $id: string }).$id).toBe('urn:baton:wire-protocol:run-message:v1');
  });

  it.each<[string, OutgoingRunMessage]>([
    ['a plain start', startMessage({ runId: 'r1', workflow: 'greet', version: 1, input: { name: 'Ada' } })],
    [
      'a keyed start',
      startMessage({
        runId: runIdForKey('greet', 'order-42'),
        workflow: 'greet',
        version: 1,
        input: { name: 'Ada' },
        idempotencyKey: 'order-42',
      }),
    ],
    ['a start without input', startMessage({ runId: 'r1', workflow: 'wf.v2:x-y', version: 7 })],
    ['a start with null input', startMessage({ runId: 'r1', workflow: 'wf', version: 1, input: null })],
    ['a high start', startMessage({ runId: 'r1', workflow: 'wf', version: 1, input: 1, priority: 'high' })],
    ['a low start', startMessage({ runId: 'r1', workflow: 'wf', version: 1, input: [], priority: 'low' })],
    ['a normal start', startMessage({ runId: 'r1', workflow: 'wf', version: 1, priority: 'normal' })],
    [
      'a traced start',
      startMessage({
        runId: 'r1',
        workflow: 'wf',
        version: 1,
        input: 'x',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      }),
    ],
    ['a start by reference (v2)', startMessage({ runId: 'r1', workflow: 'wf', version: 1, inputRef: ref })],
    [
      'a sealed start (v3)',
      startMessage({ runId: 'r1', workflow: 'wf', version: 1, input: sealed({ card: '4111' }, 'run input') }),
    ],
    ['a signal', signalMessage({ runId: 'r1', name: 'go', payload: { ok: true }, signalId: 's1' })],
    ['a signal without payload', signalMessage({ runId: 'r1', name: 'go', signalId: 's1' })],
    [
      'a signal by reference (v2)',
      signalMessage({ runId: 'r1', name: 'go', payloadRef: ref, signalId: 's1' }),
    ],
    [
      'a sealed signal (v3)',
      signalMessage({ runId: 'r1', name: 'go', payload: sealed('yes', 'signal payload'), signalId: 's1' }),
    ],
    ['a cancel', cancelMessage('r1', 'order withdrawn')],
  ])('accepts %s as the shared constructor writes it', (_, message) => {
    const body = bodyOf(message);
    expect(schemaProblems(body)).toBe('');
    expect(() => workerReads(message.data)).not.toThrow();
  });

  it('gives each message the de-duplication id and key the doc names', () => {
    expect(startMessage({ runId: 'R', workflow: 'wf', version: 1 }).options).toMatchObject({
      msgId: 'start:R',
      key: 'R',
    });
    expect(signalMessage({ runId: 'R', name: 'n', signalId: 'S' }).options).toEqual({
      msgId: 'signal:R:S',
      key: 'R',
    });
    expect(cancelMessage('R', 'why').options).toEqual({ key: 'R' });
    // The doc's table, row by row (its column padding is the formatter's).
    const literal = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const row = (cells: string[]): RegExp =>
      new RegExp(`^\\| ${cells.map(literal).join(' +\\| ')} +\\|$`, 'm');
    expect(doc).toMatch(row(['start', '`start:<runId>`', '`<runId>`']));
    expect(doc).toMatch(row(['signal', '`signal:<runId>:<signalId>`', '`<runId>`']));
    expect(doc).toMatch(row(['cancel', 'none (a repeat is harmless)', '`<runId>`']));
  });

  it("refuses the workers' own messages: a producer sends start, signal and cancel only", () => {
    for (const message of [resumeMessage('r1', 'handoff', 5), wakeMessage('r1', 'timer')]) {
      expect(() => workerReads(message.data)).not.toThrow();
      expect(schemaProblems(bodyOf(message))).toMatch(/kind/);
    }
  });
});

describe('the examples in docs/wire-protocol.md', () => {
  const examples = [...doc.matchAll(/```json run-message\n([\s\S]*?)```/g)].map(
    (m) => JSON.parse(m[1]!) as { kind: string; runId: string; workflow?: string; idempotencyKey?: string },
  );

  it('cover start, signal and cancel', () => {
    expect(new Set(examples.map((e) => e.kind))).toEqual(new Set(['start', 'signal', 'cancel']));
  });

  it('are valid by the schema and read by the decoder', () => {
    for (const example of examples) {
      expect(schemaProblems(example), JSON.stringify(example)).toBe('');
      expect(workerReads(bytesOf(example))).toMatchObject({ kind: example.kind, runId: example.runId });
    }
  });

  it('name keyed runs by the derived run id, as the run-id example does', () => {
    for (const example of examples.filter((e) => e.idempotencyKey !== undefined)) {
      expect(example.runId).toBe(runIdForKey(example.workflow!, example.idempotencyKey!));
    }
    const stated = /Workflow `([^`]+)` with key\s+`([^`]+)` is run `([^`]+)`/.exec(doc);
    expect(stated, 'the run-id example').not.toBeNull();
    expect(runIdForKey(stated![1]!, stated![2]!)).toBe(stated![3]);
  });
});

describe('the schema and the decoder agree', () => {
  const start = {
    v: 1,
    kind: 'start',
    runId: 'r1',
    workflow: 'wf',
    version: 1,
    input: { a: 1 },
    enqueuedAt: 1,
  };
  const signal = { v: 1, kind: 'signal', runId: 'r1', name: 'go', signalId: 's1', payload: 1 };
  const cancel = { v: 1, kind: 'cancel', runId: 'r1', reason: 'why' };

  it.each<[string, unknown]>([
    ['null for an absent idempotency key and trace', { ...start, idempotencyKey: null, traceparent: null }],
    ['a start without enqueuedAt', { ...start, enqueuedAt: undefined }],
    ['a cancel without a reason', { ...cancel, reason: undefined }],
    ['fields in any order', { input: 2, version: 3, workflow: 'w', runId: 'x_1', kind: 'start', v: 1 }],
  ])('both accept %s', (_, message) => {
    expect(schemaProblems(JSON.parse(JSON.stringify(message)))).toBe('');
    expect(() => workerReads(bytesOf(message))).not.toThrow();
  });

  it.each<[string, unknown]>([
    ['an unknown codec version', { ...start, v: 4 }],
    ['no codec version', { ...start, v: undefined }],
    ['an unknown kind', { ...start, kind: 'update' }],
    ['a run id with a dot', { ...start, runId: 'a.b' }],
    ['a run id of 129 characters', { ...start, runId: 'r'.repeat(129) }],
    ['a workflow name with a space', { ...start, workflow: 'my wf' }],
    ['version 0', { ...start, version: 0 }],
    ['a version as a string', { ...start, version: '1' }],
    ['an empty idempotency key', { ...start, idempotencyKey: '' }],
    ['an idempotency key as an object', { ...start, idempotencyKey: { id: 1 } }],
    ['enqueuedAt as a string', { ...start, enqueuedAt: 'now' }],
    [
      'a malformed input reference',
      { ...start, input: undefined, v: 2, inputRef: { sha256: 'xyz', size: 1, run: 'r1' } },
    ],
    ['a half-sealed input', { ...start, v: 3, input: { '$baton.sealed': 1, key: 'k1' } }],
    ['a signal without a signal id', { ...signal, signalId: undefined }],
    ['a signal with an empty name', { ...signal, name: '' }],
    ['a cancel reason as a number', { ...cancel, reason: 7 }],
    ['a trace context as a number', { ...cancel, traceparent: 7 }],
  ])('both refuse %s', (_, message) => {
    expect(schemaProblems(JSON.parse(JSON.stringify(message)))).not.toBe('');
    expect(() => workerReads(bytesOf(message))).toThrow();
  });

  // Stricter than the decoder on purpose (docs/wire-protocol.md, "The message"): what a producer
  // must not write, though a worker of this release would read it.
  it.each<[string, unknown]>([
    ['a field no kind has', { ...start, customerId: '42' }],
    ['a higher codec version than the message needs', { ...start, v: 3 }],
    ['priority "normal", which is written by leaving it out', { ...start, priority: 'normal' }],
    ['an input and an input reference both', { ...start, v: 2, inputRef: ref }],
    ['a resume message', { v: 1, kind: 'resume', runId: 'r1', reason: 'retry', since: 1 }],
  ])('the schema alone refuses %s', (_, message) => {
    expect(schemaProblems(message)).not.toBe('');
    expect(() => workerReads(bytesOf(message))).not.toThrow();
  });

  it('the decoder alone refuses a message nested deeper than its limit (no schema can say it)', () => {
    let input: unknown = 'leaf';
    for (let depth = 0; depth < MAX_MESSAGE_DEPTH; depth++) input = [input];
    const deep = { ...start, input };
    expect(schemaProblems(deep)).toBe('');
    expect(() => workerReads(bytesOf(deep))).toThrow(/nests \d+ levels deep/);
  });
});
