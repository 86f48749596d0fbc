// Which Chromium the browser tests drive: AUTHCAP_CHROMIUM_PATH, else Debian's `chromium` (or a
// Chrome) on this machine. No browser is downloaded: npm cannot fetch one here, apt-get can.
import { existsSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export const INSTALL_HINT = 'install it with `apt-get install chromium` (Debian/Ubuntu), or set AUTHCAP_CHROMIUM_PATH to a Chromium or Chrome binary';

const isFile = (path: string) => existsSync(path) && statSync(path).isFile();

export function findChromium(env: NodeJS.ProcessEnv = process.env): { path: string } | { missing: string } {
  const configured = env.AUTHCAP_CHROMIUM_PATH;
  if (configured) return isFile(configured) ? { path: configured } : { missing: `no Chromium at AUTHCAP_CHROMIUM_PATH=${configured}` };
  for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
    for (const dir of ['/usr/bin', ...(env.PATH ?? '').split(delimiter)]) {
      if (dir && isFile(join(dir, name))) return { path: join(dir, name) };
    }
  }
  return { missing: 'no Chromium found' };
}
