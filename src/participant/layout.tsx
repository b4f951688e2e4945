import { type ComponentChildren, createContext, type VNode } from 'preact';
import { useContext } from 'preact/hooks';
import { renderToString } from 'preact-render-to-string';
import type { Translator } from './i18n.js';
import { participantStylesheetPath } from './styles.js';

/** A study's branding on its pages (src/participant/branding.ts): its name is the pages' `from`; its accent a stylesheet; its logo an image of this server. */
export interface PageBrand {
  displayName: string;
  stylesheetPath?: string;
  logo?: { path: string; alt: string | null; width: number; height: number };
}
const BrandContext = createContext<PageBrand | undefined>(undefined);

export interface PageProps {
  i18n: Translator;
  /** The page's <title> and its one <h1>. */
  title: string;
  /** Who the page is from (the workspace's display name); omitted on a page for a link that leads nowhere. */
  from?: string | undefined;
  /** The footer's word on cookies: the person's own pages keep a session cookie (src/participant/hub/). */
  privacy?: string | undefined;
  children?: ComponentChildren;
}

/**
 * Every participant page's frame: the language and direction of the study, a skip link, who the
 * page is from, one main landmark with the page's heading, a footer. No script.
 */
export function Page({ i18n, title, from, privacy, children }: PageProps) {
  const brand = useContext(BrandContext);
  return (
    <html lang={i18n.locale} dir={i18n.direction}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <meta name="robots" content="noindex, nofollow" />
        <title>{from ? `${title} – ${from}` : title}</title>
        <link rel="stylesheet" href={participantStylesheetPath} />
        {brand?.stylesheetPath ? <link rel="stylesheet" href={brand.stylesheetPath} /> : null}
      </head>
      <body>
        <a class="skip-link" href="#main">
          {i18n.t('page.skipToContent')}
        </a>
        {from ? (
          <header class="site">
            {brand?.logo ? <img class="logo" src={brand.logo.path} alt={brand.logo.alt ?? ''} width={brand.logo.width} height={brand.logo.height} /> : null}
            <p>{from}</p>
          </header>
        ) : null}
        <main id="main" tabIndex={-1}>
          <h1>{title}</h1>
          {children}
        </main>
        <footer class="site">
          {from ? <p>{i18n.t('page.sentBy', { workspace: from })}</p> : null}
          <p>{privacy ?? i18n.t('page.privacy')}</p>
        </footer>
      </body>
    </html>
  );
}

/** A whole document: the doctype and the rendered page, wearing the study's brand when it has one. */
export function documentOf(page: VNode, brand?: PageBrand): string {
  return `<!doctype html>\n${renderToString(brand ? <BrandContext.Provider value={brand}>{page}</BrandContext.Provider> : page)}`;
}

/** A page with a heading and a paragraph or two, and no form: links that lead nowhere, closed studies, thanks. */
export function NoticePage(props: { i18n: Translator; title: string; from?: string | undefined; paragraphs: string[]; privacy?: string; link?: { href: string; text: string } }) {
  return (
    <Page i18n={props.i18n} title={props.title} from={props.from} privacy={props.privacy}>
      {props.paragraphs.map((paragraph) => (
        <p>{paragraph}</p>
      ))}
      {props.link ? (
        <p>
          <a href={props.link.href}>{props.link.text}</a>
        </p>
      ) : null}
    </Page>
  );
}

export interface FieldError {
  /** The id of the control the error is about: the summary links to it. */
  fieldId: string;
  /** The field's own name (its question, its statement, its label): each link says which field it leads to. */
  field: string;
  message: string;
}

/** The error summary at the top of a form sent back: its heading, each error a link to its field (GOV.UK's pattern). */
export function ErrorSummary({ i18n, errors }: { i18n: Translator; errors: FieldError[] }) {
  if (errors.length === 0) return null;
  return (
    <div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabIndex={-1}>
      <h2 id="error-summary-title">{i18n.t('errors.summaryTitle')}</h2>
      <ul>
        {errors.map((error) => (
          <li>
            <a href={`#${error.fieldId}`}>{i18n.t('errors.summaryItem', { field: error.field, message: error.message })}</a>
          </li>
        ))}
      </ul>
    </div>
  );
}
