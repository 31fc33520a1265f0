/**
 * Draws a chart from data and a Vega-Lite specification and writes it into the workspace as SVG,
 * PNG and a self-contained interactive HTML page. The specification is checked against Vega-Lite's
 * JSON Schema first, so a mistake comes back to the model as a list of what is wrong.
 */
import { basename } from 'node:path';
import { defineTool, ToolError, type ToolContext, type ToolResult } from 'manus-runtime';
import { checkInlineRows, readDataFile, type DataRow } from './chart-data.js';
import { checkSpecification } from './spec-validation.js';

const chartFormats = ['svg', 'png', 'html'] as const;
type ChartFormat = (typeof chartFormats)[number];

export default defineTool({
  name: 'chart_visualization',
  permissionArguments: { data_file: 'path' },
  description:
    'Draw a chart from data and a Vega-Lite (v6) specification, and save it in the workspace as SVG, PNG and an ' +
    'interactive self-contained HTML page (works offline). Give the rows in "data" (an array of objects) or a ' +
    'workspace CSV, TSV or JSON file in "data_file"; the specification names their fields in its encoding and ' +
    'needs no "data" of its own. "output" is the path of the files without extension (e.g. "charts/sales"). ' +
    '"width" and "height" are the size of the whole chart in pixels, and of the PNG.',
  parameters: {
    type: 'object',
    properties: {
      specification: {
        type: 'object',
        description: 'A Vega-Lite specification: mark, encoding, transforms, title and so on, as JSON.',
      },
      data: { type: 'array', items: { type: 'object' }, description: 'The rows to draw, each an object of named fields.' },
      data_file: { type: 'string', minLength: 1, description: 'A CSV, TSV or JSON file in the workspace holding the rows.' },
      output: {
        type: 'string',
        minLength: 1,
        description: 'Where to write, relative to the workspace, without extension; ".svg", ".png" and ".html" are added.',
      },
      formats: {
        type: 'array',
        items: { type: 'string', enum: [...chartFormats] },
        minItems: 1,
        uniqueItems: true,
        description: 'Which files to write. Default: all of svg, png and html.',
      },
      width: { type: 'integer', minimum: 50, maximum: 4000, description: 'Width of the chart in pixels. Default: the specification\'s own.' },
      height: { type: 'integer', minimum: 50, maximum: 4000, description: 'Height of the chart in pixels. Default: the specification\'s own.' },
      return_image: { type: 'boolean', description: 'Also show the PNG to a model that can see images. Default: true.' },
    },
    required: ['specification', 'output'],
  },
  async execute(input, context): Promise<ToolResult> {
    const formats: ChartFormat[] = input.formats ?? [...chartFormats];
    const outputs = outputPaths(context, input.output, formats);
    const rows = await chartRows(context, input.data, input.data_file, input.specification);
    const specification = sizedSpecification({ ...input.specification, data: { values: rows } }, input.width, input.height);
    await checkSpecification(specification);

    const { renderSvg, rasterise } = await import('./chart-rendering.js');
    const { svg, warnings } = await renderSvg(specification);
    const written: string[] = [];
    const images: ToolResult['images'] = [];
    const lines: string[] = [];
    for (const format of formats) {
      const path = outputs[format];
      const writeFile = (data: string | Buffer) => context.files.writeFile(path, data, { parents: true });
      if (format === 'svg') {
        await writeFile(svg);
      } else if (format === 'png') {
        const svgWidth = Number(/<svg[^>]*\swidth="([\d.]+)"/.exec(svg)?.[1]);
        const image = await rasterise(svg, Math.round(input.width ?? svgWidth));
        await writeFile(image.png);
        if (input.return_image !== false) images.push({ data: image.png.toString('base64'), mimeType: 'image/png' });
        lines.push(`PNG size: ${image.width}x${image.height} pixels.`);
      } else {
        const { interactivePage } = await import('./interactive-page.js');
        const title = typeof input.specification.title === 'string' ? input.specification.title : basename(input.output);
        await writeFile(await interactivePage(specification, title));
      }
      written.push(path);
    }
    const warningLines = [...new Set(warnings)].map((warning) => `Warning: ${warning}`);
    return {
      content: [`Chart of ${rows.length} row(s) written: ${written.join(', ')}.`, ...lines, ...warningLines].join('\n'),
      files: written,
      ...(images.length > 0 ? { images } : {}),
    };
  },
});

/**
 * Workspace-relative output paths. Each is checked to lie inside the workspace before anything is
 * drawn, so a path outside costs no rendering; protected paths are refused when written.
 */
function outputPaths(context: ToolContext, output: string, formats: ChartFormat[]): Record<ChartFormat, string> {
  const stem = output.replace(/\.(svg|png|html?)$/i, '');
  const paths = {} as Record<ChartFormat, string>;
  for (const format of formats) paths[format] = context.files.relativePath(`${stem}.${format}`);
  return paths;
}

async function chartRows(context: ToolContext, data: unknown[] | undefined, dataFile: string | undefined, specification: Record<string, unknown>): Promise<DataRow[]> {
  if (data !== undefined && dataFile !== undefined) throw new ToolError('Give the rows either in "data" or in "data_file", not both.', 'invalid_data');
  if (data !== undefined) return checkInlineRows(data);
  if (dataFile !== undefined) return readDataFile(context, dataFile);
  const own = specification.data as { values?: unknown } | undefined;
  if (Array.isArray(own?.values)) return checkInlineRows(own.values);
  throw new ToolError('No data: give the rows in "data" or a workspace file in "data_file".', 'missing_data');
}

/**
 * A requested size is the size of the whole chart, axes and legend included ("fit" autosizing),
 * so the PNG comes out exactly as large as asked.
 */
function sizedSpecification(specification: Record<string, unknown>, width: number | undefined, height: number | undefined): Record<string, unknown> {
  if (width === undefined && height === undefined) return specification;
  return {
    ...specification,
    ...(width !== undefined ? { width } : {}),
    ...(height !== undefined ? { height } : {}),
    autosize: { type: width === undefined ? 'fit-y' : height === undefined ? 'fit-x' : 'fit', contains: 'padding' },
  };
}
