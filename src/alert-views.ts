/** What an alert watches (docs/operations.md#alerts). */
export const ALERT_CONDITIONS = [
  'mappingFailures',
  'signatureFailures',
  'modelUnreachable',
  'deliveryFailures',
] as const;
export type AlertCondition = (typeof ALERT_CONDITIONS)[number];

/** An alert's message: the condition began, or it cleared. */
export const ALERT_KINDS = ['firing', 'recovered'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/** One alert message as stored and sent to the chat (docs/operations.md#alerts). */
export interface AlertView {
  readonly id: string;
  readonly at: string;
  readonly kind: AlertKind;
  readonly condition: AlertCondition;
  /** What failed: a mapping id, a model reference, a channel. */
  readonly source: string;
  /** Failures counted: in the window when firing, in the whole episode when recovered. */
  readonly count: number;
  /** The last failure in hookd's own words: a code, an HTTP status, a source position; never payload text. */
  readonly lastError?: string;
  /** The console page to look at. */
  readonly link: string;
  /** The message as sent. */
  readonly text: string;
  /** A firing: when its recovery was sent (absent while it is open). */
  readonly recoveredAt?: string;
  /** A recovery: the id of the firing it closes. */
  readonly recovers?: string;
}

/** `GET /api/alerts`: alert messages, newest first. */
export interface AlertsView extends Page {
  readonly alerts: readonly AlertView[];
}

/** A page of a list, newest first, with the cursor of the next page when there is one. */
export interface Page {
  readonly nextCursor: string | null;
}
