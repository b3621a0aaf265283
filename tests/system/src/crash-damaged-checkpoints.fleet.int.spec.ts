/**
 * Crash scenario for unreadable checkpoints: real worker processes on NATS with Redis, then with
 * Postgres. One worker runs every run; in the middle it is frozen (SIGSTOP), the checkpoints of
 * its unfinished runs are damaged in the store (the newest of some, every one of the others), and
 * it is SIGKILLed. Two new workers resume the runs from an older checkpoint or from the journal.
 * Checked from the outside: every run ends with its right output, none loops, no completed
 * activity runs twice, nothing is dead-lettered, and every damaged run was resumed by a fallback.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CrashWorld, NO_VIOLATIONS } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import { damageCheckpoint } from './damage.spec-helper.js';

describe.each([
  { name: 'nats+redis', factory: crashEnvironment('redis') },
  { name: 'nats+postgres', factory: crashEnvironment('postgres') },
])('crash: damaged checkpoints on $name', ({ factory }) => {
  let world: CrashWorld | undefined;
  afterEach(async () => {
    await world?.dispose();
    world = undefined;
  });

  it(
    'ends every run, none loops and no completed activity runs twice when checkpoints are damaged as a worker is SIGKILLed',
    { timeout: 120_000 },
    async () => {
      // A checkpoint every two entries (one activity), so each run has several to fall back on.
      world = await CrashWorld.create(factory, {
        workerEnv: { BATON_CONCURRENCY: '30', BATON_CHECKPOINT_EVERY: '2' },
      });
      const w = world;
      const victim = await w.fleet.spawn();
      const runs = await w.enqueue(12, { steps: 8, minDelayMs: 100, maxDelayMs: 250 });
      // Runs in the middle, each with a few checkpoints behind it.
      const checkpointed = async (): Promise<number> => {
        let n = 0;
        for (const { runId } of runs) if ((await w.env.store.checkpoints.list(runId)).length >= 2) n++;
        return n;
      };
      for (const deadline = Date.now() + 30_000; (await checkpointed()) < runs.length / 2;) {
        if (Date.now() > deadline) throw new Error(`runs did not checkpoint:\n${w.fleet.describe()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      // Frozen first, so the damage below stays the newest data; killed once it is done.
      victim.signal('SIGSTOP');
      // The newest checkpoint of even seeds, every checkpoint of odd ones (the journal stands in).
      let damaged = 0;
      for (const { runId, input } of runs) {
        const seqs = (await w.env.store.checkpoints.list(runId)).map((s) => s.seq);
        const status = (await w.env.store.runs.get(runId))?.status;
        if (seqs.length === 0 || status === 'completed') continue;
        for (const seq of input.seed % 2 === 0 ? seqs.slice(-1) : seqs) {
          await damageCheckpoint(w.env.workerEnv, runId, seq);
        }
        damaged++;
      }
      victim.signal('SIGKILL');
      await Promise.all([w.fleet.spawn(), w.fleet.spawn()]);
      await w.waitForAll(90_000);

      expect(damaged).toBeGreaterThan(0);
      expect(await w.violations()).toEqual(NO_VIOLATIONS);
      for (const { runId } of runs) expect((await w.env.store.runs.get(runId))?.status).toBe('completed');
      const fellBack = w.fleet.all.flatMap((p) => p.logs.filter((l) => / cannot be read/.test(l.msg)));
      expect(fellBack.length).toBeGreaterThanOrEqual(damaged);
      console.log(
        `[crash: damaged checkpoints] ${damaged} runs damaged, ${fellBack.length} resumes from an older checkpoint or the journal`,
      );
    },
  );
});
