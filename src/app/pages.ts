/**
 * The pages the server serves as files: the talk page at `/` (web/, the
 * reference browser client of the Talk API, docs/web-page.md) and the
 * operations console at `/console/` (web/console/, docs/operations.md), and
 * the Talk client both use, built from src/client (`/lib/talk-client.js`).
 */
import { fileURLToPath } from "node:url";
import { staticPagesPlugin, type GatewayServer } from "../gateway/index.js";
import { registerClientBundle } from "./client-bundle.js";

/** The talk page's folder: web/ at the repository root. */
export const WEB_PAGE_ROOT = fileURLToPath(new URL("../../web/", import.meta.url));
/** The console's folder: web/console/ (its own prefix, so the talk page's plugin leaves it out). */
export const CONSOLE_ROOT = fileURLToPath(new URL("../../web/console/", import.meta.url));

export async function registerPages(gateway: GatewayServer): Promise<void> {
  await gateway.app.register(staticPagesPlugin({ root: WEB_PAGE_ROOT, prefix: "/", exclude: ["console"] }));
  await gateway.app.register(staticPagesPlugin({ root: CONSOLE_ROOT, prefix: "/console/" }));
  registerClientBundle(gateway);
}
