/**
 * Parsing of argument values the commands share: a workflow reference, a JSON flag, a time span.
 * A time span is read as the API reads one (`@baton/core`'s Duration and toMs: `500ms`, `30s`,
 * `2m`, `1.5h`, `3d`), and a bare number is milliseconds, as every such flag took before.
 */
import { toMs } from '@baton/core';
import { UsageError } from './errors.js';

/**
 * `name@version` → its parts. `minVersion` is the lowest version the command accepts (a run's
 * start takes 0, so that start-checks.ts refuses it naming the rule the workers apply; a schedule
 * names a registered version, from 1).
 */
export function workflowRef(text: string, minVersion: number): { name: string; version: number } {
  const at = text.lastIndexOf('@');
  const version = at > 0 ? Number(text.slice(at + 1)) : NaN;
  if (at <= 0 || !Number.isInteger(version) || version < minVersion)
    throw new UsageError(`'${text}' is not name@version; give the workflow as e.g. orders@2`);
  return { name: text.slice(0, at), version };
}

/** The JSON value of `flag`; a UsageError saying how to quote it otherwise. */
export function parseJson(flag: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(
      `${flag} is not JSON (${(err as Error).message}); quote it, e.g. ${flag} '{"id":7}'`,
    );
  }
}

/**
 * A time span flag in milliseconds: a Duration as the API takes it (`2m`, `30s`, `1h`, `500ms`,
 * `3d`) or a bare number of milliseconds, at least `min`. A UsageError naming the flag, with an
 * example, otherwise.
 */
export function parseDuration(flag: string, value: string, min = 0): number {
  const text = value.trim();
  let ms = NaN;
  try {
    ms = /^\d+$/.test(text) ? Number(text) : toMs(text, flag);
  } catch {
    // Reported below, naming the flag and the forms it takes.
  }
  if (!(ms >= min))
    throw new UsageError(
      `${flag} '${value}' is not a duration${min > 0 ? ` of ${min} ms or more` : ''}; ` +
        `give e.g. ${flag} 2m (or 500ms, 30s, 1h, 3d, or a number of milliseconds)`,
    );
  return ms;
}
