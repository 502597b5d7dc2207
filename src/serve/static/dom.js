// The one helper every part of the page builds its nodes with.

/** An element with attributes (undefined and null are left out) and children (text or nodes). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes))
    if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  for (const child of children.flat())
    if (child !== undefined && child !== null) node.append(child instanceof Node ? child : String(child));
  return node;
}
