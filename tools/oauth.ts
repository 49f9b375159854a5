import { z } from "zod";
import { listGrants, revokeGrant } from "../domain/access/oauth-grants.ts";
import { id, pageInput } from "../contract/common.ts";
import { oauthGrant, oauthGrantList } from "../contract/oauth.ts";
import { defineTool } from "./define.ts";

/** What people allowed OAuth clients (MCP hosts) to do, and taking it back (docs/mcp.md). */
export const oauthTools = [
  defineTool({
    name: "oauth_grants_list",
    title: "List OAuth grants",
    description: "Apps people approved through OAuth, newest first.",
    scope: "admin",
    reach: "bucket",
    http: { method: "GET", path: "/oauth-grants" },
    input: z.object({ ...pageInput }),
    output: oauthGrantList,
    handler: (input, { deps, caller }) => listGrants(deps, caller, input),
  }),
  defineTool({
    name: "oauth_grants_revoke",
    title: "Revoke an OAuth grant",
    description: "Revokes a grant: its tokens stop working at once.",
    scope: "admin",
    reach: "bucket",
    http: { method: "POST", path: "/oauth-grants/{id}/revoke" },
    input: z.object({ id: id("OAuth grant") }),
    output: oauthGrant,
    // Ends a client's access (destructive); a second call answers the same revoked grant.
    annotations: { destructiveHint: true, idempotentHint: true },
    errors: ["not_found"],
    handler: (input, { deps, caller }) => revokeGrant(deps, caller, input.id),
  }),
];
