export { sqliteBackend } from './backend.js';
export { bodySegmentBytesFor } from './bodies.js';
export { type Checkpointer, startCheckpointer, WRITER_AUTOCHECKPOINT_BYTES } from './checkpointer.js';
export { sqliteContract } from './contract.js';
export type { AutoVacuumEvent } from './db.js';
export { createStoreSink } from './sink.js';
export { createStore, type Store } from './store.js';
