/**
 * The loan-approval workflow of the seed story: verify identity, pull credit (a paid,
 * non-idempotent call), check compliance, wait for a human reviewer, issue the decision (a
 * non-idempotent database write).
 *
 * The workflow is built per worker by {@link createLoanWorkflow}, because each worker reaches the
 * external systems through its own {@link NetworkLink} (so a crash cuts it off). Every instance
 * has the same name, version and step order, which is all replay needs.
 */
import { defineActivity, defineSignal, defineWorkflow, type WorkflowDefinition } from '@baton/core';
import type { ComplianceResult, Decision, LoanApplication } from './applicants.js';
import type { CreditReport, DecisionRow, ExternalSystems } from './fake-systems.js';
import type { NetworkLink } from './network.js';

/**
 * Registered name of the workflow. The scenario starts runs by this `{ name, version }` (typed
 * by its type arguments), as a producer without the workflow's code would: each worker builds
 * its own instance of the definition.
 */
export const LOAN_WORKFLOW = { name: 'loan_approval', version: 1 } as const;

/** The signal a reviewer sends; its payload is `true` to approve. Shared by workflow and client. */
export const REVIEW_SIGNAL = defineSignal<boolean>('human_review');

/** What a run returns. */
export interface LoanOutcome {
  applicantId: string;
  decision: Decision;
  creditScore: number;
  reasons: string[];
  decisionId: string;
}

/** Activities give up an attempt after this long; far above their 20-150 ms latency. */
const ACTIVITY_TIMEOUT_MS = 5_000;

/** Builds the activities and the workflow for one worker, wired to the systems through `link`. */
export function createLoanWorkflow(
  systems: ExternalSystems,
  link: NetworkLink,
): WorkflowDefinition<LoanApplication, LoanOutcome> {
  // Read-only: repeating it after a crash costs nothing, so it is journaled only on completion.
  const verifyIdentity = defineActivity({
    name: 'verify_identity',
    timeoutMs: ACTIVITY_TIMEOUT_MS,
    run: (application: LoanApplication, io) =>
      link.call(io.signal, io.idempotencyKey, () => systems.identity.verify(application, io.idempotencyKey)),
  });

  // A hard pull costs money and shows on the applicant's file: ActivityStarted is journaled
  // first, and a resume that finds it without a completion asks the bureau before pulling again.
  const pullCredit = defineActivity({
    name: 'pull_credit',
    idempotent: false,
    checkpoint: true,
    timeoutMs: ACTIVITY_TIMEOUT_MS,
    run: (input: { applicantId: string }, io): Promise<CreditReport> =>
      link.call(io.signal, io.idempotencyKey, () =>
        systems.bureau.pull(input.applicantId, io.runId, io.idempotencyKey),
      ),
    reconcile: (_input, io): Promise<CreditReport | undefined> =>
      link.call(io.signal, io.idempotencyKey, () => systems.bureau.lookup(io.idempotencyKey)),
  });

  // A pure computation on journaled inputs; a re-run yields the same answer.
  const complianceCheck = defineActivity({
    name: 'compliance_check',
    timeoutMs: ACTIVITY_TIMEOUT_MS,
    run: (input: { application: LoanApplication; creditScore: number }, io): Promise<ComplianceResult> =>
      link.call(io.signal, io.idempotencyKey, () =>
        systems.compliance.check(input.application, input.creditScore, io.idempotencyKey),
      ),
  });

  // No reconcile hook on purpose: an in-doubt write is simply re-run with the same idempotency
  // key, and the database's unique index on that key absorbs it.
  const issueDecision = defineActivity({
    name: 'issue_decision',
    idempotent: false,
    checkpoint: true,
    timeoutMs: ACTIVITY_TIMEOUT_MS,
    run: (row: Omit<DecisionRow, 'decisionId'>, io): Promise<DecisionRow> =>
      link.call(io.signal, io.idempotencyKey, () => systems.loanDb.recordDecision(row, io.idempotencyKey)),
  });

  return defineWorkflow({
    ...LOAN_WORKFLOW,
    run: async (ctx, application: LoanApplication): Promise<LoanOutcome> => {
      const identity = await ctx.run(verifyIdentity, application);
      const credit = await ctx.run(pullCredit, { applicantId: application.applicantId });
      const compliance = await ctx.run(complianceCheck, { application, creditScore: credit.score });
      // Every application goes to a human; the run suspends (holding no worker) until they answer.
      const reviewerApproves = await ctx.waitForSignal(REVIEW_SIGNAL, { timeout: '1m' });

      const reasons = [...compliance.reasons];
      if (!identity.verified) reasons.push('identity not verified');
      if (!reviewerApproves) reasons.push('rejected by reviewer');
      const decision: Decision = reasons.length === 0 ? 'approved' : 'rejected';
      const row = await ctx.run(issueDecision, {
        applicantId: application.applicantId,
        runId: ctx.runId,
        decision,
      });
      return {
        applicantId: application.applicantId,
        decision,
        creditScore: credit.score,
        reasons,
        decisionId: row.decisionId,
      };
    },
  });
}
