import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // sdk/src/generated/openapi.ts is openapi-typescript's output (regenerated, never edited): type-checked, not linted.
  { ignores: ['node_modules/', 'data/', 'dist/', 'sdk/dist/', 'console/dist/', 'sdk/src/generated/openapi.ts', '.ci/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
    },
  },
  {
    // Typed linting, for the rules that need the types: a promise nobody awaits loses its error.
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  { files: ['eslint.config.js', 'vitest.config.ts', 'console/vite.config.ts'], rules: { 'no-restricted-syntax': 'off' } },
  {
    // The console runs in a browser: its globals, and no Node ones (console/tsconfig.json has the DOM types).
    files: ['console/src/**/*.{ts,tsx}'],
    languageOptions: {
      globals: {
        window: 'readonly', document: 'readonly', location: 'readonly', sessionStorage: 'readonly', fetch: 'readonly', URL: 'readonly',
        URLSearchParams: 'readonly', FormData: 'readonly', HTMLFormElement: 'readonly', Event: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly',
        process: 'off', Buffer: 'off',
      },
    },
  },
  {
    // The engine knows no family: what it needs of them (their names, the segments a filter names) it is given.
    files: ['src/search/**/*.ts'],
    ignores: ['src/search/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)families(/|$)', message: 'src/search/ is the engine and imports no family: pass what it needs in (see Catalogue in src/search/catalogue.ts).' }] }],
    },
  },
  {
    // The HTTP plumbing and the job runner know no family either: app.ts hands them what they need
    // (the token lookup of the auth hook; each family's jobs, src/families/jobs.ts).
    files: ['src/http/**/*.ts', 'src/jobs/**/*.ts'],
    ignores: ['src/http/**/*.test.ts', 'src/jobs/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)families(/|$)', message: 'src/http/ and src/jobs/ import no family: have app.ts hand in what they need (see TokenLookup in src/http/auth.ts, registerFamilyJobs in src/families/jobs.ts).' }] }],
    },
  },
);
