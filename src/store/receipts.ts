import type { RequestReceipt } from '../actions/index.js';

/** The text of the frozen receipts requests share (src/ingress/receipt.ts), written once each. */
const sharedTexts = new WeakMap<RequestReceipt, string>();

/** A receipt as a row keeps it (JSON text), or null. */
export function receiptColumn(receipt: RequestReceipt | undefined): string | null {
  if (receipt === undefined) return null;
  if (!Object.isFrozen(receipt)) return JSON.stringify(receipt);
  let text = sharedTexts.get(receipt);
  if (text === undefined) {
    text = JSON.stringify(receipt);
    sharedTexts.set(receipt, text);
  }
  return text;
}

const VIA = new Set(['bearer', 'header', 'query']);

/**
 * A row's receipt, read back checked: anything but a whole receipt is none (its request is then
 * not replayable, docs/runtime.md#request-log-and-replay).
 */
export function receiptOfColumn(text: string | null | undefined): RequestReceipt | undefined {
  if (typeof text !== 'string') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const r = value as Record<string, unknown>;
  if (typeof r.bodyRead !== 'boolean') return undefined;
  if (r.webhookId !== undefined && typeof r.webhookId !== 'string') return undefined;
  if (r.replayKey !== undefined && typeof r.replayKey !== 'string') return undefined;
  const receipt = value as RequestReceipt;
  if (r.by === 'token') return VIA.has(r.via as string) && typeof r.credential === 'string' ? receipt : undefined;
  if (r.by !== 'signature' || r.credentials === null || typeof r.credentials !== 'object') return undefined;
  const held = Object.values(r.credentials as object);
  return held.length > 0 && held.every((f) => typeof f === 'string') ? receipt : undefined;
}
