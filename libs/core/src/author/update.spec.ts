import { describe, expect, it } from 'vitest';
import { ConfigError } from '../shared/errors.js';
import type { StandardSchemaV1 } from './standard-schema.js';
import { defineUpdate, updateName } from './update.js';

describe('defineUpdate', () => {
  it('makes a frozen definition carrying its name, schema and validator', () => {
    const schema: StandardSchemaV1<unknown, number> = {
      '~standard': { version: 1, vendor: 't', validate: (v) => ({ value: Number(v) }) },
    };
    const validate = (n: number): void => {
      if (n < 0) throw new Error('negative');
    };
    const update = defineUpdate<number, string>('set_count', { schema, validate });
    expect(update).toEqual({ kind: 'update', name: 'set_count', schema, validate });
    expect(Object.isFrozen(update)).toBe(true);
    expect(defineUpdate('plain')).toEqual({ kind: 'update', name: 'plain' });
    expect(updateName(update)).toBe('set_count');
    expect(updateName('by-name')).toBe('by-name');
  });

  it('refuses a name a path or a worker could not carry, a schema that is none, a validator that is no function', () => {
    expect(() => defineUpdate('')).toThrow(ConfigError);
    expect(() => defineUpdate('add item')).toThrow(
      /defineUpdate: name "add item" is invalid: use 1-128 characters/,
    );
    expect(() => defineUpdate('a/b')).toThrow(/is invalid/);
    expect(() => defineUpdate('x', { schema: {} as never })).toThrow(/schema must be a Standard Schema/);
    expect(() => defineUpdate('x', { validate: 'no' as never })).toThrow(/validate must be a function/);
  });
});
