/** Previous/next over keyset pages (useCursorPages), with where the reader is. */
export function Pager(props: {
  pageNumber: number;
  total: number | undefined;
  shown: number;
  hasNextPage: boolean;
  onPrevious(): void;
  onNext(): void;
  label: string;
}) {
  return (
    <nav class="pager" aria-label={props.label}>
      <button type="button" class="secondary" disabled={props.pageNumber <= 1} onClick={props.onPrevious}>
        Previous
      </button>
      <span aria-live="polite">
        Page {props.pageNumber}
        {props.total !== undefined && ` · ${props.shown} shown of ${props.total}`}
      </span>
      <button type="button" class="secondary" disabled={!props.hasNextPage} onClick={props.onNext}>
        Next
      </button>
    </nav>
  );
}
