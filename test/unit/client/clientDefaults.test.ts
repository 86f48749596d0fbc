// The typed client reads no environment: what it applies when its caller passes no setting must be
// the setting's own default, as the catalog declares it (runtime/settings/variables).
import { describe, expect, it } from 'vitest';
import { CLIENT_DEFAULTS } from '../../../client/authcapClient.js';
import { readVariable } from '../../../runtime/settings/read.js';
import { webhookAddressPolicyFromEnv } from '../../../runtime/webhookAddressPolicy.js';

describe("the client's defaults", () => {
  it('are the catalog defaults of the settings an entry would pass', () => {
    expect(CLIENT_DEFAULTS.refundWindowDays).toBe(readVariable('AUTHCAP_REFUND_WINDOW_DAYS', {}));
    expect(CLIENT_DEFAULTS.webhookAddressPolicy).toEqual(webhookAddressPolicyFromEnv({}));
  });
});
