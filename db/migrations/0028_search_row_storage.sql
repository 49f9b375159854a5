-- What a search reads of media_search stays in the row; only the body, which no search reads,
-- is moved out (TOAST). With a file's extracted text a document's vector is a few kilobytes
-- and does not compress, so PostgreSQL moved it out of line first, and ranking read about
-- three more pages per matching document (bench/notes/2026-11-29-search-text.md). MAIN keeps a
-- column in the row unless the row still does not fit a page; EXTENDED (the body's) goes first.
-- Only the catalogue changes: rows are stored so when next written, and nothing is rewritten now.
-- safe with the previous release: a column's storage strategy changes nothing that reads or writes it.
ALTER TABLE "media_search" ALTER COLUMN "vector" SET STORAGE MAIN, ALTER COLUMN "key" SET STORAGE MAIN, ALTER COLUMN "labels" SET STORAGE MAIN, ALTER COLUMN "meta" SET STORAGE MAIN, ALTER COLUMN "tag_ids" SET STORAGE MAIN, ALTER COLUMN "category_ids" SET STORAGE MAIN;
