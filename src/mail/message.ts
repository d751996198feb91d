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

const kb = (bytes: number) => (bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} KB`);

/**
 * The body as the model reads it: the text, then what it does not show — a cut (how much of
 * how much) and the attachments (name, type, size).
 */
function bodyWithNotes(text: string, cut: boolean, fullBytes: number, attachments: readonly MailAttachment[]): string {
  const notes: string[] = [];
  if (cut) notes.push(`[The body was cut: ${kb(Buffer.byteLength(text))} of ${kb(fullBytes)} shown.]`);
  if (attachments.length > 0) {
    const list = attachments.map((a) => `${a.filename} (${a.contentType}, ${kb(a.size)})`).join(', ');
    notes.push(`[Attachments, not shown: ${list}.]`);
  }
  return [text, ...notes].filter((part) => part !== '').join('\n\n');
}

/**
 * Parses an RFC 822 message; text/plain is preferred, HTML is reduced to text. With the body
 * included, `snippet` is empty: the preset's message shows the snippet and the body, and the
 * snippet is only the body's first words.
 */
export async function toMailMessage(source: Buffer, options: ParseOptions): Promise<MailMessage> {
  const parsed = await simpleParser(source, { skipImageLinks: true, skipTextToHtml: true });
  const text = (parsed.text ?? '').replace(/\r\n/g, '\n').trim();
  const attachments = parsed.attachments.map((a) => ({
    filename: a.filename ?? '(no name)',
    contentType: a.contentType,
    size: a.size,
  }));
  const cut = options.includeBody ? truncateUtf8(text, options.maxBodyBytes) : { text: '', truncated: false };
  const body = bodyWithNotes(cut.text, cut.truncated, Buffer.byteLength(text), attachments);
  const snippet = options.includeBody && cut.text !== '' ? '' : text.replace(/\s+/g, ' ').slice(0, SNIPPET_CHARS);
  const references = Array.isArray(parsed.references) ? parsed.references[0] : parsed.references;
  const id = `${options.uidValidity}-${options.uid}`;
  const addresses = (value: typeof parsed.to) =>
    Array.isArray(value) ? value.map((a) => a.text).join(', ') : (value?.text ?? '');
  return {
    id,
    threadId: references ?? parsed.inReplyTo ?? parsed.messageId ?? id,
    from: parsed.from?.text ?? '',
    to: addresses(parsed.to),
    subject: parsed.subject ?? '',
    date: (parsed.date ?? new Date(0)).toISOString(),
    snippet,
    body,
    bodyTruncated: cut.truncated,
    attachments,
    labels: [options.mailbox, ...options.flags],
  };
}
