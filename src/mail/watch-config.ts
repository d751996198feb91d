import type { MailConfig } from '../config/index.js';

/** `hooks.mail.watch`, its defaults applied. */
export type WatchConfig = NonNullable<MailConfig['watch']>;
