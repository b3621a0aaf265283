/**
 * Decides which worker to crash and when, and crashes it.
 *
 * Both choices come from the seed alone ({@link planCrash}), so `--seed N` replays the same crash:
 * the chosen worker is severed once the bureau has pulled credit for the chosen number of
 * applicants, a point measured in the scenario's progress, not in time. If that worker owns no
 * run at that moment the watch waits for it to own one, because a crash that takes no runs down
 * proves nothing.
 */
import { seededRandom } from './applicants.js';
import type { CreditBureau } from './fake-systems.js';
import type { Fleet } from './fleet.js';
import type { Reporter } from './progress.js';

/** Which worker to crash, and when. */
export interface CrashPlan {
  runs: number;
  /** Index in the fleet of the worker to crash. */
  victim: number;
  /** Crash once credit was pulled for this many applicants. */
  afterPulled: number;
}

/** What the plan is drawn from; `pulledShare` fixes the crash point instead of drawing it. */
export interface CrashPlanInput {
  seed: number;
  runs: number;
  workers: number;
  pulledShare?: number;
}

/** The crash point is drawn from this share of the runs: late enough for runs at every stage. */
const SHARE_MIN = 0.25;
const SHARE_MAX = 0.5;
/**
 * Mixed into the seed so that the crash draws its own stream: the applicants' data may change
 * without moving the crash, and the other way round.
 */
const CRASH_STREAM = 0x63726173;

/** The crash a seed stands for: a pure function of its input, so the same seed crashes the same way. */
export function planCrash({ seed, runs, workers, pulledShare }: CrashPlanInput): CrashPlan {
  const random = seededRandom((seed ^ CRASH_STREAM) >>> 0);
  const victim = Math.floor(random() * workers);
  const share = pulledShare ?? SHARE_MIN + random() * (SHARE_MAX - SHARE_MIN);
  return { runs, victim, afterPulled: Math.max(1, Math.round(share * runs)) };
}

const POLL_MS = 10;
/** Past the crash point, give up waiting for the victim to own runs after this long. */
const MAX_WAIT_FOR_OWNER_MS = 5_000;

export class CrashWatch {
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private crashTime: number | undefined;
  /** When the crash point was reached (epoch ms), to bound the wait for the victim to own runs. */
  private pointReachedAt: number | undefined;

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
    if (this.bureau.applicantsPulled() < this.plan.afterPulled) return;
    this.pointReachedAt ??= Date.now();
    this.crash(Date.now() - this.pointReachedAt > MAX_WAIT_FOR_OWNER_MS);
  }

  private crash(evenIfIdle: boolean): void {
    const victim = this.fleet.members[this.plan.victim];
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
