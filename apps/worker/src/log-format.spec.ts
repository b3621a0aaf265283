/**
 * BATON_LOG_FORMAT: the pretty line (time, level, message, the run's fields first, the rest as
 * key=value, colour only when allowed), the default by terminal, and pino writing through it.
 */
import { stripVTControlCharacters } from 'node:util';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { logFormatOf } from '@baton/host';
import { chosenLogFormat, colourAllowed, prettyDestination, prettyLine } from './log-format.js';

const AT = Date.parse('2026-11-25T10:00:00.123Z');

describe('the pretty log line', () => {
  const line = JSON.stringify({
    level: 40,
    time: AT,
    pid: 4242,
    hostname: 'pod-7',
    name: 'baton-worker',
    trace_id: '0af7651916cd43dd8448eb211c80319c',
    span_id: 'b7ad6b7169203331',
    attempts: 3,
    seq: 3,
    workflow: 'orders@2',
    runId: 'k_9fQ2',
    err: { type: 'Error', message: 'card declined', stack: 'Error: card declined\n    at charge' },
    reason: 'two words',
    msg: 'run failed',
  });

  it('reads time, level, message, the run id, workflow and step, then the other fields', () => {
    expect(prettyLine(line, false)).toBe(
      '10:00:00.123 WARN  run failed runId=k_9fQ2 workflow=orders@2 step=3 attempts=3 ' +
        'err="Error: card declined" reason="two words"\n',
    );
  });

  it("leaves out the process's pid, host, name and the trace ids; one line, even for an error with a stack", () => {
    const text = prettyLine(line, false);
    for (const hidden of ['4242', 'pod-7', 'baton-worker', '0af76519', 'b7ad6b71', 'at charge'])
      expect(text).not.toContain(hidden);
    expect(text.split('\n')).toEqual([expect.any(String), '']);
  });

  it('colours the level only when asked to', () => {
    const plain = prettyLine(line, false);
    expect(stripVTControlCharacters(plain)).toBe(plain);
    const coloured = prettyLine(line, true);
    expect(coloured).toContain('\u001b[33mWARN \u001b[0m');
    expect(stripVTControlCharacters(coloured)).toBe(plain);
  });

  it('passes on a line that is not a JSON object as it is', () => {
    expect(prettyLine('not json\n', true)).toBe('not json\n');
    expect(prettyLine('[1,2]\n', false)).toBe('[1,2]\n');
  });

  it('is what a pino logger writes through the pretty destination, one line per event', () => {
    const written: string[] = [];
    const logger = pino(
      { name: 'baton-worker' },
      prettyDestination({ write: (t) => written.push(t) }, false),
    );
    logger.info({ runId: 'r-1', workflow: 'orders@1' }, 'run completed');
    logger.child({ component: 'worker' }).warn({ leases: 2 }, 'lease renewal failed');
    expect(written).toHaveLength(2);
    expect(written[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}run completed runId=r-1 workflow=orders@1\n$/);
    expect(written[1]).toMatch(/ WARN {2}lease renewal failed component=worker leases=2\n$/);
  });
});

describe('the log format chosen', () => {
  it('is pretty at a terminal and JSON elsewhere when BATON_LOG_FORMAT is unset or blank', () => {
    expect(chosenLogFormat({}, true)).toBe('pretty');
    expect(chosenLogFormat({}, false)).toBe('json');
    expect(chosenLogFormat({ BATON_LOG_FORMAT: ' ' }, false)).toBe('json');
  });

  it('is the one BATON_LOG_FORMAT names, terminal or not', () => {
    expect(chosenLogFormat({ BATON_LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(chosenLogFormat({ BATON_LOG_FORMAT: 'pretty' }, false)).toBe('pretty');
    expect(chosenLogFormat({ BATON_LOG_FORMAT: 'PRETTY' }, false)).toBe('pretty');
  });

  it('is JSON for a bad value, which the configuration check refuses naming the variable', () => {
    expect(chosenLogFormat({ BATON_LOG_FORMAT: 'xml' }, true)).toBe('json');
    expect(() => logFormatOf('xml', true)).toThrow(/BATON_LOG_FORMAT is 'xml'; use one of json, pretty/);
  });

  it('has colour only at a terminal and never with NO_COLOR set', () => {
    expect(colourAllowed({}, true)).toBe(true);
    expect(colourAllowed({}, false)).toBe(false);
    expect(colourAllowed({ NO_COLOR: '1' }, true)).toBe(false);
    // no-color.org: an empty NO_COLOR does not count.
    expect(colourAllowed({ NO_COLOR: '' }, true)).toBe(true);
  });
});
