import { useCallback, useEffect, useState } from 'preact/hooks';
import { localTime } from '../src/time-format.js';
import { ApiError, get, type RequestView, type RunListItem } from './api';

type Listener = (kind: 'request' | 'run', data: RequestView | RunListItem) => void;
/** The stream's state, shown beside the live log (tests wait for `open` before sending). */
export type LiveState = 'connecting' | 'open' | 'reconnecting' | 'closed';

let source: EventSource | undefined;
let state: LiveState = 'connecting';
const listeners = new Set<Listener>();
const stateListeners = new Set<(state: LiveState) => void>();

function setLiveState(next: LiveState): void {
  state = next;
  for (const l of stateListeners) l(next);
}

function open(): EventSource {
  const stream = new EventSource('/api/stream');
  setLiveState('connecting');
  stream.onopen = () => setLiveState('open');
  // The browser retries on its own while the state is CONNECTING; CLOSED means it gave up (the
  // session ended, or the gateway refused the stream).
  stream.onerror = () => setLiveState(stream.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting');
  for (const kind of ['request', 'run'] as const) {
    stream.addEventListener(kind, (event) => {
      const data = JSON.parse((event as MessageEvent<string>).data) as RequestView | RunListItem;
      for (const l of listeners) l(kind, data);
    });
  }
  return stream;
}

/** One stream (`GET /api/stream`) for the whole page, shared by every view that listens. */
export function useLive(listener: Listener): void {
  useEffect(() => {
    listeners.add(listener);
    source ??= open();
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0) {
        source?.close();
        source = undefined;
      }
    };
  }, [listener]);
}

/** The live stream's state, for an indicator. */
export function useLiveState(): LiveState {
  const [current, setCurrent] = useState(state);
  useEffect(() => {
    stateListeners.add(setCurrent);
    setCurrent(state);
    return () => {
      stateListeners.delete(setCurrent);
    };
  }, []);
  return current;
}

/** Loads `path` (again whenever `deps` change); `reload` fetches it once more. */
export function useLoad<T>(path: string | undefined, deps: unknown[] = []) {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (!path) return;
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    get<T>(path).then(
      (data) => live && setState({ data, loading: false }),
      (err: unknown) =>
        live &&
        setState({ loading: false, error: err instanceof ApiError ? `${err.message} (${err.code})` : String(err) }),
    );
    return () => {
      live = false;
    };
  }, [path, tick, ...deps]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** A time as people read it everywhere in hookd (`2025-05-01 14:03:22`, local), or `—` when there is none. */
export const when = (iso: string | undefined) => (iso ? localTime(iso) : '—');

/** A body as sent: pretty-printed when it is JSON. */
export function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
