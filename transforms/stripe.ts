// Stripe events → agent runs only for the few that need a human; everything else is
// skipped (204), so Stripe sees success and stops retrying.
import { defineTransform } from 'hookd/transform';

interface StripeEvent {
  id: string;
  type: string;
  data: { object: Record<string, unknown> };
}

const money = (cents: unknown, currency: unknown) =>
  typeof cents === 'number'
    ? `${(cents / 100).toFixed(2)} ${String(currency ?? '').toUpperCase()}`
    : 'an unknown amount';

export default defineTransform<StripeEvent | null>(({ payload }) => {
  // Not a Stripe event (Stripe always sends an object): skipped.
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return null;
  const object = payload.data?.object ?? {};
  const base = { name: 'Stripe', sessionKey: `hook:stripe:${String(object.customer ?? payload.id)}` };
  switch (payload.type) {
    case 'invoice.payment_failed':
      return {
        ...base,
        message: `Payment failed for invoice ${String(object.number ?? object.id)} (${money(object.amount_due, object.currency)}), customer ${String(object.customer_email ?? object.customer)}.`,
      };
    case 'charge.dispute.created':
      return {
        ...base,
        message: `A dispute was opened on charge ${String(object.charge)} for ${money(object.amount, object.currency)}; reason: ${String(object.reason)}.`,
      };
    case 'customer.subscription.deleted':
      return {
        ...base,
        kind: 'wake',
        text: `Subscription ${String(object.id)} of customer ${String(object.customer)} was cancelled.`,
      };
    default:
      return null;
  }
});
