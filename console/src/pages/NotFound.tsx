import { Link } from 'wouter-preact';

export function NotFoundPage() {
  return (
    <>
      <h1>Page not found</h1>
      <p>
        There is no such page in the console. <Link href="/studies">Go to the studies</Link>.
      </p>
    </>
  );
}
