/**
 * What has been said to a run: its updates (docs/updates.md), each accepted and then answered with
 * its arguments and result (or error), from the run's timeline; and its durable promises still
 * pending (docs/promises.md), polled while the run is unfinished.
 *
 * Invariants:
 * 1. A promise's token is a secret: whoever has it may complete the promise. The page shows its
 *    first characters only, and the whole token after an explicit "reveal" (a POST the server
 *    treats as an action: refused by a read-only console, CSRF-checked and logged), until "hide".
 *    A read-only console offers no reveal.
 */
import { useState } from 'preact/hooks';
import { post, runPath, get } from '../api.js';
import { usePolling } from '../hooks.js';
import type { PendingPromiseRow, TimelineItem, UpdateItem } from '../types.js';
import { Time } from './time.js';

function updateAnswer(u: UpdateItem): string {
  if (u.outcome === 'accepted') return 'no answer yet (the handler runs, or the run waits to be resumed)';
  if (u.error) return `${u.error.name}: ${u.error.message}`;
  return u.result ?? '-';
}

/** The run's updates, oldest first, from its timeline items. */
export function RunUpdates(props: { items: readonly TimelineItem[] | undefined }) {
  const updates = (props.items ?? []).filter((i): i is UpdateItem => i.kind === 'update');
  return (
    <section aria-labelledby="updates-title">
      <h2 id="updates-title">Updates</h2>
      {props.items === undefined ? (
        <p class="muted">The run's journal is not read yet, or this console cannot read it.</p>
      ) : updates.length === 0 ? (
        <p>No update was accepted by this run.</p>
      ) : (
        <table aria-label="Updates" class="updates">
          <thead>
            <tr>
              <th scope="col">Update</th>
              <th scope="col">Id</th>
              <th scope="col">State</th>
              <th scope="col">Accepted</th>
              <th scope="col">Arguments</th>
              <th scope="col">Result or error</th>
            </tr>
          </thead>
          <tbody>
            {updates.map((u) => (
              <tr key={`${u.position}-${u.updateId}`} data-update-id={u.updateId} data-outcome={u.outcome}>
                <td>{u.name}</td>
                <td>
                  <code>{u.updateId}</code>
                </td>
                <td>
                  <span class={`badge update-${u.outcome}`}>{u.outcome}</span>
                </td>
                <td>
                  <Time ms={u.at} />
                </td>
                <td>
                  <code>{u.args ?? '-'}</code>
                </td>
                <td class={u.error ? 'error' : ''}>
                  {u.outcome === 'completed' ? <code>{updateAnswer(u)}</code> : updateAnswer(u)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** The run's pending durable promises, with a reveal for each token unless the console is read-only. */
export function RunPromises(props: { runId: string; finished: boolean; readOnly: boolean }) {
  const { runId, finished, readOnly } = props;
  const pending = usePolling(`promises:${runId}:${finished}`, () =>
    finished
      ? Promise.resolve({ promises: [] as PendingPromiseRow[] })
      : get<{ promises: PendingPromiseRow[] }>(runPath(runId, '/promises')),
  );
  const [revealed, setRevealed] = useState<Record<number, string>>({});
  const [problem, setProblem] = useState<string | undefined>(undefined);

  const reveal = async (seq: number): Promise<void> => {
    setProblem(undefined);
    try {
      const { token } = await post<{ token: string }>(runPath(runId, `/promises/${seq}/token`));
      setRevealed((shown) => ({ ...shown, [seq]: token }));
    } catch (err) {
      setProblem((err as Error).message);
    }
  };
  const hide = (seq: number): void =>
    setRevealed((shown) => Object.fromEntries(Object.entries(shown).filter(([s]) => Number(s) !== seq)));

  const rows = pending.data?.promises ?? [];
  return (
    <section aria-labelledby="promises-title">
      <h2 id="promises-title">Pending durable promises</h2>
      {pending.error && (
        <p role="alert" class="error">
          {pending.error}
        </p>
      )}
      {finished ? (
        <p>The run has finished: nothing waits for a promise any more.</p>
      ) : pending.data === undefined ? null : rows.length === 0 ? (
        <p>No durable promise of this run is pending.</p>
      ) : (
        <>
          <table aria-label="Pending durable promises" class="promises">
            <thead>
              <tr>
                <th scope="col">Step</th>
                <th scope="col">Token</th>
                <th scope="col">Made</th>
                <th scope="col">Times out</th>
                <th scope="col">Schema</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((p) => {
                const token = revealed[p.seq];
                return (
                  <tr key={p.seq} data-seq={p.seq}>
                    <td>#{p.seq}</td>
                    <td>
                      <code data-testid={`promise-token-${p.seq}`}>{token ?? p.tokenHint}</code>{' '}
                      {!readOnly &&
                        (token === undefined ? (
                          <button type="button" onClick={() => void reveal(p.seq)}>
                            Reveal token of #{p.seq}
                          </button>
                        ) : (
                          <button type="button" onClick={() => hide(p.seq)}>
                            Hide token of #{p.seq}
                          </button>
                        ))}
                    </td>
                    <td>
                      <Time ms={p.createdAt} />
                    </td>
                    <td>{p.timeoutAt === null ? 'never' : <Time ms={p.timeoutAt} />}</td>
                    <td>{p.hasSchema ? 'checked against a JSON Schema' : 'none'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <p class="hint">
            A token is a secret: whoever has it may complete its promise with{' '}
            <code>baton promises resolve</code>.{' '}
            {readOnly
              ? 'This console is read-only, so it does not reveal tokens.'
              : 'Revealing one is logged as an action.'}
          </p>
        </>
      )}
      {problem !== undefined && (
        <p role="alert" class="error">
          {problem}
        </p>
      )}
    </section>
  );
}
