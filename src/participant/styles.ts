import { createHash } from 'node:crypto';

/**
 * The participant's pages' one stylesheet, served from the same origin (the Content-Security-Policy
 * allows no inline style) under a name that carries its hash, so a browser keeps it for good.
 * Mobile first: one column that fits 320 px; logical properties (inline-start/end) so the same
 * rules read right to left; focus drawn thick and with contrast on every control; colours at
 * least 4.5:1 (text) and 3:1 (borders, focus) against the background. The accent is a custom
 * property (--accent) that a study's branding sets in a stylesheet of its own (src/participant/branding.ts):
 * buttons, links and the focus ring's outer edge; the branding family refuses an accent under
 * 4.5:1 against white.
 */
export const participantStylesheet = `
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans Arabic", sans-serif; font-size: 1.1875rem; line-height: 1.5; color: #0b0c0c; background: #ffffff; overflow-wrap: anywhere; }
.skip-link { position: absolute; inset-inline-start: -10000px; top: 0; padding: 0.5rem 1rem; background: #ffdd00; color: #0b0c0c; }
.skip-link:focus { inset-inline-start: 0; z-index: 10; }
header.site { border-block-end: 0.5rem solid var(--accent, #1d3f8f); padding: 0.75rem 1rem; }
header.site p { margin: 0; font-weight: 700; }
header.site img.logo { display: block; max-height: 3rem; max-width: 100%; width: auto; height: auto; margin-block-end: 0.5rem; }
main { display: block; max-width: 40rem; margin: 0 auto; padding: 1rem; }
footer.site { max-width: 40rem; margin: 2rem auto 0; padding: 1rem; border-block-start: 1px solid #6f777b; font-size: 1rem; color: #383f43; }
h1 { font-size: 1.75rem; line-height: 1.2; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.375rem; }
p { margin: 0 0 1rem; }
a { color: var(--accent, #1d3f8f); text-decoration: underline; text-underline-offset: 0.15em; }
a:focus, button:focus, input:focus, textarea:focus, select:focus, summary:focus { outline: 3px solid #ffdd00; outline-offset: 0; box-shadow: 0 0 0 6px var(--accent, #0b0c0c); }
.question { margin: 0 0 2rem; padding: 0; border: 0; min-width: 0; }
.question legend, .question > label { display: block; font-weight: 700; margin-bottom: 0.25rem; padding: 0; }
.hint { display: block; color: #383f43; margin-bottom: 0.5rem; }
.error-message { display: block; color: #b3261e; font-weight: 700; margin-bottom: 0.5rem; }
.question.has-error { border-inline-start: 5px solid #b3261e; padding-inline-start: 0.75rem; }
input[type=text], input[type=number], input[type=date], input[type=email], textarea, select { display: block; width: 100%; max-width: 100%; font: inherit; padding: 0.4rem; border: 2px solid #0b0c0c; border-radius: 0; background: #ffffff; color: #0b0c0c; }
input[aria-invalid=true], textarea[aria-invalid=true] { border-color: #b3261e; }
textarea { min-height: 6rem; }
.choice { display: flex; align-items: flex-start; gap: 0.5rem; margin-bottom: 0.5rem; }
.choice input { width: 1.75rem; height: 1.75rem; margin: 0; flex: none; accent-color: var(--accent, #1d3f8f); }
.choice label { padding-top: 0.1rem; }
button.primary { font: inherit; font-weight: 700; padding: 0.6rem 1.2rem; min-height: 2.75rem; border: 2px solid transparent; background: var(--accent, #1d3f8f); color: #ffffff; cursor: pointer; }
.error-summary { border: 5px solid #b3261e; padding: 1rem; margin-bottom: 2rem; }
.error-summary h2 { margin-top: 0; }
.error-summary ul { margin: 0; padding-inline-start: 1.25rem; }
.error-summary a { color: #b3261e; font-weight: 700; }
.visually-hidden { position: absolute !important; width: 1px !important; height: 1px !important; margin: 0 !important; padding: 0 !important; overflow: hidden !important; clip: rect(0 0 0 0) !important; clip-path: inset(50%) !important; border: 0 !important; white-space: nowrap !important; }
.honeypot { display: none !important; }
.consent-text { border: 1px solid #6f777b; padding: 0 1rem; margin: 0 0 2rem; }
.consent-text h2, .consent-text h3, .consent-text h4 { font-size: 1.25rem; }
.statement.has-error { border-inline-start: 5px solid #b3261e; padding-inline-start: 0.75rem; }
.hub-section { margin-block-start: 2.5rem; }
.hub-list { list-style: none; margin: 0 0 1rem; padding: 0; }
.hub-list > li { border-block-end: 1px solid #6f777b; padding-block: 0.75rem; }
.hub-list form { margin-block-start: 0.5rem; }
.hub-item-title { font-weight: 700; display: block; }
.hub-status { border: 3px solid #00703c; padding: 0.75rem 1rem; margin: 0 0 1.5rem; }
.hub-bar { display: flex; justify-content: flex-end; margin: 0 0 1rem; }
button.secondary { font: inherit; padding: 0.5rem 1rem; min-height: 2.75rem; border: 2px solid var(--accent, #1d3f8f); background: #ffffff; color: var(--accent, #1d3f8f); cursor: pointer; text-align: start; }
button.warning { font: inherit; font-weight: 700; padding: 0.6rem 1.2rem; min-height: 2.75rem; border: 2px solid transparent; background: #b3261e; color: #ffffff; cursor: pointer; }
.notice { border-inline-start: 5px solid #1d3f8f; padding: 0.5rem 0.75rem; background: #eef2fa; }
.legend-heading { font-size: 1.375rem; margin: 0 0 0.25rem; }
button.secondary { font: inherit; padding: 0.5rem 1rem; min-height: 2.75rem; margin-block-start: 0.5rem; border: 2px solid #0b0c0c; background: #f3f2f1; color: #0b0c0c; cursor: pointer; }
.zone-form { margin: 0 0 2rem; }
.zone-form .question { margin-bottom: 0; }
fieldset.day { margin: 0 0 1.25rem; padding: 0; border: 0; min-width: 0; }
fieldset.day legend { font-weight: 700; padding: 0; margin-bottom: 0.5rem; }
.slot-time { display: block; font-weight: 700; }
.choice label .hint { margin-bottom: 0; }
nav.pages { display: flex; flex-wrap: wrap; gap: 1.5rem; margin: 0 0 2rem; }
dl.summary { margin: 0 0 1.5rem; }
dl.summary > div { border-block-end: 1px solid #6f777b; padding: 0.5rem 0; }
dl.summary dt { font-weight: 700; }
dl.summary dd { margin: 0; }
ul.actions { padding-inline-start: 1.25rem; }
ul.actions li { margin-bottom: 0.5rem; }
.button-group { display: flex; flex-wrap: wrap; align-items: center; gap: 1.5rem; }
`;

/** The stylesheet's path: its content's hash in the name, so it can be cached for good. */
export const participantStylesheetPath = `/p/assets/participant-${createHash('sha256').update(participantStylesheet).digest('hex').slice(0, 16)}.css`;
