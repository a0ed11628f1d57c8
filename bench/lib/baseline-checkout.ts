/**
 * Today's code beside the change, in one run: a bench's `--baseline` names a
 * checkout directory, or a commit of this repository, which is exported once
 * (`git archive`) to $TMPDIR/talkgate-baseline/<sha>, given this checkout's
 * node_modules (a symlink: the baseline is a commit of the same lockfile, or
 * close enough for its codecs and core) and its own libspeexdsp binding built
 * with the node-gyp that ships inside npm, as scripts/setup.sh builds it.
 * The turn-taking benches then load the baseline's classes (offline) or spawn
 * its bench server (real time) from there.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, realpathSync, renameSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..", "..");

/** A checkout directory for `baseline` (a directory, or a commit-ish of this repository), ready to run. */
export function baselineCheckout(baseline: string): { dir: string; describe: string } {
  if (existsSync(baseline) && statSync(baseline).isDirectory())
    return { dir: resolve(baseline), describe: `checkout ${resolve(baseline)}` };
  let sha: string;
  try {
    sha = execFileSync("git", ["-C", ROOT, "rev-parse", "--verify", `${baseline}^{commit}`], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    throw new Error(`--baseline ${baseline}: neither a directory nor a commit of ${ROOT}`);
  }
  const dir = join(tmpdir(), "talkgate-baseline", sha);
  const addon = join(dir, "native", "speexdsp", "build", "Release", "speexdsp.node");
  if (!existsSync(addon)) {
    // Exported and built beside, then renamed into place: a concurrent bench never sees half a checkout.
    const building = `${dir}.${process.pid}`;
    rmSync(building, { recursive: true, force: true });
    mkdirSync(building, { recursive: true });
    const archive = execFileSync("git", ["-C", ROOT, "archive", "--format=tar", sha], { maxBuffer: 1 << 30 });
    execFileSync("tar", ["-x", "-C", building], { input: archive });
    symlinkSync(realpathSync(join(ROOT, "node_modules")), join(building, "node_modules"));
    const npmRoot = execFileSync("npm", ["root", "-g"], { encoding: "utf8" }).trim();
    const nodeGyp = join(npmRoot, "npm", "node_modules", "node-gyp", "bin", "node-gyp.js");
    const nodedir = ["/usr", "/usr/local"].find((p) => existsSync(join(p, "include", "node", "node_api.h")));
    execFileSync(
      process.execPath,
      [nodeGyp, "rebuild", ...(nodedir ? [`--nodedir=${nodedir}`] : []), "--loglevel=error"],
      { cwd: join(building, "native", "speexdsp"), stdio: ["ignore", "ignore", "inherit"] },
    );
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(building, dir);
    } catch (err) {
      // A bench started beside this one placed the same checkout first: keep theirs.
      if (!existsSync(addon)) throw err;
      rmSync(building, { recursive: true, force: true });
    }
  } else if (!existsSync(join(dir, "node_modules"))) {
    // Cached by a checkout whose node_modules has gone (a removed worktree's): point it at this one's. The
    // link is to the real directory, so it outlives a worktree whose node_modules is itself a link.
    rmSync(join(dir, "node_modules"), { force: true });
    symlinkSync(realpathSync(join(ROOT, "node_modules")), join(dir, "node_modules"));
  }
  return { dir, describe: `commit ${sha.slice(0, 10)} (${baseline})` };
}
