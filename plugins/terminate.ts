// The kernel defines terminate, since ending a run is the loop's business; this file lists it with the other built-in tools.
export { default } from '../runtime/terminate-tool.js';
