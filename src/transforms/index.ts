export { compileTransform } from './compile.js';
export { createTransformHost, type TransformHost } from './host.js';
export { createSandbox } from './sandbox.js';
