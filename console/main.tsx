import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { FailedPage } from './failed';
import { HealthStrip } from './health';
import { RequestsPage } from './live-log';
import { MappingsPage } from './mappings';
import { RequestPage } from './request-page';
import { RunPage } from './runs';
import { RunsPage } from './runs-page';
import { SessionPage, SessionsPage } from './sessions';

/** A segment of a link as written: a malformed escape is kept as it is, not an error. */
function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The route is the URL's fragment (`#/requests/abc`): no server round trip, and the back button works. */
function useRoute(): string[] {
  const read = () => (location.hash.replace(/^#\/?/, '') || 'requests').split('/').map(decode);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => {
      setRoute(read());
      // Keyboard and screen-reader users land on the new page's heading (which draws no focus
      // ring: it is not a control; see style.css).
      requestAnimationFrame(() => document.querySelector<HTMLElement>('main h1')?.focus());
    };
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

const NAV = [
  ['requests', 'Live log'],
  ['failed', 'Failed'],
  ['runs', 'Runs'],
  ['sessions', 'Sessions'],
  ['mappings', 'Mappings & playground'],
] as const;

function Page({ route }: { route: string[] }) {
  const [page, id] = route;
  if (page === 'requests' && id) return <RequestPage key={id} id={id} />;
  if (page === 'runs' && id) return <RunPage key={id} id={id} />;
  if (page === 'sessions' && id) return <SessionPage sessionKey={route.slice(1).join('/')} />;
  if (page === 'runs') return <RunsPage />;
  if (page === 'failed') return <FailedPage key={id ?? ''} tab={id} />;
  if (page === 'sessions') return <SessionsPage />;
  if (page === 'mappings') return <MappingsPage />;
  return <RequestsPage />;
}

function App() {
  const route = useRoute();
  const signOut = () => document.querySelector<HTMLFormElement>('#signout')?.submit();
  return (
    <>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">hookd</span>
        <nav aria-label="Console">
          {NAV.map(([to, label]) => (
            <a href={`#/${to}`} aria-current={route[0] === to ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <HealthStrip />
      <main id="content">
        <Page route={route} />
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
