/** Tools of the travel-handbook pack: the days of a trip, and links to places on OpenStreetMap. */
import { defineTool, ToolError } from 'manus-runtime';

const weekdays = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const dayInMilliseconds = 24 * 60 * 60 * 1000;

export const tripCalendar = defineTool({
  name: 'trip_calendar',
  description: 'Lists the days of a trip from its first date: day number, weekday and date, so an itinerary gets them right.',
  parameters: {
    type: 'object',
    properties: {
      start: { type: 'string', description: 'The first day, as YYYY-MM-DD.', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
      days: { type: 'integer', description: 'How many days the trip lasts.', minimum: 1, maximum: 60 },
    },
    required: ['start', 'days'],
    additionalProperties: false,
  },
  replaySafe: true,
  async execute(input) {
    const start = Date.parse(`${String(input.start)}T00:00:00Z`);
    if (Number.isNaN(start) || new Date(start).toISOString().slice(0, 10) !== input.start) {
      throw new ToolError(`'${String(input.start)}' is not a date: give the first day as YYYY-MM-DD`);
    }
    const lines: string[] = [];
    for (let day = 0; day < Number(input.days); day += 1) {
      const date = new Date(start + day * dayInMilliseconds);
      lines.push(`Day ${day + 1}: ${weekdays[date.getUTCDay()]} ${date.toISOString().slice(0, 10)}`);
    }
    return lines.join('\n');
  },
});

export const mapLink = defineTool({
  name: 'map_link',
  description: 'A link that finds a place on OpenStreetMap, for the handbook.',
  parameters: {
    type: 'object',
    properties: {
      place: { type: 'string', description: 'The place, e.g. "Belem Tower".', minLength: 1 },
      near: { type: 'string', description: 'The town or country it is in, to tell places of one name apart.' },
    },
    required: ['place'],
    additionalProperties: false,
  },
  replaySafe: true,
  async execute(input) {
    const query = [input.place, input.near].filter((part) => typeof part === 'string' && part.trim() !== '').join(', ');
    return `https://www.openstreetmap.org/search?query=${encodeURIComponent(query)}`;
  },
});

export default [tripCalendar, mapLink];
