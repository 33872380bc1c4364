// Small builders for the pages: elements, tables, sections. Text is always set as text, never
// as HTML, so a target name or a check's detail cannot inject markup.

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

export function link(href, text) {
  return el("a", { href }, text);
}

// The dashboard's own page address for a route and its parameters.
export function pageHref(route, params = {}) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== ""));
  return `#/${route}${query.toString() ? `?${query}` : ""}`;
}

// columns: [{ title, cell(row) -> Node|string, numeric? }]
export function table(columns, rows, { caption, emptyText = "nothing to show" } = {}) {
  if (rows.length === 0) return el("p", { class: "empty" }, emptyText);
  const head = el("tr", {}, columns.map((c) => el("th", { class: c.numeric ? "num" : null }, c.title)));
  const body = rows.map((row) => el("tr", {}, columns.map((c) => el("td", { class: c.numeric ? "num" : null }, c.cell(row)))));
  return el("table", {}, caption ? el("caption", {}, caption) : null, el("thead", {}, head), el("tbody", {}, body));
}

export function section(title, ...children) {
  return el("section", {}, el("h2", {}, title), ...children);
}

// A verdict or status as a coloured tag.
export function badge(text) {
  const word = String(text || "—");
  return el("span", { class: `badge badge-${word.replace(/[^a-z]+/gi, "-").toLowerCase()}` }, word);
}
