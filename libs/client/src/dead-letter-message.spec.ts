import { describe, expect, it } from 'vitest';
import { cancelMessage, encodeMessage } from '@baton/core/runtime';
import { decodeDeadLetter } from './dead-letter-message.js';

describe('decodeDeadLetter', () => {
  it('decodes the run message a letter holds', () => {
    const { data } = cancelMessage('run-1', 'operator');
    expect(decodeDeadLetter({ data, headers: {} })).toEqual({
      readable: true,
      message: { kind: 'cancel', runId: 'run-1', reason: 'operator' },
    });
  });

  it('says why bytes that are not a run message cannot be read, without throwing', () => {
    const result = decodeDeadLetter({ data: new TextEncoder().encode('{bad json'), headers: {} });
    expect(result).toMatchObject({
      readable: false,
      problem: expect.stringMatching(/^unparseable run message \(9 bytes\): /),
    });
  });

  it('refuses to decode data a transport cut or dropped, saying so', () => {
    const data = encodeMessage({ kind: 'cancel', runId: 'run-1', reason: 'r' });
    expect(decodeDeadLetter({ data, headers: { 'baton-dlq-truncated': '2000000' } })).toEqual({
      readable: false,
      problem: 'not the original message: its data was cut from 2000000 bytes to fit the bus',
    });
    expect(
      decodeDeadLetter({ data: new Uint8Array(), headers: { 'baton-dlq-data-dropped': '9 bytes' } }),
    ).toMatchObject({
      readable: false,
      problem: expect.stringContaining('too large to keep'),
    });
  });
});
