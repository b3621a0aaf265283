/**
 * Replays a journal recorded by an earlier build (fixtures/order-v1.journal.json). If a change to
 * the executor or the codec made old journals replay differently, in-flight runs would break on
 * deploy; this test is the tripwire.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeEntries, encodeEntries } from '../codec.js';
import type { JournalEntry } from '../../shared/journal.js';
import { defineActivity, defineWorkflow } from '../../author/workflow.js';
import { executions, orderV1 } from './fixture-workflow.spec-helper.js';
import { execute, testHost } from './test-host.spec-helper.js';

interface Recording {
  runId: string;
  input: { items: number[] };
  entries: JournalEntry[];
}

const recording = JSON.parse(
  readFileSync(new URL('./fixtures/order-v1.journal.json', import.meta.url), 'utf8'),
) as Recording;
const completed = recording.entries.find((e) => e.type === 'RunCompleted') as { result: unknown };

describe('a recorded journal', () => {
  it('replays to the recorded result without running or journaling anything', async () => {
    executions.length = 0;
    const host = testHost(recording.runId, 3);
    const history = recording.entries.filter((e) => e.type !== 'RunCompleted');
    const { outcome } = await execute(orderV1, recording.input, history, host);
    expect(outcome).toEqual({ kind: 'completed', result: completed.result });
    expect(executions).toEqual([]);
    expect(host.journal).toEqual([]);
  });

  it('survives the codec unchanged', () => {
    expect(decodeEntries(encodeEntries(recording.entries), recording.runId)).toEqual(recording.entries);
  });

  it('refuses code that reorders its steps, naming the first step that differs', async () => {
    const reserve = defineActivity({ name: 'reserve', run: () => ({ reservation: 'x' }) });
    const reordered = defineWorkflow({
      name: 'fixture_order',
      version: 1,
      run: async (ctx) => {
        ctx.uuid();
        return ctx.run(reserve, null);
      },
    });
    const { outcome } = await execute(
      reordered,
      recording.input,
      recording.entries,
      testHost(recording.runId, 3),
    );
    expect(outcome).toMatchObject({ kind: 'failed', nonDeterminism: true });
    if (outcome.kind === 'failed') {
      expect(outcome.error.message).toMatch(
        /step #1 replayed as activity:reserve but the journal recorded activity:price/,
      );
    }
  });
});
