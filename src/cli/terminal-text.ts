/**
 * Text for the operator's terminal (docs/security.md#plugins): a plugin's name, description,
 * README and errors, a sender's values. A control character reaching a terminal is a command
 * to it (OSC 52 writes the clipboard, `ESC[2K` erases the line, a bidirectional override
 * reorders what is shown): each is shown as its `\u` escape instead, which keeps JSON output
 * the same data.
 */

/** C0 controls but tab and new line, DEL, C1 controls, the line and paragraph separators, and bidirectional controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it escapes
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** A character as its `\uXXXX` escape. */
const escaped = (c: string) => `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, '0')}`;

/** `text` with every control character shown as its `\uXXXX` escape (a CRLF line end kept as a new line). */
export function terminalSafe(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(UNSAFE, escaped);
}

/**
 * `text` kept on its line: a new line, carriage return or tab in it is shown as its `\u`
 * escape. A sender's text (a refused request's path, a templated run name, a destination's error)
 * otherwise starts a row of its own, which reads as a record that never was.
 */
export function oneLine(text: string): string {
  return text.replace(/[\t\n\r]/g, escaped);
}
