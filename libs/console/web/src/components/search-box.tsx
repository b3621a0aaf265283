/**
 * The header's search box: a run id opens that run; an idempotency key opens the run it names (or
 * lists them, when several workflows used the key); an attribute filter (`customerId=42`) opens the
 * runs page filtered by it. When nothing matches it says everything it tried.
 */
import { useState } from 'preact/hooks';
import { get } from '../api.js';
import { navigate, onLinkClick } from '../router.js';
import type { SearchAnswer } from '../types.js';

const runHref = (runId: string): string => `/runs/${encodeURIComponent(runId)}`;

export function SearchBox() {
  const [text, setText] = useState('');
  const [answer, setAnswer] = useState<SearchAnswer | { error: string } | undefined>();
  const [busy, setBusy] = useState(false);

  async function search(): Promise<void> {
    const q = text.trim();
    if (q === '') return;
    setBusy(true);
    try {
      const found = await get<SearchAnswer>(`/api/search?q=${encodeURIComponent(q)}`);
      setBusy(false);
      if (found.found === 'run') {
        setAnswer(undefined);
        navigate(runHref(found.runId));
      } else if (found.found === 'key' && found.runs.length === 1) {
        setAnswer(undefined);
        navigate(runHref(found.runs[0]!.runId));
      } else if (found.found === 'attribute') {
        setAnswer(undefined);
        navigate(`/?attr=${encodeURIComponent(found.expression)}`);
      } else setAnswer(found);
    } catch (err) {
      setBusy(false);
      setAnswer({ error: err instanceof Error ? err.message : String(err) });
    }
  }

  return (
    <div class="search">
      <form
        role="search"
        aria-label="Find runs"
        onSubmit={(e) => {
          e.preventDefault();
          void search();
        }}
      >
        <input
          type="search"
          aria-label="Run id, idempotency key or attribute filter (customerId=42)"
          placeholder="Run id, key, or attr=value"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          Find
        </button>
      </form>
      {answer && (
        <div class="search-answer" role="status">
          {'error' in answer ? (
            <p class="error">{answer.error}</p>
          ) : answer.found === 'nothing' ? (
            <>
              <p>Nothing found for “{text.trim()}”:</p>
              <ul>
                {answer.tried.map((t) => (
                  <li key={t}>{t}</li>
                ))}
              </ul>
            </>
          ) : answer.found === 'key' ? (
            <>
              <p>Runs with the idempotency key “{text.trim()}” (one per workflow):</p>
              <ul>
                {answer.runs.map((r) => (
                  <li key={r.runId}>
                    <a
                      href={runHref(r.runId)}
                      onClick={(e) => {
                        setAnswer(undefined);
                        onLinkClick(e);
                      }}
                    >
                      {r.runId}
                    </a>{' '}
                    {r.workflow}@{r.version}, {r.status}
                  </li>
                ))}
              </ul>
            </>
          ) : null}
          <button type="button" onClick={() => setAnswer(undefined)}>
            Close
          </button>
        </div>
      )}
    </div>
  );
}
