/** A status value (DRAFT, ACTIVE, NOT_STARTED…) as a badge: its words, styled by value (console.css). */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status.toLowerCase().replace(/_/g, '-')}`}>{humanize(status)}</span>;
}

/** `NOT_STARTED` → `Not started`. */
export function humanize(value: string): string {
  const words = value.toLowerCase().replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
