import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorNotice } from './components/ErrorNotice.js';

/**
 * A page whose code is a chunk of its own, loaded the first time it is shown (the search pages
 * carry the filter language's names and the builder, which the other pages do not need). The chunk
 * is a file of the same origin, so the policy's script-src 'self' covers it.
 */
export function lazyPage<Props extends object>(load: () => Promise<ComponentType<Props>>): ComponentType<Props> {
  let loaded: ComponentType<Props> | undefined;
  return function LazyPage(props: Props) {
    const [Page, setPage] = useState<ComponentType<Props> | undefined>(() => loaded);
    const [failed, setFailed] = useState(false);
    useEffect(() => {
      if (Page) return;
      load().then(
        (component) => {
          loaded = component;
          setPage(() => component);
        },
        () => setFailed(true),
      );
    }, []);
    if (failed) return <ErrorNotice problem={{ status: 0, summary: 'This page could not be loaded. Check the connection and reload.', fields: [] }} />;
    if (!Page) return <p aria-busy="true">Loading…</p>;
    return <Page {...props} />;
  };
}
