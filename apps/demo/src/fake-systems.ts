/**
 * Fake external systems the loan workflow talks to: an identity service, a credit bureau, a
 * compliance engine and the loan database.
 *
 * They are the outside world's ledger. The demo's invariants are checked against what these
 * systems saw (calls per idempotency key, effects per applicant and per run), never against
 * what the workers say they did.
 */
import {
  assessCompliance,
  type ComplianceResult,
  type Decision,
  type LoanApplication,
} from './applicants.js';

/** Counts the calls one system received, per idempotency key. */
export class CallLedger {
  private readonly byKey = new Map<string, number>();
  private total = 0;

  /** Records one call; returns true when this key was seen before (a re-execution). */
  record(idempotencyKey: string): boolean {
    const seen = this.byKey.get(idempotencyKey) ?? 0;
    this.byKey.set(idempotencyKey, seen + 1);
    this.total++;
    return seen > 0;
  }

  /** Every call that reached the system. */
  get calls(): number {
    return this.total;
  }

  /** Distinct idempotency keys: the executions that mattered. */
  get uniqueKeys(): number {
    return this.byKey.size;
  }

  /** Calls that repeated a key already seen: re-executions the key made harmless. */
  get repeatedCalls(): number {
    return this.total - this.byKey.size;
  }
}

/**
 * Which idempotency keys an effect was applied under, per group (an applicant, a run). More than
 * one key in a group means the effect happened twice: that is the bug the demo hunts for.
 */
export class EffectIndex {
  private readonly keysByGroup = new Map<string, Set<string>>();

  add(group: string, idempotencyKey: string): void {
    const keys = this.keysByGroup.get(group) ?? new Set<string>();
    keys.add(idempotencyKey);
    this.keysByGroup.set(group, keys);
  }

  /** Effects beyond the first in each group. */
  get duplicates(): number {
    let extra = 0;
    for (const keys of this.keysByGroup.values()) extra += keys.size - 1;
    return extra;
  }

  /** Groups that hold more than one key, for the failure report. */
  get duplicatedGroups(): string[] {
    return [...this.keysByGroup].filter(([, keys]) => keys.size > 1).map(([group]) => group);
  }
}

/**
 * Rows written once per idempotency key (a unique index on the key): a repeated key returns the
 * first row. Every first write is an effect, indexed per applicant and per run so duplicates show.
 */
export class WriteOnceTable<T> {
  readonly effectsByApplicant = new EffectIndex();
  readonly effectsByRun = new EffectIndex();
  private readonly rowsByKey = new Map<string, T>();

  /** `activity` names the effect in the per-run index (`<runId>/<activity>`). */
  constructor(private readonly activity: string) {}

  /** The row under `idempotencyKey`, written by `create(rowNumber)` if there is none yet. */
  write(idempotencyKey: string, applicantId: string, runId: string, create: (rowNumber: number) => T): T {
    const existing = this.rowsByKey.get(idempotencyKey);
    if (existing !== undefined) return existing;
    const row = create(this.rowsByKey.size + 1);
    this.rowsByKey.set(idempotencyKey, row);
    this.effectsByApplicant.add(applicantId, idempotencyKey);
    this.effectsByRun.add(`${runId}/${this.activity}`, idempotencyKey);
    return row;
  }

  get(idempotencyKey: string): T | undefined {
    return this.rowsByKey.get(idempotencyKey);
  }

  /** Every row, in insertion order. */
  rows(): T[] {
    return [...this.rowsByKey.values()];
  }
}

/** Confirms who an applicant is. Read-only, so repeating it is harmless. */
export class IdentityService {
  readonly ledger = new CallLedger();

  verify(application: LoanApplication, idempotencyKey: string): { verified: boolean; reference: string } {
    this.ledger.record(idempotencyKey);
    return { verified: true, reference: `idv-${application.applicantId}` };
  }
}

/** A credit report; every new pull is a hard pull that shows on the applicant's file. */
export interface CreditReport {
  pullId: string;
  applicantId: string;
  score: number;
}

