import { configDefaults, defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { availableParallelism } from 'node:os';

// UPSTAIRS_API_URL lets `npm run dev` proxy /api to a running server.
const apiTarget = process.env.UPSTAIRS_API_URL ?? 'http://127.0.0.1:8080';

// Test files that replace a module of the app (`vi.mock`): they run each in a fresh worker.
const ISOLATED = ['src/app/__tests__/route-errors.test.tsx'];

export default defineConfig({
  plugins: [react()],
  resolve: { alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) } },
  server: { proxy: { '/api': apiTarget, '/ws': { target: apiTarget, ws: true } } },
  build: { sourcemap: false, manifest: true, chunkSizeWarningLimit: 900 },
  test: {
    environment: 'jsdom',
    globals: true,
    setupFiles: ['./src/testing/setup-tests.ts'],
    // A hang guard, not a speed check: the longest form flows (typing a whole instrument)
    // took 12–15 s on a 2-core machine twice as slow as usual, beside the other worker.
    testTimeout: 30000,
    // Vitest keeps a core free by default: one worker on a 2-core CI machine. Nothing
    // else runs beside the unit tests there, so use every core (222 s instead of 290 s).
    maxWorkers: Math.max(2, availableParallelism()),
    // A test file's worker keeps the modules it imported for the next file (not isolated):
    // importing the app and MUI again for each of 59 files was half the run's CPU (on 2
    // cores, 591 s of CPU and 316 s in all before, 310 s and 165 s after).
    // Each test starts from the state `setup-tests.ts` resets; a file that mocks a module
    // of the app runs isolated, as its mock must not reach the others.
    projects: [
      {
        extends: true,
        test: { name: 'shared', isolate: false, include: ['src/**/*.test.{ts,tsx}'], exclude: [...configDefaults.exclude, ...ISOLATED] },
      },
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
    ],
  },
});
