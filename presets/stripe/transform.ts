// The stripe preset's transform: one agent action per allowed event type, in the session of
// its customer; null (204) for the rest. Runs sandboxed like any transform.

import type { FromSchema } from 'hookd/transform';
import type schema from './schema.js';

/** The event, typed from the schema hookd validates it against. */
type StripeEvent = FromSchema<typeof schema>;
type StripeObject = NonNullable<NonNullable<StripeEvent['data']>['object']>;

interface Request {
  payload: StripeEvent;
  options?: { events?: string[] };
}

const ZERO_DECIMAL = new Set([
  'bif',
  'clp',
  'djf',
  'gnf',
  'jpy',
  'kmf',
  'krw',
  'mga',
  'pyg',
  'rwf',
  'ugx',
  'vnd',
  'vuv',
  'xaf',
  'xof',
  'xpf',
]);

/** An amount in the currency's minor unit, as people write it: 2000 usd → 20.00 USD. */
function money(amount: number | undefined, currency: string | undefined): string {
  if (amount === undefined || currency === undefined) return 'an unknown amount';
  const code = currency.toLowerCase();
  const value = ZERO_DECIMAL.has(code) ? String(amount) : (amount / 100).toFixed(2);
  return `${value} ${code.toUpperCase()}`;
}

function allowed(type: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => (p.endsWith('.*') ? type.startsWith(p.slice(0, -1)) : p === type));
}

const day = (seconds: number | undefined) =>
  seconds === undefined ? 'an unknown date' : new Date(seconds * 1000).toISOString().slice(0, 10);

function describe(type: string, o: StripeObject, customer: string | undefined): string {
  const who = customer ? `, customer ${customer}` : '';
  switch (type) {
    case 'payment_intent.succeeded':
      return `A payment of ${money(o.amount, o.currency)} succeeded (${o.id}${who}).`;
    case 'payment_intent.payment_failed':
      return `A payment of ${money(o.amount, o.currency)} failed: ${o.last_payment_error?.message ?? 'no reason given'} (${o.id}${who}).`;
    case 'charge.refunded':
      return `${money(o.amount_refunded, o.currency)} of a ${money(o.amount, o.currency)} charge was refunded (${o.id}${who}).`;
    case 'charge.dispute.created':
      return `A dispute of ${money(o.amount, o.currency)} was opened (reason: ${o.reason ?? 'unknown'}); evidence is due by ${day(o.evidence_details?.due_by)} (${o.id}).`;
    case 'charge.dispute.closed':
      return `A dispute of ${money(o.amount, o.currency)} was closed: ${o.status ?? 'unknown outcome'} (${o.id}).`;
    case 'invoice.paid':
      return `Invoice ${o.number ?? o.id} for ${money(o.amount_paid, o.currency)} was paid${who}: ${o.hosted_invoice_url ?? o.id}`;
    case 'invoice.payment_failed':
      return `Payment of invoice ${o.number ?? o.id} for ${money(o.amount_due, o.currency)} failed${who}: ${o.hosted_invoice_url ?? o.id}`;
    case 'customer.subscription.created':
    case 'customer.subscription.deleted': {
      const plan = o.items?.data?.[0]?.price;
      const what = plan ? ` to ${plan.nickname ?? plan.id}` : '';
      const did = type.endsWith('created') ? 'started' : 'ended';
      return `A subscription${what} ${did} (${o.id}${who}).`;
    }
    default:
      return `Stripe sent ${type} for ${o.object ?? 'an object'} ${o.id ?? ''}${who}.`.replace(' .', '.');
  }
}

export default function stripe({ payload, options }: Request) {
  const type = payload.type ?? '';
  if (!allowed(type, options?.events ?? [])) return null;
  const o = payload.data?.object ?? {};
  const customer = typeof o.customer === 'string' ? o.customer : (o.customer?.id ?? undefined);
  const link = `https://dashboard.stripe.com/${payload.livemode ? '' : 'test/'}events/${payload.id}`;
  return {
    message: `Stripe: ${describe(type, o, customer)}\n${link}`,
    sessionKey: `hook:stripe:${customer ?? payload.id}`,
  };
}
