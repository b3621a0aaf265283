/**
 * The console's routes, kept in the URL (history API) so a page and its filters can be shared
 * and survive a reload: `/` runs, `/runs/<id>` one run, `/dead-letters`, `/workers`, `/schedules`,
 * `/versions`, `/start` (`?workflow=<name>@<version>` picks the workflow).
 */
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'runs' }
  | { page: 'run'; runId: string }
  | { page: 'dead-letters' }
  | { page: 'workers' }
  | { page: 'schedules' }
  | { page: 'versions' }
  | { page: 'start' }
  | { page: 'missing'; path: string };

export function routeOf(pathname: string): Route {
  if (pathname === '/' || pathname === '/runs') return { page: 'runs' };
  const run = /^\/runs\/([^/]+)$/.exec(pathname);
  if (run) return { page: 'run', runId: decodeURIComponent(run[1]!) };
  if (pathname === '/dead-letters') return { page: 'dead-letters' };
  if (pathname === '/workers') return { page: 'workers' };
  if (pathname === '/schedules') return { page: 'schedules' };
  if (pathname === '/versions') return { page: 'versions' };
  if (pathname === '/start') return { page: 'start' };
  return { page: 'missing', path: pathname };
}

const listeners = new Set<() => void>();

/** Goes to a URL of the console without reloading the page. */
export function navigate(url: string, replace = false): void {
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

window.addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

/** The current location, re-rendering on every navigation. */
export function useLocation(): { pathname: string; search: string } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = (): void => setTick((n) => n + 1);
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }, []);
  return { pathname: window.location.pathname, search: window.location.search };
}

/** A link that navigates inside the app (a normal link for a new tab or a modified click). */
export function onLinkClick(event: MouseEvent): void {
  const anchor = event.currentTarget as HTMLAnchorElement;
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(anchor.getAttribute('href') ?? '/');
}
