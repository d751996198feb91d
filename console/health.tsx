import { useCallback, useEffect, useRef } from 'preact/hooks';
import type { AlertsView, AlertView, BreakerView, OverviewView } from './api';
import { useLive, useLoad, when } from './live';

/** The strip reloads at most this often, however busy the live stream is. */
const REFRESH_MS = 2000;

/** At most this many open alerts are shown. */
const MAX_ALERTS = 20;

/** What an alert says, as its message's first line says it (`mapping billing failed 5 times in 10 min`). */
const headline = (a: AlertView) => (a.text.split('\n')[0] ?? '').replace(/^hookd alert: /, '');
/** Its console page, on this console (the link in the chat may name another address of it). */
const pageOf = (a: AlertView) => (a.link.includes('#') ? a.link.slice(a.link.indexOf('#')) : '#/requests');

/** The open alerts, newest first (docs/console.md). */
function OpenAlerts({ alerts }: { alerts: readonly AlertView[] }) {
  if (alerts.length === 0) return null;
  return (
    <ul class="alerts" aria-label="Open alerts">
      {alerts.map((a) => (
        <li key={a.id} data-alert-id={a.id}>
          <a class="bad" href={pageOf(a)}>
            {headline(a)}
          </a>{' '}
          <span>since {when(a.at)}</span>
          {a.lastError ? <span> · {a.lastError}</span> : null}
        </li>
      ))}
    </ul>
  );
}

/** The breakers holding tries back: their destination, until when, and what waits for them. */
function Breakers({ breakers }: { breakers: readonly BreakerView[] }) {
  if (breakers.length === 0) return null;
  return (
    <ul class="breakers" aria-label="Breakers">
      {breakers.map((b) => (
        <li key={`${b.kind}:${b.target}`} data-breaker={b.target}>
          <strong class="bad">
            breaker {b.state}: {b.target}
          </strong>{' '}
          {b.openUntil ? <span>until {when(b.openUntil)}</span> : <span>probing</span>}
          <span>
            {' '}
            · {b.failures} failed tr{b.failures === 1 ? 'y' : 'ies'} in a row, {b.waiting} waiting
          </span>
          {b.lastError ? <span> · {b.lastError}</span> : null}
        </li>
      ))}
    </ul>
  );
}

/**
 * Queue depth, runs by status, the last hour's requests, transform latency, the breakers holding
 * tries back and the open alerts; refreshed by the live stream.
 */
export function HealthStrip() {
  const overview = useLoad<OverviewView>('/api/overview');
  const alerts = useLoad<AlertsView>(`/api/alerts?open=true&limit=${MAX_ALERTS}`);
  const reload = useRef(() => {});
  reload.current = () => {
    overview.reload();
    alerts.reload();
  };
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const last = useRef(0);
  useEffect(() => () => clearTimeout(timer.current), []);
  // At once when the strip is quiet, then at most once per REFRESH_MS while events keep coming.
  const refresh = useCallback(() => {
    if (timer.current) return;
    const wait = Math.max(0, last.current + REFRESH_MS - Date.now());
    timer.current = setTimeout(() => {
      timer.current = undefined;
      last.current = Date.now();
      reload.current();
    }, wait);
  }, []);
  useLive(refresh);
  const o = overview.data;
  if (!o) return <div class="health" aria-live="polite" />;
  const runs = Object.entries(o.runsByStatus)
    .map(([status, n]) => `${n} ${status}`)
    .join(', ');
  const t = o.transforms;
  return (
    <section class="health" aria-label="Health">
      <span>
        <strong>{o.queueDepth ?? '—'}</strong> in the run queue
      </span>
      <span>runs: {runs || 'none yet'}</span>
      <span>
        last hour: <strong>{o.requestsLastHour.total}</strong> requests,{' '}
        <strong class={o.requestsLastHour.failed > 0 ? 'bad' : ''}>{o.requestsLastHour.failed}</strong> failed
      </span>
      <span>
        transforms:{' '}
        {t && t.calls > 0
          ? `${t.calls} call${t.calls === 1 ? '' : 's'}, mean ${t.meanMs?.toFixed(2)} ms${t.p95AtMostMs === null ? '' : `, p95 ≤ ${t.p95AtMostMs} ms`}`
          : 'no calls yet'}
      </span>
      <Breakers breakers={o.breakers ?? []} />
      <OpenAlerts alerts={alerts.data?.alerts ?? []} />
    </section>
  );
}
