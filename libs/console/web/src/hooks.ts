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

/** The browser's time zone, as every absolute time's hover names it. */
export const TIME_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** A span of time, short: `850 ms`, `12.4 s`, `3 min 20 s`, `2 h 5 min`, `3 d 4 h`. */
export function durationText(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.floor((ms % 60_000) / 1_000)} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** A time relative to `now`: `12 s ago`, `in 3 min`, `just now`. */
export function relativeText(ms: number, now: number = Date.now()): string {
  const delta = now - ms;
  if (Math.abs(delta) < 1_000) return 'just now';
  const span = durationText(Math.abs(delta)).replace(/ \d+ (s|min|h)$/, '');
  return delta > 0 ? `${span} ago` : `in ${span}`;
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
