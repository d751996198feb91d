import type { FetchMessageObject, ImapFlow } from 'imapflow';
import type { Logger } from '../log.js';
import type { Cursor } from './cursor-store.js';
import { type MailMessage, toMailMessage } from './message.js';
import { placeholderMessage, sizeText } from './placeholder.js';
import type { WatchConfig } from './watch-config.js';

/**
 * The largest message whose source hookd downloads and parses (25 MiB, what most providers
 * accept); a larger one is posted as a placeholder (docs/mail.md#what-a-message-becomes).
 */
export const MAX_MESSAGE_BYTES = 25 * 1024 * 1024;

/** How one batch is fetched: where the cursor is, the watch settings, and the size bound. */
export interface FetchOptions {
  readonly cursor: Cursor;
  readonly watch: WatchConfig;
  readonly log: Logger;
  /** Messages over this many bytes are not downloaded (default `MAX_MESSAGE_BYTES`). */
  readonly maxMessageBytes?: number;
  /** Called as each message's answer arrives (the step's deadline starts over). */
  readonly progress?: () => void;
}

/**
 * Groups of consecutive messages whose sizes add up to at most `maxBytes` (a larger message
 * alone), so that one FETCH of sources holds at most about `maxBytes` at a time.
 * @example sourceGroups([{ uid: 1, size: 6 }, { uid: 2, size: 6 }, { uid: 3, size: 1 }], 10) // [[1], [2, 3]]
 */
export function sourceGroups(metas: readonly Pick<FetchMessageObject, 'uid' | 'size'>[], maxBytes: number): number[][] {
  const groups: number[][] = [];
  let group: number[] = [];
  let bytes = 0;
  for (const { uid, size = 0 } of metas) {
    if (group.length > 0 && bytes + size > maxBytes) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(uid);
    bytes += size;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/** The message's text, or a placeholder when mailparser cannot parse it (logged with its UID). */
async function parsedOrPlaceholder(meta: FetchMessageObject, source: Buffer | undefined, options: FetchOptions) {
  const { cursor, watch } = options;
  const where = { uidValidity: cursor.uidValidity, mailbox: watch.mailbox };
  if (!source) return placeholderMessage(meta, 'the server sent no source', where);
  const maxBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  // The size the server announced was smaller: what it sent instead is not parsed.
  if (source.length > maxBytes) {
    options.log.warn(
      { uid: meta.uid, size: meta.size, sent: source.length },
      'mail message larger than announced; posting a placeholder',
    );
    const sent = { ...meta, size: source.length };
    return placeholderMessage(sent, `it is larger than the ${sizeText(maxBytes)} hookd downloads`, where);
  }
  try {
    return await toMailMessage(source, {
      ...where,
      uid: meta.uid,
      flags: [...(meta.flags ?? [])].sort(),
      includeBody: watch.includeBody,
      maxBodyBytes: watch.maxBodyBytes,
    });
  } catch (err) {
    const reason = (err as Error).message;
    options.log.warn({ uid: meta.uid, size: meta.size, err: reason }, 'mail message not parsed; posting a placeholder');
    return placeholderMessage(meta, `it could not be parsed (${reason})`, where);
  }
}

/**
 * Fetches and parses the messages of one batch, in UID order; skips those not newer than
 * `cursor.since`. `newest` is the latest internal date seen, skipped messages included. Sizes
 * come first: a message over the bound, or one that cannot be parsed, becomes a placeholder.
 */
export async function fetchBatch(
  imap: ImapFlow,
  uids: readonly number[],
  options: FetchOptions,
): Promise<{ messages: MailMessage[]; newest: number }> {
  const { cursor, watch, log } = options;
  const maxBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  const metas: FetchMessageObject[] = [];
  let newest = cursor.lastDate;
  const query = { uid: true, size: true, flags: true, internalDate: true, envelope: true } as const;
  for await (const msg of imap.fetch(uids.join(','), query, { uid: true })) {
    options.progress?.();
    const date = msg.internalDate ? new Date(msg.internalDate).getTime() : Date.now();
    if (Number.isFinite(date)) newest = Math.max(newest, date);
    if (cursor.since !== undefined && date <= cursor.since) continue;
    metas.push(msg);
  }
  metas.sort((a, b) => a.uid - b.uid);
  const byUid = new Map<number, MailMessage>();
  for (const meta of metas.filter((m) => (m.size ?? 0) > maxBytes)) {
    log.warn({ uid: meta.uid, size: meta.size }, 'mail message over the size bound; posting a placeholder');
    const why = `it is larger than the ${sizeText(maxBytes)} hookd downloads`;
    byUid.set(meta.uid, placeholderMessage(meta, why, { uidValidity: cursor.uidValidity, mailbox: watch.mailbox }));
  }
  const small = metas.filter((m) => (m.size ?? 0) <= maxBytes);
  const metaOf = new Map(small.map((m) => [m.uid, m]));
  for (const group of sourceGroups(small, maxBytes)) {
    const asked = new Set(group);
    for await (const msg of imap.fetch(group.join(','), { uid: true, source: true }, { uid: true })) {
      options.progress?.();
      const meta = asked.has(msg.uid) ? metaOf.get(msg.uid) : undefined;
      if (meta && !byUid.has(msg.uid)) byUid.set(msg.uid, await parsedOrPlaceholder(meta, msg.source, options));
    }
  }
  // A message the server listed and then sent no source for (expunged meanwhile, a FETCH that
  // partly failed) is posted as a placeholder, never skipped unsaid: the cursor moves past it.
  for (const meta of small.filter((m) => !byUid.has(m.uid))) {
    log.warn({ uid: meta.uid, size: meta.size }, 'mail message without a source answer; posting a placeholder');
    byUid.set(meta.uid, await parsedOrPlaceholder(meta, undefined, options));
  }
  const messages = metas.flatMap((m) => byUid.get(m.uid) ?? []);
  return { messages, newest };
}
