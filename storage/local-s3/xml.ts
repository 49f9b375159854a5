// Minimal XML support: S3 request bodies (CORS, Delete, CompleteMultipartUpload,
// Tagging) are tiny, attribute-free documents, so a small strict parser is enough
// and avoids pulling in an XML dependency. DTDs are rejected outright (no entity
// expansion, no XXE).

import { Errors } from "./errors.ts";

export const S3_NS = "http://s3.amazonaws.com/doc/2006-03-01/";

export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&apos;",
  );
}

export type XmlValue = string | number | boolean | null | undefined | XmlObject | XmlValue[];
export interface XmlObject {
  [name: string]: XmlValue;
}

function render(name: string, value: XmlValue): string {
  if (value === undefined || value === null) return "";
  if (Array.isArray(value)) return value.map((v) => render(name, v)).join("");
  if (typeof value === "object") {
    let inner = "";
    for (const [k, v] of Object.entries(value)) inner += render(k, v);
    return `<${name}>${inner}</${name}>`;
  }
  return `<${name}>${escapeXml(String(value))}</${name}>`;
}

/** Render a document; object keys keep insertion order, arrays repeat the element. */
export function xmlDocument(root: string, body: XmlObject | string, namespace = true): string {
  const open = namespace ? `<${root} xmlns="${S3_NS}">` : `<${root}>`;
  let inner = "";
  if (typeof body === "string") inner = escapeXml(body);
  else for (const [k, v] of Object.entries(body)) inner += render(k, v);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${open}${inner}</${root}>`;
}

export interface XmlNode {
  name: string;
  children: XmlNode[];
  text: string;
}

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|lt|gt|amp|quot|apos);/g, (_, e: string) => {
    if (e === "lt") return "<";
    if (e === "gt") return ">";
    if (e === "amp") return "&";
    if (e === "quot") return '"';
    if (e === "apos") return "'";
    const cp = e[1] === "x" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
    if (!Number.isFinite(cp) || cp > 0x10ffff) throw Errors.malformedXML();
    return String.fromCodePoint(cp);
  });
}

/** Parse a document into an element tree; throws MalformedXML on anything unexpected. */
export function parseXml(text: string): XmlNode {
  let i = 0;
  const skipMisc = () => {
    for (;;) {
      while (i < text.length && /\s/.test(text[i]!)) i++;
      if (text.startsWith("<?", i)) {
        const end = text.indexOf("?>", i);
        if (end < 0) throw Errors.malformedXML();
        i = end + 2;
      } else if (text.startsWith("<!--", i)) {
        const end = text.indexOf("-->", i);
        if (end < 0) throw Errors.malformedXML();
        i = end + 3;
      } else return;
    }
  };
  const openTag = /<([A-Za-z_][\w.:-]*)((?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/y;
  // S3 documents are a few levels deep; the cap keeps hostile nesting off the call stack.
  const parseElement = (depth: number): XmlNode => {
    if (depth > 32) throw Errors.malformedXML();
    openTag.lastIndex = i;
    const m = openTag.exec(text);
    if (!m) throw Errors.malformedXML();
    i += m[0].length;
    const qname = m[1]!;
    const node: XmlNode = { name: qname.includes(":") ? qname.slice(qname.indexOf(":") + 1) : qname, children: [], text: "" };
    if (m[3] === "/") return node;
    for (;;) {
      if (i >= text.length) throw Errors.malformedXML();
      if (text.startsWith("</", i)) {
        const end = text.indexOf(">", i);
        if (end < 0 || text.slice(i + 2, end).trim() !== qname) throw Errors.malformedXML();
        i = end + 1;
        return node;
      }
      if (text.startsWith("<!--", i)) {
        const end = text.indexOf("-->", i);
        if (end < 0) throw Errors.malformedXML();
        i = end + 3;
      } else if (text.startsWith("<![CDATA[", i)) {
        const end = text.indexOf("]]>", i);
        if (end < 0) throw Errors.malformedXML();
        node.text += text.slice(i + 9, end);
        i = end + 3;
      } else if (text[i] === "<") {
        node.children.push(parseElement(depth + 1));
      } else {
        const end = text.indexOf("<", i);
        if (end < 0) throw Errors.malformedXML();
        node.text += decodeEntities(text.slice(i, end));
        i = end;
      }
    }
  };
  if (text.includes("<!DOCTYPE") || text.includes("<!ENTITY")) throw Errors.malformedXML();
  skipMisc();
  const root = parseElement(0);
  skipMisc();
  if (i !== text.length) throw Errors.malformedXML();
  return root;
}

export function childrenNamed(node: XmlNode, name: string): XmlNode[] {
  return node.children.filter((c) => c.name === name);
}

export function childText(node: XmlNode, name: string): string | undefined {
  return node.children.find((c) => c.name === name)?.text;
}

export function errorXml(code: string, message: string, resource: string, requestId: string, extra: Record<string, string>): string {
  const body: XmlObject = { Code: code, Message: message };
  for (const [k, v] of Object.entries(extra)) body[k] = v;
  body.Resource = resource;
  body.RequestId = requestId;
  return xmlDocument("Error", body, false);
}
