/**
 * Personal data as the API masks it for a token without the personal-data right (`cli token
 * create --no-pii`): text becomes "***", emails "***@***", and so do values of properties flagged
 * isPII or isPHI. The console shows the value exactly as the API returned it, marked as masked,
 * and never offers to edit it (the form would write the mask back).
 */
export const maskedValues: readonly string[] = ['***', '***@***'];

export function isMasked(value: unknown): boolean {
  return typeof value === 'string' && maskedValues.includes(value);
}

/** A value that may be masked: the value, and beside a masked one a "Masked" badge saying why. */
export function MaybeMasked({ value, empty = '—' }: { value: string | null | undefined; empty?: string }) {
  if (value === null || value === undefined || value === '') return <span class="muted">{empty}</span>;
  if (!isMasked(value)) return <>{value}</>;
  return (
    <span class="masked" data-masked="true">
      {value}{' '}
      <span class="badge badge-masked" title="Your token may not read personal data">
        Masked<span class="visually-hidden"> (your token may not read personal data)</span>
      </span>
    </span>
  );
}
