import { describe, expect, it } from 'vitest';
import { decodeGroupRecord, encodeGroupRecord, GroupRecordError } from './group-records.js';

const encoder = new TextEncoder();
const bytes = (s: string): Uint8Array => encoder.encode(s);

describe('group records', () => {
  it('reserves for a run id the bytes TextEncoder writes for it (Buffer.byteLength)', () => {
    const cases = [
      '',
      'run-0123',
      '3f2ee901-5465-4bb2-8125-f0d592a32242',
      'café', // 2-byte
      'ключ', // 2-byte
      '運行', // 3-byte
      'run-🚀-x', // a surrogate pair: 4 bytes
      '\ud83d', // a lone high surrogate: U+FFFD, 3 bytes
      'a\ude80b', // a lone low surrogate
      '\ud83d\ud83d\ude80', // a high surrogate, then a pair
      '\u007f\u0080\u07ff\u0800\uffff',
    ];
    for (const s of cases)
      expect(Buffer.byteLength(s, 'utf8'), JSON.stringify(s)).toBe(encoder.encode(s).length);
  });

  it('reads back every part as written, run ids of any script included', () => {
    const parts = [
      { runId: 'run-1', data: bytes('first') },
      { runId: 'заказ-🚀', data: bytes('second') },
      { runId: '運行-3', data: new Uint8Array(0) },
      { runId: '\ud83d-lone', data: bytes('fourth') },
    ];
    const decoded = decodeGroupRecord(encodeGroupRecord(parts), 'log w1 record 1');
    // A lone surrogate cannot be encoded: it reads back as U+FFFD, as TextEncoder writes it.
    expect([...decoded.keys()]).toEqual(['run-1', 'заказ-🚀', '運行-3', '\ufffd-lone']);
    expect(new TextDecoder().decode(decoded.get('заказ-🚀'))).toBe('second');
    expect(decoded.get('運行-3')).toEqual(new Uint8Array(0));
  });

  it('refuses a record cut short, naming it', () => {
    const record = encodeGroupRecord([{ runId: 'run-1', data: bytes('data') }]);
    expect(() => decodeGroupRecord(record.subarray(0, record.length - 2), 'log w1 record 7')).toThrow(
      GroupRecordError,
    );
    expect(() => decodeGroupRecord(record.subarray(0, record.length - 2), 'log w1 record 7')).toThrow(
      /log w1 record 7/,
    );
  });
});
