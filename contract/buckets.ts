import { z } from "zod";
import { id, listOf, timestamp } from "./common.ts";

export const bucket = z.object({ id: id("Bucket"), name: z.string(), createdAt: timestamp("Creation time") }).meta({ id: "Bucket" });
export type Bucket = z.output<typeof bucket>;

export const bucketList = listOf(bucket);
