/**
 * The bounds on what templates render (docs/mappings.md#what-a-template-may-render): a field
 * keeps at most MAX_TEXT_CHARS characters, and one request's sections take at most
 * MAX_RENDER_STEPS steps. Both hold while rendering, not after: sections over a payload's arrays
 * multiply what they render (a 132 KB body rendered 480 MB, a 240 KB one more than a string can
 * hold), and sections nested in sections multiply their steps even when they render nothing.
 */

/** The most text one field of an action may carry (docs/operations.md#limits): a 30-byte request cannot become a 50 MB wake. */
export const MAX_TEXT_CHARS = 256 * 1024;

/**
 * The steps one request's templates may take in sections, in all its fields and `forEach`
 * items: a step is a tag or a text rendered, or a section's body begun, each time a section repeats it.
 */
export const MAX_RENDER_STEPS = 250_000;

/** What one request's templates have left to spend; shared by all of them. */
export interface RenderBudget {
  steps: number;
  /** Set by a render that was cut (past the bound, or out of steps): its caller may refuse it. */
  cut?: boolean;
}

/** A request's budget, full. */
export const renderBudget = (): RenderBudget => ({ steps: MAX_RENDER_STEPS });

/** `text` cut to MAX_TEXT_CHARS with `note` at its end. */
export function withNote(text: string, note: string): string {
  return text.slice(0, MAX_TEXT_CHARS - note.length) + note;
}

/** The note of a text `length` characters long that was cut to MAX_TEXT_CHARS. */
export const cutNote = (length: number): string => `\n… [cut by hookd: ${length - MAX_TEXT_CHARS} more characters]`;

/**
 * One render's count. Its pieces are kept until MAX_TEXT_CHARS is passed, then only counted, so
 * that the note says how much was cut; a render that stops before its end says so instead.
 */
export class BoundedText {
  /** How long the whole render is, as far as it went. */
  length = 0;
  /** True when it stopped before its end: its budget spent, or a piece past the bound not worth counting. */
  stopped = false;
  readonly budget: RenderBudget;

  constructor(budget: RenderBudget) {
    this.budget = budget;
  }

  /** Spends a step of the request's budget; false when none is left (and the render stops). */
  step(): boolean {
    if (this.stopped) return false;
    if (this.budget.steps <= 0) this.stopped = true;
    else this.budget.steps--;
    return !this.stopped;
  }

  /** True once what was rendered is longer than a field keeps. */
  get full(): boolean {
    return this.length > MAX_TEXT_CHARS;
  }

  /** Counts a piece; returns what of it to keep: all of it until the bound is passed, then nothing. */
  piece(text: string): string {
    const keep = !this.full;
    this.length += text.length;
    return keep ? text : '';
  }

  /** The text a field takes from what the render kept: whole when it fits, else cut with a note. */
  finish(kept: string): string {
    if (this.stopped || this.full) this.budget.cut = true;
    if (this.stopped) {
      const left = this.full
        ? `over ${this.length - MAX_TEXT_CHARS} more characters`
        : `this request's templates used up their ${MAX_RENDER_STEPS} steps`;
      return withNote(kept, `\n… [cut by hookd: ${left}]`);
    }
    return this.full ? withNote(kept, cutNote(this.length)) : kept;
  }
}
