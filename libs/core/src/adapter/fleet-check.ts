/**
 * What every store does the same way with a worker report, done once by `checkedStore`
 * (checked-store.ts) before the store adapter is asked: check it (one ConfigError naming the field,
 * before anything is written) and bring it to its one stored form (workflows by name, versions
 * ascending and each once), so every store lists exactly the same thing.
 */
import {
  MAX_REPORTED_RUNS,
  type ReportedEncryption,
  type WorkerReport,
  type WorkflowVersions,
} from './contracts/fleet.js';
import { ConfigError } from '../shared/errors.js';

function fail(field: string, problem: string): never {
  throw new ConfigError(`worker report: ${field} ${problem}`);
}

function text(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0)
    fail(field, `is ${describe(value)}; give a non-empty string`);
  // No store keeps a NUL in a key or a text column (Postgres refuses it outright).
  if (value.includes('\u0000')) fail(field, `is ${describe(value)}; it must not contain a NUL character`);
  return value;
}

function whole(field: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    fail(field, `is ${describe(value)}; give a whole number ≥ ${min}`);
  return value;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value.includes('\u0000') ? JSON.stringify(value) : `'${value}'`;
  if (value === undefined) return 'missing';
  return JSON.stringify(value) ?? String(value);
}

/** The report checked and normalized; ConfigError naming the first wrong field. */
export function checkWorkerReport(report: WorkerReport): WorkerReport {
  if (typeof report !== 'object' || report === null)
    throw new ConfigError(`worker report is ${describe(report)}; give an object`);
  if (!Array.isArray(report.workflows)) fail('workflows', `is ${describe(report.workflows)}; give an array`);
  const byName = new Map<string, Set<number>>();
  report.workflows.forEach((wf: WorkflowVersions, i) => {
    const name = text(`workflows[${i}].name`, wf?.name);
    if (!Array.isArray(wf.versions) || wf.versions.length === 0)
      fail(`workflows[${i}].versions`, `is ${describe(wf.versions)}; give at least one version`);
    const versions = byName.get(name) ?? new Set<number>();
    wf.versions.forEach((v, j) => versions.add(whole(`workflows[${i}].versions[${j}]`, v, 1)));
    byName.set(name, versions);
  });
  if (typeof report.draining !== 'boolean')
    fail('draining', `is ${describe(report.draining)}; give true or false`);
  const lastRenewalAt =
    report.lastRenewalAt === null ? null : whole('lastRenewalAt', report.lastRenewalAt, 0);
  return {
    workerId: text('workerId', report.workerId),
    host: text('host', report.host),
    pid: whole('pid', report.pid, 0),
    batonVersion: text('batonVersion', report.batonVersion),
    workflows: [...byName.keys()]
      .sort()
      .map((name) => ({ name, versions: [...byName.get(name)!].sort((a, b) => a - b) })),
    startedAt: whole('startedAt', report.startedAt, 0),
    lastRenewalAt,
    runsHeld: whole('runsHeld', report.runsHeld, 0),
    concurrency: whole('concurrency', report.concurrency, 1),
    draining: report.draining,
    ...(report.runs !== undefined && { runs: checkRuns(report.runs) }),
    ...(report.readsGroupJournal === true && { readsGroupJournal: true }),
    ...(report.encryption !== undefined && { encryption: checkEncryption(report.encryption) }),
  };
}

function checkRuns(runs: string[]): string[] {
  if (!Array.isArray(runs)) fail('runs', `is ${describe(runs)}; give an array of run ids or leave it out`);
  if (runs.length > MAX_REPORTED_RUNS)
    fail(
      'runs',
      `lists ${runs.length} run ids; give at most ${MAX_REPORTED_RUNS} (runsHeld keeps the count)`,
    );
  return [...new Set(runs.map((id, i) => text(`runs[${i}]`, id)))].sort();
}

function checkEncryption(encryption: ReportedEncryption): ReportedEncryption {
  if (typeof encryption !== 'object' || encryption === null)
    fail('encryption', `is ${describe(encryption)}; give an object or leave it out`);
  if (!Array.isArray(encryption.keys) || encryption.keys.length === 0)
    fail('encryption.keys', `is ${describe(encryption.keys)}; give at least one key id`);
  if (typeof encryption.allowsPlaintext !== 'boolean')
    fail('encryption.allowsPlaintext', `is ${describe(encryption.allowsPlaintext)}; give true or false`);
  return {
    activeKey: text('encryption.activeKey', encryption.activeKey),
    keys: encryption.keys.map((id, i) => text(`encryption.keys[${i}]`, id)),
    allowsPlaintext: encryption.allowsPlaintext,
  };
}

/** `ttlMs` checked: a whole number of ms, at least 1. */
export function checkReportTtl(ttlMs: number): number {
  if (typeof ttlMs !== 'number' || !Number.isSafeInteger(ttlMs) || ttlMs < 1)
    throw new ConfigError(`worker report: ttlMs is ${describe(ttlMs)}; give a whole number of ms ≥ 1`);
  return ttlMs;
}

/** `keepMs` (how long a departed worker is kept) checked: a whole number of ms, at least 0. */
export function checkDepartedKeep(keepMs: number): number {
  if (typeof keepMs !== 'number' || !Number.isSafeInteger(keepMs) || keepMs < 0)
    throw new ConfigError(
      `departed worker: keepMs is ${describe(keepMs)}; give a whole number of ms ≥ 0 (0 keeps none)`,
    );
  return keepMs;
}
