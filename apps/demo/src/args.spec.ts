import { describe, expect, it } from 'vitest';
import { parseDemoArgs, USAGE, UsageError } from './args.js';

describe('npm start arguments', () => {
  it('answers --help and -h with the usage instead of failing', () => {
    expect(parseDemoArgs(['--help'])).toBe('help');
    expect(parseDemoArgs(['-h'])).toBe('help');
    expect(USAGE).toMatch(/--seed N/);
  });

  it('reads the documented options', () => {
    expect(parseDemoArgs([])).toEqual({ output: 'auto' });
    expect(parseDemoArgs(['--runs', '200', '--seed', '7', '--plain'])).toEqual({
      runs: 200,
      seed: 7,
      output: 'plain',
    });
    expect(parseDemoArgs(['--quiet', '--seed=0'])).toEqual({ seed: 0, output: 'silent' });
    expect(parseDemoArgs(['--console'])).toEqual({ output: 'auto', console: true });
    expect(parseDemoArgs(['--bus', 'redis'])).toEqual({ output: 'auto', bus: 'redis' });
    expect(parseDemoArgs(['--bus=memory'])).toEqual({ output: 'auto', bus: 'memory' });
  });

  it('names a bad argument and shows the usage', () => {
    const unknown = (): unknown => parseDemoArgs(['--colour']);
    expect(unknown).toThrow(UsageError);
    expect(unknown).toThrow(/--colour/);
    expect(unknown).toThrow(USAGE);
    expect(() => parseDemoArgs(['--runs', '0'])).toThrow("--runs must be a positive integer, got '0'");
    expect(() => parseDemoArgs(['--seed', '-3'])).toThrow(UsageError);
    expect(() => parseDemoArgs(['extra'])).toThrow(UsageError);
    expect(() => parseDemoArgs(['--bus', 'kafka'])).toThrow(
      "--bus must be one of memory, redis, got 'kafka'",
    );
  });
});
