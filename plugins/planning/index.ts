/** Plans: the tool an agent keeps its plan with, and the `plan` flow step a planner agent leads. */
import planning from './planning.js';
import planStep from './plan-step.js';

export default [planning, planStep];
