export { findInjectionPhrases, sanitizeMarkers } from './safety.js';
export { unwrapExternalContent, wrapExternalContent } from './wrapper.js';
