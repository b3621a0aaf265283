/**
 * A workflow module for config.spec.ts: `dup@1` defined twice with different code (refused), and
 * `same@1` exported three times as one object (accepted).
 */
import { defineWorkflow } from '@baton/core';

export const same = defineWorkflow({ name: 'same', version: 1, run: async () => 'same' });
export const all = [same];
export default same;

export const dupFirst = defineWorkflow({ name: 'dup', version: 1, run: async () => 'first' });
export const dupSecond = defineWorkflow({ name: 'dup', version: 1, run: async () => 'second' });
