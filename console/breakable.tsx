/** Where a long name may break: after a separator, never inside a word. */
const SEPARATOR = /([:./_\-[\]@]+)/;

/**
 * A long name (`preset:standard-webhooks`, `hooks.mappings[12]`, `src/transforms/github.ts`) that
 * may wrap after its separators (`<wbr>`, which copying leaves out) and nowhere else.
 */
export function Breakable({ text }: { text: string }) {
  const parts = text.split(SEPARATOR);
  return (
    <>
      {parts.map((part, i) =>
        i % 2 === 1 ? (
          <span key={i}>
            {part}
            <wbr />
          </span>
        ) : (
          part
        ),
      )}
    </>
  );
}
