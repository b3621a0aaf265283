import { describe, expect, it } from 'vitest';
import { ENV, readConfig } from './config.js';

const BASE = {
  [ENV.transportUrl]: 'nats://127.0.0.1:4222',
  [ENV.storeUrl]: 'redis://127.0.0.1:6379',
  [ENV.workflows]: './workflows.js',
};

describe('worker process configuration: failed resumes', () => {
  it('reads the limit and the backoff, leaving them to the Worker defaults when unset', () => {
    expect(readConfig(BASE).tuning).toMatchObject({
      maxResumeFailures: undefined,
      resumeBackoffMs: undefined,
      resumeBackoffMaxMs: undefined,
    });
    const config = readConfig({
      ...BASE,
      BATON_MAX_RESUME_FAILURES: '3',
      BATON_RESUME_BACKOFF_MS: '250',
      BATON_RESUME_BACKOFF_MAX_MS: '10000',
    });
    expect(config.tuning).toMatchObject({
      maxResumeFailures: 3,
      resumeBackoffMs: 250,
      resumeBackoffMaxMs: 10_000,
    });
  });

  it('names the variable of a bad value, and a cap below the base', () => {
    expect(() => readConfig({ ...BASE, BATON_MAX_RESUME_FAILURES: '0' })).toThrow(
      /BATON_MAX_RESUME_FAILURES is '0'; it must be a whole number of at least 1/,
    );
    expect(() => readConfig({ ...BASE, BATON_RESUME_BACKOFF_MS: '1s' })).toThrow(
      /BATON_RESUME_BACKOFF_MS is '1s'/,
    );
    expect(() => readConfig({ ...BASE, BATON_RESUME_BACKOFF_MAX_MS: '500' })).toThrow(
      /BATON_RESUME_BACKOFF_MAX_MS \(500\) must be at least BATON_RESUME_BACKOFF_MS \(1000\)/,
    );
  });
});
