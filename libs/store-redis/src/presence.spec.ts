import { describe, expect, it } from 'vitest';
import { presenceClientName } from './presence.js';

describe('presence client names', () => {
  it('names the prefix by a short hash and keeps a plain worker id readable', () => {
    expect(presenceClientName('baton:', 'worker-7f3a.pod:1')).toMatch(
      /^baton-[0-9a-f]{8}-worker-7f3a\.pod:1$/,
    );
    expect(presenceClientName('a:', 'w')).not.toBe(presenceClientName('b:', 'w'));
  });

  it('replaces characters CLIENT SETNAME refuses and keeps lossy names apart', () => {
    const spaced = presenceClientName('baton:', 'worker a');
    const underscored = presenceClientName('baton:', 'worker_a');
    expect(spaced).toMatch(/^baton-[0-9a-f]{8}-worker_a-[0-9a-f]{8}$/);
    expect(spaced).not.toBe(underscored);
    expect(presenceClientName('baton:', 'x'.repeat(200))).toHaveLength('baton-12345678-'.length + 64 + 9);
  });
});
