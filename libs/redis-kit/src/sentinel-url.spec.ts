/**
 * A bad Sentinel URL's ConfigError carries its option and value as every option error does
 * (ConfigError fields, @baton/core), with the password masked in both the value and the message.
 */
import type { ConfigError } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { parseSentinelUrl } from './sentinel-url.js';

describe('parseSentinelUrl errors', () => {
  it('masks the secret of a bad Sentinel URL in its value', () => {
    let caught: unknown;
    try {
      parseSentinelUrl('redis+sentinel://app:s3cret@127.0.0.1/baton', 'redisStore');
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({
      component: 'redisStore',
      option: 'url',
      value: 'redis+sentinel://app:***@127.0.0.1/baton',
    });
    expect((caught as ConfigError).expected).toMatch(
      /^it is not a valid Redis Sentinel URL: sentinel '127\.0\.0\.1'/,
    );
    expect(JSON.stringify(caught)).not.toContain('s3cret');
  });
});
