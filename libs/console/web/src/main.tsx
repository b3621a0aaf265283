/**
 * The console's page: a header with the navigation and the fleet's kinds, and the page the URL
 * names. Mounted into #app by index.html's only script (the CSP allows no inline script).
 */
import { render } from 'preact';
import { getSession, type SessionInfo } from './api.js';
import { usePolling } from './hooks.js';
import { DevBanner } from './components/dev-banner.js';
import { SearchBox } from './components/search-box.js';
import { DeadLettersPage } from './pages/dead-letters-page.js';
import { RunPage } from './pages/run-page.js';
import { RunsPage } from './pages/runs-page.js';
import { SchedulesPage } from './pages/schedules-page.js';
import { StartPage } from './pages/start-page.js';
import { VersionsPage } from './pages/versions-page.js';
import { WorkersPage } from './pages/workers-page.js';
import { onLinkClick, routeOf, useLocation } from './router.js';

const NAV = [
  { href: '/', label: 'Runs', pages: ['runs', 'run'] },
  { href: '/dead-letters', label: 'Dead letters', pages: ['dead-letters'] },
  { href: '/workers', label: 'Workers', pages: ['workers'] },
  { href: '/schedules', label: 'Schedules', pages: ['schedules'] },
  { href: '/versions', label: 'Versions', pages: ['versions'] },
  { href: '/start', label: 'Start a run', pages: ['start'] },
];

function App() {
  const location = useLocation();
  const route = routeOf(location.pathname);
  const session = usePolling<SessionInfo>('session', getSession, 60_000);
  return (
    <>
      <header>
        <a class="skip" href="#content">
          Skip to content
        </a>
        <strong class="brand">Baton console</strong>
        <nav aria-label="Main">
          {NAV.map((item) => (
            <a
              key={item.href}
              href={item.href}
              onClick={onLinkClick}
              aria-current={item.pages.includes(route.page) ? 'page' : undefined}
            >
              {item.label}
            </a>
          ))}
        </nav>
        <SearchBox />
        {session.data && (
          <span class="fleet">
            {session.data.fleet.transport} + {session.data.fleet.store}
            {session.data.readOnly && <span class="badge read-only">read-only</span>}
          </span>
        )}
      </header>
      {session.data?.dev === true && <DevBanner />}
      <div id="content">
        {route.page === 'runs' && <RunsPage search={location.search} />}
        {route.page === 'run' && <RunPage runId={route.runId} />}
        {route.page === 'dead-letters' && <DeadLettersPage />}
        {route.page === 'workers' && <WorkersPage />}
        {route.page === 'schedules' && <SchedulesPage />}
        {route.page === 'versions' && <VersionsPage />}
        {route.page === 'start' && <StartPage search={location.search} />}
        {route.page === 'missing' && (
          <main>
            <h1>Not found</h1>
            <p>The console has no page at {route.path}.</p>
          </main>
        )}
      </div>
    </>
  );
}

render(<App />, document.getElementById('app')!);
