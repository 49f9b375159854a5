/** Spec §8: default page size 50, offset 0. The maximum is ours (README). */
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export interface Page<T> {
  data: T[];
  total: number;
  hasMore: boolean;
}

export function page<T>(data: T[], total: number, offset: number): Page<T> {
  return { data, total, hasMore: offset + data.length < total };
}
