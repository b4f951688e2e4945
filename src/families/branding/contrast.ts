/**
 * The accent colour's contrast, as WCAG 2.2 defines it (relative luminance, contrast ratio). The
 * participant pages draw the accent as the buttons' background under white text, as the links'
 * colour on the white page, and as the ring around the focused control; both the page's
 * background and the buttons' text are white (#ffffff, src/participant/styles.ts), so one ratio
 * decides: the accent against white must reach 4.5:1, the minimum for text (success criterion
 * 1.4.3). That also keeps the focus ring over 3:1 (1.4.11) against the page and its yellow outline.
 */

/** The pages' background, and the colour of the text drawn on the accent. */
export const pageBackground = '#ffffff';
export const textOnAccent = '#ffffff';
export const minimumContrast = 4.5;
/** The pages' own accent, when a study has no branding: 10.4:1 against white. */
export const defaultAccent = '#1d3f8f';

/** WCAG's relative luminance of #rrggbb: each sRGB channel linearised, weighted 0.2126, 0.7152, 0.0722. */
export function relativeLuminance(hex: string): number {
  const channel = (offset: number) => {
    const value = Number.parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return value <= 0.04045 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** The contrast ratio of two colours, from 1 (none) to 21 (black on white). */
export function contrastRatio(first: string, second: string): number {
  const [lighter, darker] = [relativeLuminance(first), relativeLuminance(second)].sort((a, b) => b - a) as [number, number];
  return (lighter + 0.05) / (darker + 0.05);
}

/** The highest luminance an accent may have and keep 4.5:1 against white: 1.05 / 4.5 − 0.05. */
export const maximumAccentLuminance = (relativeLuminance(pageBackground) + 0.05) / minimumContrast - 0.05;

/** Why the accent cannot be used on the pages, or undefined when it keeps 4.5:1 with the page and the text on it. */
export function accentRefusal(hex: string): string | undefined {
  const onPage = contrastRatio(hex, pageBackground);
  const underText = contrastRatio(hex, textOnAccent);
  const worst = Math.min(onPage, underText);
  if (worst >= minimumContrast) return undefined;
  // Floored, so a ratio shown as 4.5 is never one that was refused.
  const shown = Math.floor(worst * 100) / 100;
  return (
    `accentColor ${hex} has a contrast of ${shown}:1 with the pages' white background (${pageBackground}) and the white text drawn on it (${textOnAccent}); ` +
    `at least ${minimumContrast}:1 is needed (WCAG 2.2 AA): choose a darker colour, one whose relative luminance is at most ${maximumAccentLuminance.toFixed(3)}, such as ${defaultAccent}`
  );
}
