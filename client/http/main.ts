// `npm run api`: the HTTP API on its own, against the configured Temporal (AUTHCAP_API_PORT, default 8080).
import { loadTemporalSettings } from '../../runtime/temporal.js';
import { AuthcapClient } from '../authcapClient.js';
import { createApiServer, listen } from './server.js';

const client = await AuthcapClient.connect(loadTemporalSettings());
const server = createApiServer({ client, apiKey: process.env.AUTHCAP_API_KEY || null });
const url = await listen(server, Number(process.env.AUTHCAP_API_PORT ?? 8080));
console.log(`authcap API listening on ${url}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => server.close(() => void client.close()));
}
