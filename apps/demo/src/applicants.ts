/**
 * The demo's applicants and the business rules that decide their loans.
 *
 * Everything here is a pure function of a seed, so the demo can compute each run's expected
 * decision from the input and the review signal it sent, without asking the workers.
 */

/** What an applicant submits: the workflow's input. */
export interface LoanApplication {
  applicantId: string;
  name: string;
  annualIncome: number;
  amount: number;
}

/** An applicant as the demo knows them: the application, the bureau's file, the reviewer's call. */
export interface ApplicantProfile {
  application: LoanApplication;
  /** The score the fake credit bureau holds on file for this applicant. */
  creditScore: number;
  /** The payload of the `human_review` signal the demo sends for this applicant. */
  reviewerApproves: boolean;
}

/** The outcome of the compliance rules. */
export interface ComplianceResult {
  ok: boolean;
  reasons: string[];
}

export type Decision = 'approved' | 'rejected';

/** The lowest credit score the lender accepts. */
export const MIN_CREDIT_SCORE = 620;
/** The largest loan, as a share of annual income, the lender accepts. */
export const MAX_LOAN_TO_INCOME = 0.4;

const FIRST_NAMES = ['Ada', 'Bo', 'Chen', 'Dana', 'Emeka', 'Fatima', 'Goran', 'Hana', 'Ivo', 'Jun'];
const LAST_NAMES = ['Okafor', 'Lindqvist', 'Moreau', 'Tanaka', 'Silva', 'Novak', 'Haddad', 'Kowalski'];

/** A small seeded PRNG (mulberry32): the same seed always yields the same applicants. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Generates `count` applicants from `seed`; ids run from `A-1000`. */
export function makeApplicants(count: number, seed: number): ApplicantProfile[] {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const profiles: ApplicantProfile[] = [];
  for (let i = 0; i < count; i++) {
    const annualIncome = 1_000 * Math.round(30 + random() * 120);
    profiles.push({
      application: {
        applicantId: `A-${1000 + i}`,
        name: `${pick(FIRST_NAMES)} ${pick(LAST_NAMES)}`,
        annualIncome,
        // Mostly sensible requests, with a tail that breaks the loan-to-income rule.
        amount: 500 * Math.round((annualIncome * (0.05 + random() * 0.37)) / 500),
      },
      creditScore: Math.round(600 + random() * 240),
      reviewerApproves: random() < 0.85,
    });
  }
  return profiles;
}

/** The lender's compliance rules: a pure function, shared by the fake engine and the checker. */
export function assessCompliance(application: LoanApplication, creditScore: number): ComplianceResult {
  const reasons: string[] = [];
  if (creditScore < MIN_CREDIT_SCORE) reasons.push(`credit score ${creditScore} below ${MIN_CREDIT_SCORE}`);
  if (application.amount > application.annualIncome * MAX_LOAN_TO_INCOME) {
    reasons.push(`amount ${application.amount} above ${MAX_LOAN_TO_INCOME * 100}% of income`);
  }
  return { ok: reasons.length === 0, reasons };
}

/** The decision a correct run must reach for this applicant, given the review signal sent. */
export function expectedDecision(profile: ApplicantProfile): Decision {
  const compliance = assessCompliance(profile.application, profile.creditScore);
  return compliance.ok && profile.reviewerApproves ? 'approved' : 'rejected';
}
