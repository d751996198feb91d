import { simpleParser } from 'mailparser';

/** One message as the mail preset's payload carries it (docs/mappings.md, plus `bodyTruncated`). */
export interface MailMessage {
  readonly id: string;
  readonly threadId: string;
  readonly from: string;
  readonly to: string;
  readonly subject: string;
  readonly date: string;
  readonly snippet: string;
  readonly body: string;
  readonly bodyTruncated: boolean;
  /** What is attached (never the content). */
  readonly attachments: readonly MailAttachment[];
  readonly labels: readonly string[];
}

export interface MailAttachment {
  readonly filename: string;
  readonly contentType: string;
  readonly size: number;
}

export interface ParseOptions {
  readonly uid: number;
  readonly uidValidity: string;
  readonly mailbox: string;
  readonly flags: readonly string[];
  readonly includeBody: boolean;
  readonly maxBodyBytes: number;
}

const SNIPPET_CHARS = 200;

/**
 * Bounds of the fields besides the body (docs/mail.md#what-a-message-becomes), so that a
 * message's JSON stays near `maxBodyBytes` whatever its headers and parts: a hook that refuses
 * an oversized batch (413) would otherwise refuse the same batch again on every retry.
 */
export const FIELD_BOUNDS = {
  /** `from`, `to` and `subject`, each. */
  headerBytes: 2048,
  threadIdBytes: 1024,
  /** Attachments listed (in `attachments` and in the body's note); the rest are counted. */
  attachments: 50,
  /** An attachment's filename and content type, each. */
  attachmentNameBytes: 200,
  /** Labels: the mailbox, then the IMAP flags. */
  labels: 20,
  labelBytes: 128,
} as const;

/** The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes` (never a broken character). */
export function truncateUtf8(text: string, maxBytes: number): { text: string; truncated: boolean } {
  if (Buffer.byteLength(text) <= maxBytes) return { text, truncated: false };
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += ch.length;
  }
  return { text: text.slice(0, end), truncated: true };
}

/**
 * A header field as posted: on one line (an encoded word can decode to line breaks, which would
 * forge a `Subject:` line of the prompt's own inside the untrusted block) and bounded.
 * @example headerField('CEO\nSubject: wire now') // 'CEO Subject: wire now'
 */
export function headerField(text: string): string {
  return bounded(oneLine(text), FIELD_BOUNDS.headerBytes);
}

/** `text` with every run of line breaks made one space: a field never writes a line of its own. */
const oneLine = (text: string) => text.replace(/[\r\n\v\f\u0085\u2028\u2029]+/g, ' ');

/** `text` cut to `maxBytes` of UTF-8, an ellipsis (within the bound) marking a cut. */
export function bounded(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  return `${truncateUtf8(text, maxBytes - 3).text}…`;
}

export const kb = (bytes: number) => (bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} KB`);

/** The first `FIELD_BOUNDS.attachments` attachments, their names bounded, and how many more there are. */
function listedAttachments(all: readonly MailAttachment[]): { listed: MailAttachment[]; more: number } {
  const listed = all.slice(0, FIELD_BOUNDS.attachments).map((a) => ({
    filename: bounded(oneLine(a.filename), FIELD_BOUNDS.attachmentNameBytes),
    contentType: bounded(oneLine(a.contentType), FIELD_BOUNDS.attachmentNameBytes),
    size: a.size,
  }));
  return { listed, more: all.length - listed.length };
}

/**
 * The body as the model reads it: the text, then what it does not show — a cut (how much of
 * how much) and the attachments (name, type, size; past the bound, how many more).
 */
function bodyWithNotes(
  text: string,
  cut: boolean,
  fullBytes: number,
  attachments: ReturnType<typeof listedAttachments>,
) {
  const notes: string[] = [];
  if (cut) notes.push(`[The body was cut: ${kb(Buffer.byteLength(text))} of ${kb(fullBytes)} shown.]`);
  if (attachments.listed.length > 0) {
    const list = attachments.listed.map((a) => `${a.filename} (${a.contentType}, ${kb(a.size)})`).join(', ');
    const more = attachments.more > 0 ? ` and ${attachments.more} more` : '';
    notes.push(`[Attachments, not shown: ${list}${more}.]`);
  }
  return [text, ...notes].filter((part) => part !== '').join('\n\n');
}

/** A date as ISO 8601; a missing or invalid one is the epoch (an invalid one would throw). */
export function isoDate(date: Date | string | undefined): string {
  const time = date === undefined ? Number.NaN : new Date(date).getTime();
  return new Date(Number.isFinite(time) ? time : 0).toISOString();
}

/** The mailbox and the flags, as many and as long as the bounds allow. */
export function labelsOf(mailbox: string, flags: readonly string[]): string[] {
  return [mailbox, ...flags].slice(0, FIELD_BOUNDS.labels).map((label) => bounded(label, FIELD_BOUNDS.labelBytes));
}

/**
 * Parses an RFC 822 message; text/plain is preferred, HTML is reduced to text. With the body
 * included, `snippet` is empty: the preset's message shows the snippet and the body, and the
 * snippet is only the body's first words. Rejects when the message cannot be parsed (more than
 * 1,000 MIME parts, a header block over 1 MB).
 */
export async function toMailMessage(source: Buffer, options: ParseOptions): Promise<MailMessage> {
  const parsed = await simpleParser(source, { skipImageLinks: true, skipTextToHtml: true });
  const text = (parsed.text ?? '').replace(/\r\n/g, '\n').trim();
  const attachments = listedAttachments(
    parsed.attachments.map((a) => ({ filename: a.filename ?? '(no name)', contentType: a.contentType, size: a.size })),
  );
  const cut = options.includeBody ? truncateUtf8(text, options.maxBodyBytes) : { text: '', truncated: false };
  const body = bodyWithNotes(cut.text, cut.truncated, Buffer.byteLength(text), attachments);
  const snippet = options.includeBody && cut.text !== '' ? '' : text.replace(/\s+/g, ' ').slice(0, SNIPPET_CHARS);
  const references = Array.isArray(parsed.references) ? parsed.references[0] : parsed.references;
  const id = `${options.uidValidity}-${options.uid}`;
  const addresses = (value: typeof parsed.to) =>
    Array.isArray(value) ? value.map((a) => a.text).join(', ') : (value?.text ?? '');
  return {
    id,
    threadId: bounded(references ?? parsed.inReplyTo ?? parsed.messageId ?? id, FIELD_BOUNDS.threadIdBytes),
    from: headerField(parsed.from?.text ?? ''),
    to: headerField(addresses(parsed.to)),
    subject: headerField(parsed.subject ?? ''),
    date: isoDate(parsed.date),
    snippet,
    body,
    bodyTruncated: cut.truncated,
    attachments: attachments.listed,
    labels: labelsOf(options.mailbox, options.flags),
  };
}
