import { describe, expect, it } from 'vitest';
import { planCrash } from './crash-watch.js';
import { runDemo } from './demo.js';

describe('the demo crash comes from the seed alone', () => {
  it('plans the same crash for the same seed, and different ones across seeds', () => {
    const input = { seed: 42, runs: 50, workers: 3 };
    expect(planCrash(input)).toEqual(planCrash({ ...input }));
    const plans = Array.from({ length: 40 }, (_, seed) => planCrash({ seed, runs: 50, workers: 3 }));
    expect(new Set(plans.map((p) => p.victim))).toEqual(new Set([0, 1, 2]));
    expect(new Set(plans.map((p) => p.afterPulled)).size).toBeGreaterThan(5);
    for (const plan of plans) {
      expect(plan.afterPulled).toBeGreaterThanOrEqual(Math.round(0.25 * 50));
      expect(plan.afterPulled).toBeLessThanOrEqual(Math.round(0.5 * 50));
    }
    expect(planCrash({ ...input, pulledShare: 0.4 }).afterPulled).toBe(20);
  });

  it('crashes the planned worker in two demo runs with the same seed', async () => {
    const seed = 90_210;
    const first = await runDemo({ runs: 16, output: 'silent', seed });
    const second = await runDemo({ runs: 16, output: 'silent', seed });
    expect(first.crashPlan).toEqual(planCrash({ seed, runs: 16, workers: 3 }));
    expect(second.crashPlan).toEqual(first.crashPlan);
    expect(first.crashedWorker).toBe(`worker-${first.crashPlan.victim + 1}`);
    expect(second.crashedWorker).toBe(first.crashedWorker);
    expect(first.ok && second.ok).toBe(true);
  });
});
