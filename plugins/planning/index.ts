/** Plans the agent keeps and updates while it works through a long task. */
import planning from './planning.js';

export default [planning];
