import type { Problem } from '../api.js';

/** A problem the page could not place beside a field: announced to screen readers as it appears. */
export function ErrorNotice({ problem, extra = [] }: { problem: Problem | undefined; extra?: string[] }) {
  if (!problem) return null;
  return (
    <div class="notice notice-error" role="alert">
      <p>{problem.summary}</p>
      {extra.length > 0 && (
        <ul>
          {extra.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      )}
      {problem.requestId && <p class="muted">Request id: {problem.requestId}</p>}
    </div>
  );
}