/**
 * The credit bureau: each pull costs money and leaves a hard pull on the applicant's file. It
 * honours idempotency keys (a repeated key returns the first report) and can be asked whether a
 * pull under a key exists, which is what the workflow's `reconcile` hook does.
 */
export class CreditBureau {
  readonly ledger = new CallLedger();
  private readonly reports = new WriteOnceTable<CreditReport>('pull_credit');
  /** Hard pulls per applicant, and per (run, activity): more than one key in either is a duplicate. */
  readonly pullsByApplicant = this.reports.effectsByApplicant;
  readonly pullsByRun = this.reports.effectsByRun;
  private lookupCount = 0;
  private lookupHitCount = 0;

  constructor(private readonly scores: ReadonlyMap<string, number>) {}

  pull(applicantId: string, runId: string, idempotencyKey: string): CreditReport {
    this.ledger.record(idempotencyKey);
    return this.reports.write(idempotencyKey, applicantId, runId, (n) => {
      const score = this.scores.get(applicantId);
      if (score === undefined) throw new Error(`bureau has no file for applicant ${applicantId}`);
      return { pullId: `pull-${n}`, applicantId, score };
    });
  }

  /** The report pulled under this key, if any: a free read, not a pull. */
  lookup(idempotencyKey: string): CreditReport | undefined {
    this.lookupCount++;
    const report = this.reports.get(idempotencyKey);
    if (report) this.lookupHitCount++;
    return report;
  }

  /** Distinct hard pulls on record. */
  get hardPulls(): number {
    return this.reports.rows().length;
  }

  /** Applicants with at least one pull. */
  applicantsPulled(): number {
    return new Set(this.reports.rows().map((r) => r.applicantId)).size;
  }

  get lookups(): number {
    return this.lookupCount;
  }

  /** Lookups that found the pull: in-doubt steps settled without pulling again. */
  get lookupHits(): number {
    return this.lookupHitCount;
  }
}

/** Applies the lender's rules. A pure computation; counted so re-runs are visible. */
export class ComplianceEngine {
  readonly ledger = new CallLedger();

  check(application: LoanApplication, creditScore: number, idempotencyKey: string): ComplianceResult {
    this.ledger.record(idempotencyKey);
    return assessCompliance(application, creditScore);
  }
}

/** One row of the loan database. */
export interface DecisionRow {
  decisionId: string;
  applicantId: string;
  runId: string;
  decision: Decision;
}

/**
 * The loan database: decisions are written once per idempotency key (a unique index on it), so a
 * re-executed write returns the row already there instead of inserting a second decision.
 */
export class LoanDatabase {
  readonly ledger = new CallLedger();
  private readonly table = new WriteOnceTable<DecisionRow>('issue_decision');
  readonly decisionsByApplicant = this.table.effectsByApplicant;
  readonly decisionsByRun = this.table.effectsByRun;

  recordDecision(row: Omit<DecisionRow, 'decisionId'>, idempotencyKey: string): DecisionRow {
    this.ledger.record(idempotencyKey);
    return this.table.write(idempotencyKey, row.applicantId, row.runId, (n) => ({
      decisionId: `dec-${n}`,
      ...row,
    }));
  }

  /** Every decision row, in insertion order. */
  rows(): DecisionRow[] {
    return this.table.rows();
  }
}

/** The outside world of one demo run, shared by every worker. */
export interface ExternalSystems {
  identity: IdentityService;
  bureau: CreditBureau;
  compliance: ComplianceEngine;
  loanDb: LoanDatabase;
}

/** Creates the systems; the bureau holds a credit file per applicant. */
export function createExternalSystems(creditScores: ReadonlyMap<string, number>): ExternalSystems {
  return {
    identity: new IdentityService(),
    bureau: new CreditBureau(creditScores),
    compliance: new ComplianceEngine(),
    loanDb: new LoanDatabase(),
  };
}
