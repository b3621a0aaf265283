import { describe, expect, it } from 'vitest';
import { parseOptions, USAGE, UsageError } from './options.js';
import type { BenchConfig } from './types.js';

const parse = (...argv: string[]): BenchConfig => {
  const config = parseOptions(argv, new Date('2026-01-02T03:04:05.678Z'));
  if (config === 'help') throw new Error('expected a configuration, got help');
  return config;
};

describe('bench options (node:util parseArgs)', () => {
  it('has the documented defaults', () => {
    expect(parse()).toMatchObject({
      transport: 'nats',
      store: 'redis',
      runs: 1000,
      concurrency: 1000,
      workers: 1,
      workloads: ['chain10', 'fanout', 'payload', 'recovery'],
      kills: 10,
      replacementDelayMs: 0,
      singleRuns: 30,
      baselines: true,
      runtime: 'dist',
      pipelineSteps: false,
      encrypt: false,
      servers: 'auto',
      smoke: false,
      out: '.tmp/bench/bench-2026-01-02T03-04-05-678Z.json',
    });
  });

  it('reads every option', () => {
    expect(
      parse(
        '--transport=kafka',
        '--store',
        'postgres',
        '--workloads',
        'chain10, recovery',
        '--runs',
        '50',
        '--concurrency',
        '7',
        '--workers',
        '2',
        '--single-runs',
        '5',
        '--kills',
        '3',
        '--replacement-delay-ms',
        '1500',
        '--runtime',
        'source',
        '--pipeline-steps',
        '--encrypt',
        '--no-baselines',
        '--servers',
        'shared',
        '--out',
        'x.json',
      ),
    ).toMatchObject({
      transport: 'kafka',
      store: 'postgres',
      workloads: ['chain10', 'recovery'],
      runs: 50,
      concurrency: 7,
      workers: 2,
      singleRuns: 5,
      kills: 3,
      replacementDelayMs: 1500,
      runtime: 'source',
      pipelineSteps: true,
      encrypt: true,
      baselines: false,
      servers: 'shared',
      out: 'x.json',
    });
  });

  it('--smoke shrinks the defaults, and a size given explicitly wins in either order', () => {
    expect(parse('--smoke')).toMatchObject({ smoke: true, runs: 20, kills: 1, concurrency: 100 });
    expect(parse('--smoke', '--runs', '40')).toMatchObject({ runs: 40, kills: 1 });
    expect(parse('--runs', '40', '--smoke')).toMatchObject({ runs: 40, kills: 1 });
  });

  it('--pairs runs several bus/store pairs, all of them with all', () => {
    expect(parse().pairs).toEqual([{ transport: 'nats', store: 'redis' }]);
    expect(parse('--transport', 'kafka').pairs).toEqual([{ transport: 'kafka', store: 'redis' }]);
    expect(parse('--pairs', 'kafka+postgres, redis+redis')).toMatchObject({
      transport: 'kafka',
      store: 'postgres',
      pairs: [
        { transport: 'kafka', store: 'postgres' },
        { transport: 'redis', store: 'redis' },
      ],
    });
    expect(parse('--pairs', 'all').pairs.map((p) => `${p.transport}+${p.store}`)).toEqual([
      'nats+redis',
      'nats+postgres',
      'kafka+redis',
      'kafka+postgres',
      'redis+redis',
    ]);
    expect(() => parse('--pairs', 'nats+mysql')).toThrow(/--pairs names 'nats\+mysql'; a pair is BUS\+STORE/);
    expect(() => parse('--pairs', 'nats')).toThrow(UsageError);
    expect(() => parse('--pairs', 'nats+redis,nats+redis')).toThrow('--pairs names nats+redis twice');
    expect(() => parse('--pairs', 'nats+redis', '--store', 'redis')).toThrow(
      /leave --transport and --store out/,
    );
  });

  it('answers --help and -h', () => {
    expect(parseOptions(['--help'])).toBe('help');
    expect(parseOptions(['-h'])).toBe('help');
    expect(USAGE).toContain('--help');
  });

  it('names a bad argument and shows the usage for an unknown option', () => {
    const unknown = (): unknown => parse('--runz', '5');
    expect(unknown).toThrow(UsageError);
    expect(unknown).toThrow(/--runz/);
    expect(unknown).toThrow(USAGE);
    expect(() => parse('--runs')).toThrow(/--runs/);
    expect(() => parse('stray')).toThrow(UsageError);
    expect(() => parse('--runs', '0')).toThrow("--runs is '0'; give a whole number of at least 1");
    expect(() => parse('--runs', '1.5')).toThrow(UsageError);
    expect(() => parse('--transport', 'rabbit')).toThrow("--transport is 'rabbit'; use nats, kafka or redis");
    expect(() => parse('--store', 'mysql')).toThrow("--store is 'mysql'; use redis or postgres");
    expect(() => parse('--runtime', 'jit')).toThrow("--runtime is 'jit'; use dist or source");
    expect(() => parse('--servers', 'mine')).toThrow("--servers is 'mine'; use auto, private or shared");
    expect(() => parse('--workloads', 'chain10,nope')).toThrow(/--workloads has 'nope'/);
  });
});
