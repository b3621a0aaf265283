/**
 * A run's streams (docs/streams.md) on its page: the names it has written, and a live view of the
 * one chosen, fed by an EventSource on the console's `/api/runs/<id>/streams/<name>` (the server's
 * run-stream-events.ts, the HTTP API's events). Text chunks are shown run together as written,
 * other values one JSON line each; a reset (an activity's step started again, after a failed
 * attempt or a worker's crash) draws a divider and greys and strikes that step's earlier output,
 * which it supersedes; the end says whether the stream was closed or the run finished. A dropped
 * connection is resumed by the browser after the last item shown (Last-Event-ID): nothing twice.
 * A stream the server could not read further (its `error` event: the bus or the store failed
 * mid-stream), or a reconnection the server refused, is opened again here after the last item
 * shown (`?from=`), after 1, 2, 4… s (at most 15 s between), at most {@link MAX_REOPENS} times
 * in a row without an item coming; only then does the view stop and ask for a reload.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { get, runPath } from '../api.js';
import { POLL_MS, usePolling } from '../hooks.js';

/** One item of a run stream, as the events carry it (@baton/core's StreamItem). */
type StreamItem =
  | { seq: number; kind: 'chunk'; value: unknown; step?: number; attempt?: number }
  | { seq: number; kind: 'reset'; step: number; attempt: number }
  | { seq: number; kind: 'close' };

/** What is shown of an item: a chunk marked once a reset supersedes it. */
type Shown = StreamItem & { superseded?: boolean };

/** The `end` event's data. */
interface StreamEnd {
  reason: 'closed' | 'run-finished';
  status?: string;
}

type ViewState =
  | { kind: 'connecting' }
  | { kind: 'live' }
  | { kind: 'reconnecting' }
  | { kind: 'reopening'; why: string; inSeconds: number }
  | { kind: 'ended'; end: StreamEnd }
  | { kind: 'failed'; message: string };

/** The most items the view keeps; older ones are dropped (and counted). */
const MAX_SHOWN = 5_000;
/** Reopenings in a row with no item between before the view gives up (about 2 minutes). */
export const MAX_REOPENS = 10;
const REOPEN_FIRST_MS = 1_000;
const REOPEN_MAX_MS = 15_000;

export function RunStreams(props: { runId: string; finished: boolean }) {
  const { runId, finished } = props;
  // A finished run writes no new stream: its names are asked for far less often.
  const names = usePolling(
    `streams:${runId}`,
    () => get<{ streams: string[] }>(runPath(runId, '/streams')),
    finished ? 30_000 : POLL_MS,
  );
  const [chosen, setChosen] = useState<string | undefined>(undefined);
  const streams = names.data?.streams ?? [];
  if (streams.length === 0) return null;
  const selected = chosen !== undefined && streams.includes(chosen) ? chosen : streams[0]!;
  return (
    <section aria-labelledby="streams-title">
      <h2 id="streams-title">Streams</h2>
      <div class="button-row" role="group" aria-label="Streams">
        {streams.map((name) => (
          <button key={name} type="button" aria-pressed={name === selected} onClick={() => setChosen(name)}>
            {name}
          </button>
        ))}
      </div>
      <StreamView key={selected} runId={runId} name={selected} />
    </section>
  );
}

function parsed<T>(event: Event): T {
  return JSON.parse((event as MessageEvent<string>).data) as T;
}

