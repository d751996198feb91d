/** A chat surface replies are delivered to (DESIGN §7). */
export interface ChatChannel {
  readonly id: string;
  /** Sends `text` to `to`; rejects with a CHANNEL_*, DELIVERY_GAVE_UP or SHUTTING_DOWN error (never holding the bot token) after its own retries. */
  send(to: string, text: string, signal?: AbortSignal): Promise<void>;
}
