import type { ComponentChildren } from 'preact';

/**
 * Tabs as the WAI-ARIA pattern has them: one tab in the Tab order (the chosen one), the arrow
 * keys, Home and End move between them and choose; the panel follows in the Tab order.
 */
export function Tabs<T extends string>({
  tabs,
  current,
  onChoose,
  label,
  children,
}: {
  tabs: readonly { readonly id: T; readonly label: string }[];
  current: T;
  onChoose: (id: T) => void;
  label: string;
  children: ComponentChildren;
}) {
  const at = tabs.findIndex((t) => t.id === current);
  const onKey = (event: KeyboardEvent) => {
    const moves: Record<string, number> = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 };
    const to = moves[event.key];
    if (to === undefined) return;
    event.preventDefault();
    const next = tabs[(to + tabs.length) % tabs.length];
    if (!next) return;
    onChoose(next.id);
    requestAnimationFrame(() => document.getElementById(`tab-${next.id}`)?.focus());
  };
  return (
    <>
      <div class="tabs" role="tablist" aria-label={label} onKeyDown={onKey}>
        {tabs.map((t) => (
          <button
            type="button"
            role="tab"
            id={`tab-${t.id}`}
            key={t.id}
            aria-selected={t.id === current}
            aria-controls={`panel-${t.id}`}
            tabIndex={t.id === current ? 0 : -1}
            onClick={() => onChoose(t.id)}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div class="tab-panel" role="tabpanel" id={`panel-${current}`} aria-labelledby={`tab-${current}`}>
        {children}
      </div>
    </>
  );
}