function StreamView(props: { runId: string; name: string }) {
  const { runId, name } = props;
  const items = useRef<Shown[]>([]);
  const dropped = useRef(0);
  const [, setVersion] = useState(0);
  const [state, setState] = useState<ViewState>({ kind: 'connecting' });
  const box = useRef<HTMLPreElement>(null);
  const stick = useRef(true);

  useEffect(() => {
    items.current = [];
    dropped.current = 0;
    setState({ kind: 'connecting' });
    let source: EventSource | undefined;
    let reopenTimer: ReturnType<typeof setTimeout> | undefined;
    let lastSeq = 0;
    // Reopenings since the last item came; reset by every item.
    let reopens = 0;
    let stopped = false;
    const shown = (): void => setVersion((v) => v + 1);
    const add = (item: Shown): void => {
      lastSeq = Math.max(lastSeq, item.seq);
      reopens = 0;
      items.current.push(item);
      if (items.current.length > MAX_SHOWN) {
        items.current.shift();
        dropped.current++;
      }
      shown();
    };
    /** Opens the stream again after the last item shown, later, unless it was reopened too often. */
    const reopen = (why: string): void => {
      source?.close();
      if (stopped) return;
      if (reopens >= MAX_REOPENS) {
        setState({
          kind: 'failed',
          message: `${why}; tried ${MAX_REOPENS} times: reload the page to try again`,
        });
        return;
      }
      const delay = Math.min(REOPEN_FIRST_MS * 2 ** reopens, REOPEN_MAX_MS);
      reopens++;
      setState({ kind: 'reopening', why, inSeconds: Math.round(delay / 1000) });
      reopenTimer = setTimeout(open, delay);
    };
    function open(): void {
      const path = runPath(runId, `/streams/${encodeURIComponent(name)}`);
      const es = new EventSource(lastSeq > 0 ? `${path}?from=${lastSeq + 1}` : path);
      source = es;
      es.addEventListener('open', () => setState({ kind: 'live' }));
      es.addEventListener('chunk', (e) => add(parsed<StreamItem>(e)));
      es.addEventListener('reset', (e) => {
        const reset = parsed<Extract<StreamItem, { kind: 'reset' }>>(e);
        // The step's earlier chunks are superseded by the attempt that starts here.
        for (const item of items.current)
          if (item.kind === 'chunk' && item.step === reset.step) item.superseded = true;
        add(reset);
      });
      es.addEventListener('close', (e) => add(parsed<StreamItem>(e)));
      es.addEventListener('end', (e) => {
        stopped = true;
        es.close();
        setState({ kind: 'ended', end: parsed<StreamEnd>(e) });
      });
      es.addEventListener('error', (e) => {
        if (e instanceof MessageEvent && typeof e.data === 'string') {
          // The server's own `error` event: it could not read the stream further (for now).
          const body = JSON.parse(e.data) as { error?: string };
          reopen(body.error ?? 'the stream could not be read');
        } else if (es.readyState === EventSource.CLOSED) {
          reopen('the console refused the stream or could not be reached');
        } else {
          setState({ kind: 'reconnecting' });
        }
      });
    }
    open();
    return () => {
      stopped = true;
      clearTimeout(reopenTimer);
      source?.close();
    };
  }, [runId, name]);

  // Keep the newest output in sight, unless the reader scrolled up to read.
  useLayoutEffect(() => {
    const el = box.current;
    if (el !== null && stick.current) el.scrollTop = el.scrollHeight;
  });

  return (
    <div class="stream-view">
      <pre
        ref={box}
        class="stream-output"
        role="log"
        aria-label={`Stream ${name}`}
        data-testid="stream-output"
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 4;
        }}
      >
        {dropped.current > 0 && (
          <span class="stream-divider">{`${dropped.current} earlier item(s) not shown`}</span>
        )}
        {rendered(items.current)}
      </pre>
      <p class="stream-state" role="status" data-testid="stream-state" data-state={state.kind}>
        {stateText(state)}
      </p>
    </div>
  );
}

/** The items as the view shows them: text run together, other values a line each, resets as dividers. */
function rendered(items: Shown[]) {
  let atLineStart = true;
  return items.map((item) => {
    if (item.kind === 'reset') {
      atLineStart = true;
      return (
        <span key={item.seq} class="stream-divider stream-reset" role="separator" data-seq={item.seq}>
          {`step #${item.step} restarted (attempt ${item.attempt}): its output above is superseded`}
        </span>
      );
    }
    if (item.kind === 'close') return null;
    const text =
      typeof item.value === 'string'
        ? item.value
        : `${atLineStart ? '' : '\n'}${JSON.stringify(item.value)}\n`;
    if (text !== '') atLineStart = text.endsWith('\n');
    return (
      <span
        key={item.seq}
        class={item.superseded === true ? 'stream-chunk superseded' : 'stream-chunk'}
        data-seq={item.seq}
      >
        {text}
      </span>
    );
  });
}

function stateText(state: ViewState): string {
  switch (state.kind) {
    case 'connecting':
      return 'connecting…';
    case 'live':
      return 'live: new output appears as the run writes it';
    case 'reconnecting':
      return 'connection lost: reconnecting, from after the last item shown…';
    case 'reopening':
      return `interrupted (${state.why}): opening it again in ${state.inSeconds} s, from after the last item shown…`;
    case 'failed':
      return `stopped: ${state.message}`;
    case 'ended':
      return state.end.reason === 'closed'
        ? 'closed: the run closed this stream'
        : `run finished${state.end.status !== undefined ? ` (${state.end.status})` : ''}: nothing more will come`;
  }
}
