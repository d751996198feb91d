export { toMailMessage, truncateUtf8 } from './message.js';
export { chunksOf, createMailWatcher, type MailWatcher } from './watcher.js';
