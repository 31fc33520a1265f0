/** Reading, finding and editing files, confined to the run's workspace. */
import fileSearch from './file_search.js';
import listFiles from './list_files.js';
import strReplaceEditor from './str_replace_editor.js';

export default [strReplaceEditor, fileSearch, listFiles];
