import { describe, expect, test } from "bun:test";
import { registry } from "../../tools/registry.ts";

/**
 * Every tool's four hints, written out: a host decides from them whether to ask the person
 * before a call, so a change to any of them is a change to this table, made on purpose. The
 * rule (docs/mcp.md#annotations): a delete, a replace-style update (every PUT here), an
 * overwrite of a key's bytes, a secret killed or money spent is destructive; a call that
 * reaches beyond this service (another server, the payment provider) is open-world;
 * idempotent means a second identical call succeeds with the same effect.
 */
// [name, readOnly, destructive, idempotent, openWorld]
const MATRIX: [string, 0 | 1, 0 | 1, 0 | 1, 0 | 1][] = [
  ["me_get", 1, 0, 1, 0],
  ["api_keys_list", 1, 0, 1, 0],
  ["api_keys_create", 0, 0, 0, 0],
  ["api_keys_delete", 0, 1, 0, 0],
  ["api_keys_rotate", 0, 1, 0, 0],
  ["service_credentials_list", 1, 0, 1, 0],
  ["service_credentials_create", 0, 0, 0, 0],
  ["service_credentials_delete", 0, 1, 0, 0],
  ["oauth_grants_list", 1, 0, 1, 0],
  ["oauth_grants_revoke", 0, 1, 1, 0],
  ["buckets_list", 1, 0, 1, 0],
  ["buckets_create", 0, 0, 0, 0],
  ["buckets_get", 1, 0, 1, 0],
  ["buckets_delete", 0, 1, 0, 0],
  ["media_list", 1, 0, 1, 0],
  ["media_get", 1, 0, 1, 0],
  ["media_delete", 0, 1, 0, 0],
  ["media_update_metadata", 0, 1, 1, 0],
  ["media_stream", 1, 0, 1, 0],
  ["objects_move", 0, 1, 1, 0],
  ["objects_bulk_update", 0, 1, 0, 0],
  ["objects_bulk_delete", 0, 1, 0, 0],
  ["trash_list", 1, 0, 1, 0],
  ["trash_restore", 0, 0, 0, 0],
  ["trash_purge", 0, 1, 0, 0],
  ["media_thumbnail", 1, 0, 1, 0],
  ["media_render", 1, 0, 1, 0],
  ["media_render_url", 1, 0, 1, 0],
  ["media_settings_get", 1, 0, 1, 0],
  ["media_settings_update", 0, 1, 1, 0],
  ["presign_upload", 0, 1, 0, 0],
  ["presign_create_multipart", 0, 0, 0, 0],
  ["presign_upload_part", 0, 0, 0, 0],
  ["presign_complete_upload", 0, 1, 0, 0],
  ["presign_abort_multipart", 0, 1, 0, 0],
  ["presign_confirm", 0, 1, 1, 0],
  ["presign_download", 1, 0, 1, 0],
  ["media_import", 0, 1, 0, 1],
  ["media_import_get", 1, 0, 1, 0],
  ["search", 1, 0, 1, 0],
  ["media_text_extract", 0, 0, 0, 0],
  ["media_similar", 1, 0, 1, 0],
  ["media_duplicates", 1, 0, 1, 0],
  ["tags_list", 1, 0, 1, 0],
  ["tags_create", 0, 0, 0, 0],
  ["tags_delete", 0, 1, 0, 0],
  ["objects_set_tags", 0, 1, 1, 0],
  ["categories_list", 1, 0, 1, 0],
  ["categories_create", 0, 0, 0, 0],
  ["categories_move", 0, 1, 1, 0],
  ["categories_delete", 0, 1, 0, 0],
  ["objects_set_categories", 0, 1, 1, 0],
  ["sets_list", 1, 0, 1, 0],
  ["sets_create", 0, 0, 0, 0],
  ["sets_get", 1, 0, 1, 0],
  ["sets_delete", 0, 1, 0, 0],
  ["sets_add_item", 0, 0, 0, 0],
  ["sets_remove_item", 0, 1, 0, 0],
  ["sets_generate", 0, 1, 0, 0],
  ["storyboards_list", 1, 0, 1, 0],
  ["storyboards_create", 0, 0, 0, 0],
  ["storyboards_get", 1, 0, 1, 0],
  ["storyboards_delete", 0, 1, 0, 0],
  ["storyboards_add_clip", 0, 0, 0, 0],
  ["storyboards_reorder_clips", 0, 1, 1, 0],
  ["storyboards_update_clip", 0, 1, 1, 0],
  ["storyboards_remove_clip", 0, 1, 0, 0],
  ["usage_get", 1, 0, 1, 0],
  ["usage_history", 1, 0, 1, 0],
  ["usage_events_list", 1, 0, 1, 0],
  ["billing_subscription_get", 1, 0, 1, 0],
  ["billing_capacity_add", 0, 1, 0, 0],
  ["billing_capacity_auto_set", 0, 1, 1, 0],
  ["billing_downgrade", 0, 1, 0, 0],
  ["billing_invoices_list", 1, 0, 1, 1],
  ["billing_portal_get", 0, 0, 1, 1],
  ["reconcile_run", 0, 1, 1, 0],
  ["webhooks_create", 0, 0, 0, 1],
  ["webhooks_list", 1, 0, 1, 0],
  ["webhooks_get", 1, 0, 1, 0],
  ["webhooks_update", 0, 1, 1, 1],
  ["webhooks_enable", 0, 0, 1, 1],
  ["webhooks_disable", 0, 1, 1, 0],
  ["webhooks_delete", 0, 1, 0, 0],
  ["webhooks_rotate_secret", 0, 1, 0, 0],
  ["webhooks_send_test", 0, 0, 0, 1],
  ["webhooks_deliveries_list", 1, 0, 1, 0],
  ["webhooks_redeliver", 0, 0, 0, 1],
  ["audit_list", 1, 0, 1, 0],
];

describe("annotations: the whole matrix", () => {
  test("every tool's readOnlyHint, destructiveHint, idempotentHint and openWorldHint are the table's", () => {
    const actual = registry.map((t) => [t.name, +!!t.annotations.readOnlyHint, +!!t.annotations.destructiveHint, +!!t.annotations.idempotentHint, +!!t.annotations.openWorldHint]);
    expect(actual).toEqual(MATRIX);
  });

  test("the table is consistent with itself: a read destroys nothing and is idempotent", () => {
    for (const [name, readOnly, destructive, idempotent] of MATRIX) {
      if (readOnly) expect({ name, destructive, idempotent }).toEqual({ name, destructive: 0, idempotent: 1 });
    }
  });
});
