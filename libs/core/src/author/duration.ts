/** Durations: a number of milliseconds, or a string such as `'250ms'`, `'30s'`, `'10m'`, `'3d'`. */
import { ConfigError } from '../shared/errors.js';

export type Duration = number | `${number}${'ms' | 's' | 'm' | 'h' | 'd'}`;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Converts a Duration to milliseconds; `what` names the option in the error for a bad value. */
export function toMs(value: Duration | string, what = 'duration'): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) {
      throw new ConfigError(`${what} must be a non-negative number of milliseconds, got ${value}`);
    }
    return value;
  }
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(value);
  if (!match) {
    throw new ConfigError(
      `${what} '${value}' is not a duration; use milliseconds or e.g. '500ms', '30s', '10m', '2h', '3d'`,
    );
  }
  return Math.round(Number(match[1]) * UNIT_MS[match[2]!]!);
}
