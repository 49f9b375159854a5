import type { Page } from "../../contract/common.ts";

export type { Page };

export function page<T>(data: T[], total: number, offset: number): Page<T> {
  return { data, total, hasMore: offset + data.length < total };
}
