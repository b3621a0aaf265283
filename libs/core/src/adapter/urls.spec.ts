import { describe, expect, it } from 'vitest';
import { maskUrlSecret } from './urls.js';

describe('maskUrlSecret', () => {
  it('masks the password, also in URLs no parser accepts', () => {
    expect(maskUrlSecret('redis://u:secret@host:6379/0')).toBe('redis://u:***@host:6379/0');
    expect(maskUrlSecret('redis://:secret@host')).toBe('redis://:***@host');
    expect(maskUrlSecret('redis://u:se#c@r/et@host')).toBe('redis://u:***@host');
    expect(maskUrlSecret('postgres://u:p@ss@host/db')).toBe('postgres://u:***@host/db');
    expect(maskUrlSecret('postgres://u:secret@h:x/db')).toBe('postgres://u:***@h:x/db');
  });

  it('leaves URLs without a password alone, unless the user part is the secret', () => {
    expect(maskUrlSecret('redis://user@host')).toBe('redis://user@host');
    expect(maskUrlSecret('redis://host:6379')).toBe('redis://host:6379');
    expect(maskUrlSecret('host:4222')).toBe('host:4222');
    expect(maskUrlSecret('nats://tok@host', { userIsSecret: true })).toBe('nats://***@host');
    expect(maskUrlSecret('nats://app:p@ss@host', { userIsSecret: true })).toBe('nats://app:***@host');
  });
});
