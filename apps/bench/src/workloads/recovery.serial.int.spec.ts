import { describe, expect, it } from 'vitest';
import { kafkaTestUrl, natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { runRecovery } from './recovery.js';

// A smoke test of the workload's mechanics; how fast recovery is, is for `npm run bench` to say.
describe('recovery workload', () => {
  it(
    'measures one SIGKILL and one SIGTERM on nats+redis, every run completing',
    { timeout: 180_000 },
    async () => {
      const result = await runRecovery({
        transport: 'nats',
        store: 'redis',
        kills: 1,
        runs: 20,
        urls: {
          natsUrl: natsTestUrl(),
          kafkaUrl: kafkaTestUrl(),
          redisUrl: redisTestUrl(),
          postgresUrl: postgresTestUrl(),
        },
      });
      // runRecovery throws when a run is lost, failed or duplicated its effects.
      expect(result).toMatchObject({ transport: 'nats', store: 'redis', kills: 1, terms: 1 });
      expect(result.killToResume.count).toBeGreaterThanOrEqual(1);
      expect(result.termToResume.count).toBeGreaterThanOrEqual(1);
    },
  );
});
