/**
 * The group-commit probe on the real NATS and Redis, tiny: both modes journal every step, read
 * every run's entries back, and count what they sent. Speed is measured by `npm run
 * bench:group-commit`, never asserted here.
 */
import { describe, expect, it } from 'vitest';
import { natsTestUrl, redisTestUrl } from '@baton/testing/servers';
import { groupCommitProbe } from './group-commit-probe.js';

describe('group-commit probe (real NATS + Redis)', () => {
  it('journals every step both ways, reads every run back, and counts records and store calls', async () => {
    const result = await groupCommitProbe({
      natsUrl: natsTestUrl(),
      redisUrl: redisTestUrl(),
      runs: 20,
      steps: 3,
      resumeSample: 5,
    });
    const [perStep, group] = result.modes;
    expect(perStep).toMatchObject({
      mode: 'per-step',
      steps: 60,
      publishes: 60,
      storeCalls: 0,
      entriesPerRecord: 1,
    });
    expect(group).toMatchObject({ mode: 'group', steps: 60 });
    // Entries of several runs share records, and each record is fenced by at least one store call.
    expect(group!.publishes).toBeLessThan(60);
    expect(group!.entriesPerRecord).toBeGreaterThan(1);
    expect(group!.storeCalls).toBeGreaterThanOrEqual(group!.publishes);
    for (const mode of result.modes) {
      expect(mode.stepLatency.count).toBe(60);
      expect(mode.resume.latency.count).toBe(5);
      expect(mode.resume.bytesPerRun.p50).toBeGreaterThan(0);
    }
    // A resume in group mode reads other runs' entries too: that is its cost.
    expect(group!.resume.bytesPerRun.p50).toBeGreaterThan(perStep!.resume.bytesPerRun.p50);
  }, 60_000);
});
