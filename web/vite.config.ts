import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { availableParallelism } from 'node:os';

// UPSTAIRS_API_URL lets `npm run dev` proxy /api to a running server.
const apiTarget = process.env.UPSTAIRS_API_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  plugins: [react()],
  resolve: { alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) } },
  server: { proxy: { '/api': apiTarget, '/ws': { target: apiTarget, ws: true } } },
  build: { sourcemap: false, manifest: true, chunkSizeWarningLimit: 900 },
  test: {
    environment: 'jsdom',
    globals: true,
    setupFiles: ['./src/testing/setup-tests.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    testTimeout: 15000,
    // Vitest keeps a core free by default: one worker on a 2-core CI machine. Nothing
    // else runs beside the unit tests there, so use every core (222 s instead of 290 s).
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
