/** Soft-deleted objects stay in the trash, restorable, this long; then the purge job removes them. */
export const RETENTION_DAYS = 7;

export const restorableUntil = (deletedAt: Date): Date => new Date(deletedAt.getTime() + RETENTION_DAYS * 86_400_000);
