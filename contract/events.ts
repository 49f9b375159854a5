import { z } from "zod";
import { bytes, id, timestamp } from "./common.ts";

/**
 * The events the service sends to webhook endpoints: each type's `data`, kept small and made
 * of ids to fetch the rest with. Every delivery's body is `{ type, timestamp, data }`
 * (the Standard Webhooks payload shape); the `webhook-id` header is the event's id.
 */


const objectRef = {
  objectId: id("Media object"),
  bucketId: id("Bucket"),
  key: z.string().describe("The object's key in its bucket"),
};

export const eventData = {
  "media.created": z.object({ ...objectRef, kind: z.string(), size: bytes("Size") }).describe("An upload was confirmed (or an object stored by the service, such as a set rendition)"),
  "media.updated": z
    .object({ ...objectRef, changes: z.array(z.enum(["content", "metadata", "tags", "categories", "key"])).describe("What changed: new bytes at the key, metadata, tags, categories, or the key or bucket (a move)") })
    .describe("An object's bytes were replaced at its key, or its metadata, tags or categories changed"),
  "media.deleted": z
    .object({ ...objectRef, restorableUntil: timestamp("Until when trash_restore can bring it back") })
    .describe("An object was deleted (moved to the trash)"),
  "media.restored": z.object(objectRef).describe("A deleted object was restored from the trash"),
  "media.purged": z.object(objectRef).describe("A deleted object's bytes and record are gone for good"),
  "derivative.ready": z
    .object({ objectId: id("Media object"), bucketId: id("Bucket"), variants: z.array(z.string()).describe("Variants made, such as thumbnail") })
    .describe("The worker made an object's derivatives (its thumbnail)"),
  "derivative.failed": z
    .object({ objectId: id("Media object"), bucketId: id("Bucket"), state: z.enum(["failed", "unsupported"]), reason: z.string() })
    .describe("No thumbnail will be made for an object: the worker gave up, or its kind has none (told at confirm)"),
  "set.generated": z
    .object({ setId: id("Set"), baseObjectId: id("Base media object"), objectIds: z.array(z.uuid()).describe("The renditions made") })
    .describe("A set's renditions were generated"),
  "bucket.created": z.object({ bucketId: id("Bucket"), name: z.string() }).describe("A bucket was created"),
  "bucket.deleted": z.object({ bucketId: id("Bucket"), name: z.string() }).describe("A bucket was deleted"),
  "api_key.created": z.object({ apiKeyId: id("API key"), name: z.string(), bucketId: z.uuid().nullable() }).describe("An API key was created"),
  "api_key.rotated": z.object({ apiKeyId: id("API key"), name: z.string(), bucketId: z.uuid().nullable() }).describe("An API key's secret was rotated"),
  "api_key.deleted": z.object({ apiKeyId: id("API key"), name: z.string(), bucketId: z.uuid().nullable() }).describe("An API key was deleted"),
  "usage.threshold": z
    .object({
      thresholdPct: z.union([z.literal(80), z.literal(100)]).describe("The share of allocated storage that used storage reached"),
      usedStorage: bytes("Used storage"),
      allocatedStorage: bytes("Allocated storage"),
    })
    .describe("Used storage rose to 80% or 100% of the allocation (sent when the line is crossed upwards)"),
  "billing.plan_changed": z
    .object({ from: z.string(), to: z.string(), allocatedStorage: bytes("Allocated storage after the change"), source: z.enum(["api", "provider"]) })
    .describe("The organization's plan changed"),
  "billing.capacity_added": z
    .object({ gb: z.number().int(), allocatedStorage: bytes("Allocated storage after the purchase"), chargeId: id("Charge"), automatic: z.boolean() })
    .describe("Storage capacity was bought (by hand, or by auto-capacity)"),
  "webhook.test": z.object({ endpointId: id("Webhook endpoint"), message: z.string() }).describe("Sent by webhooks_send_test to one endpoint only"),
} as const;

export type EventType = keyof typeof eventData;
export type EventData<T extends EventType> = z.output<(typeof eventData)[T]>;

export const EVENT_TYPES = Object.keys(eventData) as EventType[];
/** What an endpoint may subscribe to: every type but the test event, which goes only where it is sent. */
export const SUBSCRIBABLE_EVENT_TYPES = EVENT_TYPES.filter((t) => t !== "webhook.test") as Exclude<EventType, "webhook.test">[];

const pascal = (type: string) => type.split(/[._]/).map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");

function payloadOf<T extends EventType>(type: T) {
  return z
    .object({
      type: z.literal(type),
      timestamp: timestamp("When the event happened"),
      data: eventData[type],
    })
    .meta({ id: `${pascal(type)}Event` });
}

/** The body of a delivery of each event type (named for OpenAPI: `MediaCreatedEvent`, ...). */
export const eventPayloads = Object.fromEntries(EVENT_TYPES.map((t) => [t, payloadOf(t)])) as { [T in EventType]: ReturnType<typeof payloadOf<T>> };
