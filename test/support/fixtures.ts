import { afterAll, beforeAll } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { newBucket } from "./objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer, type TestServerOptions } from "./server.ts";

/**
 * The start most test files share, registered as the file's beforeAll/afterAll. `ready`
 * receives what was made (a file keeps it in its own variables) and may prepare more;
 * `cleanup` runs before the server stops (close clients, remove files).
 */
export interface ServerWithOrg {
  server: TestServer;
  org: TestOrg;
}

export interface TwoOrgs extends ServerWithOrg {
  /** A second organization: what it owns must stay out of `org`'s reach, and the reverse. */
  other: TestOrg;
  bucket: { id: string; name: string };
  otherBucket: { id: string; name: string };
}

interface Hooks<T> {
  ready: (made: T) => void | Promise<void>;
  cleanup?: () => void | Promise<void>;
  server?: TestServerOptions;
}

/** A server on the run's backends and one organization with an admin key. */
export function withServerAndOrg(hooks: Hooks<ServerWithOrg>): void {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startServer(hooks.server);
    await hooks.ready({ server, org: await newOrg(server) });
  }, 120_000);
  afterAll(async () => {
    await hooks.cleanup?.();
    await server?.stop();
  }, 60_000);
}

/** Two organizations with a bucket each, for the tests that one never reaches the other's data. */
export function withTwoOrgs(hooks: Hooks<TwoOrgs>): void {
  withServerAndOrg({
    ...hooks,
    ready: async ({ server, org }) => {
      const other = await newOrg(server);
      await hooks.ready({ server, org, other, bucket: await newBucket(org), otherBucket: await newBucket(other) });
    },
  });
}

/** An MCP SDK client on the server's /mcp (with `query`, e.g. "?toolsets=all"), with this bearer secret (none: unauthenticated). */
export async function mcpClient(server: TestServer, secret: string | null, name = "test", query = ""): Promise<Client> {
  const client = new Client({ name, version: "1" });
  const headers: Record<string, string> = secret ? { authorization: `Bearer ${secret}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp${query}`), { requestInit: { headers } }));
  return client;
}
