import { simpleParser } from 'mailparser';

/** One message as the mail preset's payload carries it (DESIGN §4, plus `bodyTruncated`). */
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
  readonly labels: readonly string[];
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

/** Parses an RFC 822 message; text/plain is preferred, HTML is reduced to text. */
export async function toMailMessage(source: Buffer, options: ParseOptions): Promise<MailMessage> {
  const parsed = await simpleParser(source, { skipImageLinks: true, skipTextToHtml: true });
  const text = (parsed.text ?? '').replace(/\r\n/g, '\n').trim();
  const body = options.includeBody ? truncateUtf8(text, options.maxBodyBytes) : { text: '', truncated: false };
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
    snippet: text.replace(/\s+/g, ' ').slice(0, SNIPPET_CHARS),
    body: body.text,
    bodyTruncated: body.truncated,
    labels: [options.mailbox, ...options.flags],
  };
}
