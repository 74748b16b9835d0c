// Fails when src/lib/api/schema.ts is not what `npm run gen:api` makes from openapi.json.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// Only a warning: the binary may be older or newer than the commit being checked.
function warnWhenServerDiffers() {
  const bin = resolve(root, process.env.UPSTAIRS_BIN ?? '../target/debug/upstairs');
  if (!existsSync(bin)) return;
  try {
    const served = JSON.stringify(JSON.parse(execFileSync(bin, ['openapi'], { encoding: 'utf8' })));
    const committed = JSON.stringify(JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8')));
    if (served !== committed) {
      console.warn('warning: openapi.json differs from `upstairs openapi`; run `npm run sync:api` to refresh it.');
    }
  } catch {
    // the binary is being rebuilt or is not runnable; nothing to compare
  }
}
const dir = mkdtempSync(join(tmpdir(), 'upstairs-api-'));
const out = join(dir, 'schema.ts');
try {
  execFileSync(join(root, 'node_modules/.bin/openapi-typescript'), ['openapi.json', '-o', out], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const fresh = readFileSync(out, 'utf8');
  let committed = '';
  try {
    committed = readFileSync(join(root, 'src/lib/api/schema.ts'), 'utf8');
  } catch {
    // missing file counts as stale
  }
  if (fresh !== committed) {
    console.error('src/lib/api/schema.ts is stale: run `npm run gen:api` and commit the result.');
    process.exit(1);
  }
  console.log('src/lib/api/schema.ts is up to date with openapi.json');
  warnWhenServerDiffers();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
