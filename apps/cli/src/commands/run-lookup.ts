/** Finding a run by id, as every `runs` command that takes one does (runs.ts, runs-tail.ts). */
import type { Client, RunDescription } from '@baton/client';
import { NotFoundError } from '@baton/core';
import { RefusedError } from '../errors.js';

/** The run, or a refusal naming the id and what to do. */
export async function described(client: Client, runId: string): Promise<RunDescription> {
  try {
    return await client.describe(runId);
  } catch (err) {
    if (err instanceof NotFoundError)
      throw new RefusedError(
        `no run ${runId} in this store: check the id (runs list), and that BATON_STORE_URL and its ` +
          'prefix or schema are the workers’ (a run whose start is still queued is not known yet)',
      );
    throw err;
  }
}
