/**
 * Which project a spec file runs in, by its name alone: the naming rules `vitest.config.ts` builds
 * its projects from and `.ci/test-times.mjs` reports by. Plain data and one function, no vitest
 * import, so a script run by Node (which strips the types) reads the same rules.
 *
 * - `parallel`: unit specs and integration specs on namespaces of their own, two files at a time.
 * - `paired`, two files at a time after `parallel`: specs that start servers or worker fleets of
 *   their own, spend most of their time waiting on them (an election, a lease running out, a
 *   replacement's start) and assert outcomes only (nothing lost, nothing twice, fencing), never how
 *   soon: `*.cluster.int.spec.ts` start server clusters on ports no other spec uses and kill,
 *   freeze or cut off their nodes; `*.fleet.int.spec.ts` run worker processes and SIGKILL or
 *   SIGSTOP them (the crash matrix's faults, the crash scenarios).
 * - `serial`, one file at a time, last: `*.serial.int.spec.ts`, whose faults are timed against
 *   fleets or servers of their own: a SIGTERMed worker must stop starting work within 500 ms, a
 *   rollout's hand-offs, a rate limit's windows, a browser, the benchmarks' workloads. On this
 *   2-core machine a neighbour stretched such waits until a SIGTERM check failed.
 */
export type ProjectName = 'parallel' | 'paired' | 'serial';

/** The file-name endings of each project but `parallel`, which takes every other spec. */
export const PROJECT_SUFFIXES = {
  paired: ['.cluster.int.spec.ts', '.fleet.int.spec.ts'],
  serial: ['.serial.int.spec.ts'],
} as const satisfies Record<Exclude<ProjectName, 'parallel'>, readonly string[]>;

/** Files run at once within each project. */
export const PROJECT_WORKERS: Record<ProjectName, number> = { parallel: 2, paired: 2, serial: 1 };

/** Projects in the order they run. */
export const PROJECT_ORDER: readonly ProjectName[] = ['parallel', 'paired', 'serial'];

/** The project a spec file (any path) belongs to. */
export function projectOf(file: string): ProjectName {
  if (PROJECT_SUFFIXES.serial.some((suffix) => file.endsWith(suffix))) return 'serial';
  if (PROJECT_SUFFIXES.paired.some((suffix) => file.endsWith(suffix))) return 'paired';
  return 'parallel';
}
