/**
 * The CLI spec's workflows plus one the first workers lack: a start of `cli_late` taken by a
 * worker without it is dead-lettered (`unknown-workflow`); once workers with this module run,
 * the letter can be redriven and the run completes.
 */
import { defineWorkflow } from '@baton/core';

export { cliSteps, cliWait } from './cli-workflows.spec-helper.js';

export const cliLate = defineWorkflow({
  name: 'cli_late',
  version: 1,
  run: async (_ctx, input: { n: number }) => input.n * 2,
});
