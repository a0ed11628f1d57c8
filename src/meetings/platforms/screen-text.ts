/**
 * Page-side readers shared by drivers (strings: no bundler helpers exist in
 * the page).
 *
 * `SCREEN_TEXT_FN` defines `screenText(exclude)`: the text a platform's own
 * screens and dialogs show (headings, dialogs, alerts, status regions and
 * the main landmark's headings), lowercased, typographic apostrophes read
 * as ', with everything inside `exclude` (the chat panel, captions) left
 * out. Drivers decide end screens from it, never from `document.body.innerText`,
 * so a chat message "the meeting has ended" ends nothing (issue 41, point 8).
 *
 * `DESCRIBE_SCREEN_SCRIPT` answers what a person would see (the buttons and
 * labels, the headings and dialogs), for the probe's report and an unknown
 * screen's record.
 */
export const SCREEN_TEXT_FN = String.raw`function screenText(exclude) {
  const norm = (s) => (s || "").replace(/[\u2018\u2019]/g, "'").replace(/\s+/g, " ").trim().toLowerCase();
  const out = [];
  const skip = (el) => !!(exclude && el.closest(exclude));
  const shown = (el) => el.getClientRects().length > 0;
  for (const el of document.querySelectorAll('h1, h2, h3, [role="heading"], [role="dialog"], [role="alertdialog"], [aria-modal="true"], [role="alert"], [role="status"]')) {
    if (skip(el) || !shown(el)) continue;
    // Text outside the excluded parts only.
    let text = "";
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) if (!skip(n.parentElement)) text += " " + n.textContent;
    const t = norm(text);
    if (t) out.push(t);
  }
  return out.join(" | ");
}`;

/** What the page shows, for people reading a report: buttons, labels, headings, dialogs (each bounded). */
export const DESCRIBE_SCREEN_SCRIPT = String.raw`(() => {
  const norm = (s) => (s || "").replace(/\s+/g, " ").trim();
  const shown = (el) => el.getClientRects().length > 0;
  const uniq = (list) => [...new Set(list.filter(Boolean))].slice(0, 60);
  const buttons = uniq([...document.querySelectorAll('button, [role="button"], a[href]')].filter(shown).map((el) => {
    const text = norm(el.innerText || el.textContent).slice(0, 80);
    const label = norm(el.getAttribute("aria-label")).slice(0, 80);
    const off = el.disabled || el.getAttribute("aria-disabled") === "true" ? " (disabled)" : "";
    return (label && label !== text ? (text ? text + " [" + label + "]" : "[" + label + "]") : text) + off;
  }));
  const labels = uniq([...document.querySelectorAll("[aria-label], input[placeholder], label")].filter(shown).map((el) =>
    norm(el.getAttribute("aria-label") || el.getAttribute("placeholder") || el.textContent).slice(0, 80)));
  const headings = uniq([...document.querySelectorAll('h1, h2, h3, [role="heading"]')].filter(shown).map((el) => norm(el.textContent).slice(0, 160)));
  const dialogs = uniq([...document.querySelectorAll('[role="dialog"], [role="alertdialog"], [aria-modal="true"]')].filter(shown).map((el) => norm(el.innerText).slice(0, 400)));
  return { title: document.title, url: location.href, buttons, labels, headings, dialogs };
})()`;

/** What DESCRIBE_SCREEN_SCRIPT answers. */
export interface ScreenDescription {
  title: string;
  url: string;
  buttons: string[];
  labels: string[];
  headings: string[];
  dialogs: string[];
}
