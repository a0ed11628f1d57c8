/**
 * The pages the server serves as files: the talk page at `/` (web/, the
 * reference browser client of the Talk API, docs/web-page.md). The
 * operations console takes the same route at `/console/`.
 */
import { fileURLToPath } from "node:url";
import { staticPagesPlugin, type GatewayServer } from "../gateway/index.js";

/** The talk page's folder: web/ at the repository root. */
export const WEB_PAGE_ROOT = fileURLToPath(new URL("../../web/", import.meta.url));

export async function registerPages(gateway: GatewayServer): Promise<void> {
  await gateway.app.register(staticPagesPlugin({ root: WEB_PAGE_ROOT, prefix: "/" }));
}
