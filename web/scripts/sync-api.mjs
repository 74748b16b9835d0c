// Refreshes openapi.json from the server binary (`upstairs openapi`) and regenerates
// src/lib/api/schema.ts; leaves both untouched when the new document does not generate.
// The binary comes from UPSTAIRS_BIN (default ../target/debug/upstairs).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = resolve(root, process.env.UPSTAIRS_BIN ?? '../target/debug/upstairs');
const dir = mkdtempSync(join(tmpdir(), 'upstairs-api-'));
try {
  const doc = JSON.parse(execFileSync(bin, ['openapi'], { encoding: 'utf8' }));
  writeFileSync(join(dir, 'openapi.json'), `${JSON.stringify(doc, null, 2)}\n`);
  execFileSync(join(root, 'node_modules/.bin/openapi-typescript'), ['openapi.json', '-o', 'schema.ts'], { cwd: dir, stdio: 'inherit' });
  copyFileSync(join(dir, 'openapi.json'), join(root, 'openapi.json'));
  copyFileSync(join(dir, 'schema.ts'), join(root, 'src/lib/api/schema.ts'));
  console.log('openapi.json and src/lib/api/schema.ts refreshed from the server.');
} catch (e) {
  console.error(`sync:api failed, nothing changed: ${e.message}`);
  process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
