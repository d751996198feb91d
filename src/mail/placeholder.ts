import type { FetchMessageObject, MessageAddressObject } from 'imapflow';
import { bounded, FIELD_BOUNDS, headerField, isoDate, kb, labelsOf, type MailMessage } from './message.js';

/** Where a placeholder's message is: its mailbox and UIDVALIDITY. */
export interface PlaceholderOptions {
  readonly uidValidity: string;
  readonly mailbox: string;
}

/**
 * A size as a placeholder states it: in KB, from 1 MiB in MB.
 * @example sizeText(26214400) // '25.0 MB'
 */
export const sizeText = (bytes: number) => (bytes < 1024 * 1024 ? kb(bytes) : `${(bytes / 1024 / 1024).toFixed(1)} MB`);

/** Addresses as mailparser writes them: `"Name" <address>`, comma-separated. */
function addressList(list: readonly MessageAddressObject[] | undefined): string {
  const one = (a: MessageAddressObject) => (a.name ? `"${a.name}" <${a.address ?? ''}>` : (a.address ?? ''));
  return headerField((list ?? []).map(one).join(', '));
}

/**
 * What is posted for a message hookd did not read (over the size bound, or not parseable):
 * what the server's envelope tells (sender, recipients, subject, date) and a body saying what
 * was not read and why, so the model and the operator learn of the message and the watcher
 * moves on (docs/mail.md#what-a-message-becomes).
 * @example placeholderMessage({ uid: 9, size: 30e6, … }, 'it could not be parsed (…)', { … }).body
 * // '[This message was not read: it could not be parsed (…). UID 9, 28.6 MB.]'
 */
export function placeholderMessage(meta: FetchMessageObject, why: string, options: PlaceholderOptions): MailMessage {
  const envelope = meta.envelope;
  const id = `${options.uidValidity}-${meta.uid}`;
  const size = meta.size === undefined ? '' : `, ${sizeText(meta.size)}`;
  return {
    id,
    threadId: bounded(envelope?.inReplyTo || envelope?.messageId || id, FIELD_BOUNDS.threadIdBytes),
    from: addressList(envelope?.from),
    to: addressList(envelope?.to),
    subject: headerField(envelope?.subject ?? ''),
    date: isoDate(envelope?.date ?? meta.internalDate),
    snippet: '',
    body: `[This message was not read: ${bounded(why, 1024)}. UID ${meta.uid}${size}.]`,
    bodyTruncated: true,
    attachments: [],
    labels: labelsOf(options.mailbox, [...(meta.flags ?? [])].sort()),
  };
}
