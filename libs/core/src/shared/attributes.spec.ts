import { describe, expect, it } from 'vitest';
import {
  MAX_RUN_ATTRIBUTES,
  attributeChanges,
  attributeNameProblem,
  attributeText,
  checkAttributeDeclaration,
  checkRunAttribute,
  mergeAttributes,
  toRunAttribute,
} from './attributes.js';

const none = new Set<string>();

describe('search attributes: names and values', () => {
  it('takes a value’s type from its JavaScript type when nothing is declared', () => {
    expect(attributeChanges('t', { customerId: '42', amount: 12.5, vip: true }, undefined, none)).toEqual({
      customerId: { type: 'keyword', value: '42' },
      amount: { type: 'number', value: 12.5 },
      vip: { type: 'boolean', value: true },
    });
    const at = new Date('2026-11-25T10:00:00.000Z');
    expect(toRunAttribute('t', 'placedAt', at)).toEqual({ type: 'time', value: at.getTime() });
  });

  it('reads an ISO string or ms as a time only where the attribute is declared time', () => {
    expect(toRunAttribute('t', 'placedAt', '2026-11-25T10:00:00Z', 'time')).toEqual({
      type: 'time',
      value: Date.parse('2026-11-25T10:00:00Z'),
    });
    expect(toRunAttribute('t', 'placedAt', 1_700_000_000_000, 'time')).toEqual({
      type: 'time',
      value: 1_700_000_000_000,
    });
    // Undeclared, the same string is a keyword.
    expect(toRunAttribute('t', 'placedAt', '2026-11-25T10:00:00Z')).toEqual({
      type: 'keyword',
      value: '2026-11-25T10:00:00Z',
    });
    expect(() => toRunAttribute('t', 'placedAt', 'next tuesday', 'time')).toThrow(
      /attribute 'placedAt' is "next tuesday"; it is declared time: give a Date, an ISO 8601 time or ms/,
    );
  });

  it('refuses bad names, naming the attribute and the rule', () => {
    expect(attributeNameProblem('customer_id.v2-x')).toBeUndefined();
    expect(attributeNameProblem('')).toMatch(/empty/);
    expect(attributeNameProblem('9lives')).toMatch(/starting with a letter/);
    expect(attributeNameProblem('a:b')).toMatch(/not a valid name/);
    expect(attributeNameProblem('x'.repeat(65))).toMatch(/65 characters long; the limit is 64/);
    expect(() => attributeChanges('ctx.setAttributes', { 'tier=gold': 'x' }, undefined, none)).toThrow(
      expect.objectContaining({
        code: 'BATON_CONFIG',
        option: 'attributes.tier=gold',
        message: expect.stringMatching(/^ctx\.setAttributes: attribute 'tier=gold' is not a valid name/),
      }),
    );
  });

  it('refuses values no type takes, and keywords out of bounds', () => {
    const refused = (value: unknown): string => {
      try {
        attributeChanges('ctx.setAttributes', { a: value }, undefined, none);
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refused({ nested: 1 })).toMatch(/attribute 'a' is an object; give a string \(keyword\), a number/);
    expect(refused([1])).toMatch(/is an array/);
    expect(refused(Number.NaN)).toMatch(/is NaN; give a finite number/);
    expect(refused(Infinity)).toMatch(/is Infinity; give a finite number/);
    expect(refused('')).toMatch(/empty string; give a non-empty keyword, or null to remove it/);
    expect(refused('x'.repeat(257))).toMatch(/keyword of 257 characters; the limit is 256/);
    expect(refused('a\0b')).toMatch(/NUL/);
    expect(refused(new Date(Number.NaN))).toMatch(/an invalid Date/);
    expect(() => attributeChanges('t', 'customerId=42', undefined, none)).toThrow(/give an object/);
  });

  it('keeps to a declaration: only its names, each of its type', () => {
    const declared = { customerId: 'keyword', total: 'number' } as const;
    expect(attributeChanges('t', { customerId: '42', total: null }, declared, none)).toEqual({
      customerId: { type: 'keyword', value: '42' },
      total: null,
    });
    expect(() => attributeChanges('t', { tier: 'gold' }, declared, none)).toThrow(
      /attribute 'tier' is not declared by the workflow; its attributes are customerId, total/,
    );
    expect(() => attributeChanges('t', { total: '12' }, declared, none)).toThrow(
      /attribute 'total' is "12"; it is declared number: give a finite number/,
    );
  });

  it('counts the run’s names against the limit, removals included', () => {
    const held = new Set(Array.from({ length: MAX_RUN_ATTRIBUTES }, (_, i) => `a${i}`));
    expect(() => attributeChanges('t', { extra: 1 }, undefined, held)).toThrow(
      /the run would hold 21 attributes; the limit is 20 a run/,
    );
    expect(Object.keys(attributeChanges('t', { a0: null, extra: 1 }, undefined, held))).toEqual([
      'a0',
      'extra',
    ]);
    // Setting a name the run holds already adds nothing.
    expect(attributeChanges('t', { a1: 2 }, undefined, held)).toEqual({ a1: { type: 'number', value: 2 } });
  });

  it('checks a declaration and a stored attribute as a store receives it', () => {
    expect(() => checkAttributeDeclaration('workflow w', { tier: 'string' })).toThrow(
      /workflow w: attribute 'tier' is declared "string"; the types are keyword, number, boolean, time/,
    );
    expect(() => checkAttributeDeclaration('workflow w', ['tier'])).toThrow(/name -> type/);
    expect(checkRunAttribute('t', 'at', { type: 'time', value: 5 })).toEqual({ type: 'time', value: 5 });
    expect(() => checkRunAttribute('t', 'at', { type: 'time', value: '2026-01-01' })).toThrow(
      /ms since the epoch/,
    );
    expect(() => checkRunAttribute('t', 'n', { type: 'decimal', value: 1 })).toThrow(/has type "decimal"/);
    expect(() => checkRunAttribute('t', 'n', { type: 'number', value: '1' })).toThrow(
      /it is declared number/,
    );
  });

  it('merges changes, null removing, and writes a time as ISO text', () => {
    const merged = mergeAttributes(
      { a: { type: 'keyword', value: 'x' }, b: { type: 'number', value: 1 } },
      { a: null, c: { type: 'time', value: 0 } },
    );
    expect(merged).toEqual({ b: { type: 'number', value: 1 }, c: { type: 'time', value: 0 } });
    expect(attributeText({ type: 'time', value: 0 })).toBe('1970-01-01T00:00:00.000Z');
    expect(attributeText({ type: 'boolean', value: false })).toBe('false');
  });
});
