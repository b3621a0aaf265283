/**
 * Every BATON_* variable of the worker process (docs/configuration.md's table), set to a bad value: the process
 * ends with exit code 1 and one fatal line that names the variable, shows the value (a URL's
 * secret masked, a key never) and says what is expected. Runs the process's lifecycle function
 * in this process (as main.ts does), with its log captured; process.int.spec.ts runs the real
 * process for the rows the adapters and the Worker check.
 */
import { describe, expect, it } from 'vitest';
import { BAD_CONFIGURATIONS, startWith } from './bad-configurations.spec-helper.js';

describe('worker process configuration errors', () => {
  it.each(BAD_CONFIGURATIONS.map((row) => [row.variable, row] as const))(
    '%s: exit 1 with one fatal line naming the variable, its value and what is expected',
    async (_name, row) => {
      const { code, lines } = await startWith(row.env);
      const fatal = lines.filter((l) => l.level >= 60).map((l) => l.msg);
      expect(code).toBe(1);
      expect(fatal).toHaveLength(1);
      expect(fatal[0]).toContain(row.variable);
      expect(fatal[0]).toMatch(row.says);
      expect(fatal[0]).not.toMatch(
        /worker process failed|natsTransport:|kafka transport:|postgresStore:|redisStore:/,
      );
      if (row.hides !== undefined) expect(JSON.stringify(lines)).not.toContain(row.hides);
    },
  );
});
