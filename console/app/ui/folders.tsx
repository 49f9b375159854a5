/**
 * Key prefixes as folders: "a/b/c.png" is c.png in folder b of folder a. A folder exists while
 * some key is under it; uploading into a folder that has none makes it.
 */

/** The folders of a path, each with the prefix that opens it: "a/b/" -> [a: "a/", b: "a/b/"]. */
export function foldersOf(folder: string): { name: string; prefix: string }[] {
  const parts = folder.split("/").filter((p) => p !== "");
  return parts.map((name, i) => ({ name, prefix: `${parts.slice(0, i + 1).join("/")}/` }));
}

/** Where the open folder is, each step a way back up. */
export function Breadcrumbs({ bucket, folder, onOpen }: { bucket: string; folder: string; onOpen: (prefix: string) => void }) {
  const steps = foldersOf(folder);
  return (
    <nav class="breadcrumbs" aria-label="Folder">
      <ol>
        <li>
          {steps.length === 0 ? (
            <span aria-current="location">{bucket}</span>
          ) : (
            <button type="button" class="link-button" onClick={() => onOpen("")}>
              {bucket}
            </button>
          )}
        </li>
        {steps.map((s, i) => (
          <li key={s.prefix}>
            {i === steps.length - 1 ? (
              <span aria-current="location">{s.name}</span>
            ) : (
              <button type="button" class="link-button" onClick={() => onOpen(s.prefix)}>
                {s.name}
              </button>
            )}
          </li>
        ))}
      </ol>
    </nav>
  );
}

const FOLDER_ICON = "M3 6.5A1.5 1.5 0 0 1 4.5 5h4l2 2h9A1.5 1.5 0 0 1 21 8.5v9a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 17.5z";

/** The open folder's subfolders, before its files. */
export function FolderList({ folder, names, onOpen }: { folder: string; names: string[]; onOpen: (prefix: string) => void }) {
  if (names.length === 0) return null;
  return (
    <ul class="folder-list" aria-label="Folders">
      {names.map((name) => (
        <li key={name}>
          <button type="button" class="folder" data-folder={`${folder}${name}/`} onClick={() => onOpen(`${folder}${name}/`)}>
            <svg width="20" height="20" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
              <path d={FOLDER_ICON} fill="none" stroke="currentColor" stroke-width="1.5" stroke-linejoin="round" />
            </svg>
            <span class="folder-name">{name}</span>
          </button>
        </li>
      ))}
    </ul>
  );
}
