// Prints the gzip size of the JavaScript a browser loads for one route of the
// production build (entry chunk, the route's lazy chunk and their static imports).
// Usage: node scripts/route-size.mjs [src/app/routes/login.tsx]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const dist = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', 'dist');
const manifest = JSON.parse(readFileSync(join(dist, '.vite', 'manifest.json'), 'utf8'));
const route = process.argv[2] ?? 'src/app/routes/login.tsx';

const files = new Set();
function visit(key) {
  const chunk = manifest[key];
  if (!chunk || files.has(chunk.file)) return;
  files.add(chunk.file);
  for (const imp of chunk.imports ?? []) visit(imp);
}
const entry = Object.keys(manifest).find((k) => manifest[k].isEntry);
visit(entry);
const entryFiles = new Set(files);
visit(route);
if (!manifest[route]) throw new Error(`${route} is not a chunk of the build`);

let total = 0;
for (const f of files) {
  const size = gzipSync(readFileSync(join(dist, f))).length;
  total += size;
  console.log(`${(size / 1024).toFixed(1).padStart(7)} kB  ${f}${entryFiles.has(f) ? '' : '  (route chunk)'}`);
}
console.log(`${(total / 1024).toFixed(1).padStart(7)} kB  gzip total for ${route}`);
