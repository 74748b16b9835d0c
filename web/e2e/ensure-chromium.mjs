// Makes sure Debian's chromium is there for the browser tests (never a downloaded browser).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(path)) {
  if (process.getuid?.() !== 0) {
    console.error(`${path} is missing: run "apt-get update && apt-get install -y chromium" as root.`);
    process.exit(1);
  }
  console.log('Installing Debian chromium for the browser tests…');
  execFileSync('apt-get', ['update'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', 'chromium'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}
