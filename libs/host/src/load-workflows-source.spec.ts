/**
 * loadWorkflows for a caller other than the worker (the replay check's command): its errors name
 * what named the modules (a flag), not BATON_WORKFLOWS. And loadModules, a server's loader: the
 * webhooks beside the workflows.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadModules, loadWorkflows } from './workflows.js';

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

describe("loadModules, a server's modules", () => {
  it('collects workflows and webhooks; a module of webhooks only is one; a name twice is refused', async () => {
    const loaded = await loadModules(
      ['../../../libs/testing/src/crash/crash-workflow.ts', './webhook-modules.spec-helper.ts'],
      HERE,
      '--workflows',
    );
    expect(loaded.workflows.map((w) => w.name)).toContain('crash_chain');
    expect(loaded.webhooks.map((w) => w.name).sort()).toEqual(['github', 'stripe']);
    // The worker's loader takes workflows only: a module of webhooks alone is no workflow module.
    await expect(loadWorkflows(['./webhook-modules.spec-helper.ts'], HERE, '--workflows')).rejects.toThrow(
      /exports no workflow; export the result of defineWorkflow\(\)/,
    );
    await expect(loadModules(['./config.ts'], HERE, '--workflows')).rejects.toThrow(
      /^--workflows: module '\.\/config\.ts' exports no workflow and no webhook/,
    );
    await expect(loadModules(['./clashing-webhooks.spec-helper.ts'], HERE, '--workflows')).rejects.toThrow(
      /^--workflows: webhook 'clash' has two different definitions, module '\.\/clashing-webhooks\.spec-helper\.ts' export 'first' and .* export 'second'/,
    );
  });
});
