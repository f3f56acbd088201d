/**
 * What the composition root (./compose.ts) builds: every service, once, over the stores. HTTP
 * (../http/app.ts) and the CLI take this shape, so neither needs the root that builds it.
 */
import type { AuditService } from '../services/audit-service.js';
import type { Authenticator } from '../services/authenticator.js';
import type { CheapestService } from '../services/cheapest.js';
import type { ImportService } from '../services/import-service.js';
import type { InvitationService } from '../services/invitation-service.js';
import type { KeyService } from '../services/key-service.js';
import type { PriceService } from '../services/price-service.js';
import type { RateLimiter } from '../services/rate-limiter.js';
import type { SeriesService } from '../services/series-service.js';
import type { UsageHistory } from '../services/usage-history.js';
import type { Stores } from '../stores/types.js';
import type { WebhookService } from '../webhooks/service.js';

export interface Services {
  /** The stores the services use (guarded when the root was given `onStoreError`). */
  readonly stores: Stores;
  readonly auth: Authenticator;
  readonly keys: KeyService;
  /** Invitations and open sign-up (docs/invitations.md). */
  readonly invitations: InvitationService;
  readonly limiter: RateLimiter;
  readonly prices: PriceService;
  readonly imports: ImportService;
  readonly series: SeriesService;
  /** The cheapest hours over `prices` (docs/api.md, "The cheapest hours"). */
  readonly cheapest: CheapestService;
  /** Webhook endpoints (docs/webhooks.md); absent when the stores keep no webhooks. */
  readonly webhooks?: WebhookService;
  /** Requests per key and hour (docs/usage-history.md); absent over stores that keep none. */
  readonly usage?: UsageHistory;
  /** The audit log of admin actions (docs/audit.md). */
  readonly audit: AuditService;
}
