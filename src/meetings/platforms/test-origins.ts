import { TalkError } from "../../core/index.js";
import { isHttpOrigin } from "./google-meet/meet-driver.js";

/** Validated test origins of a driver (config_invalid naming `field` for anything but an http(s) origin). */
export function testOriginsOf(field: string, origins: readonly string[] = []): ReadonlySet<string> {
  const bad = origins.find((o) => !isHttpOrigin(o));
  if (bad !== undefined)
    throw new TalkError(
      "config_invalid",
      `${field}: ${JSON.stringify(bad)} is not an origin such as http://127.0.0.1:8080 (scheme, host, port; no path or trailing slash)`,
    );
  return new Set(origins);
}
