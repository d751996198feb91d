export { claimMailbox, releaseMailbox, startClaimed } from './local-claim.js';
export { toMailMessage, truncateUtf8 } from './message.js';
export { createMailWatcher, type MailWatcherStatus } from './watcher.js';
