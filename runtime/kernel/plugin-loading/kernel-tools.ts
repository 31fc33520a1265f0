/** The tools the kernel defines itself: every run can finish with `terminate`, whatever plugins it loads. */
import terminate from '../terminate-tool.js';
import type { AnyToolDefinition } from '../../contract/tool.js';

export const kernelTools: readonly AnyToolDefinition[] = [terminate];
