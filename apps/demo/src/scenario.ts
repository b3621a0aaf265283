/**
 * What the outside world does to the fleet: applicants apply (one of them twice), and reviewers
 * answer each application at a moment drawn from the seed, some before the run even reaches the
 * review step.
 */
import type { Client } from '@baton/client';
import type { ApplicantProfile, LoanApplication } from './applicants.js';
import { LOAN_WORKFLOW, REVIEW_SIGNAL, type LoanOutcome } from './loan-workflow.js';
import { delay } from './network.js';
import type { Reporter } from './progress.js';

/** Inputs of {@link startApplications}. */
export interface ScenarioOptions {
  client: Client;
  profiles: ApplicantProfile[];
  reporter: Reporter;
  /** The seeded generator the reviewers' delays are drawn from. */
  random: () => number;
  startIntervalMs: number;
  resultTimeoutMs: number;
  /** Called when a run's result is in. */
  onCompleted(runId: string): void;
}

/** What the scenario started. */
export interface Scenario {
  /** Run id per profile, in order. */
  runIds: string[];
  /** Result per profile, in order. */
  results: Promise<LoanOutcome>[];
  /** Whether starting one application again with its idempotency key returned the same run. */
  duplicateStartSameRunId: boolean;
  /** Clears review signals not sent yet (after a failure), so no timer outlives the demo. */
  cancelPendingSignals(): void;
}

/** A run reaches the review step after ~250 ms; reviewers answer within this window. */
const REVIEW_MIN_MS = 50;
const REVIEW_MAX_MS = 1_500;

/** Starts one run per profile, schedules its review signal, and starts one of them twice. */
export async function startApplications(options: ScenarioOptions): Promise<Scenario> {
  const { client, profiles, reporter } = options;
  const pendingSignals = new Set<NodeJS.Timeout>();
  const runIds: string[] = [];
  const results: Promise<LoanOutcome>[] = [];

  const review = (runId: string, profile: ApplicantProfile): void => {
    const timer = setTimeout(
      () => {
        pendingSignals.delete(timer);
        client.signal(runId, REVIEW_SIGNAL, profile.reviewerApproves).catch((err: unknown) => {
          reporter.log(`sending the review of ${runId} failed: ${(err as Error).message}`);
        });
      },
      REVIEW_MIN_MS + options.random() * (REVIEW_MAX_MS - REVIEW_MIN_MS),
    );
    pendingSignals.add(timer);
  };

  for (const profile of profiles) {
    const { applicantId } = profile.application;
    const handle = await client.start<LoanApplication, LoanOutcome>(LOAN_WORKFLOW, profile.application, {
      idempotencyKey: `loan-${applicantId}`,
    });
    runIds.push(handle.runId);
    const result = handle.result({ timeoutMs: options.resultTimeoutMs });
    // Observed here for the progress display; the caller awaits (and reports) the same promise.
    result.then(
      () => options.onCompleted(handle.runId),
      () => undefined,
    );
    results.push(result);
    review(handle.runId, profile);
    await delay(options.startIntervalMs);
  }

  // An applicant double-clicks "submit": the same idempotency key must yield the same run.
  const again = profiles[Math.floor(profiles.length / 3)];
  let duplicateStartSameRunId = false;
  if (again) {
    const key = `loan-${again.application.applicantId}`;
    const first = runIds[profiles.indexOf(again)];
    // The second submission carries an edited amount: the key, not the payload, names the run,
    // so the run must keep the first submission's input (the bus or the store drops the second start).
    const edited = { ...again.application, amount: again.application.amount + 1 };
    const second = await client.start(LOAN_WORKFLOW, edited, { idempotencyKey: key });
    await second.result({ timeoutMs: options.resultTimeoutMs }).catch(() => undefined);
    const stored = await client.describe(second.runId);
    duplicateStartSameRunId =
      second.runId === first && (stored.input as LoanApplication).amount === again.application.amount;
    reporter.log(
      `duplicate start of ${key}: ${second.runId} ${duplicateStartSameRunId ? '(the same run)' : `(DIFFERENT from ${first})`}`,
    );
  }

  return {
    runIds,
    results,
    duplicateStartSameRunId,
    cancelPendingSignals: () => {
      for (const timer of pendingSignals) clearTimeout(timer);
      pendingSignals.clear();
    },
  };
}
