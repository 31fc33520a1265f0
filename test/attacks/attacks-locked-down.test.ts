import { attackSuite } from './attack-suite.js';

/** Every attack case and benign task under the locked-down configuration (see attack-suite.ts). */
await attackSuite('locked-down');
