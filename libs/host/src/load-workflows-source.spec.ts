/**
 * loadWorkflows for a caller other than the worker (the replay check's command): its errors name
 * what named the modules (a flag), not BATON_WORKFLOWS.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadWorkflows } from './workflows.js';

const HERE = dirname(fileURLToPath(import.meta.url));

describe('loadWorkflows with a source of its own', () => {
  it('loads the same definitions and names the given source in every error', async () => {
    const workflows = await loadWorkflows(
      ['../../../libs/testing/src/crash/crash-workflow.ts'],
      HERE,
      '--workflows',
    );
    expect(workflows.map((w) => `${w.name}@${w.version}`)).toEqual([
      'crash_chain@1',
      'crash_parent@1',
      'crash_keyed@1',
      'crash_limited@1',
      'crash_updatable@1',
    ]);
    await expect(loadWorkflows(['./config.ts'], HERE, '--workflows')).rejects.toThrow(
      /^--workflows: module '\.\/config\.ts' exports no workflow/,
    );
    await expect(loadWorkflows(['./missing.js'], HERE, '--workflows')).rejects.toThrow(
      /^--workflows: module '\.\/missing\.js' could not be loaded/,
    );
    await expect(
      loadWorkflows(['./duplicate-workflows.spec-helper.ts'], HERE, '--workflows'),
    ).rejects.toThrow(/^--workflows: workflow dup@1 has two different definitions/);
  });
});
