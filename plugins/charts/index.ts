/** Charts from data and a Vega-Lite specification, drawn without a browser. */
import chartVisualization from './chart_visualization.js';

export default [chartVisualization];
