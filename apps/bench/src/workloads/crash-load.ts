/**
 * What the crash-based workloads (recovery, fleet) share: a load of runs kept unfinished while
 * workers are killed, and the rule that a run which broke an invariant reports no numbers.
 */
import { isFinishedRun } from '@baton/client';
import type { CrashWorld } from '@baton/testing/crash';

/** The shape of each run a load enqueues (steps and their delays). */
export interface LoadShape {
  steps: number;
  minDelayMs: number;
  maxDelayMs: number;
}

/** Keeps `target` runs unfinished: finished ones are replaced at each top-up. */
export class SteadyLoad {
  private open: string[] = [];

  constructor(
    private readonly world: CrashWorld,
    private readonly target: number,
    private readonly shape: LoadShape,
  ) {}

  async topUp(): Promise<void> {
    const records = await Promise.all(this.open.map((runId) => this.world.env.store.runs.get(runId)));
    this.open = this.open.filter((_, i) => !isFinishedRun(records[i]?.status));
    const missing = this.target - this.open.length;
    if (missing > 0) this.open.push(...(await this.world.enqueue(missing, this.shape)).map((r) => r.runId));
  }
}

/** Throws, naming each broken invariant and its first findings, when the world's runs broke any. */
export async function refuseBrokenRuns(world: CrashWorld, label: string): Promise<void> {
  const violations = Object.entries(await world.violations()).filter(([, found]) => found.length > 0);
  if (violations.length === 0) return;
  const described = violations.map(
    ([invariant, found]) => `${invariant} (${found.length}): ${found.slice(0, 5).join('; ')}`,
  );
  throw new Error(`${label}: the run broke invariants, no numbers reported:\n${described.join('\n')}`);
}
