// `npm run codec-server`: the codec server on its own, for a production Temporal UI and CLI. It
// decodes payment credentials, so it starts only with a credential check configured
// (codecAuth.ts: the UI's OIDC access tokens through a JWKS or HMAC secret, and/or a shared token).
//   AUTHCAP_CODEC_PORT (8888), AUTHCAP_CODEC_HOST (127.0.0.1: put TLS in front, the UI sends access
//   tokens only to https), AUTHCAP_CODEC_ALLOWED_ORIGINS (the UI's origins, comma-separated).
import { createLogger } from './logger.js';
import { codecOf } from './codec.js';
import { codecAuthOf } from './codecAuth.js';
import { startCodecServer } from './codecServer.js';
import { settingsOrExit } from './settings/read.js';

// Every variable the codec server reads, validated now (runtime/settings/catalog.ts).
const settings = settingsOrExit('codec-server', 'codec server');
const logger = createLogger('authcap-codec-server', settings.AUTHCAP_LOG_LEVEL ?? 'info');
const codec = codecOf(settings);
if (!codec) throw new Error('codec server: no payload keys (AUTHCAP_CODEC_KEYS or AUTHCAP_CODEC_KEY_FILE)');
const server = await startCodecServer({
  host: settings.AUTHCAP_CODEC_HOST,
  port: settings.AUTHCAP_CODEC_PORT,
  codec,
  ...codecAuthOf(settings),
  allowedOrigins: settings.AUTHCAP_CODEC_ALLOWED_ORIGINS,
  onError: (err) => logger.error({ err }, 'codec server error'),
});
logger.info({ url: server.url }, 'codec server listening');
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void server.close().then(() => process.exit(0)));
