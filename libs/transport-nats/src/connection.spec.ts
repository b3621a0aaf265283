import { describe, expect, it } from 'vitest';
import { JetStreamApiError } from '@nats-io/jetstream';
import { untilElected } from './connection.js';

const apiError = (errCode: number, description: string) =>
  new JetStreamApiError({ code: 400, err_code: errCode, description });

describe('untilElected', () => {
  it('waits out a refused placement (a node just back not counted yet), then returns', async () => {
    let calls = 0;
    const result = await untilElected(async () => {
      calls++;
      if (calls < 3) throw apiError(10005, 'no suitable peers for placement');
      return 'placed';
    }, 5_000);
    expect(result).toBe('placed');
    expect(calls).toBe(3);
  });

  it('throws a placement still refused when the wait is over, and any other error at once', async () => {
    let calls = 0;
    const started = Date.now();
    const refused = await untilElected(async () => {
      calls++;
      throw apiError(10023, 'insufficient resources');
    }, 600).catch((err: unknown) => err);
    expect(refused).toMatchObject({ code: 10023 });
    expect(calls).toBeGreaterThan(1);
    expect(Date.now() - started).toBeLessThan(2_000);

    calls = 0;
    const conflict = await untilElected(async () => {
      calls++;
      throw apiError(10058, 'stream name already in use');
    }, 5_000).catch((err: unknown) => err);
    expect(conflict).toMatchObject({ code: 10058 });
    expect(calls).toBe(1);
  });
});
