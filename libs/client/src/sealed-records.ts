/**
 * A run record's sealed values (docs/integrity.md, "Values outside the journal") as the client
 * hands them out: opened with the client's keys where it holds them, left in their sealed form
 * (`{ "$baton.sealed": 1, key, frame }`, shown by the CLI and console as `protected (key k1)`)
 * where it does not. A value that fails verification raises, as every integrity failure does.
 */
import type { SerializedError } from '@baton/core';
import type { RunRecord } from '@baton/core/adapter';
import {
  openError,
  openResult,
  openValue,
  type PayloadProtection,
  MissingKeyError,
} from '@baton/core/runtime';

/** What `open` returns, or `sealed` as it is when this client lacks the key it names. */
export function unlessKeyMissing<T>(open: () => T, sealed: T): T {
  try {
    return open();
  } catch (err) {
    if (err instanceof MissingKeyError) return sealed;
    throw err;
  }
}

/** `run` with its input, result and error opened where `protection` holds their key. */
export function openedRecord<R extends RunRecord>(run: R, protection: PayloadProtection): R {
  const { runId } = run;
  const out: R = {
    ...run,
    input: unlessKeyMissing(() => openValue(run.input, runId, 'run input', protection), run.input),
  };
  if (run.result !== undefined) {
    out.result = unlessKeyMissing(() => openResult(run.result, runId, protection), run.result);
  }
  if (run.error !== undefined) out.error = openedError(run, protection);
  return out;
}

/** `run`'s error opened where `protection` holds its key, else as stored (`protected (key k1)`). */
export function openedError(run: RunRecord, protection: PayloadProtection): SerializedError | undefined {
  return unlessKeyMissing(() => openError(run.error, run.runId, protection), run.error);
}
