import { attackSuite } from './attack-suite.js';

/** Every attack case and benign task under the trust-all configuration (see attack-suite.ts). */
await attackSuite('trust-all');
