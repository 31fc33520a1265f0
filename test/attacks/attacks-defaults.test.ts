import { attackSuite, documentedRoutes } from './attack-suite.js';

/** Every attack case and benign task under the defaults configuration (see attack-suite.ts). */
await attackSuite('defaults');
documentedRoutes();
