/** Running code in the run's sandbox: a persistent bash session and Python, fresh or persistent. */
import bash from './bash.js';
import pythonExecute from './python_execute.js';

export default [pythonExecute, bash];
