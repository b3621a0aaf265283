/**
 * The dead letters page: the bus's poison messages, newest first, a page at a time; one letter
 * opened and decoded (or why it cannot be); redrive (back on the run queue) and purge, each behind
 * a confirmation; redrive in bulk, every letter or one code's (dead-letter-bulk.tsx). Actions are
 * absent in read-only mode.
 */
import { useState } from 'preact/hooks';
import { get, getSession, post, type SessionInfo } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { DeadLetterBulk } from '../components/dead-letter-bulk.js';
import { jsonText, usePolling } from '../hooks.js';
import type { DeadLetterRow, ShownDeadLetter } from '../types.js';
import { Time } from '../components/time.js';

type Pending = { action: 'redrive' | 'purge'; letter: DeadLetterRow } | { action: 'purge-all' };

export function DeadLettersPage() {
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [opened, setOpened] = useState<string | undefined>(undefined);
  const [pending, setPending] = useState<Pending | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const path = `/api/dead-letters${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`;
  const page = usePolling(path, () => get<{ letters: DeadLetterRow[]; cursor?: string }>(path), 5_000);
  const session = usePolling<SessionInfo>('session', getSession, 60_000);
  const shown = usePolling(`letter:${opened ?? ''}`, () =>
    opened
      ? get<ShownDeadLetter>(`/api/dead-letters/${encodeURIComponent(opened)}`)
      : Promise.resolve(undefined),
  );
  const writable = session.data !== undefined && !session.data.readOnly;

  async function confirm(): Promise<void> {
    if (!pending) return;
    setBusy(true);
    setError(undefined);
    try {
      const answer =
        pending.action === 'redrive'
          ? await post(`/api/dead-letters/${encodeURIComponent(pending.letter.id)}/redrive`)
          : pending.action === 'purge'
            ? await post('/api/dead-letters/purge', { ids: [pending.letter.id] })
            : await post('/api/dead-letters/purge', { all: true });
      setNotice(answer.done);
      setPending(undefined);
      if (pending.action !== 'purge-all' && opened === pending.letter.id) setOpened(undefined);
      page.refresh();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main aria-labelledby="dl-title">
      <h1 id="dl-title">Dead letters</h1>
      <p role="status" class="notice">
        {notice ?? ''}
      </p>
      {page.error && (
        <p role="alert" class="error">
          {page.error}
        </p>
      )}
      {writable && page.data && page.data.letters.length > 0 && (
        <div class="button-row">
          <button type="button" class="danger" onClick={() => setPending({ action: 'purge-all' })}>
            Purge all dead letters
          </button>
        </div>
      )}
      <table aria-label="Dead letters">
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Code</th>
            <th scope="col">Reason</th>
            <th scope="col">At</th>
            <th scope="col">Bytes</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {page.data?.letters.map((letter) => (
            <tr key={letter.id} data-letter-id={letter.id} data-code={letter.code}>
              <td>
                <code>{letter.id}</code>
              </td>
              <td>{letter.code}</td>
              <td>{letter.reason}</td>
              <td>
                <Time ms={letter.at} />
              </td>
              <td>{letter.bytes}</td>
              <td class="button-row">
                <button
                  type="button"
                  aria-label={`Open dead letter ${letter.id}`}
                  onClick={() => setOpened(letter.id)}
                >
                  Open
                </button>
                {writable && (
                  <>
                    <button
                      type="button"
                      aria-label={`Redrive dead letter ${letter.id}`}
                      onClick={() => setPending({ action: 'redrive', letter })}
                    >
                      Redrive
                    </button>
                    <button
                      type="button"
                      class="danger"
                      aria-label={`Purge dead letter ${letter.id}`}
                      onClick={() => setPending({ action: 'purge', letter })}
                    >
                      Purge
                    </button>
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {page.data && page.data.letters.length === 0 && <p>No dead letter.</p>}
      {writable && <DeadLetterBulk onDone={() => page.refresh()} />}
      <nav aria-label="Pages" class="button-row">
        <button type="button" disabled={cursor === undefined} onClick={() => setCursor(undefined)}>
          Newest
        </button>
        <button
          type="button"
          disabled={page.data?.cursor === undefined}
          onClick={() => setCursor(page.data?.cursor)}
        >
          Older
        </button>
      </nav>
      {opened && shown.data && (
        <section aria-labelledby="letter-title" class="letter">
          <h2 id="letter-title">
            Dead letter <code>{shown.data.id}</code>
          </h2>
          <p>
            {shown.data.code}: {shown.data.reason}
          </p>
          {shown.data.message.readable ? (
            <pre>{jsonText(shown.data.message.message)}</pre>
          ) : (
            <p class="error">Not readable: {shown.data.message.problem}</p>
          )}
        </section>
      )}
      {pending && (
        <ConfirmDialog
          title={
            pending.action === 'redrive'
              ? `Redrive dead letter ${pending.letter.id}?`
              : pending.action === 'purge'
                ? `Purge dead letter ${pending.letter.id}?`
                : 'Purge every dead letter?'
          }
          consequence={
            pending.action === 'redrive'
              ? 'Its original message goes back on the run queue and the letter is removed. If the cause is not fixed, it is dead-lettered again.'
              : pending.action === 'purge'
                ? 'The letter and the message it holds are removed for good.'
                : 'Every dead letter and the messages they hold are removed for good.'
          }
          confirmLabel={pending.action === 'redrive' ? 'Redrive' : 'Purge for good'}
          danger={pending.action !== 'redrive'}
          busy={busy}
          error={error}
          onConfirm={() => void confirm()}
          onClose={() => {
            setPending(undefined);
            setError(undefined);
          }}
        />
      )}
    </main>
  );
}
