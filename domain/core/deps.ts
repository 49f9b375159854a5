import type { Config } from "./config.ts";
import type { Db } from "../../db/client.ts";
import type { Clock } from "./clock.ts";
import type { ReadRouter } from "../../db/read-router.ts";
import type { CredentialCache } from "../ports/credentials.ts";
import type { ImageTransformer } from "../ports/images.ts";
import type { Logger } from "../ports/log.ts";
import type { Meters } from "../ports/meters.ts";
import type { PaymentProvider } from "../ports/payments.ts";
import type { SearchBackend } from "../ports/search.ts";
import type { OrgConcurrency } from "../guards/org-concurrency.ts";
import type { ObjectStorage } from "../ports/storage.ts";
import type { AuditWriter } from "../audit/audit-writer.ts";
import type { EgressLedger } from "../usage/egress-ledger.ts";

/**
 * Everything domain code may use, chosen once at start from configuration.
 * Domain functions take it as their first argument and never know which adapter is behind a port.
 */
export interface Deps {
  db: Db;
  /** Read replicas (DATABASE_READ_URL) for the reads that may use one, through readDb(); absent: none. */
  reads?: ReadRouter;
  clock: Clock;
  log: Logger;
  config: Config;
  storage: ObjectStorage;
  search: SearchBackend;
  /** null when no provider is configured (STRIPE_SECRET_KEY unset): invoices and portal answer 501. */
  payments: PaymentProvider | null;
  /** Resizes and re-encodes pictures for on-the-fly renders. */
  images: ImageTransformer;
  /** Call after committing a transaction that enqueued jobs, so they start without waiting for the poll. */
  jobs: { kick(): void };
  /** API keys seen recently; absent means every request looks its key up. */
  credentials?: CredentialCache;
  /** Per-organization caps on expensive work in this process (search, renders); absent: none. */
  concurrency?: { search: OrgConcurrency; render: OrgConcurrency };
  /** Download and stream egress written in batches; absent: each URL appends its own event. */
  egress?: EgressLedger;
  /** Writes the audit rows of concurrent calls together; absent: each call appends its own. */
  audit?: AuditWriter;
  /** Counts for the service's metrics; absent where nothing is measured. */
  meters?: Meters;
}
