/** Data that refreshes itself: the pages poll the API so they update live without a reload. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/** How often a page polls (ms). */
export const POLL_MS = 2_000;

export interface Polled<T> {
  data: T | undefined;
  error: string | undefined;
  /** Fetch again now (after an action). */
  refresh: () => void;
}

/** Loads `load()` now and every `everyMs`, again whenever `key` changes; keeps the last good data. */
export function usePolling<T>(key: string, load: () => Promise<T>, everyMs = POLL_MS): Polled<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const latest = useRef(load);
  latest.current = load;
  const generation = useRef(0);
  const fetchNow = useCallback(() => {
    const mine = ++generation.current;
    latest.current().then(
      (value) => {
        if (mine !== generation.current) return;
        setData(value);
        setError(undefined);
      },
      (err: unknown) => {
        if (mine !== generation.current) return;
        setError(err instanceof Error ? err.message : String(err));
      },
    );
  }, []);
  useEffect(() => {
    setData(undefined);
    fetchNow();
    const timer = window.setInterval(fetchNow, everyMs);
    return () => {
      generation.current++;
      window.clearInterval(timer);
    };
  }, [key, everyMs, fetchNow]);
  return { data, error, refresh: fetchNow };
}

/** A time as the console prints it: local date and time to the second. */
export function timeText(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  const d = new Date(ms);
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/**
 * A value as indented JSON for a <pre>; a value the workers sealed and the console's client could
 * not open (docs/integrity.md), whole or inside it, as `protected (key k1)`, never as ciphertext.
 */
export function jsonText(value: unknown): string {
  if (value === undefined) return '-';
  const sealed = sealedKey(value);
  if (sealed !== undefined) return `protected (key ${sealed})`;
  return JSON.stringify(
    value,
    (_key, inner: unknown) => {
      const key = sealedKey(inner);
      return key === undefined ? inner : `protected (key ${key})`;
    },
    2,
  );
}

/** The key id of a sealed value (`{ "$baton.sealed": 1, key, frame }`), else undefined. */
function sealedKey(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const fields = value as Record<string, unknown>;
  return fields['$baton.sealed'] === 1 && typeof fields.key === 'string' ? fields.key : undefined;
}
