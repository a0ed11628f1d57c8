import { access, constants } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";

/**
 * Resolves an executable the way a shell would (PATH lookup for a bare name),
 * without running it: health checks must be cheap and must not spawn.
 * Returns the absolute path, or undefined when nothing executable is found.
 */
export async function findExecutable(
  name: string,
  pathEnv: string | undefined = process.env.PATH,
): Promise<string | undefined> {
  if (name.includes("/")) {
    return (await isExecutable(name)) ? name : undefined;
  }
  for (const dir of (pathEnv ?? "").split(delimiter)) {
    if (dir === "" || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
