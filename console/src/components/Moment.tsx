import { formatDay, formatMoment, formatZonedMoment } from '../format.js';

const formats = { day: formatDay, moment: formatMoment, zoned: formatZonedMoment };

/**
 * An instant from the API as a `<time>` element: its text in the viewer's locale and time zone
 * (`day`, `moment`, or `zoned`, which names the zone), its machine-readable value the UTC instant.
 */
export function Moment({ at, as = 'moment' }: { at: string; as?: keyof typeof formats }) {
  return <time dateTime={at}>{formats[as](at)}</time>;
}
