// Defined in the kernel, which loads it from its own bundle (see runtime/plugins/load-plugins.ts).
export { default } from '../runtime/terminate-tool.js';
