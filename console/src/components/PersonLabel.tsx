import { Link } from 'wouter-preact';
import { MaybeMasked } from './Masked.js';

/**
 * Who a row is about: the person's name, and their email beneath it (both as the API gives them,
 * so masked for a token without the personal-data right), linked to their page when `personId`
 * is known. Without a name, the email alone; without either (their data erased), `missing`.
 */
export function PersonLabel(props: { name: string | null | undefined; email: string | null | undefined; personId?: string | undefined; missing?: string }) {
  const { name, email, personId, missing = 'A deleted person' } = props;
  if (!name && !email) return <span class="muted">{missing}</span>;
  const first = <MaybeMasked value={name || email} />;
  return (
    <span class="person-label">
      {personId ? <Link href={`/people/${encodeURIComponent(personId)}`}>{first}</Link> : first}
      {name && email && (
        <>
          {' '}
          <span class="person-email">
            <MaybeMasked value={email} />
          </span>
        </>
      )}
    </span>
  );
}
