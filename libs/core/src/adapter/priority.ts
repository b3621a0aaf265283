/**
 * Run priorities: the levels a run can be started at, and how a run queue with one lane per level
 * chooses which lane a worker claims from (docs/priorities.md).
 *
 * The policy, exactly: a worker's claims follow a repeating cycle of eight slots,
 * {@link PRIORITY_CYCLE} = high, high, high, normal, high, high, normal, low. Each claim takes the
 * next slot; the slot's level is claimed from when it has a message waiting, else the highest level
 * that has one. So while every level has work, high gets 5 claims in 8, normal 2 and low 1; a level
 * with no work gives its slots to the others (nothing waits while anything is claimable); and the
 * lowest level with work waiting gets at least one claim in every eight a worker makes, however
 * much higher-priority work keeps arriving.
 *
 * A priority is not part of a run's history: it only decides which waiting message a worker takes
 * first, never what the run does, so it is not journaled and replay never sees it.
 */
import { ConfigError } from '../shared/errors.js';

/** The levels, highest first. */
export const RUN_PRIORITIES = ['high', 'normal', 'low'] as const;

/** A run's priority: which lane of the run queue its start message waits in. */
export type RunPriority = (typeof RUN_PRIORITIES)[number];

/** The priority of a run started without one; its messages travel exactly as before priorities. */
export const DEFAULT_RUN_PRIORITY: RunPriority = 'normal';

/**
 * The claim cycle (see the module doc): high 5, normal 2, low 1 in every 8 claims while all three
 * have work. Why these numbers: high must clearly win (5 in 8), yet a sustained high load leaves
 * normal a quarter of the claims and low an eighth, so neither starves.
 */
export const PRIORITY_CYCLE: readonly RunPriority[] = [
  'high',
  'high',
  'high',
  'normal',
  'high',
  'high',
  'normal',
  'low',
];

/**
 * `value` as a {@link RunPriority}; undefined stays undefined (the default applies). Anything else
 * is refused with a ConfigError naming the value, where it came from, and the allowed levels.
 */
export function checkRunPriority(value: unknown, where: string): RunPriority | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && (RUN_PRIORITIES as readonly string[]).includes(value)) {
    return value as RunPriority;
  }
  throw new ConfigError(
    `${where}: priority ${JSON.stringify(value) ?? String(value)} is not a run priority; use one of ` +
      `${RUN_PRIORITIES.map((p) => `'${p}'`).join(', ')} (default '${DEFAULT_RUN_PRIORITY}')`,
  );
}

/** The rank of a level, 0 for the highest. */
export function priorityRank(priority: RunPriority): number {
  return RUN_PRIORITIES.indexOf(priority);
}

/**
 * How many of the next `count` claims, starting at cycle slot `position`, prefer each level.
 * `skipped` levels (known to be empty) give their slots to the highest level not skipped.
 */
export function planClaims(
  position: number,
  count: number,
  skipped: ReadonlySet<RunPriority> = new Set(),
): Record<RunPriority, number> {
  const plan: Record<RunPriority, number> = { high: 0, normal: 0, low: 0 };
  const fallback = RUN_PRIORITIES.find((p) => !skipped.has(p));
  for (let i = 0; i < count; i++) {
    const preferred = PRIORITY_CYCLE[(position + i) % PRIORITY_CYCLE.length]!;
    const level = skipped.has(preferred) && fallback !== undefined ? fallback : preferred;
    plan[level] += 1;
  }
  return plan;
}

/**
 * The lanes a bus transport sets up and reads. Its extra lanes are a stream or topic each, which a
 * restricted bus user must be granted before it may use them, so they are opt-in
 * (`priorityLanes: true`); without them the run queue is exactly what it was before priorities.
 */
export function laneLevels(priorityLanes: boolean): readonly RunPriority[] {
  return priorityLanes ? [DEFAULT_RUN_PRIORITY, 'high', 'low'] : [DEFAULT_RUN_PRIORITY];
}

/**
 * `value` checked as a priority ({@link checkRunPriority}) that this transport can carry: a level
 * other than `normal` on a transport without its priority lanes is refused, naming the option that
 * turns them on, rather than quietly claimed at `normal`.
 */
export function laneFor(value: unknown, priorityLanes: boolean, where: string, option: string): RunPriority {
  const priority = checkRunPriority(value, where) ?? DEFAULT_RUN_PRIORITY;
  if (priority !== DEFAULT_RUN_PRIORITY && !priorityLanes) {
    throw new ConfigError(
      `${where}: priority '${priority}' needs the transport's priority lanes, which are off; turn them ` +
        `on with ${option} on the workers first, then on the producers, once the bus users may use ` +
        `them (docs/priorities.md, "Rolling it out")`,
    );
  }
  return priority;
}
