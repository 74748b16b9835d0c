import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

// Every folder of src/features is a feature of its own.
const features = readdirSync(new URL('./src/features', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

const layering = 'Imports flow app → features → components/lib/config; a feature never imports another feature.';

export default tseslint.config(
  { ignores: ['dist', 'node_modules', 'src/lib/api/schema.ts', 'e2e/screenshots'] },
  {
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    files: ['src/**/*.{ts,tsx}', 'vite.config.ts'],
    languageOptions: { ecmaVersion: 2022, globals: globals.browser },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // bulletproof-react layering, with the core rule (the import plugin's resolver
  // pulls native bindings that `npm ci` cannot lock for every platform here).
  ...features.map((f) => ({
    files: [`src/features/${f}/**/*.{ts,tsx}`],
    ignores: ['src/**/__tests__/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@/features/*', `!@/features/${f}`], message: layering },
            { group: ['@/app', '@/app/*'], message: layering },
            { group: ['../../*', '../../../*'], message: 'Leave a feature through @/ imports only.' },
          ],
        },
      ],
    },
  })),
  {
    files: ['src/components/**/*.{ts,tsx}', 'src/lib/**/*.{ts,tsx}', 'src/config/**/*.{ts,tsx}'],
    ignores: ['src/**/__tests__/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@/features', '@/features/*', '@/app', '@/app/*'], message: layering }] },
      ],
    },
  },
  {
    files: ['e2e/**/*.mjs', 'scripts/**/*.mjs', 'eslint.config.js'],
    extends: [js.configs.recommended],
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: globals.node },
  },
  {
    // page.evaluate callbacks run in the browser.
    files: ['e2e/**/*.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
);
