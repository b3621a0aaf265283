import { describe, expect, it } from 'vitest';
import { decodeMessage } from './codec.js';
import {
  cancelMessage,
  resumeMessage,
  signalMessage,
  startMessage,
  wakeMessage,
  type OutgoingRunMessage,
} from './run-messages.js';

const decoded = (message: OutgoingRunMessage): unknown => decodeMessage(message.data);

describe('run message constructors', () => {
  it('give a start its run-id dedup id and key, and stamp when it was enqueued', () => {
    const message = startMessage({ runId: 'r1', workflow: 'wf', version: 2, input: { a: 1 }, enqueuedAt: 7 });
    expect(message.options).toEqual({ msgId: 'start:r1', key: 'r1' });
    expect(decoded(message)).toEqual({
      kind: 'start',
      runId: 'r1',
      workflow: 'wf',
      version: 2,
      input: { a: 1 },
      enqueuedAt: 7,
    });
    const before = Date.now();
    const stamped = decoded(startMessage({ runId: 'r1', workflow: 'wf', version: 2 })) as {
      enqueuedAt: number;
    };
    expect(stamped.enqueuedAt).toBeGreaterThanOrEqual(before);
  });

  it('deduplicate a signal by its signal id', () => {
    const message = signalMessage({ runId: 'r1', name: 'go', payload: true, signalId: 's1' });
    expect(message.options).toEqual({ msgId: 'signal:r1:s1', key: 'r1' });
    expect(decoded(message)).toEqual({
      kind: 'signal',
      runId: 'r1',
      name: 'go',
      payload: true,
      signalId: 's1',
    });
  });

  it('never deduplicate a cancel, resume or wake, and keep only reaps and timer wakes local', () => {
    expect(cancelMessage('r1', 'stop').options).toEqual({ key: 'r1' });
    expect(resumeMessage('r1', 'reaped', 5).options).toEqual({ key: 'r1', local: true });
    expect(resumeMessage('r1', 'handoff', 5).options).toEqual({ key: 'r1', local: false });
    expect(resumeMessage('r1', 'retry', 5).options).toEqual({ key: 'r1', local: false });
    expect(wakeMessage('r1', 'timer').options).toEqual({ key: 'r1', local: true });
    expect(wakeMessage('r1', 'signal').options).toEqual({ key: 'r1', local: false });
    expect(decoded(resumeMessage('r1', 'reaped', 5))).toEqual({
      kind: 'resume',
      runId: 'r1',
      reason: 'reaped',
      since: 5,
    });
    expect(decoded(wakeMessage('r1', 'cancel'))).toEqual({ kind: 'wake', runId: 'r1', reason: 'cancel' });
  });
});
