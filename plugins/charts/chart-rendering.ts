/**
 * Draws a Vega-Lite specification in Node: compiled to Vega, rendered by Vega's own SVG renderer,
 * rasterised by resvg. The view may load nothing: its data is given inline, so a specification
 * cannot make the runtime read files or reach the network.
 */
import { ToolError } from 'manus-runtime';

export interface RenderedChart {
  svg: string;
  /** What Vega-Lite and Vega warned about (a field the data lacks, a size it could not fit). */
  warnings: string[];
}

/**
 * What Vega's View takes as a loader: every attempt to load a URL or file is refused and noted
 * (Vega itself only logs a failed load and draws without the data).
 */
function refusingLoader(refused: string[]) {
  const refuse = async (uri: string): Promise<never> => {
    refused.push(uri);
    throw new Error(`loading ${uri} is not allowed`);
  };
  return { load: refuse, sanitize: refuse, http: refuse, file: refuse };
}

export async function renderSvg(specification: Record<string, unknown>): Promise<RenderedChart> {
  const [vega, vegaLite] = await Promise.all([import('vega'), import('vega-lite')]);
  const warnings: string[] = [];
  const logger = vega.logger(vega.Warn);
  const collect = (...messages: unknown[]) => { warnings.push(messages.map(String).join(' ')); return logger; };
  Object.assign(logger, { warn: collect, info: () => logger, debug: () => logger });
  let compiled;
  try {
    compiled = vegaLite.compile(specification as never, { logger: logger as never }).spec;
  } catch (error) {
    throw new ToolError(`Vega-Lite cannot compile the specification: ${(error as Error).message}`, 'invalid_specification');
  }
  const refused: string[] = [];
  let view;
  try {
    view = new vega.View(vega.parse(compiled), { renderer: 'none', loader: refusingLoader(refused) as never, logger });
    const svg = await view.toSVG();
    // A colour is the model's text and Vega writes it as it is: `url(http://…)` as a fill would
    // make the picture fetch that address (with whatever it carries) when the user opens it.
    refused.push(...[...svg.matchAll(/url\(\s*['"]?(?!#)([^'")]*)/g)].map((match) => match[1]!));
    if (refused.length > 0) {
      throw new ToolError(`The specification tries to load ${refused.map((uri) => `"${uri}"`).join(', ')}; give the data through "data" or "data_file" instead.`, 'external_data_refused');
    }
    return { svg, warnings };
  } catch (error) {
    if (ToolError.isInstance(error)) throw error;
    throw new ToolError(`Vega cannot render the chart: ${(error as Error).message}`, 'render_failed');
  } finally {
    view?.finalize();
  }
}

/** The SVG as a PNG of the given width (the height follows from the SVG's own proportions). */
export async function rasterise(svg: string, width: number): Promise<{ png: Buffer; width: number; height: number }> {
  const { Resvg } = await import('@resvg/resvg-js');
  const image = new Resvg(svg, {
    fitTo: { mode: 'width', value: width },
    background: 'white',
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  }).render();
  return { png: image.asPng(), width: image.width, height: image.height };
}
