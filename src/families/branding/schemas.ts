import { type Static, Type } from '@sinclair/typebox';
import { CHECKED_BY_OPERATION } from '../../http/validation.js';
import { IsoDateTime, paged, Text } from '../../http/schemas.js';
import { logoContentTypes, logoMaxBytes, logoMaxSide } from './images.js';

/** Base64 of the largest logo, with room for line breaks the decoder ignores: the service measures the bytes. */
const base64MaxLength = Math.ceil(logoMaxBytes / 3) * 4 + 8192;

export const brandingConfigIdNote =
  "A study plan's `brandingConfigId` stays free text, as in the reference API: when it is the id of a branding config of the workspace (`brc_…`), the study's participant pages wear that config; " +
  "any other value (an id from another system, a config deleted since, another workspace's id) is kept as written, and the pages fall back to the workspace's defaults: its name, the pages' own blue accent, no logo.";

const accentDescription =
  "The colour of the pages' buttons (under white text), links and focus ring, as `#rrggbb` (stored in lower case). " +
  "Refused (400, path `[\"accentColor\"]`) unless it keeps a contrast of at least 4.5:1 (WCAG 2.2 AA) with the pages' white background and the white text drawn on it: " +
  'in WCAG\'s terms, a relative luminance of at most 0.183, e.g. `#1d3f8f` (10.4:1) or `#0f6e3a`; `#3b82f6` (3.67:1) is refused. Null: the pages\' own accent.';

const logoInputDescription =
  `The logo, sent inside the JSON as base64: a PNG, JPEG or WebP image of at most ${logoMaxBytes / 1024} KiB (${logoMaxBytes.toLocaleString('en')} bytes) and ${logoMaxSide} pixels on each side. ` +
  'The bytes must be the type named (checked by their magic bytes, and the dimensions read from the header); SVG is not accepted, whatever it is called, as it can carry script. ' +
  "The pages show it at most 3rem high, in the header beside the display name, served from this server at the path the answer's `logo.path` gives.";

export const LogoInput = Type.Object(
  {
    contentType: Type.String({
      enum: [...logoContentTypes],
      [CHECKED_BY_OPERATION]: true,
      description: 'The media type of the bytes: `image/png`, `image/jpeg` or `image/webp`. Checked by the service, which says why another is refused.',
    }),
    data: Type.String({
      minLength: 1,
      maxLength: base64MaxLength,
      pattern: '^[A-Za-z0-9+/=\\r\\n]+$',
      description: 'The image\'s bytes in base64 (RFC 4648 §4, padding optional; line breaks ignored).',
    }),
  },
  { additionalProperties: false, description: logoInputDescription },
);

const DisplayName = Text({ minLength: 1, maxLength: 100, description: "The name the study's participant pages show in their header and title, instead of the workspace's name (1–100 characters)." });
const AccentColor = Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', description: accentDescription, examples: ['#1d3f8f'] });
const LogoAlt = Text({
  minLength: 1,
  maxLength: 200,
  description:
    "The logo's text alternative, for people who cannot see it (at most 200 characters). Without one the logo is shown as decoration (`alt=\"\"`): the display name written beside it says who the page is from.",
});

/** A 1×1 PNG of the default accent (69 bytes). */
const examplePng = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGOQte8HAAFoAOxqjeLwAAAAAElFTkSuQmCC';

export const CreateBrandingConfigBody = Type.Object(
  {
    displayName: DisplayName,
    accentColor: Type.Optional(Type.Union([AccentColor, Type.Null()])),
    logo: Type.Optional(Type.Union([LogoInput, Type.Null()])),
    logoAlt: Type.Optional(Type.Union([LogoAlt, Type.Null()])),
  },
  { additionalProperties: false, examples: [{ displayName: 'Acme Research', accentColor: '#1d3f8f', logo: { contentType: 'image/png', data: examplePng }, logoAlt: 'Acme' }] },
);
export type CreateBrandingConfigBody = Static<typeof CreateBrandingConfigBody>;

export const UpdateBrandingConfigBody = Type.Object(
  {
    displayName: Type.Optional(DisplayName),
    accentColor: Type.Optional(Type.Union([AccentColor, Type.Null()], { description: `${accentDescription} Null removes it.` })),
    logo: Type.Optional(Type.Union([LogoInput, Type.Null()], { description: `${logoInputDescription} A new logo replaces the old; null removes it.` })),
    logoAlt: Type.Optional(Type.Union([LogoAlt, Type.Null()])),
  },
  { additionalProperties: false, examples: [{ accentColor: '#0f6e3a' }, { logo: null, logoAlt: null }] },
);
export type UpdateBrandingConfigBody = Static<typeof UpdateBrandingConfigBody>;

export const BrandingLogo = Type.Object(
  {
    contentType: Type.String({ enum: [...logoContentTypes] }),
    byteSize: Type.Integer({ minimum: 1, maximum: logoMaxBytes }),
    width: Type.Integer({ minimum: 1, maximum: logoMaxSide, description: 'Pixels, as the image\'s header gives them.' }),
    height: Type.Integer({ minimum: 1, maximum: logoMaxSide }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Lower-case hex SHA-256 of the bytes.' }),
    path: Type.String({
      description:
        'Where this server serves the logo to the participant pages (prefix PUBLIC_URL for an absolute address): named by the hash, so a new logo is a new path, and served with a year\'s cache, its content type and `X-Content-Type-Options: nosniff`.',
    }),
  },
  { $id: 'BrandingLogo', title: 'BrandingLogo', description: 'The logo as stored (its bytes are served at `path`, not returned here).' },
);

const exampleConfig = {
  brandingConfigId: 'brc_01JD0000000000000000000000',
  displayName: 'Acme Research',
  accentColor: '#1d3f8f',
  logo: {
    contentType: 'image/png',
    byteSize: 69,
    width: 1,
    height: 1,
    sha256: '2d97a9f155e666849b78ae2d49ec3eb57cc4516c2417f6104ae8cb0c90a09d06',
    path: '/p/assets/logo-2d97a9f155e666849b78ae2d49ec3eb57cc4516c2417f6104ae8cb0c90a09d06.png',
  },
  logoAlt: 'Acme',
  createdAt: '2026-12-07T10:00:00.000Z',
  updatedAt: '2026-12-07T10:00:00.000Z',
  createdByUserId: 'usr_01JD0000000000000000000000',
};

export const BrandingConfig = Type.Object(
  {
    brandingConfigId: Type.String(),
    displayName: Type.String(),
    accentColor: Type.Union([Type.String({ pattern: '^#[0-9a-f]{6}$' }), Type.Null()]),
    logo: Type.Union([Type.Ref(BrandingLogo), Type.Null()]),
    logoAlt: Type.Union([Type.String(), Type.Null()]),
    createdAt: IsoDateTime(),
    updatedAt: IsoDateTime(),
    createdByUserId: Type.String({ description: 'The user whose token created it.' }),
  },
  {
    $id: 'BrandingConfig',
    title: 'BrandingConfig',
    description: `How a study's participant pages look: the name they show, an accent colour and a logo. ${brandingConfigIdNote}`,
    examples: [exampleConfig],
  },
);
export type BrandingConfig = Static<typeof BrandingConfig>;

export const BrandingConfigList = paged(Type.Ref(BrandingConfig), 'BrandingConfigList', exampleConfig);

export const BrandingConfigParams = Type.Object({ brandingConfigId: Type.String({ minLength: 1, maxLength: 100 }) });

export const brandingSchemas = [BrandingLogo, BrandingConfig];
