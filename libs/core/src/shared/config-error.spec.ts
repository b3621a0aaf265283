/**
 * ConfigError's fields: an error about one option carries the option, the value as shown and what
 * is expected, so a program that names options otherwise (the worker process, by BATON_* variable)
 * never rewords the message.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, invalidOption, serializeError } from './errors.js';

describe('ConfigError fields', () => {
  it('builds the message from the fields unless the builder words it itself', () => {
    const err = invalidOption({
      component: 'natsTransport',
      option: 'replicas',
      value: '7',
      expected: 'use a whole number from 1 to 5',
    });
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.code).toBe('BATON_CONFIG');
    expect(err.message).toBe('natsTransport: replicas is 7; use a whole number from 1 to 5');
    expect(err).toMatchObject({ component: 'natsTransport', option: 'replicas', value: '7' });
    const worded = invalidOption(
      { option: 'heartbeatMs', value: '600', expected: 'it must be below leaseMs/2', related: ['leaseMs'] },
      'heartbeatMs (600) must be below leaseMs/2',
      { cause: 'why' },
    );
    expect(worded.message).toBe('heartbeatMs (600) must be below leaseMs/2');
    expect(worded.component).toBeUndefined();
    expect(worded.related).toEqual(['leaseMs']);
    expect(worded.cause).toBe('why');
    // The wire form is unchanged: fields are not serialized.
    expect(Object.keys(serializeError(worded)).sort()).toEqual([
      'cause',
      'code',
      'message',
      'name',
      'retryable',
      'stack',
    ]);
  });

  it('leaves a plain ConfigError without fields', () => {
    const err = new ConfigError('BATON_X names /f, which cannot be read');
    expect([err.option, err.value, err.expected, err.component, err.related]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});
