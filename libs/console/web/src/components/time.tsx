/**
 * One way the console shows a time: relative to now (`3 min ago`), with the absolute local time
 * and the browser's time zone on hover and in the element's `datetime` (for a screen reader and
 * for copying).
 */
import { relativeText, timeText, TIME_ZONE } from '../hooks.js';

export function Time(props: { ms: number | null | undefined; now?: number }) {
  const { ms } = props;
  if (ms === null || ms === undefined) return <span>-</span>;
  return (
    <time dateTime={new Date(ms).toISOString()} title={`${timeText(ms)} (${TIME_ZONE})`}>
      {relativeText(ms, props.now)}
    </time>
  );
}
