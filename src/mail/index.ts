export { toMailMessage, truncateUtf8 } from './message.js';
export { createMailWatcher, type MailWatcher, type MailWatcherStatus } from './watcher.js';
