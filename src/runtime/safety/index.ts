export { findInjectionPhrases, sanitizeMarkers, wrapExternalContent } from './safety.js';
