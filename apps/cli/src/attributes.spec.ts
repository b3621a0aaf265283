/**
 * `--attr` (search attributes, docs/search-attributes.md) without servers: the flag is repeatable,
 * reads into the filter's attributes, counts as a filter (bulk actions), and a bad expression is a
 * usage error before anything connects.
 */
import { describe, expect, it } from 'vitest';
import { filterFromFlags, hasFilter } from './filters.js';
import { runCli } from './program.js';

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, { env: {}, io: { out: (t) => (out += t), err: (t) => (err += t) } });
  return { code, out, err };
}

describe('--attr', () => {
  it('reads each expression into the filter’s attributes', () => {
    expect(
      filterFromFlags({ attr: ['customerId=42', 'total>=100', 'total<500', 'vip:boolean=true'] }),
    ).toEqual({
      attributes: { customerId: '42', total: { type: 'number', gte: 100, lt: 500 }, vip: true },
    });
    expect(hasFilter({ attr: ['customerId=42'] })).toBe(true);
    expect(hasFilter({})).toBe(false);
  });

  it('is repeatable on runs list and the bulk actions, and a bad expression is a usage error', async () => {
    const help = (await cli(['runs', 'list', '--help'])).out;
    expect(help).toContain('--attr <expression>');
    expect((await cli(['runs', 'cancel', '--help'])).out).toContain('--attr <expression>');
    const bad = await cli(['runs', 'list', '--attr', 'customerId=42', '--attr', 'total:number=lots']);
    expect(bad).toMatchObject({ code: 2, out: '' });
    expect(bad.err).toMatch(
      /^usage: --attr: attribute filter 'total:number=lots' has 'lots', which is not a number/,
    );
  });
});
