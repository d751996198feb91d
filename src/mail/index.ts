export { type MailMessage, toMailMessage, truncateUtf8 } from './message.js';
export {
  createMailWatcher,
  type MailWatcher,
  type MailWatcherOptions,
  type MailWatcherStatus,
} from './watcher.js';
