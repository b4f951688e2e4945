import { type RecruitClient, unwrap } from '@recruit-ops/sdk/browser';

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

/**
 * The status a HIDDEN participant had before hiding (the only status it may return to), from the
 * study's participant status events: the participant record does not carry it.
 */
export async function statusBeforeHidden(api: RecruitClient, studyId: string, participantId: string): Promise<string | undefined> {
  const fetchPage = async (query: { studyId: string; size: number; startCursor?: string }) => unwrap(await api.GET('/participant-status-events', { params: { query } }));
  let { events, cursor } = await readFeed(fetchPage, studyId, undefined);
  // An event shows once every transaction that began before it has ended: a hide made a moment
  // ago may arrive a little later. Poll on from the cursor for a few seconds.
  for (let attempt = 0; ; attempt++) {
    const hidden = events.filter((event) => event.participantId === participantId && event.field === 'status' && event.to === 'HIDDEN').pop();
    if (hidden || attempt >= 10) return hidden?.from ?? undefined;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const newer = await readFeed(fetchPage, studyId, cursor);
    events = [...events, ...newer.events];
    cursor = newer.cursor;
  }
}
