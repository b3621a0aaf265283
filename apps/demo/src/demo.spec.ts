import { describe, expect, it } from 'vitest';
import { startConsole } from '@baton/console';
import { runDemo } from './demo.js';

describe('loan-approval demo on the embedded default', () => {
  it('completes every run with the expected decision and no duplicated effect after a worker is crashed mid-run', async () => {
    const runs = 24;
    const summary = await runDemo({ runs, output: 'silent', seed: 1234 });

    const failed = summary.invariants.filter((i) => !i.ok).map((i) => `${i.name}: ${i.detail}`);
    expect(failed).toEqual([]);
    expect(summary.ok).toBe(true);

    expect(summary.completed).toBe(runs);
    expect(summary.approved + summary.rejected).toBe(runs);
    expect(summary.wrongDecisions).toEqual([]);

    // The crash took runs down, and the reapers of the surviving workers resumed them.
    expect(summary.crashedWorker).toMatch(/^worker-\d$/);
    expect(summary.ownedAtCrash).toBeGreaterThan(0);
    expect(summary.resumedAfterCrash).toBeGreaterThan(0);

    // The outside world's ledger: one hard pull and one decision per applicant, nothing twice.
    expect(summary.duplicatedEffects).toBe(0);
    expect(summary.reexecutedAfterCompletion).toBe(0);
    expect(summary.duplicatedEffectGroups).toEqual([]);
    expect(summary.uniqueEffects).toBe(2 * runs);
    expect(summary.deadLetters).toBe(0);
    expect(summary.duplicateStartSameRunId).toBe(true);

    // Every activity ran at least once per run; re-executions repeat a key, never add one.
    for (const execution of summary.executions) {
      expect(execution.uniqueKeys, execution.activity).toBe(runs);
      expect(execution.calls, execution.activity).toBeGreaterThanOrEqual(runs);
    }
  });

  it('keeps the fleet running for the console after the scenario (npm start -- --console)', async () => {
    let seen: { runs: number; live: string[]; epochs: number } | undefined;
    const summary = await runDemo({
      runs: 6,
      output: 'silent',
      seed: 99,
      keepFleetWith: async (client) => {
        // Port 0: the OS picks a free one; a real HTTP round trip through the console's API.
        const server = await startConsole({ client, options: { port: 0 }, env: {}, log: () => {} });
        try {
          const page = (await (await fetch(`${server.url}api/runs?limit=100`)).json()) as {
            runs: { runId: string; status: string }[];
          };
          const workers = (await (await fetch(`${server.url}api/workers`)).json()) as { workerId: string }[];
          const resumed = page.runs.find((r) => r.status === 'completed');
          const timeline = (await (
            await fetch(`${server.url}api/runs/${resumed!.runId}/timeline`)
          ).json()) as {
            timeline: { epochs: unknown[] };
          };
          seen = {
            runs: page.runs.length,
            live: workers.map((w) => w.workerId),
            epochs: timeline.timeline.epochs.length,
          };
        } finally {
          await server.close();
        }
      },
    });
    expect(summary.ok).toBe(true);
    expect(seen?.runs).toBe(6);
    // The crashed worker's report is no longer renewed; the two live ones are still running.
    expect(seen?.live.filter((id) => id !== summary.crashedWorker).length).toBeGreaterThanOrEqual(2);
    expect(seen?.epochs).toBeGreaterThanOrEqual(1);
  });
});
