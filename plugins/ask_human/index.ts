/** Questions to the person running the agent. */
import askHuman from './ask_human.js';

export default [askHuman];
