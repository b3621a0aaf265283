/**
 * The end-of-demo summary and its invariants.
 *
 * Every invariant is decided from the outside: the run results the client reads from the store,
 * the external systems' ledgers, and the transport's dead letters. The workers' own events only
 * tell the story of who resumed what (and "at least one run was resumed" needs them, since that
 * is a claim about the workers, not about the world).
 */
import type { CrashPlan } from './crash-watch.js';
import { expectedDecision, type ApplicantProfile } from './applicants.js';
import type { ExternalSystems } from './fake-systems.js';
import type { LoanOutcome } from './loan-workflow.js';
import type { FleetStats } from './stats.js';

/** One invariant and whether it held. */
export interface Invariant {
  name: string;
  ok: boolean;
  detail: string;
}

/** Calls that reached a system, against distinct idempotency keys. */
export interface ExecutionCount {
  activity: string;
  calls: number;
  uniqueKeys: number;
}

/** Everything the demo measured; `ok` is true only when every invariant held. */
export interface DemoSummary {
  ok: boolean;
  runs: number;
  completed: number;
  approved: number;
  rejected: number;
  /** Runs whose result or loan-database row differs from the expected decision. */
  wrongDecisions: string[];
  duplicateStartSameRunId: boolean;
  /** The crash the seed chose: which worker (fleet index) and after how many credit pulls. */
  crashPlan: CrashPlan;
  crashedWorker: string | undefined;
  crashAtMs: number | undefined;
  /** Runs the crashed worker was executing when it died. */
  ownedAtCrash: number;
  /** Runs claimed from a `resume` message with reason `reaped`. */
  resumedAfterCrash: number;
  /** How many of those the crashed worker owned when it died. */
  resumedOwnedByCrashed: number;
  /**
   * Leases the live workers reported lost: a healthy survivor loses none. (The crashed worker's
   * own timers still tick in this process, so it notices its leases lapse and stops those runs.)
   */
  leasesLostByLiveWorkers: number;
  executions: ExecutionCount[];
  totalExecutions: number;
  /** Effects in the world: hard pulls plus loan decisions. */
  uniqueEffects: number;
  /** In-doubt steps settled by asking the bureau (`reconcile`), without pulling again. */
  reconciled: number;
  /** Re-executions of non-idempotent steps that repeated an idempotency key and changed nothing. */
  absorbedReexecutions: number;
  duplicatedEffects: number;
  /** Requests for a step sent after its completion was journaled. */
  reexecutedAfterCompletion: number;
  duplicatedEffectGroups: string[];
  deadLetters: number;
  wallTimeMs: number;
  warnings: string[];
  invariants: Invariant[];
}

/** What the demo gathered by the end of a run. */
export interface SummaryInput {
  profiles: ApplicantProfile[];
  /** Run id per profile, in the same order. */
  runIds: string[];
  results: PromiseSettledResult<LoanOutcome>[];
  systems: ExternalSystems;
  stats: FleetStats;
  crashPlan: CrashPlan;
  crashedWorker: string | undefined;
  crashAtMs: number | undefined;
  ownedAtCrash: string[];
  duplicateStartSameRunId: boolean;
  deadLetters: number;
  /** Requests for a step sent after its completion was journaled (must be 0). */
  reexecutedAfterCompletion: number;
  wallTimeMs: number;
}

