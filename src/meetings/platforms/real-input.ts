/**
 * Finding what to click, page side, for real input. Drivers never click
 * inside the page (`el.click()` is an untrusted event, which Meet and the
 * other platforms ignore: attendee-labs/attendee clicks through Selenium or
 * X11, Vexa-ai/vexa through Playwright or xdotool); they ask the bot's page
 * (`DriverPage.click` / `clickText` / `type`) to click, and this script
 * answers where: the centre of the element's box once scrolled into view,
 * only when the element is visible, enabled, and is what a pointer at that
 * point would hit (a dialog over it means the click would land on the
 * dialog: attendee's `humanized_navigate_to_and_click_element` checks the same).
 */

/** Where to click: viewport coordinates of the target's centre, and the text it matched. */
export interface ClickTarget {
  x: number;
  y: number;
  text?: string;
}

export interface TargetQuery {
  /** CSS selector of the element (the first visible, enabled, unobstructed match is taken). */
  selector?: string;
  /**
   * Or texts of buttons / links / `role="button"`s, in order of preference,
   * matched against the element's own text or aria-label, case-insensitive,
   * typographic apostrophes (’) read as ' (Meet's live copy uses them:
   * Vexa-ai/vexa googlemeet/selectors.ts).
   */
  texts?: readonly string[];
  /** `exact` (default): the whole text; `prefix`: it starts with one of `texts`. */
  match?: "exact" | "prefix";
  /** Only inside this element (a dialog, a panel). */
  within?: string;
  /** An input, textarea or contenteditable (for typing). */
  editable?: boolean;
}

/** The page-side finder (a string: no bundler helpers exist in the page). */
export function findTargetScript(query: TargetQuery): string {
  return `((Q) => {
  const norm = (s) => (s || "").replace(/[\\u2018\\u2019]/g, "'").replace(/\\s+/g, " ").trim().toLowerCase();
  const roots = Q.within ? [...document.querySelectorAll(Q.within)] : [document];
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) return false;
    const s = getComputedStyle(el);
    return s.visibility !== "hidden" && s.display !== "none" && Number(s.opacity) > 0.05;
  };
  const enabled = (el) => !el.disabled && el.getAttribute("aria-disabled") !== "true";
  let candidates = [];
  for (const root of roots) {
    if (Q.selector) for (const el of root.querySelectorAll(Q.selector)) candidates.push([el, undefined]);
    else if (Q.texts) {
      const els = [...root.querySelectorAll('button, a, [role="button"], [role="menuitem"], [role="link"]')];
      for (const t of Q.texts) {
        const want = norm(t);
        for (const el of els) {
          const own = norm(el.innerText || el.textContent), label = norm(el.getAttribute("aria-label"));
          const hit = Q.match === "prefix" ? own.startsWith(want) || label.startsWith(want) : own === want || label === want;
          if (hit) candidates.push([el, t]);
        }
      }
    }
  }
  for (const [el, text] of candidates) {
    if (!visible(el) || !enabled(el)) continue;
    if (Q.editable && !(el.matches("input, textarea") || el.isContentEditable)) continue;
    el.scrollIntoView({ block: "center", inline: "center" });
    const r = el.getBoundingClientRect();
    const x = Math.round(r.left + r.width / 2), y = Math.round(r.top + r.height / 2);
    const hit = document.elementFromPoint(x, y);
    if (!hit || !(hit === el || el.contains(hit) || hit.contains(el) && hit.tagName === "LABEL")) continue;
    return text ? { x, y, text } : { x, y };
  }
  return null;
})(${JSON.stringify(query)})`;
}
