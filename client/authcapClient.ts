// The typed client library order services use: `AuthcapClient.connect(...)`, then one resource per
// kind of thing (Stripe's shape): `authorizations`, `refunds`, `webhookEndpoints`, `events`. Each
// action lives in its own file under the resource's folder, and the HTTP API's handlers call the same
// ones. Every action validates its input before anything reaches Temporal, and every failure is an
// AuthcapError with a stable code. Settings come in as options: the process's entry reads them.
import type { ClientPlugin } from '@temporalio/client';
import type { ResolvedDeployment } from '../runtime/deployment/resolve.js';
import type { TemporalSettings } from '../runtime/temporal.js';
import { systemResolver, type Resolver, type WebhookAddressPolicy } from '../runtime/webhookAddressPolicy.js';
import { AbuseScreen } from './authorizations/abuseScreen.js';
import { Authorizations } from './authorizations/resource.js';
import { watchesFor } from './authorizations/wait.js';
import { Events } from './events/resource.js';
import { Refunds } from './refunds/resource.js';
import { TemporalTransport, type Readiness } from './transport/temporalTransport.js';
import { WebhookEndpoints } from './webhookEndpoints/resource.js';

export interface AuthcapClientOptions {
  /**
   * A JSON-RPC URL of the token's chain. With it, a payer's signature or cancellation that is not the
   * payer's own ECDSA signature (a contract wallet's) is checked against the chain before it is sent,
   * and only a valid one reaches the workflow: a stranger's attempts never spend the payer's budget.
   */
  rpcUrl?: string;
  /**
   * The networks and tokens this deployment serves (runtime/deployment/): requests name theirs, and
   * amounts are read in that token's decimals. Absent: one network, whatever the worker serves.
   */
  deployment?: ResolvedDeployment;
  /** How long after its capture an authorization accepts refunds (AUTHCAP_REFUND_WINDOW_DAYS; default 30). */
  refundWindowDays?: number;
  /** Which addresses a webhook endpoint may have (AUTHCAP_WEBHOOK_ALLOW_LOOPBACK / _PRIVATE; default: public ones only). */
  webhookAddressPolicy?: WebhookAddressPolicy;
  /** How webhook hosts are resolved for that check (default: the system's resolver). */
  resolveWebhookHost?: Resolver;
  /** Temporal client plugins, such as tracing (runtime/tracing.ts `tracingPluginFromEnv`). Used by `connect`. */
  plugins?: ClientPlugin[];
}

/** What a client given no settings applies: the catalog's defaults (runtime/settings/variables; a unit test holds them equal). */
export const CLIENT_DEFAULTS = {
  refundWindowDays: 30,
  /** Public addresses only. */
  webhookAddressPolicy: { allowLoopback: false, allowPrivate: false } satisfies WebhookAddressPolicy,
} as const;

export class AuthcapClient {
  readonly authorizations: Authorizations;
  readonly refunds: Refunds;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly events: Events;
  private readonly closeWaits: () => void;

  constructor(
    private readonly transport: TemporalTransport,
    options: AuthcapClientOptions = {},
  ) {
    const catalog = options.deployment?.catalog;
    const read = { transport, catalog };
    const watches = watchesFor(read);
    this.closeWaits = () => watches.close();
    this.authorizations = new Authorizations({ ...read, screen: new AbuseScreen(options), watches });
    this.refunds = new Refunds({ ...read, refundWindowDays: options.refundWindowDays ?? CLIENT_DEFAULTS.refundWindowDays });
    this.webhookEndpoints = new WebhookEndpoints({
      transport,
      addressPolicy: options.webhookAddressPolicy ?? CLIENT_DEFAULTS.webhookAddressPolicy,
      resolve: options.resolveWebhookHost ?? systemResolver,
    });
    this.events = new Events(transport);
  }

  /** Connects with the settings the process read (`loadTemporalSettings()`: the worker's TEMPORAL_*, AUTHCAP_CODEC_KEYS…). */
  static async connect(settings: TemporalSettings, options: AuthcapClientOptions = {}): Promise<AuthcapClient> {
    return new AuthcapClient(await TemporalTransport.connect(settings, { plugins: options.plugins }), options);
  }

  /** Whether this client's Temporal answers and a worker is polling the task queue. */
  checkReadiness(): Promise<Readiness> {
    return this.transport.readiness();
  }

  /** Ends the connection; waits still open answer at once with what they have. */
  async close(): Promise<void> {
    this.closeWaits();
    await this.transport.close();
  }
}
