/**
 * A quiet run-stream reader's wait on NATS (core's RunStreamLog.waitForRecord): a core
 * subscription to the stream's subject hears the next record as JetStream stores it, so a reader
 * waits without polling. Order of the steps, so that no record is missed: subscribe, flush (the
 * server holds the interest), then ask for the subject's last record; one already past
 * `afterPosition` (it landed before the interest) answers at once.
 */
import type { StreamRecordWait } from '@baton/core/adapter';
import type { TransportContext } from './context.js';
import { getStoredMessage } from './stream-reader.js';

export function natsStreamWait(context: (operation: string) => TransportContext): StreamRecordWait {
  return async (key, afterPosition, { timeoutMs, signal }) => {
    if (signal?.aborted === true) return;
    const ctx = context('runStreams.waitForRecord');
    const subject = ctx.layout.journalSubject(key);
    const { nc } = ctx.session;
    let wake: () => void = () => undefined;
    const heard = new Promise<void>((resolve) => (wake = resolve));
    const subscription = nc.subscribe(subject, { max: 1, callback: () => wake() });
    const timer = setTimeout(wake, timeoutMs);
    signal?.addEventListener('abort', wake, { once: true });
    try {
      await nc.flush();
      const last = await getStoredMessage(ctx, ctx.layout.journalStream, ctx.streams.journalReplicas, {
        last_by_subj: subject,
      }).catch(() => null);
      if (last !== null && last.seq > afterPosition) return;
      await heard;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', wake);
      subscription.unsubscribe();
    }
  };
}
