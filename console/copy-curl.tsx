import { useState } from 'preact/hooks';
import type { RequestDetail } from './api';
import { curlOf } from './curl';

/** What the body of the command is, said beside it. */
function bodyNote(r: RequestDetail): string {
  if (!r.bodyWhole && !r.truncated && !r.redacted) return 'Its body was not kept: the command sends none.';
  if (r.truncated) return 'Its body was cut for the log: the command sends the part kept.';
  if (r.redacted) return 'Its body was redacted for the log: the command sends it as kept.';
  return 'It sends the body as received.';
}

/**
 * **Copy as curl**: the request as a command, to the clipboard, and shown below the button (the
 * clipboard needs HTTPS or loopback; the text can always be selected).
 */
export function CopyAsCurl({ r }: { r: RequestDetail }) {
  const [shown, setShown] = useState<{ text: string; copied: boolean }>();
  const copy = async () => {
    const text = curlOf(r, location.origin);
    let copied = false;
    try {
      await navigator.clipboard.writeText(text);
      copied = true;
    } catch {
      // No clipboard here (plain HTTP on another host, permission refused): the text is shown.
    }
    setShown({ text, copied });
  };
  return (
    <section class="curl" aria-label="Copy as curl">
      <p>
        <button type="button" class="secondary" onClick={copy}>
          Copy as curl
        </button>{' '}
        <span class="hint" aria-live="polite">
          {shown &&
            (shown.copied ? 'Copied to the clipboard.' : 'The clipboard is not available here: select and copy it.')}
        </span>
      </p>
      {shown && (
        <>
          <p class="hint">
            Credentials are never kept: set <code>HOOKD_HOOK_TOKEN</code> and replace any <code>{'<signature>'}</code>{' '}
            or <code>{'<secret>'}</code> with a fresh one. {bodyNote(r)}
          </p>
          <pre data-testid="curl">{shown.text}</pre>
        </>
      )}
    </section>
  );
}
