/** A chat surface replies are delivered to (DESIGN §7). */
export interface ChatChannel {
  readonly id: string;
  /** Sends `text` to `to`; rejects with a ChannelError after its own retries. */
  send(to: string, text: string, signal?: AbortSignal): Promise<void>;
}

/** A delivery failure with a reason safe to store (never the bot token). */
export class ChannelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChannelError';
  }
}
