/**
 * How a batch's items are named to people. The batch folder, the queue's jobs and the code key an
 * item by its position in the inputs, from 0; everything a person reads (the terminal table, the
 * progress lines, JUnit, the HTML pages and their file names, the viewer's addresses, a worker's
 * log) numbers it from 1, as the inputs' rows are counted. Both directions go through here.
 */

/** The number a person sees for the item at `index`. */
export function itemNumber(index: number): number {
  return index + 1;
}

/** The index of the item a person named by `number`, or undefined when it names none. */
export function itemIndex(number: string): number | undefined {
  if (!/^[1-9]\d*$/.test(number)) return undefined;
  return Number(number) - 1;
}

/** An item's input on one line, as `name=value, ...`, cut to `width` characters. */
export function itemInputSummary(parameters: Record<string, unknown>, width: number): string {
  const text = Object.entries(parameters).map(([name, value]) => `${name}=${typeof value === 'string' ? value : JSON.stringify(value)}`).join(', ').replace(/\s+/g, ' ');
  return text.length <= width ? text : `${text.slice(0, width - 3)}...`;
}
