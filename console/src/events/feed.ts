/** The API's largest page of events: a feed is read through with as few requests as it allows. */
const readSize = 100;

/**
 * Reads one of the API's event feeds (GET /study-status-events, /participant-status-events with
 * studyId) forward from `startCursor` to its end, page by page with the API's keyset cursors.
 * The feeds are oldest first and poll forward only, so showing the newest first means reading to
 * the end; "Check for newer events" then polls from the cursor kept, as the API intends.
 */
export async function readFeed<Event>(
  fetchPage: (query: { studyId: string; size: number; startCursor?: string }) => Promise<{ results: Event[]; pageInfo: { endCursor: string; hasNextPage: boolean } }>,
  studyId: string,
  startCursor: string | undefined,
): Promise<{ events: Event[]; cursor: string | undefined }> {
  const events: Event[] = [];
  let cursor = startCursor;
  for (;;) {
    const page = await fetchPage({ studyId, size: readSize, ...(cursor ? { startCursor: cursor } : {}) });
    events.push(...page.results);
    cursor = page.pageInfo.endCursor;
    if (!page.pageInfo.hasNextPage) return { events, cursor };
  }
}
