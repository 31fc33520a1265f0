/**
 * Plugins loaded from files import 'manus-runtime'. The bundle provides its own API to them; tests
 * run the runtime from its source, so they provide the source's.
 */
import { providePublicApi } from '../../runtime/kernel/plugin-loading/public-api.js';

providePublicApi(() => import('../../runtime/index.js'));
