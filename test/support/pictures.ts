import sharp from "sharp";

/** An 800 x 600 scene of flat shapes: a picture whose resized copies keep its outline. */
export function scene(background = "#2266cc", accent = "#ee4422"): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600"><rect width="800" height="600" fill="${background}"/><circle cx="250" cy="250" r="180" fill="${accent}"/><rect x="480" y="300" width="250" height="200" fill="#333"/><polygon points="100,550 400,380 700,580" fill="#fc3"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** Another scene, laid out differently. */
export function otherScene(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600"><rect width="800" height="600" fill="#eee"/><rect x="50" y="50" width="200" height="500" fill="#191"/><circle cx="600" cy="150" r="120" fill="#c0c"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** Three copies of a picture as people make them: smaller and lossy, larger, and in another format. */
export async function copiesOf(picture: Buffer): Promise<{ name: string; bytes: Buffer; contentType: string }[]> {
  return [
    { name: "small.jpg", bytes: await sharp(picture).resize(400).jpeg({ quality: 60 }).toBuffer(), contentType: "image/jpeg" },
    { name: "large.jpg", bytes: await sharp(picture).resize(1200).jpeg({ quality: 85 }).toBuffer(), contentType: "image/jpeg" },
    { name: "tiny.webp", bytes: await sharp(picture).resize(250).webp({ quality: 50 }).toBuffer(), contentType: "image/webp" },
  ];
}

/** A picture mostly of one colour (a small white mark, so it is not blank). */
export function mostly(color: string): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="200"><rect width="300" height="200" fill="${color}"/><rect x="20" y="20" width="30" height="30" fill="#fff"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}