/** Computes the summary and checks every invariant. */
export function summarize(input: SummaryInput): DemoSummary {
  const { profiles, results, systems, stats } = input;
  const runs = profiles.length;
  const outcomes = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const wrongDecisions = checkDecisions(input);

  const { identity, bureau, compliance, loanDb } = systems;
  const executions: ExecutionCount[] = [
    { activity: 'verify_identity', calls: identity.ledger.calls, uniqueKeys: identity.ledger.uniqueKeys },
    { activity: 'pull_credit', calls: bureau.ledger.calls, uniqueKeys: bureau.ledger.uniqueKeys },
    {
      activity: 'compliance_check',
      calls: compliance.ledger.calls,
      uniqueKeys: compliance.ledger.uniqueKeys,
    },
    { activity: 'issue_decision', calls: loanDb.ledger.calls, uniqueKeys: loanDb.ledger.uniqueKeys },
  ];
  const duplicateSources = [
    ['hard pull per applicant', bureau.pullsByApplicant],
    ['hard pull per run', bureau.pullsByRun],
    ['decision per applicant', loanDb.decisionsByApplicant],
    ['decision per run', loanDb.decisionsByRun],
  ] as const;
  const duplicatedEffectGroups = duplicateSources.flatMap(([what, index]) =>
    index.duplicatedGroups.map((group) => `${what}: ${group}`),
  );
  const duplicatedEffects = duplicateSources.reduce((sum, [, index]) => sum + index.duplicates, 0);

  const owned = new Set(input.ownedAtCrash);
  const reaped = [...stats.reapedClaims.keys()];
  const resumedAfterCrash = reaped.length;
  const completed = outcomes.length;

  const invariants: Invariant[] = [
    {
      name: 'every run completed',
      ok: completed === runs,
      detail: `${completed}/${runs}${failureDetail(results, input.runIds)}`,
    },
    {
      name: 'every decision is the expected one',
      ok: wrongDecisions.length === 0 && loanDb.rows().length === runs,
      detail:
        wrongDecisions.length === 0
          ? `${loanDb.rows().length} decision rows for ${runs} applicants`
          : wrongDecisions.slice(0, 5).join('; '),
    },
    {
      name: 'no duplicated effects',
      ok: duplicatedEffects === 0,
      detail: duplicatedEffects === 0 ? '0' : duplicatedEffectGroups.slice(0, 5).join('; '),
    },
    {
      name: 'no completed activity executed again',
      ok: input.reexecutedAfterCompletion === 0,
      detail: String(input.reexecutedAfterCompletion),
    },
    { name: 'no dead letters', ok: input.deadLetters === 0, detail: String(input.deadLetters) },
    {
      name: 'a duplicate start (edited payload) returns the same, unchanged run',
      ok: input.duplicateStartSameRunId,
      detail: input.duplicateStartSameRunId ? 'same runId' : 'a different runId',
    },
    {
      name: 'runs of the crashed worker resumed elsewhere',
      ok: input.crashedWorker !== undefined && resumedAfterCrash > 0,
      detail: input.crashedWorker === undefined ? 'no worker was crashed' : `${resumedAfterCrash} resumed`,
    },
  ];

  return {
    ok: invariants.every((i) => i.ok),
    runs,
    completed,
    approved: outcomes.filter((o) => o.decision === 'approved').length,
    rejected: outcomes.filter((o) => o.decision === 'rejected').length,
    wrongDecisions,
    duplicateStartSameRunId: input.duplicateStartSameRunId,
    crashPlan: input.crashPlan,
    crashedWorker: input.crashedWorker,
    crashAtMs: input.crashAtMs,
    ownedAtCrash: input.ownedAtCrash.length,
    resumedAfterCrash,
    resumedOwnedByCrashed: reaped.filter((runId) => owned.has(runId)).length,
    leasesLostByLiveWorkers: [...stats.workers]
      .filter(([id]) => id !== input.crashedWorker)
      .reduce((sum, [, counters]) => sum + counters.leasesLost, 0),
    executions,
    totalExecutions: executions.reduce((sum, e) => sum + e.calls, 0),
    uniqueEffects: bureau.hardPulls + loanDb.rows().length,
    reconciled: bureau.lookupHits,
    absorbedReexecutions: bureau.ledger.repeatedCalls + loanDb.ledger.repeatedCalls,
    duplicatedEffects,
    reexecutedAfterCompletion: input.reexecutedAfterCompletion,
    duplicatedEffectGroups,
    deadLetters: input.deadLetters,
    wallTimeMs: input.wallTimeMs,
    warnings: stats.warnings,
    invariants,
  };
}

