/**
 * A small element builder: `h("td", {class: "num"}, "12")`. Text is always
 * set as text (never HTML), so nothing a session reports can inject markup.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false || value === null) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    // Properties through the CSSOM: the page's CSP refuses style attributes.
    else if (key === "style") Object.assign(el.style, value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** Buttons armed by a first click, by key, until when (epoch ms): they survive a re-render. */
const armed = new Map();
const ARMED_MS = 3000;

/**
 * A button that asks once more before a destructive action: the first click
 * arms it ("Sure?") for 3 s, the second runs `run`. `key` names the action
 * (e.g. "hangUp:<sessionId>") so a table re-rendered meanwhile keeps it armed.
 */
export function confirmButton(label, key, run, attrs = {}) {
  const button = h("button", { type: "button", class: "danger", ...attrs }, label);
  const show = () => {
    const on = (armed.get(key) ?? 0) > Date.now();
    button.dataset.armed = String(on);
    button.textContent = on ? "Sure?" : label;
  };
  show();
  const until = armed.get(key);
  if (until && until > Date.now()) setTimeout(show, until - Date.now() + 10);
  button.addEventListener("click", (event) => {
    event.stopPropagation();
    if (button.dataset.armed === "true") {
      armed.delete(key);
      button.disabled = true;
      button.textContent = "…";
      run();
      return;
    }
    armed.set(key, Date.now() + ARMED_MS);
    show();
    setTimeout(show, ARMED_MS + 10);
  });
  return button;
}

/** mm:ss (or h:mm:ss) since an epoch ms. */
export function elapsed(since) {
  const s = Math.max(0, Math.floor((Date.now() - since) / 1000));
  const mm = String(Math.floor(s / 60) % 60).padStart(2, "0");
  const ss = String(s % 60).padStart(2, "0");
  return s >= 3600 ? `${Math.floor(s / 3600)}:${mm}:${ss}` : `${mm}:${ss}`;
}

export function ms(value) {
  if (value === undefined || value === null) return "–";
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
}

export function clock(epochMs) {
  return new Date(epochMs).toLocaleTimeString([], {
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
  });
}
