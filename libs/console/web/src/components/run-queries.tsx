/**
 * A run's queries (docs/queries.md): the names its workflow registers (ctx.onQuery), found on
 * demand, since finding them costs what a query costs (a replay when no worker holds the run), and
 * a "query" button per name that shows the handler's answer. Arguments are optional JSON, checked
 * before anything is asked. A query changes nothing, so a read-only console offers them too.
 */
import { useState } from 'preact/hooks';
import { get, runPath } from '../api.js';
import { jsonText } from '../hooks.js';
import { parsePayload } from './run-actions.js';

type Answer = { name: string; result: unknown } | { name: string; error: string };

export function RunQueries(props: { runId: string }) {
  const { runId } = props;
  const [names, setNames] = useState<string[] | undefined>(undefined);
  const [args, setArgs] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const [answer, setAnswer] = useState<Answer | undefined>(undefined);

  const findNames = async (): Promise<void> => {
    setBusy(true);
    setProblem(undefined);
    try {
      setNames((await get<{ names: string[] }>(runPath(runId, '/queries'))).names);
    } catch (err) {
      setProblem((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const ask = async (name: string): Promise<void> => {
    const parsed = parsePayload(args);
    if (!parsed.ok) {
      setProblem(`the arguments are ${parsed.problem}`);
      return;
    }
    setBusy(true);
    setProblem(undefined);
    const query =
      parsed.value === undefined ? '' : `?args=${encodeURIComponent(JSON.stringify(parsed.value))}`;
    try {
      const { result } = await get<{ result: unknown }>(
        runPath(runId, `/queries/${encodeURIComponent(name)}${query}`),
      );
      setAnswer({ name, result });
    } catch (err) {
      setAnswer({ name, error: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="queries-title">
      <h2 id="queries-title">Queries</h2>
      {names === undefined ? (
        <button type="button" disabled={busy} onClick={() => void findNames()}>
          Find this run's queries
        </button>
      ) : names.length === 0 ? (
        <p>The run registers no query where its code has reached.</p>
      ) : (
        <>
          <label>
            Arguments (JSON, optional){' '}
            <input
              type="text"
              value={args}
              aria-label="Query arguments"
              onInput={(e) => setArgs((e.target as HTMLInputElement).value)}
            />
          </label>
          <ul class="query-names" aria-label="Query names">
            {names.map((name) => (
              <li key={name}>
                <button type="button" disabled={busy} onClick={() => void ask(name)}>
                  query {name}
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
      {problem !== undefined && (
        <p role="alert" class="error">
          {problem}
        </p>
      )}
      {answer !== undefined && (
        <div aria-label="Query answer">
          <h3>{answer.name}</h3>
          {'error' in answer ? <p class="error">{answer.error}</p> : <pre>{jsonText(answer.result)}</pre>}
        </div>
      )}
    </section>
  );
}