/** Compares each run's result, and the loan database's row, with the expected decision. */
function checkDecisions(input: SummaryInput): string[] {
  const rowsByApplicant = new Map(input.systems.loanDb.rows().map((row) => [row.applicantId, row]));
  const wrong: string[] = [];
  input.profiles.forEach((profile, i) => {
    const { applicantId } = profile.application;
    const expected = expectedDecision(profile);
    const result = input.results[i];
    if (result?.status === 'fulfilled' && result.value.decision !== expected) {
      wrong.push(`${applicantId}: result ${result.value.decision}, expected ${expected}`);
    }
    const row = rowsByApplicant.get(applicantId);
    if (!row) wrong.push(`${applicantId}: no decision in the loan database`);
    else if (row.decision !== expected)
      wrong.push(`${applicantId}: database says ${row.decision}, expected ${expected}`);
    else if (row.runId !== input.runIds[i]) wrong.push(`${applicantId}: decided by run ${row.runId}`);
  });
  return wrong;
}

function failureDetail(results: PromiseSettledResult<LoanOutcome>[], runIds: string[]): string {
  const failed = results.flatMap((r, i) =>
    r.status === 'rejected' ? [`${runIds[i]}: ${(r.reason as Error)?.message ?? String(r.reason)}`] : [],
  );
  return failed.length === 0 ? '' : ` (${failed.slice(0, 3).join('; ')})`;
}

/** The summary as printable lines. */
export function formatSummary(s: DemoSummary): string[] {
  const crash =
    s.crashedWorker === undefined
      ? 'no worker crashed'
      : `${s.crashedWorker} crashed at ${seconds(s.crashAtMs ?? 0)} owning ${s.ownedAtCrash} runs`;
  const lines = [
    '',
    `Summary (${crash})`,
    row('runs completed', `${s.completed}/${s.runs}  (approved ${s.approved}, rejected ${s.rejected})`),
    row('duplicate start', s.duplicateStartSameRunId ? 'same runId returned' : 'DIFFERENT runId returned'),
    row('resumed after crash', resumedLine(s)),
    row('leases lost', `${s.leasesLostByLiveWorkers} by the surviving workers`),
    row(
      'activity executions',
      `${s.totalExecutions} calls reached the outside world for ${s.executions.reduce((n, e) => n + e.uniqueKeys, 0)} distinct keys`,
    ),
    ...s.executions.map((e) => row(`  ${e.activity}`, `${e.calls} calls, ${e.uniqueKeys} keys`)),
    row('unique effects', `${s.uniqueEffects} (hard pulls + loan decisions)`),
    row('in-doubt absorbed', `${s.absorbedReexecutions} re-executions absorbed by idempotency keys`),
    row('in-doubt reconciled', `${s.reconciled} pulls found by reconcile, not pulled again`),
    row('duplicated effects', String(s.duplicatedEffects)),
    row('re-run after completion', String(s.reexecutedAfterCompletion)),
    row('dead letters', String(s.deadLetters)),
    row('wall time', seconds(s.wallTimeMs)),
    '',
    ...s.invariants.map((i) => `  ${i.ok ? 'ok  ' : 'FAIL'}  ${i.name}: ${i.detail}`),
  ];
  if (!s.ok && s.warnings.length > 0) lines.push('', 'Worker warnings:', ...s.warnings.map((w) => `  ${w}`));
  lines.push('', s.ok ? 'All invariants held.' : 'Some invariants FAILED (see above).');
  return lines;
}

function resumedLine(s: DemoSummary): string {
  const line =
    `${s.resumedAfterCrash} runs claimed via resume/reaped ` +
    `(${s.resumedOwnedByCrashed} of the ${s.ownedAtCrash} the crashed worker owned`;
  // A lease the dead worker acquired whose reply it never received: it owned the run in the
  // store without knowing it, so ownedRuns missed it but the reaper did not.
  const unseen = s.resumedAfterCrash - s.resumedOwnedByCrashed;
  return unseen > 0 ? `${line}, ${unseen} more it had claimed but never heard back about)` : `${line})`;
}

const row = (label: string, value: string): string => `  ${label.padEnd(22)} ${value}`;
const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
