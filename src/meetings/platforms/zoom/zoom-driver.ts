import type { DriverPage, JoinContext, MeetingObservation, PlatformDriver } from "../platform-driver.js";
import { domChat, domPlatformScreens, leaveDomPlatform, observeDomPlatform } from "../dom-platform.js";
import { testOriginsOf } from "../test-origins.js";
import { ZOOM_SPEC } from "./zoom-selectors.js";

/** A Zoom host: zoom.us or a vanity / regional subdomain (us05web.zoom.us, acme.zoom.us). */
const ZOOM_HOST = /^(?:[a-z0-9-]+\.)?zoom\.us$/;
/** Invite links (`/j/<id>`) and the web client's own join pages (`/wc/join/<id>`, `/wc/<id>/join`). */
const ZOOM_PATH = /^\/(?:j\/(\d{9,11})|wc\/join\/(\d{9,11})|wc\/(\d{9,11})\/join)\/?$/;

export interface ZoomDriverOptions {
  /** Tests and development only: origins whose pages the driver treats as Zoom's web client, any path. */
  testOrigins?: readonly string[];
}

/**
 * Zoom's web client for a guest: invite links go straight to
 * `app.zoom.us/wc/<id>/join` (the passcode kept), then "join from your
 * browser" where a landing page asks, name, microphone and video off,
 * Join, "Join Audio by Computer"; admission, roster, active speaker and
 * the end read from the page; chat read and written in the chat panel.
 * Tested against reduced saved pages (test/fixtures/zoom/), which may drift.
 */
export class ZoomDriver implements PlatformDriver {
  readonly platform = "zoom";
  readonly chat = domChat(ZOOM_SPEC);
  readonly screens = domPlatformScreens(
    ZOOM_SPEC,
    "test/fixtures/zoom (Zoom's help pages and open bots' selectors; see zoom-selectors.ts)",
  );
  readonly #testOrigins: ReadonlySet<string>;

  constructor(options: ZoomDriverOptions = {}) {
    this.#testOrigins = testOriginsOf("meetings.zoom.testOrigins", options.testOrigins);
  }

  matches(url: URL): boolean {
    if (this.#testOrigins.has(url.origin)) return true;
    return (
      url.protocol === "https:" &&
      url.port === "" &&
      ZOOM_HOST.test(url.hostname) &&
      ZOOM_PATH.test(url.pathname)
    );
  }

  joinUrl(url: URL, _botName: string): string {
    if (this.#testOrigins.has(url.origin)) return url.toString();
    const m = ZOOM_PATH.exec(url.pathname)!;
    const id = m[1] ?? m[2] ?? m[3]!;
    const out = new URL(`https://app.zoom.us/wc/${id}/join`);
    const pwd = url.searchParams.get("pwd");
    if (pwd) out.searchParams.set("pwd", pwd);
    return out.toString();
  }

  observe(page: DriverPage, context: JoinContext): Promise<MeetingObservation> {
    return observeDomPlatform(ZOOM_SPEC, page, context);
  }

  leave(page: DriverPage): Promise<void> {
    return leaveDomPlatform(ZOOM_SPEC, page);
  }
}
