export { toMailMessage, truncateUtf8 } from './message.js';
export { createMailWatcher, type MailWatcher } from './watcher.js';
