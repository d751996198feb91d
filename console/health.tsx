import { useCallback, useEffect, useRef } from 'preact/hooks';
import type { OverviewView } from './api';
import { useLive, useLoad } from './live';

/** The strip reloads at most this often, however busy the live stream is. */
const REFRESH_MS = 2000;

/** Queue depth, runs by status, the last hour's requests and transform latency; refreshed by the live stream. */
export function HealthStrip() {
  const overview = useLoad<OverviewView>('/api/overview');
  const reload = useRef(overview.reload);
  reload.current = overview.reload;
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
    </section>
  );
}
