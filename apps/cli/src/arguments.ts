/** Parsing of argument values the commands share: a workflow reference, a JSON flag. */
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
