/**
 * The agent crash scenario's workflow module (libs/testing/src/crash/agent-scenario.ts), loaded by
 * real worker processes through BATON_WORKFLOWS: the support agent of this example, its tools and
 * its model recorded in the crash suite's Postgres ledger (BATON_LEDGER_URL, BATON_LEDGER_SCHEMA),
 * which outlives the workers the scenario kills.
 *
 * - The model records each call by the idempotency key it receives in its `Idempotency-Key`
 *   header, as a provider would log it: an execution that starts when the call does and finishes
 *   when its stream was read to the end (a call cut by a SIGKILL never finishes).
 * - Each tool call is an execution of its key; `refund_payment` and `send_email` apply their
 *   effect under it too, once per key (a repeat would count in the effect's `repeats`).
 *
 * Its tokens stream slowly enough (TOKEN_DELAY_MS) that the scenario kills the worker mid-turn.
 * Three turns per run: a conversation of four continues as new once, after its kill.
 */
import { defineAgent } from './agent.js';
import { scriptedModel } from './scripted-model.js';
import { memorySystems, SUPPORT_INSTRUCTIONS, supportTools } from './support-agent.js';
import { workerLedger } from '@baton/testing/ledger';

/** Milliseconds between two tokens: a turn streams for about two seconds, the window the kill must land in. */
export const TOKEN_DELAY_MS = 100;

/** The run and the step of an idempotency key (`<runId>:<seq>`). */
function partsOf(key: string): { runId: string; step: number } {
  const at = key.lastIndexOf(':');
  return { runId: key.slice(0, at), step: Number(key.slice(at + 1)) };
}

/** Tools that change something: their result's effect is applied once per key. */
const EFFECTS: Record<string, (result: unknown) => number> = {
  refund_payment: (result) => (result as { cents: number }).cents,
  send_email: () => 1,
};

const tools = Object.fromEntries(
  Object.entries(supportTools(memorySystems())).map(([name, spec]) => [
    name,
    {
      ...spec,
      run: async (input: never, io: { idempotencyKey: string }) => {
        const { runId, step } = partsOf(io.idempotencyKey);
        const execution = await workerLedger().startExecution(io.idempotencyKey, runId, step);
        const result = await spec.run(input, io as never);
        const effect = EFFECTS[name];
        if (effect)
          await workerLedger().applyEffect(io.idempotencyKey, runId, step, effect(result), execution);
        else await workerLedger().finishExecution(execution);
        return result;
      },
    },
  ]),
);

export const crashAgent = defineAgent({
  name: 'crash_agent',
  model: () =>
    scriptedModel({
      tokenDelayMs: TOKEN_DELAY_MS,
      onCall: async (call) => {
        const key = call.headers?.['Idempotency-Key'];
        if (key === undefined) throw new Error('the model was called without an Idempotency-Key header');
        const { runId, step } = partsOf(key);
        const execution = await workerLedger().startExecution(key, runId, step);
        return { done: () => workerLedger().finishExecution(execution) };
      },
    }),
  instructions: SUPPORT_INSTRUCTIONS,
  tools,
  turnsPerRun: 3,
  carryTurns: 1,
  approvalTimeout: '10m',
}).workflow;
