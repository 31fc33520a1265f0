/** The web without a browser: search engines and plain page fetches, read as Markdown. */
import webFetch from './web_fetch.js';
import webSearch from './web_search.js';

export default [webSearch, webFetch];
