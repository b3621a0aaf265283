/**
 * Decides when to crash a worker, and crashes it.
 *
 * The crash should land mid-flight: once the bureau has pulled credit for a share of the runs (or
 * a deadline passed), the busiest live worker is severed. If no worker owns a run at that instant
 * the watch waits for one, because a crash that takes no runs down proves nothing.
 */
import type { CreditBureau } from './fake-systems.js';
import type { Fleet } from './fleet.js';
import type { Reporter } from './progress.js';

/** When to crash. */
export interface CrashPlan {
  runs: number;
  /** Crash once credit was pulled for this share of the runs... */
  pulledShare: number;
  /** ...or this many ms after start(), whichever comes first. */
  deadlineMs: number;
}

const POLL_MS = 10;
/** Past the deadline, give up waiting for a worker that owns runs after this long. */
const MAX_WAIT_FOR_OWNER_MS = 5_000;

export class CrashWatch {
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private crashTime: number | undefined;

  constructor(
    private readonly fleet: Fleet,
    private readonly bureau: CreditBureau,
    private readonly reporter: Reporter,
    private readonly plan: CrashPlan,
  ) {}

  /** Starts polling for the crash condition. */
  start(): void {
    this.startedAt = Date.now();
    this.timer = setInterval(() => this.poll(), POLL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** When the crash happened (epoch ms), if it did. */
  get crashedAt(): number | undefined {
    return this.crashTime;
  }

  /** Crashes now if the condition never came (every run finished first). */
  crashNow(): void {
    this.stop();
    if (this.crashTime === undefined) this.crash(true);
  }

  private poll(): void {
    if (this.crashTime !== undefined) return;
    const elapsed = Date.now() - this.startedAt;
    const pulled = this.bureau.applicantsPulled();
    if (pulled < this.plan.pulledShare * this.plan.runs && elapsed < this.plan.deadlineMs) return;
    this.crash(elapsed > this.plan.deadlineMs + MAX_WAIT_FOR_OWNER_MS);
  }

  private crash(evenIfIdle: boolean): void {
    const victim = this.fleet.busiest();
    if (!victim || (victim.worker.ownedRuns.length === 0 && !evenIfIdle)) return;
    this.stop();
    this.crashTime = Date.now();
    const owned = this.fleet.crash(victim);
    const pulled = this.bureau.applicantsPulled();
    this.reporter.log(
      `>>> ${victim.id} crashed at ${((this.crashTime - this.startedAt) / 1000).toFixed(2)} s ` +
        `(credit pulled for ${pulled}/${this.plan.runs} applicants): transport, store and network severed, ` +
        `no stop(), no hand-off. It owned ${owned.length} runs; their leases must expire and be reaped.`,
    );
  }
}
